#include "huge_pages.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNABLE "glibc.malloc.hugetlb=1"
/* Set across the re-execution: GLIBC_TUNABLES as it was ("-" for unset). */
#define BEFORE "JSAMPLED_GLIBC_TUNABLES_BEFORE"

/* Whether transparent huge pages are given only to memory that asks. */
static bool thp_on_request(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (!f)
		return false;
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	return strstr(mode, "[madvise]") != NULL;
}

void huge_pages_for_malloc(char **argv, bool *on)
{
	const char *before = getenv(BEFORE), *now = getenv("GLIBC_TUNABLES");
	char *want, self[PATH_MAX];
	ssize_t len;

	*on = false;
	if (before) {
		/* The re-executed program: malloc read the tunable. */
		*on = now && strstr(now, TUNABLE);
		if (strcmp(before, "-") == 0)
			unsetenv("GLIBC_TUNABLES");
		else
			setenv("GLIBC_TUNABLES", before, 1);
		unsetenv(BEFORE);
		return;
	}
	if (now && strstr(now, "glibc.malloc.hugetlb")) {
		*on = strstr(now, TUNABLE) != NULL; /* the operator chose */
		return;
	}
	if (!thp_on_request())
		return; /* "always" gives them anyway, "never" not at all */
	/* By its path, not /proc/self/exe: the process keeps its name
	 * (pgrep, journal), which comes from the file executed. */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || (size_t)len >= sizeof(self) - 1)
		return;
	self[len] = 0;
	if (access(self, X_OK) != 0)
		return; /* replaced or deleted since it started */
	if (asprintf(&want, "%s%s%s", now ? now : "", now && *now ? ":" : "", TUNABLE) < 0)
		return;
	if (setenv(BEFORE, now ? now : "-", 1) == 0 && setenv("GLIBC_TUNABLES", want, 1) == 0)
		execv(self, argv);
	/* Still here: the re-execution failed; go on as we are. */
	free(want);
	if (now)
		setenv("GLIBC_TUNABLES", now, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(BEFORE);
}
