/* SPDX-License-Identifier: GPL-2.0-only */
#include "kernel_symbols.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/u64_map.h"
#include "safe_text.h"
#include "userspace/common/fnv1a.h"

#define KERNEL_NAME "[kernel]"
#define PERMANENT UINT32_MAX
#define CHUNK_BYTES (256 * 1024)
#define KERNEL_HIT_SLOTS 2048

/* Names live in chunks that never move, so kernel_symbols_name's pointers
 * stay valid while more names are added. */
struct name_chunk {
	struct name_chunk *next;
	size_t used, cap;
	char data[];
};

static struct {
	/* Intern table: id i (1-based) is names[i - 1]; buckets hold ids
	 * (0 = empty), linear probing on the name's FNV-1a hash. */
	const char **names;
	uint32_t *hashes; /* low 32 bits of each name's hash */
	/* How many owners (name_refs) hold each name; PERMANENT for the
	 * kernel's and those interned without an owner. A name no owner holds
	 * any more is freed and its id used again. */
	uint32_t *refs;
	uint32_t nnames, names_cap;
	uint32_t *free_ids;
	uint32_t nfree, free_cap;
	size_t owned_bytes; /* names that are not permanent (malloc'd one by one) */
	uint32_t *buckets;
	size_t nbuckets; /* power of two, or 0 */
	struct name_chunk *chunks;
	size_t chunk_bytes;
	uint32_t kernel_id; /* "[kernel]", once interned */

	/* Address table: sorted, unique addresses; addrs[i]'s name is at
	 * blob + name_at[i] (NUL-terminated), interned only when a lookup
	 * first meets it: of 120k kernel symbols a profile names a few
	 * hundred, and an interned name costs five times its bytes. */
	uint64_t *addrs;
	uint32_t *name_at;
	char *blob;
	size_t blob_len, blob_cap;
	size_t nsyms;

	/* Recent lookups, by address: a kernel stack's return addresses are
	 * few and repeat from sample to sample, while each search of the
	 * table (120k symbols) misses the CPU caches about 17 times. id 0: an
	 * empty slot. Emptied whenever the table is loaded or freed. */
	struct kernel_hit {
		uint64_t addr;
		uint32_t id;
	} hits[KERNEL_HIT_SLOTS];
} ks;

static uint64_t fnv1a(const char *s, size_t n)
{
	return fnv1a_bytes(FNV1A_START, s, n);
}

static char *pool_copy(const char *s, size_t n)
{
	struct name_chunk *c = ks.chunks;

	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > CHUNK_BYTES ? n + 1 : CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = ks.chunks;
		c->used = 0;
		c->cap = cap;
		ks.chunks = c;
		ks.chunk_bytes += sizeof(*c) + cap;
	}
	char *p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = '\0';
	c->used += n + 1;
	return p;
}

static int grow_buckets(void)
{
	size_t cap = ks.nbuckets ? ks.nbuckets * 2 : 1024;
	uint32_t *b = calloc(cap, sizeof(*b));

	if (!b)
		return -1;
	for (uint32_t id = 1; id <= ks.nnames; id++) {
		size_t i = ks.hashes[id - 1] & (cap - 1);
		while (b[i])
			i = (i + 1) & (cap - 1);
		b[i] = id;
	}
	free(ks.buckets);
	ks.buckets = b;
	ks.nbuckets = cap;
	return 0;
}

static size_t slot_of(uint32_t id)
{
	size_t i;

	for (i = ks.hashes[id - 1] & (ks.nbuckets - 1); ks.buckets[i] != id; i = (i + 1) & (ks.nbuckets - 1))
		;
	return i;
}

/* Takes id out of the buckets (backward-shift deletion: the entries
 * after it that probed past its slot move up). */
static void unbucket(uint32_t id)
{
	size_t mask = ks.nbuckets - 1, i = slot_of(id), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!ks.buckets[j])
			break;
		home = ks.hashes[ks.buckets[j] - 1] & mask;
		/* j's entry may move to i if its home is not in (i, j] */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
			ks.buckets[i] = ks.buckets[j];
			i = j;
		}
	}
	ks.buckets[i] = 0;
}

