// SPDX-License-Identifier: GPL-2.0-only
import java.sql.*;
import java.util.Random;

/** H2 (libh2-java): an in-memory SQL database; each round loads tables with
 * batched inserts, then runs joins, aggregates, subqueries and updates. */
public final class AppH2 {
    static final String[] QUERIES = {
        "SELECT c.country, COUNT(*), SUM(i.qty * i.price) FROM customers c JOIN orders o ON o.customer = c.id "
            + "JOIN items i ON i.order_id = o.id GROUP BY c.country ORDER BY 3 DESC",
        "SELECT o.status, AVG(i.price), MAX(i.qty), COUNT(DISTINCT i.sku) FROM orders o JOIN items i ON i.order_id = o.id "
            + "GROUP BY o.status",
        "SELECT c.name, t.total FROM customers c JOIN (SELECT o.customer, SUM(i.qty * i.price) total FROM orders o "
            + "JOIN items i ON i.order_id = o.id GROUP BY o.customer) t ON t.customer = c.id ORDER BY t.total DESC LIMIT 20",
        "SELECT sku, SUM(qty) FROM items WHERE price > (SELECT AVG(price) FROM items) GROUP BY sku HAVING SUM(qty) > 20 "
            + "ORDER BY 2 DESC",
        "SELECT YEAR(o.odate), MONTH(o.odate), COUNT(*) FROM orders o WHERE EXISTS (SELECT 1 FROM items i "
            + "WHERE i.order_id = o.id AND i.qty > 7) GROUP BY YEAR(o.odate), MONTH(o.odate) ORDER BY 1, 2",
        "SELECT c.country, o.status, COUNT(*), RANK() OVER (PARTITION BY c.country ORDER BY COUNT(*) DESC) "
            + "FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.country, o.status",
        "SELECT UPPER(SUBSTRING(note, 1, 12)), LENGTH(note) FROM orders WHERE note LIKE '%ka%to%' ORDER BY 2 DESC LIMIT 50",
    };

    public static void main(String[] args) throws Exception {
        Connection db = DriverManager.getConnection("jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1");
        try (Statement s = db.createStatement()) {
            s.execute("CREATE TABLE customers(id INT PRIMARY KEY, name VARCHAR(40), country CHAR(2))");
            s.execute("CREATE TABLE orders(id INT PRIMARY KEY, customer INT, odate DATE, status VARCHAR(10), note VARCHAR(200))");
            s.execute("CREATE TABLE items(id INT AUTO_INCREMENT PRIMARY KEY, order_id INT, sku VARCHAR(8), qty INT, "
                      + "price DECIMAL(10,2))");
            s.execute("CREATE INDEX items_order ON items(order_id)");
            s.execute("CREATE INDEX orders_customer ON orders(customer)");
        }
        Random rng = new Random(7);
        String[] countries = {"DE", "FR", "US", "JP", "BR", "IN", "NO", "ZA"};
        String[] status = {"open", "paid", "shipped", "returned"};
        String[] syl = {"ka", "to", "ri", "mu", "sen", "da", "lo", "vi"};
        AppLoop.run(args, "statements", () -> {
            long n = 0;
            try (Statement s = db.createStatement()) {
                s.execute("DELETE FROM items");
                s.execute("DELETE FROM orders");
                s.execute("DELETE FROM customers");
            }
            try (PreparedStatement c = db.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)");
                 PreparedStatement o = db.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?)");
                 PreparedStatement it = db.prepareStatement("INSERT INTO items(order_id, sku, qty, price) VALUES (?, ?, ?, ?)")) {
                for (int i = 0; i < 500; i++) {
                    c.setInt(1, i);
                    c.setString(2, syl[i % 8] + syl[i / 8 % 8] + syl[i / 64 % 8]);
                    c.setString(3, countries[i % countries.length]);
                    c.addBatch();
                }
                n += c.executeBatch().length;
                for (int i = 0; i < 6000; i++) {
                    StringBuilder note = new StringBuilder();
                    for (int w = rng.nextInt(20); w >= 0; w--) note.append(syl[rng.nextInt(8)]).append(w % 3 == 0 ? " " : "");
                    o.setInt(1, i);
                    o.setInt(2, rng.nextInt(500));
                    o.setDate(3, Date.valueOf("2024-" + (1 + rng.nextInt(12)) + "-" + (1 + rng.nextInt(28))));
                    o.setString(4, status[rng.nextInt(4)]);
                    o.setString(5, note.toString());
                    o.addBatch();
                    for (int k = rng.nextInt(5); k >= 0; k--) {
                        it.setInt(1, i);
                        it.setString(2, "S" + rng.nextInt(300));
                        it.setInt(3, 1 + rng.nextInt(9));
                        it.setBigDecimal(4, java.math.BigDecimal.valueOf(100 + rng.nextInt(99900), 2));
                        it.addBatch();
                    }
                    if (i % 500 == 499) {
                        n += o.executeBatch().length + it.executeBatch().length;
                    }
                }
            }
            try (Statement s = db.createStatement()) {
                for (int rep = 0; rep < 2; rep++)
                    for (String q : QUERIES) {
                        try (ResultSet r = s.executeQuery(q)) {
                            while (r.next()) r.getString(1);
                        }
                        n++;
                    }
                n += s.executeUpdate("UPDATE items SET price = price * 1.01 WHERE qty > 5");
                n += s.executeUpdate("DELETE FROM orders WHERE status = 'returned' AND odate < DATE '2024-03-01'");
            }
            return n;
        });
    }
}
