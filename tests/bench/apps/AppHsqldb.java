// SPDX-License-Identifier: GPL-2.0-only
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/** HSQLDB (libhsqldb-java): a second embedded SQL engine, in memory; each
 * round fills two tables through prepared statements, then runs joins,
 * groupings, an ordered window and a recursive query, and deletes. */
public final class AppHsqldb {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:hsqldb:mem:bench;shutdown=true", "SA", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE item(id INT PRIMARY KEY, grp INT, name VARCHAR(40), price DOUBLE)");
                s.execute("CREATE TABLE sale(id INT PRIMARY KEY, item INT, qty INT)");
                s.execute("CREATE INDEX sale_item ON sale(item)");
            }
            AppLoop.run(args, "queries", () -> {
                long n = 0;
                try (PreparedStatement pi = c.prepareStatement("INSERT INTO item VALUES (?, ?, ?, ?)");
                     PreparedStatement ps = c.prepareStatement("INSERT INTO sale VALUES (?, ?, ?)")) {
                    for (int i = 0; i < 2000; i++) {
                        pi.setInt(1, i); pi.setInt(2, i % 37); pi.setString(3, "item-" + (i * 7919 % 2003));
                        pi.setDouble(4, (i % 100) * 1.25);
                        pi.executeUpdate();
                        ps.setInt(1, i); ps.setInt(2, (i * 31) % 2000); ps.setInt(3, 1 + i % 9);
                        ps.executeUpdate();
                        n += 2;
                    }
                }
                String[] queries = {
                    "SELECT i.grp, SUM(s.qty * i.price), COUNT(*) FROM item i JOIN sale s ON s.item = i.id GROUP BY i.grp ORDER BY 2 DESC",
                    "SELECT name, price FROM item WHERE name LIKE 'item-1%' ORDER BY price, name LIMIT 50",
                    "SELECT grp, MAX(price) - MIN(price) FROM item GROUP BY grp HAVING COUNT(*) > 10",
                    "WITH RECURSIVE t(n) AS (VALUES(1) UNION ALL SELECT n + 1 FROM t WHERE n < 90) SELECT SUM(n) FROM t",
                    "SELECT COUNT(*) FROM item a, item b WHERE a.grp = b.grp AND a.id < b.id AND a.price > b.price",
                };
                try (Statement s = c.createStatement()) {
                    for (String q : queries) {
                        try (ResultSet r = s.executeQuery(q)) {
                            while (r.next())
                                n++;
                        }
                    }
                    s.execute("DELETE FROM sale");
                    s.execute("DELETE FROM item");
                }
                return n;
            });
        }
    }
}
