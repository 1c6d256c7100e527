/* SPDX-License-Identifier: GPL-2.0-only */
#include "privileges.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static const cap_value_t kept[] = {CAP_BPF, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SETUID, CAP_SETGID, CAP_KILL};
#define NKEPT (sizeof(kept) / sizeof(kept[0]))
/* Kept too when perf events are opened after start: on each new target's
 * threads (sampler_events.h). A task's event sees its kernel-mode ticks
 * only with perfmon rights at kernel.perf_event_paranoid 2; Debian's
 * paranoid level 3 wants CAP_SYS_ADMIN for any perf event. */
static const cap_value_t perf_kept[] = {CAP_PERFMON, CAP_SYS_ADMIN};

int privileges_socket_access(const char *path, const char *group, char *why, size_t whylen)
{
	struct group gr, *grp = NULL;
	char buf[4096];

	if (group[0])
		getgrnam_r(group, &gr, buf, sizeof(buf), &grp);
	if (!grp) {
		snprintf(why, whylen, "group '%s' does not exist: only root may query %s", group, path);
		chmod(path, 0600);
		return -1;
	}
	if (chown(path, 0, grp->gr_gid) != 0 || chmod(path, 0660) != 0) {
		snprintf(why, whylen, "cannot give %s to root:%s: %s", path, group, strerror(errno));
		chmod(path, 0600);
		return -1;
	}
	return 0;
}

int privileges_perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

int privileges_drop(bool perf_events, char *why, size_t whylen)
{
	cap_t caps = cap_get_proc(), next = NULL;
	cap_flag_value_t have;
	cap_value_t keep[NKEPT + 2];
	int nkeep = 0, r = -1, bound_errno = 0;

	if (!caps) {
		snprintf(why, whylen, "cannot read capabilities: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < NKEPT; i++)
		if (CAP_IS_SUPPORTED(kept[i]) && cap_get_flag(caps, kept[i], CAP_PERMITTED, &have) == 0 && have)
			keep[nkeep++] = kept[i];
	for (size_t i = 0; perf_events && i < 2; i++)
		if ((i == 0 || privileges_perf_paranoid() > 2) && CAP_IS_SUPPORTED(perf_kept[i]) &&
		    cap_get_flag(caps, perf_kept[i], CAP_PERMITTED, &have) == 0 && have)
			keep[nkeep++] = perf_kept[i];
	/* The bounding set first, while CAP_SETPCAP is still ours (the unit
	 * grants it for this alone). */
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
		bool is_kept = false;
		for (int i = 0; i < nkeep; i++)
			is_kept |= keep[i] == c;
		if (!is_kept && CAP_IS_SUPPORTED(c) && cap_get_bound(c) == 1 && cap_drop_bound(c) != 0)
			bound_errno = errno;
	}
	next = cap_init();
	if (!next || (nkeep && (cap_set_flag(next, CAP_PERMITTED, nkeep, keep, CAP_SET) != 0 ||
				cap_set_flag(next, CAP_EFFECTIVE, nkeep, keep, CAP_SET) != 0))) {
		snprintf(why, whylen, "cannot build the capability set");
		goto out;
	}
	if (cap_set_proc(next) != 0) {
		snprintf(why, whylen, "cannot drop capabilities: %s", strerror(errno));
		goto out;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(why, whylen, "cannot set no_new_privs: %s", strerror(errno));
		goto out;
	}
	if (bound_errno) {
		/* The other sets did shrink; the bounding set needs CAP_SETPCAP. */
		snprintf(why, whylen, "capabilities dropped, but the bounding set could not be reduced: %s "
			 "(CAP_SETPCAP missing)", strerror(bound_errno));
		goto out;
	}
	r = 0;
out:
	cap_free(caps);
	if (next)
		cap_free(next);
	return r;
}

int privileges_sandbox_user(const char *name, uid_t *uid, gid_t *gid, char *why, size_t whylen)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (name && name[0]) {
		getpwnam_r(name, &pw, buf, sizeof(buf), &found);
	} else {
		getpwnam_r(JSAMPLED_SANDBOX_USER, &pw, buf, sizeof(buf), &found);
		if (!found)
			getpwnam_r("nobody", &pw, buf, sizeof(buf), &found);
	}
	if (!found || found->pw_uid == 0) {
		snprintf(why, whylen, "no unprivileged user %s for jsampled's sandboxes",
			 name && name[0] ? name : JSAMPLED_SANDBOX_USER " (or nobody)");
		return -1;
	}
	*uid = found->pw_uid;
	*gid = found->pw_gid;
	return 0;
}

int privileges_become(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0 ||
	    geteuid() == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	(void)prctl(PR_SET_DUMPABLE, 0);
	return 0;
}

int privileges_drop_all(void)
{
	cap_t none = cap_init();
	int r;

	if (!none)
		return -1;
	r = cap_set_proc(none);
	cap_free(none);
	return r;
}
