/* The exporter's parts that need no network or daemon: service names and
 * labels from a process's cmdline and cgroup, the bounded send queue and
 * its back-off, and the config file's handling of secrets. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../userspace/jsamplectl/export_config.h"
#include "../../userspace/jsamplectl/export_queue.h"
#include "../../userspace/jsamplectl/process_identity.h"
#include "check.h"

#define CMD(s) s, sizeof(s)

static void test_identity(void)
{
	struct process_identity id;
	struct service_rule rules[2] = {
		{.name = "checkout", .field = RULE_MAIN, .glob = "com.example.checkout.*"},
		{.name = "batch", .field = RULE_UNIT, .glob = "batch-*"},
	};

	/* the JVM property wins over everything */
	process_identity_from(&id, CMD("java\0-Xmx1g\0-Djsampled.service=orders\0-cp\0a.jar\0com.example.checkout.Main"),
			      "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "orders");
	CHECK_STR(id.main, "com.example.checkout.Main");
	CHECK_STR(id.unit, "shop");
	/* then the rules (-cp's value is not the main class) */
	process_identity_from(&id, CMD("/usr/bin/java\0-cp\0x.jar\0com.example.checkout.Main\0arg"),
			      "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "checkout");
	CHECK_STR(id.exe, "/usr/bin/java");
	/* then the unit */
	process_identity_from(&id, CMD("java\0Other"), "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "shop");
	/* a user manager's own unit is not the service */
	process_identity_from(&id, CMD("java\0-jar\0/opt/app/billing-2.1.jar"),
			      "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n", "java", rules, 2);
	CHECK_STR(id.unit, "");
	CHECK_STR(id.service, "billing-2.1");
	/* a container, and a Kubernetes pod */
	process_identity_from(&id, CMD("java\0Main"),
			      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718.slice/"
			      "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n",
			      "java", NULL, 0);
	CHECK_STR(id.container, "0123456789ab");
	CHECK_STR(id.pod, "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
	CHECK_STR(id.service, "container-0123456789ab");
	/* nothing to go by: the command name; odd characters replaced */
	process_identity_from(&id, "", 0, "", "my app{x}", NULL, 0);
	CHECK_STR(id.service, "my_app_x_");
}

static struct export_item item(int64_t from, size_t len, uint64_t samples)
{
	struct export_item it = {.from_s = from, .until_s = from + 15, .pid = 1, .len = len, .samples = samples};

	it.body = calloc(1, len);
	return it;
}

static void test_queue(void)
{
	struct export_queue q;
	struct export_item it;

	export_queue_init(&q, 1000);
	it = item(0, 400, 10);
	export_queue_push(&q, &it);
	it = item(15, 400, 20);
	export_queue_push(&q, &it);
	CHECK_EQ(export_queue_len(&q), 2);
	/* over the bound: the oldest goes, counted with its samples */
	it = item(30, 400, 30);
	export_queue_push(&q, &it);
	CHECK_EQ(export_queue_len(&q), 2);
	CHECK_EQ(q.c.dropped, 1);
	CHECK_EQ(q.c.dropped_samples, 10);
	CHECK_EQ(export_queue_oldest_from(&q), 15);
	/* one alone over the bound is dropped itself */
	it = item(45, 2000, 5);
	export_queue_push(&q, &it);
	CHECK_EQ(q.c.dropped, 2);
	CHECK_EQ(export_queue_len(&q), 2);
	/* failures back off 1 s, 2 s, ... up to the cap; success resets */
	export_queue_failed(&q, 100, 0);
	CHECK_EQ(q.next_try_ms, 1100);
	export_queue_failed(&q, 1100, 0);
	CHECK_EQ(q.next_try_ms, 3100);
	for (int i = 0; i < 10; i++)
		export_queue_failed(&q, 0, 0);
	CHECK_EQ(q.backoff_ms, EXPORT_MAX_BACKOFF_MS);
	CHECK_EQ(export_queue_len(&q), 2);
	export_queue_peek(&q)->attempts = 3;
	export_queue_done(&q);
	CHECK_EQ(q.c.sent, 1);
	CHECK_EQ(q.c.retried, 1);
	CHECK_EQ(q.backoff_ms, 0);
	CHECK_EQ(export_queue_oldest_from(&q), 30);
	/* a permanent refusal drops it */
	export_queue_failed(&q, 0, 1);
	CHECK_EQ(export_queue_len(&q), 0);
	CHECK_EQ(q.c.dropped, 3);
	CHECK(export_queue_oldest_from(&q) == INT64_MAX);
	export_queue_free(&q);
}

static void test_config(void)
{
	struct export_config c;
	char path[] = "/tmp/jsampled-export-conf.XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("# comment\npyroscope_url = http://127.0.0.1:4040\npyroscope_token = s3cret\ninterval_s = 30\n"
	      "service = batch unit batch-*\n",
	      f);
	fclose(f);
	export_config_defaults(&c);
	chmod(path, 0644);
	CHECK(export_config_load(&c, path, 1, err, sizeof(err)) != 0); /* a secret others may read */
	CHECK(strstr(err, "others may read") != NULL);
	chmod(path, 0600);
	export_config_defaults(&c);
	CHECK_EQ(export_config_load(&c, path, 1, err, sizeof(err)), 0);
	CHECK_STR(c.pyroscope_token, "s3cret");
	CHECK_EQ(c.interval_s, 30);
	CHECK_EQ(c.n_rules, 1);
	CHECK_EQ(c.rules[0].field, RULE_UNIT);
	/* secrets never from the command line; bad values refused */
	CHECK(export_config_set(&c, "pyroscope_password", "x", 1, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "interval_s", "0", 1, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "nonsense", "1", 0, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "service", "x color *", 0, err, sizeof(err)) != 0);
	unlink(path);
	/* a missing default file is fine, a missing named one is not */
	CHECK_EQ(export_config_load(&c, path, 0, err, sizeof(err)), 0);
	CHECK(export_config_load(&c, path, 1, err, sizeof(err)) != 0);
}

int main(void)
{
	RUN(test_identity);
	RUN(test_queue);
	RUN(test_config);
	return CHECK_DONE();
}