static uint32_t intern_n(const char *s, size_t n, bool permanent)
{
	uint32_t h = (uint32_t)fnv1a(s, n), id;
	size_t i;
	char *copy;

	if (ks.nbuckets) {
		for (i = h & (ks.nbuckets - 1); ks.buckets[i]; i = (i + 1) & (ks.nbuckets - 1)) {
			id = ks.buckets[i];
			const char *name = ks.names[id - 1];
			if (ks.hashes[id - 1] == h && strncmp(name, s, n) == 0 && name[n] == '\0') {
				if (permanent)
					ks.refs[id - 1] = PERMANENT;
				return id;
			}
		}
	}
	if (ks.nnames == UINT32_MAX - 1 && !ks.nfree)
		return 0;
	/* Load factor at most 1/2. */
	if ((size_t)(ks.nnames - ks.nfree + 1) * 2 > ks.nbuckets && grow_buckets() != 0)
		return 0;
	if (!ks.nfree && ks.nnames == ks.names_cap) {
		uint32_t cap = ks.names_cap ? ks.names_cap * 2 : 1024;
		const char **names = realloc(ks.names, cap * sizeof(*names));
		if (!names)
			return 0;
		ks.names = names;
		uint32_t *hashes = realloc(ks.hashes, cap * sizeof(*hashes));
		if (!hashes)
			return 0;
		ks.hashes = hashes;
		uint32_t *refs = realloc(ks.refs, cap * sizeof(*refs));
		if (!refs)
			return 0;
		ks.refs = refs;
		ks.names_cap = cap;
	}
	/* Kept for good: in the chunks. Owned: on their own, to be freed. */
	copy = permanent ? pool_copy(s, n) : malloc(n + 1);
	if (!copy)
		return 0;
	if (!permanent) {
		memcpy(copy, s, n);
		copy[n] = '\0';
		ks.owned_bytes += n + 1;
	}
	id = ks.nfree ? ks.free_ids[--ks.nfree] : ++ks.nnames;
	ks.names[id - 1] = copy;
	ks.hashes[id - 1] = h;
	ks.refs[id - 1] = permanent ? PERMANENT : 0;
	for (i = h & (ks.nbuckets - 1); ks.buckets[i]; i = (i + 1) & (ks.nbuckets - 1))
		;
	ks.buckets[i] = id;
	return id;
}

uint32_t kernel_symbols_intern(const char *name)
{
	char safe[KERNEL_SYMBOLS_NAME_MAX];
	size_t n;

	if (!name)
		name = KERNEL_NAME;
	/* Native names come from files a profiled process controls: escaped
	 * once here, so no output shows a control byte or a line of its own. */
	n = safe_text(safe, sizeof(safe), name, strnlen(name, sizeof(safe) * 4));
	return intern_n(safe, n, true);
}

void name_refs_init(struct name_refs *r)
{
	u64_map_init(&r->ids);
	r->bytes = 0;
	r->capped = 0;
}

uint32_t kernel_symbols_intern_for(struct name_refs *r, const char *name)
{
	char safe[KERNEL_SYMBOLS_NAME_MAX];
	size_t n;
	uint32_t id;

	if (!name)
		return kernel_symbols_intern(NULL);
	n = safe_text(safe, sizeof(safe), name, strnlen(name, sizeof(safe) * 4));
	if (r->bytes + n + 1 + NAME_REF_BYTES > NAME_REFS_MAX_BYTES) {
		/* Over its share: a name it holds already, or one for all. */
		uint32_t h = (uint32_t)fnv1a(safe, n);

		for (size_t i = ks.nbuckets ? h & (ks.nbuckets - 1) : 0; ks.nbuckets && ks.buckets[i];
		     i = (i + 1) & (ks.nbuckets - 1)) {
			id = ks.buckets[i];
			if (ks.hashes[id - 1] == h && strncmp(ks.names[id - 1], safe, n) == 0 && ks.names[id - 1][n] == '\0' &&
			    u64_map_get(&r->ids, id))
				return id;
		}
		r->capped++;
		return intern_n(NAME_REFS_CAPPED, sizeof(NAME_REFS_CAPPED) - 1, true);
	}
	id = intern_n(safe, n, false);
	if (!id || u64_map_get(&r->ids, id))
		return id;
	if (u64_map_put(&r->ids, id, n + 1) != 0) {
		/* The owner cannot note it: kept for good rather than lost. */
		ks.refs[id - 1] = PERMANENT;
		return id;
	}
	if (ks.refs[id - 1] != PERMANENT)
		ks.refs[id - 1]++;
	r->bytes += n + 1 + NAME_REF_BYTES;
	return id;
}

