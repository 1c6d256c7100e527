/* SPDX-License-Identifier: GPL-2.0-only */
#include "process_rules.h"

#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "procfs.h"

static const char *list_match(const struct rule_list *l, const char *a, const char *b)
{
	for (unsigned i = 0; i < l->n; i++)
		if ((a && fnmatch(l->v[i], a, 0) == 0) || (b && fnmatch(l->v[i], b, 0) == 0))
			return l->v[i];
	return NULL;
}

/* One kind of rule: excluded if an exclude pattern matches; with include
 * patterns, excluded unless one matches. a/b: the values to match (a user's
 * name and uid); NULL when unknown, which fails an include list. */
static bool kind_allows(const struct rule_list *inc, const struct rule_list *exc, const char *kind,
			const char *a, const char *b, char *why, size_t whylen)
{
	const char *hit = list_match(exc, a, b);

	if (hit) {
		snprintf(why, whylen, "exclude-%s %s", kind, hit);
		return false;
	}
	if (inc->n && !list_match(inc, a, b)) {
		snprintf(why, whylen, "no include-%s matches %s", kind, a ? a : b ? b : "(unknown)");
		return false;
	}
	return true;
}

bool process_rules_allow(const struct process_rules *r, pid_t pid, uid_t uid, char *why, size_t whylen)
{
	char uidstr[16], pwbuf[1024], exe[4096], cg[4096];
	struct passwd pw, *pwp = NULL;
	bool have_exe, have_cg;

	snprintf(why, whylen, "allowed");
	if (procfs_java_option(pid, JSAMPLED_OPT_OUT)) {
		snprintf(why, whylen, "the JVM opted out (%s)", JSAMPLED_OPT_OUT);
		return false;
	}
	snprintf(uidstr, sizeof(uidstr), "%u", (unsigned)uid);
	if (r->include_user.n || r->exclude_user.n)
		getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp);
	if (!kind_allows(&r->include_user, &r->exclude_user, "user", pwp ? pwp->pw_name : NULL, uidstr, why,
			 whylen))
		return false;
	have_exe = (r->include_exe.n || r->exclude_exe.n) && procfs_exe(pid, exe, sizeof(exe)) == 0;
	if ((r->include_exe.n || r->exclude_exe.n) &&
	    !kind_allows(&r->include_exe, &r->exclude_exe, "exe", have_exe ? exe : NULL, NULL, why, whylen))
		return false;
	have_cg = (r->include_cgroup.n || r->exclude_cgroup.n) && procfs_cgroup(pid, cg, sizeof(cg)) == 0;
	if ((r->include_cgroup.n || r->exclude_cgroup.n) &&
	    !kind_allows(&r->include_cgroup, &r->exclude_cgroup, "cgroup", have_cg ? cg : NULL, NULL, why,
			 whylen))
		return false;
	return true;
}
