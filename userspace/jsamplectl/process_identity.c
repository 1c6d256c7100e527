/* SPDX-License-Identifier: GPL-2.0-only */
#include "process_identity.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SERVICE_PROPERTY "-Djsampled.service="

/* Launcher options whose value is the next argument (java -help). */
static int takes_value(const char *opt)
{
	static const char *const with_value[] = {"-cp", "-classpath", "--class-path", "-p", "--module-path",
						 "--upgrade-module-path", "--add-modules", "--enable-native-access",
						 "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
						 "--patch-module", NULL};

	for (size_t i = 0; with_value[i]; i++)
		if (strcmp(opt, with_value[i]) == 0)
			return 1;
	return 0;
}

static void copy(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = 0;
}

static void from_cmdline(struct process_identity *id, const char *raw, size_t len)
{
	const char *args[512];
	char cmd[8192 + 1];
	size_t n = 0;

	/* A copy with a NUL after its last argument, whatever it ended with. */
	if (len > sizeof(cmd) - 1)
		len = sizeof(cmd) - 1;
	memcpy(cmd, raw, len);
	cmd[len] = 0;

	for (size_t off = 0; off < len && n < 512;) {
		size_t l = strnlen(cmd + off, len - off);
		args[n++] = cmd + off;
		off += l + 1;
	}
	if (n == 0)
		return;
	copy(id->exe, sizeof(id->exe), args[0], strnlen(args[0], len));
	for (size_t i = 1; i < n; i++) {
		const char *a = args[i];

		if (strncmp(a, SERVICE_PROPERTY, strlen(SERVICE_PROPERTY)) == 0 && !id->service[0]) {
			copy(id->service, sizeof(id->service), a + strlen(SERVICE_PROPERTY),
			     strlen(a + strlen(SERVICE_PROPERTY)));
			continue;
		}
		if ((strcmp(a, "-jar") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "--module") == 0) && i + 1 < n) {
			const char *v = args[i + 1], *slash = strrchr(v, '/');
			if (strcmp(a, "-jar") == 0 && slash)
				v = slash + 1;
			copy(id->main, sizeof(id->main), v, strlen(v));
			return;
		}
		if (a[0] == '-') {
			if (takes_value(a))
				i++;
			continue;
		}
		copy(id->main, sizeof(id->main), a, strlen(a));
		return;
	}
}

/* The unified (cgroup v2, "0::") line's path, else the first line's. */
static void cgroup_path(const char *text, char *out, size_t cap)
{
	const char *line = strstr(text, "0::");
	const char *p, *end;

	if (line && (line == text || line[-1] == '\n')) {
		p = line + 3;
	} else {
		p = strchr(text, ':');
		p = p ? strchr(p + 1, ':') : NULL;
		if (!p) {
			out[0] = 0;
			return;
		}
		p++;
	}
	end = strchr(p, '\n');
	copy(out, cap, p, end ? (size_t)(end - p) : strlen(p));
}

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Unit, container and pod from the cgroup path's components. */
static void from_cgroup(struct process_identity *id)
{
	char path[512];
	char *save = NULL;

	snprintf(path, sizeof(path), "%s", id->cgroup);
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		size_t len = strlen(c);
		const char *pod = strstr(c, "pod");

		if (len > 8 && strcmp(c + len - 8, ".service") == 0 && strncmp(c, "user@", 5) != 0)
			copy(id->unit, sizeof(id->unit), c, len - 8);
		/* docker-<64 hex>.scope, cri-containerd-<id>.scope, crio-<id>, /docker/<id> */
		for (size_t i = 0; i + 64 <= len; i++) {
			if (is_hex(c + i, 64) && (i == 0 || !isxdigit((unsigned char)c[i - 1])) &&
			    (i + 64 == len || !isxdigit((unsigned char)c[i + 64]))) {
				copy(id->container, sizeof(id->container), c + i, 12);
				break;
			}
		}
		/* kubepods-burstable-pod<uid with _>.slice or .../pod<uid>/ */
		for (; pod; pod = strstr(pod + 3, "pod")) {
			if ((pod == c || pod[-1] == '-') && strlen(pod + 3) >= 36) {
				copy(id->pod, sizeof(id->pod), pod + 3, 36);
				for (char *q = id->pod; *q; q++)
					if (*q == '_')
						*q = '-';
				break;
			}
		}
	}
	/* Cgroup names are chosen by whoever made the cgroup: as labels they
	 * must not open, close or add labels of a series name. */
	identity_sanitize(id->unit);
	identity_sanitize(id->pod);
}

static const char *rule_subject(const struct process_identity *id, enum rule_field f)
{
	switch (f) {
	case RULE_EXE:
		return id->exe;
	case RULE_MAIN:
		return id->main;
	case RULE_UNIT:
		return id->unit;
	case RULE_CGROUP:
		return id->cgroup;
	}
	return "";
}

void identity_sanitize(char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-/:@", *s))
			*s = '_';
}

void process_identity_from(struct process_identity *id, const char *cmdline, size_t len, const char *cgroup,
			   const char *comm, const struct service_rule *rules, size_t n_rules)
{
	memset(id, 0, sizeof(*id));
	from_cmdline(id, cmdline, len);
	cgroup_path(cgroup, id->cgroup, sizeof(id->cgroup));
	from_cgroup(id);
	for (size_t i = 0; !id->service[0] && i < n_rules; i++) {
		const char *subject = rule_subject(id, rules[i].field);
		if (subject[0] && fnmatch(rules[i].glob, subject, 0) == 0)
			copy(id->service, sizeof(id->service), rules[i].name, strlen(rules[i].name));
	}
	if (!id->service[0] && id->unit[0])
		snprintf(id->service, sizeof(id->service), "%s", id->unit);
	if (!id->service[0] && id->container[0])
		snprintf(id->service, sizeof(id->service), "container-%s", id->container);
	if (!id->service[0] && id->main[0]) {
		/* a jar by its name, a class by its simple name */
		const char *m = id->main;
		size_t l = strlen(m);
		copy(id->service, sizeof(id->service), m, l > 4 && strcmp(m + l - 4, ".jar") == 0 ? l - 4 : l);
	}
	if (!id->service[0])
		snprintf(id->service, sizeof(id->service), "%s", comm && *comm ? comm : "java");
	identity_sanitize(id->service);
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (n < 0)
		return -1;
	buf[got] = 0;
	return (ssize_t)got;
}

int process_identity_read(struct process_identity *id, pid_t pid, const char *comm,
			  const struct service_rule *rules, size_t n_rules)
{
	char path[64], cmd[8192], cg[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small(path, cmd, sizeof(cmd));
	if (n < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_small(path, cg, sizeof(cg)) < 0)
		cg[0] = 0;
	process_identity_from(id, cmd, (size_t)n, cg, comm, rules, n_rules);
	return 0;
}
