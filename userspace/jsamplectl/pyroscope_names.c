/* SPDX-License-Identifier: GPL-2.0-only */
#include "pyroscope_names.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/profile/gzip.h"

static const struct {
	const char *profile_type;
	const char *type[2], *unit[2];
	const char *period_type, *period_unit;
} java_names[] = {
	{.profile_type = "alloc", .type = {"alloc_in_new_tlab_objects", "alloc_in_new_tlab_bytes"},
	 .unit = {"count", "bytes"}, .period_type = "space", .period_unit = "bytes"},
	{.profile_type = "lock", .type = {"contentions", "delay"}, .unit = {"count", "nanoseconds"},
	 .period_type = "mutex", .period_unit = "count"},
};

/* The index of s in p's string table, appended if new; -1 if out of memory. */
static int64_t string_of(Perftools__Profiles__Profile *p, const char *s)
{
	char **grown, *copy;

	for (size_t i = 0; i < p->n_string_table; i++)
		if (strcmp(p->string_table[i], s) == 0)
			return (int64_t)i;
	copy = strdup(s);
	grown = copy ? realloc(p->string_table, (p->n_string_table + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(copy);
		return -1;
	}
	p->string_table = grown;
	p->string_table[p->n_string_table] = copy;
	return (int64_t)p->n_string_table++;
}

static int rename_type(Perftools__Profiles__Profile *p, Perftools__Profiles__ValueType *v, const char *type,
		       const char *unit)
{
	int64_t t = string_of(p, type), u = string_of(p, unit);

	if (!v || t < 0 || u < 0)
		return -1;
	v->type = t;
	v->unit = u;
	return 0;
}

int pyroscope_java_profile(Perftools__Profiles__Profile *p, const char *profile_type, struct wbuf *out)
{
	size_t k = 0, len;
	uint8_t *packed;
	int rc;

	while (k < sizeof(java_names) / sizeof(java_names[0]) && strcmp(java_names[k].profile_type, profile_type) != 0)
		k++;
	if (k == sizeof(java_names) / sizeof(java_names[0]) || p->n_sample_type != 2)
		return 1;
	for (int i = 0; i < 2; i++)
		if (rename_type(p, p->sample_type[i], java_names[k].type[i], java_names[k].unit[i]) != 0)
			return -1;
	if (rename_type(p, p->period_type, java_names[k].period_type, java_names[k].period_unit) != 0)
		return -1;
	p->default_sample_type = p->sample_type[1]->type;
	len = perftools__profiles__profile__get_packed_size(p);
	packed = malloc(len ? len : 1);
	if (!packed)
		return -1;
	perftools__profiles__profile__pack(p, packed);
	rc = gzip_into(packed, len, out);
	free(packed);
	return rc == 0 ? 0 : -1;
}