static void release_one(uint64_t id)
{
	if (id == 0 || id > ks.nnames || ks.refs[id - 1] == PERMANENT || --ks.refs[id - 1] > 0)
		return;
	unbucket((uint32_t)id);
	ks.owned_bytes -= strlen(ks.names[id - 1]) + 1;
	free((void *)ks.names[id - 1]);
	ks.names[id - 1] = NULL;
	if (ks.nfree == ks.free_cap) {
		uint32_t cap = ks.free_cap ? ks.free_cap * 2 : 256, *v = realloc(ks.free_ids, cap * sizeof(*v));

		if (!v)
			return; /* the id is not used again: a slot lost, no name */
		ks.free_ids = v;
		ks.free_cap = cap;
	}
	ks.free_ids[ks.nfree++] = (uint32_t)id;
}

void name_refs_release(struct name_refs *r)
{
	for (size_t i = 0; i < r->ids.cap; i++)
		if (r->ids.slots[i].key)
			release_one(r->ids.slots[i].key);
	u64_map_free(&r->ids);
	name_refs_init(r);
}

static uint32_t kernel_id(void)
{
	if (!ks.kernel_id)
		ks.kernel_id = intern_n(KERNEL_NAME, sizeof(KERNEL_NAME) - 1, true);
	return ks.kernel_id;
}

const char *kernel_symbols_name(uint32_t id)
{
	if (id == 0 || id > ks.nnames || !ks.names[id - 1])
		return KERNEL_NAME;
	return ks.names[id - 1];
}

uint32_t kernel_symbols_lookup(uint64_t addr)
{
	size_t lo = 0, hi = ks.nsyms; /* answer: the last i with addrs[i] <= addr */
	struct kernel_hit *h = &ks.hits[u64_hash(addr) & (KERNEL_HIT_SLOTS - 1)];

	if (h->id && h->addr == addr)
		return h->id;
	if (!ks.nsyms || addr < ks.addrs[0] || addr > ks.addrs[ks.nsyms - 1])
		return kernel_id();
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks.addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const char *name = ks.blob + ks.name_at[lo];
	uint32_t id = intern_n(name, strlen(name), true);

	if (!id)
		return kernel_id(); /* out of memory: not cached */
	*h = (struct kernel_hit){.addr = addr, .id = id};
	return id;
}

size_t kernel_symbols_bytes(void)
{
	return ks.chunk_bytes + ks.owned_bytes + (size_t)ks.free_cap * sizeof(*ks.free_ids) +
	       (size_t)ks.names_cap * (sizeof(*ks.names) + sizeof(*ks.hashes) + sizeof(*ks.refs)) +
	       ks.nbuckets * sizeof(*ks.buckets) + ks.nsyms * (sizeof(*ks.addrs) + sizeof(*ks.name_at)) + ks.blob_cap;
}

static void free_table(void)
{
	memset(ks.hits, 0, sizeof(ks.hits));
	free(ks.addrs);
	free(ks.name_at);
	free(ks.blob);
	ks.addrs = NULL;
	ks.name_at = NULL;
	ks.blob = NULL;
	ks.blob_len = ks.blob_cap = 0;
	ks.nsyms = 0;
}

void kernel_symbols_free(void)
{
	struct name_chunk *c = ks.chunks;

	while (c) {
		struct name_chunk *next = c->next;
		free(c);
		c = next;
	}
	free_table();
	for (uint32_t i = 0; i < ks.nnames; i++)
		if (ks.names[i] && ks.refs[i] != PERMANENT)
			free((void *)ks.names[i]);
	free(ks.names);
	free(ks.hashes);
	free(ks.refs);
	free(ks.free_ids);
	free(ks.buckets);
	memset(&ks, 0, sizeof(ks));
}

/* --- Loading. */

struct raw_sym {
	uint64_t addr;
	uint32_t name_at; /* in ks.blob */
	uint32_t order;   /* type rank << 30 | line number: the tie-break */
};

