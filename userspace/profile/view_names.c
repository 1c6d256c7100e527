/* SPDX-License-Identifier: GPL-2.0-only */
#include "view_names.h"

#include <stddef.h>
#include <string.h>

int cct_view_parse(const char *word)
{
	static const struct {
		const char *name;
		unsigned frames;
	} views[] = {
		{.name = "java", .frames = VIEW_JAVA},
		{.name = "mixed", .frames = VIEW_MIXED},
		{.name = "carrier", .frames = VIEW_CARRIER},
		{.name = "mixed,carrier", .frames = VIEW_MIXED | VIEW_CARRIER},
		{.name = "carrier,mixed", .frames = VIEW_MIXED | VIEW_CARRIER},
	};

	for (size_t i = 0; word && i < sizeof(views) / sizeof(views[0]); i++)
		if (strcmp(word, views[i].name) == 0)
			return (int)views[i].frames;
	return -1;
}

static const char *const type_names[] = {
	[0] = "cpu",
	[VIEW_OFFCPU] = "offcpu",
	[VIEW_WALL] = "wall",
	[VIEW_ALLOC] = "alloc",
	[VIEW_LOCK] = "lock",
};

int cct_profile_type_parse(const char *word)
{
	for (unsigned i = 0; word && i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i] && strcmp(word, type_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *cct_profile_type_name(unsigned view)
{
	unsigned t = view & VIEW_TYPE_MASK;

	return t < sizeof(type_names) / sizeof(type_names[0]) && type_names[t] ? type_names[t] : "cpu";
}
