/* SPDX-License-Identifier: GPL-2.0-only */
/* Threads by pool: a thread's name with every run of digits written '*'
 * ("http-nio-8080-exec-12" is in "http-nio-*-exec-*"), so that the 200
 * threads of one pool share their paths in the tree, and a pool's name is
 * a glob of its threads' names. Users select threads with a glob
 * (fnmatch(3)) or a thread's own name, which selects its pool. */
#ifndef JSAMPLED_THREAD_POOLS_H
#define JSAMPLED_THREAD_POOLS_H

#include <stdbool.h>
#include <stddef.h>

/* The longest pool name kept (longer names are cut). */
#define THREAD_POOL_NAME_MAX 64

/* name's pool into out (outlen > 0; NUL-terminated). */
void thread_pool_name(const char *name, char *out, size_t outlen);

/* Whether a user's selector (a glob, or a thread's name) takes in pool:
 * the glob matches the pool's name, or the selector's own pool is pool. */
bool thread_pool_selected(const char *selector, const char *pool);

/* A selector as a query word of jsampled's socket, " thread=SELECTOR":
 * bytes that would end a word, and '%', written %XX. -1 if it is empty or
 * longer than the daemon takes (127 bytes). */
#define THREAD_SELECTOR_WORD_MAX (3 * 127 + 16)
int thread_selector_word(const char *selector, char *out, size_t outlen);

#endif