/* Appends a name to the blob; its offset, or UINT32_MAX without memory. */
static uint32_t blob_add(const char *s, size_t n)
{
	uint32_t at = (uint32_t)ks.blob_len;

	if (ks.blob_len + n + 1 > UINT32_MAX)
		return UINT32_MAX;
	if (ks.blob_len + n + 1 > ks.blob_cap) {
		size_t cap = ks.blob_cap ? ks.blob_cap * 2 : 1u << 20;
		char *b;

		while (cap < ks.blob_len + n + 1)
			cap *= 2;
		if (!(b = realloc(ks.blob, cap)))
			return UINT32_MAX;
		ks.blob = b;
		ks.blob_cap = cap;
	}
	memcpy(ks.blob + ks.blob_len, s, n);
	ks.blob[ks.blob_len + n] = 0;
	ks.blob_len += n + 1;
	return at;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int type_rank(char t)
{
	switch (t) {
	case 'T': return 0;
	case 'W': return 1;
	case 't': return 2;
	case 'w': return 3;
	default: return -1;
	}
}

/* The name without a compiler suffix: cut at the first '.' followed by
 * isra, constprop, cold, part or llvm (unless that leaves nothing). */
static size_t base_name_len(const char *s, size_t n)
{
	static const char *const suffixes[] = {"isra", "constprop", "cold", "part", "llvm"};

	for (size_t i = 1; i < n; i++) {
		if (s[i] != '.')
			continue;
		for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			size_t m = strlen(suffixes[k]);
			if (n - i - 1 >= m && memcmp(s + i + 1, suffixes[k], m) == 0)
				return i;
		}
	}
	return n;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "ADDR TYPE NAME[\t[module]]": 1 with the fields, 0 if malformed. */
static int parse_line(const char *p, const char *end, uint64_t *addr, char *type, const char **name,
		      size_t *name_len)
{
	uint64_t a = 0;
	int digits = 0, d;

	while (p < end && (d = hex_digit(*p)) >= 0) {
		if (++digits > 16)
			return 0;
		a = a << 4 | (uint64_t)d;
		p++;
	}
	if (!digits || p >= end || (*p != ' ' && *p != '\t'))
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end)
		return 0;
	*type = *p++;
	if (p >= end || (*p != ' ' && *p != '\t'))
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *s = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\0')
		p++;
	if (p == s)
		return 0;
	*addr = a;
	*name = s;
	*name_len = (size_t)(p - s);
	return 1;
}

int kernel_symbols_load(const char *path)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	struct raw_sym *raw = NULL;
	size_t nraw = 0, raw_cap = 0;
	char *line = NULL;
	size_t line_cap = 0;
	ssize_t len;
	uint32_t lineno = 0;
	int ok = 1;

	free_table();
	if (!kernel_id())
		ok = 0;
	if (!f)
		return -1;
	while (ok && (len = getline(&line, &line_cap, f)) >= 0) {
		uint64_t addr;
		char type;
		const char *name;
		size_t name_len;
		int rank;

		if (lineno < (1u << 30) - 1)
			lineno++;
		if (!parse_line(line, line + len, &addr, &type, &name, &name_len))
			continue;
		rank = type_rank(type);
		if (rank < 0 || addr == 0)
			continue;
		if (nraw == raw_cap) {
			size_t cap = raw_cap ? raw_cap * 2 : 65536;
			struct raw_sym *r = realloc(raw, cap * sizeof(*r));
			if (!r) {
				ok = 0;
				break;
			}
			raw = r;
			raw_cap = cap;
		}
		uint32_t at = blob_add(name, base_name_len(name, name_len));
		if (at == UINT32_MAX) {
			ok = 0;
			break;
		}
		raw[nraw].addr = addr;
		raw[nraw].name_at = at;
		raw[nraw].order = (uint32_t)rank << 30 | lineno;
		nraw++;
	}
	if (ferror(f))
		ok = 0;
	free(line);
	fclose(f);
	if (!ok || !nraw) {
		free(raw);
		free_table();
		return -1;
	}

	qsort(raw, nraw, sizeof(*raw), cmp_raw);
	size_t n = 1;
	for (size_t i = 1; i < nraw; i++)
		if (raw[i].addr != raw[i - 1].addr)
			n++;
	ks.addrs = malloc(n * sizeof(*ks.addrs));
	ks.name_at = malloc(n * sizeof(*ks.name_at));
	if (!ks.addrs || !ks.name_at) {
		free(raw);
		free_table();
		return -1;
	}
	for (size_t i = 0, j = 0; i < nraw; i++) {
		if (i && raw[i].addr == raw[i - 1].addr)
			continue; /* the first after sorting wins */
		ks.addrs[j] = raw[i].addr;
		ks.name_at[j] = raw[i].name_at;
		j++;
	}
	ks.nsyms = n;
	free(raw);
	/* The blob at its size (names of symbols dropped as duplicates stay). */
	char *fit = realloc(ks.blob, ks.blob_len);
	if (fit) {
		ks.blob = fit;
		ks.blob_cap = ks.blob_len;
	}
	/* The load's scratch (a few MiB) back to the system. */
	malloc_trim(0);
	return 0;
}
