/* SPDX-License-Identifier: GPL-2.0-only */
/* Typed growable arrays: VEC(T) declares {T *v; size_t n, cap;}. */
#ifndef JSAMPLED_VEC_H
#define JSAMPLED_VEC_H

#include <stdlib.h>

#define VEC(T)              \
	struct {            \
		T *v;       \
		size_t n;   \
		size_t cap; \
	}

/* Ensures room for one more element; evaluates to 0 or -1 (out of memory). */
#define vec_grow(vec)                                                                      \
	((vec)->n < (vec)->cap ? 0                                                         \
			       : vec_realloc_((void **)&(vec)->v, &(vec)->cap, sizeof(*(vec)->v)))

/* Appends x; evaluates to 0 or -1. */
#define vec_push(vec, x) (vec_grow(vec) ? -1 : ((vec)->v[(vec)->n++] = (x), 0))

#define vec_free(vec)              \
	do {                       \
		free((vec)->v);    \
		(vec)->v = NULL;   \
		(vec)->n = 0;      \
		(vec)->cap = 0;    \
	} while (0)

static inline int vec_realloc_(void **v, size_t *cap, size_t elem)
{
	/* Large arrays (a JVM's methods: hundreds of thousands) grow by half,
	 * so at most a third of one stands unused. */
	size_t ncap = !*cap ? 8 : *cap < 4096 ? *cap * 2 : *cap + *cap / 2;
	void *p = realloc(*v, ncap * elem);

	if (!p)
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

#endif
