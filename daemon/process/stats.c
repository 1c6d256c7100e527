/* SPDX-License-Identifier: GPL-2.0-only */
#include "stats.h"

void decode_stats_account(struct decode_stats *st, enum decode_status status, int reason, int rule)
{
	if ((status == DECODE_RESOLVED || status == DECODE_INCOMPLETE) && rule > 0 &&
	    rule < DECODE_RULE_COUNT)
		st->rules[rule]++;
	switch (status) {
	case DECODE_RESOLVED:
		st->resolved++;
		break;
	case DECODE_INCOMPLETE:
		st->incomplete++;
		break;
	case DECODE_NOT_JAVA:
		st->not_java++;
		break;
	case DECODE_FAILED:
		st->failed++;
		if (reason > 0 && reason < DECODE_FAILURE_COUNT)
			st->reasons[reason]++;
		break;
	case DECODE_RETRY:
		break;
	}
}

void decode_stats_add(struct decode_stats *into, const struct decode_stats *from)
{
	const uint64_t *src = (const uint64_t *)from;
	uint64_t *dst = (uint64_t *)into;

	for (size_t i = 0; i < sizeof(*into) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}
