/* SPDX-License-Identifier: GPL-2.0-only */
/* Minimal unit-test harness: CHECK records a failure and goes on; main
 * returns non-zero if anything failed. */
#ifndef JSAMPLED_TEST_CHECK_H
#define JSAMPLED_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                         \
	do {                                                                                \
		check_count++;                                                              \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                                   \
		}                                                                           \
	} while (0)

#define CHECK_EQ(a, b)                                                                       \
	do {                                                                                 \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                             \
		check_count++;                                                               \
		if (a_ != b_) {                                                              \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %" PRIu64 ", %s == %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, a_, #b, b_);                         \
			check_failures++;                                            \
		}                                                                            \
	} while (0)

#define CHECK_STR(a, b)                                                                    \
	do {                                                                               \
		const char *a_ = (a), *b_ = (b);                                           \
		check_count++;                                                             \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                   \
			fprintf(stderr, "%s:%d: CHECK_STR failed: '%s' != '%s'\n", __FILE__, \
				__LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)");         \
			check_failures++;                                                  \
		}                                                                          \
	} while (0)

#define RUN(test)                                   \
	do {                                        \
		int before_ = check_failures;       \
		test();                             \
		printf("%s %s\n", check_failures == before_ ? "ok  " : "FAIL", #test); \
	} while (0)

#define CHECK_DONE()                                                                     \
	(printf("%d checks, %d failed\n", check_count, check_failures), check_failures ? 1 : 0)

#endif
