/* SPDX-License-Identifier: GPL-2.0-only */
/* One JVM's classes and methods as its agent reported them (CLASS and
 * METHOD records), indexed by the agent's ids and by Method* for
 * interpreted frames. Ids are looked up through hash tables into dense
 * arrays, never used as array indexes: an agent picks them. Every string is
 * stored escaped (safe_text.h), and names and method bodies are shared
 * with every other table on the host that holds the same bytes. */
#ifndef JSAMPLED_METHOD_TABLE_H
#define JSAMPLED_METHOD_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "userspace/common/wire.h"
#include "shared_blobs.h"

/* Ids above this are refused: the CCT packs method ids into 24 bits. */
#define JS_MAX_METHOD_ID ((1u << 24) - 64)
#define JS_MAX_CLASS_ID (1u << 22)
/* A method's bytecode is at most 65535 bytes: no more line entries or
 * invoke instructions than that. */
#define JS_MAX_LINES 65536
/* Longest name kept (escaped); longer ones are cut. */
#define JS_MAX_NAME 1024

struct line_entry {
	uint32_t start_bci;
	uint32_t line;
};

/* What a method is, apart from where one JVM holds it: its names, line
 * table and call sites, equal in every JVM that loaded the same class file,
 * so held once on the host (shared_blobs.h) and never written. The arrays
 * and names follow the header; read them with the accessors below. */
struct method_body {
	uint32_t nlines;
	int32_t ncalls;          /* invoke instructions; -1 unknown */
	uint32_t name_hash;      /* of its own name and descriptor; 0 unknown */
	uint32_t modifiers;
	uint16_t code_size;      /* bytecode bytes */
	uint16_t name_len;       /* without the NUL */
	uint16_t signature_len;
	uint8_t named;           /* names, signature and lines too (METHOD); else only the Method* (METHOD_REF) */
	uint8_t has_targets;
	/* line_entry lines[nlines] (sorted by start_bci);
	 * uint32_t targets[ncalls] if has_targets: per call, the name hash of
	 *   the method it names (0 unknown);
	 * uint16_t calls[ncalls]: bcis of its invoke instructions, ascending;
	 * char name[name_len + 1], signature[signature_len + 1]. */
};
_Static_assert(sizeof(struct method_body) % sizeof(uint32_t) == 0, "the arrays after it must stay aligned");

/* One method as one JVM holds it. A JVM reports hundreds of thousands of
 * methods, and a host runs dozens of JVMs: the rest is in the shared body. */
struct method_info {
	uint64_t method_ptr;   /* Method* */
	uint64_t const_method; /* ConstMethod* */
	const struct method_body *body; /* never NULL */
	uint32_t id;
	uint32_t class_id;
};
_Static_assert(sizeof(struct method_info) <= 32, "method_info grew");

static inline const struct line_entry *method_lines(const struct method_info *m)
{
	return (const struct line_entry *)(m->body + 1);
}

static inline const uint32_t *method_targets(const struct method_info *m)
{
	return m->body->has_targets ? (const uint32_t *)(method_lines(m) + m->body->nlines) : NULL;
}

static inline const uint16_t *method_calls(const struct method_info *m)
{
	const uint32_t *after = (const uint32_t *)(method_lines(m) + m->body->nlines);

	return m->body->ncalls > 0 ? (const uint16_t *)(after + (m->body->has_targets ? m->body->ncalls : 0)) : NULL;
}

/* NULL unless the method is known by name. */
static inline const char *method_name(const struct method_info *m)
{
	const uint32_t *after = (const uint32_t *)(method_lines(m) + m->body->nlines);
	int32_t calls = m->body->ncalls > 0 ? m->body->ncalls : 0;
	const char *name = (const char *)((const uint16_t *)(after + (m->body->has_targets ? calls : 0)) + calls);

	return m->body->named ? name : NULL;
}

static inline const char *method_signature(const struct method_info *m)
{
	const char *name = method_name(m);

	return name ? name + m->body->name_len + 1 : NULL;
}

struct class_info {
	uint32_t id;
	const char *name;   /* "java.lang.String" */
	const char *source; /* "String.java" or "" */
	uint64_t unloaded_ns; /* when the agent reported it unloaded; 0 while loaded */
};

/* Positions in the methods array, found by a key read from the method
 * itself (its id, its Method*): 4 bytes a slot where a map takes 16. */
struct method_index {
	uint32_t *slots; /* position + 1; 0 empty */
	uint32_t cap;    /* power of two, or 0 */
	uint32_t count;
};

struct method_table {
	VEC(struct method_info) methods; /* dense, in arrival order */
	VEC(struct class_info) classes;
	struct method_index by_id;
	struct method_index by_ptr;      /* each method's current Method* */
	struct u64_map old_ptrs;         /* Method* -> id, for Method*s a redefinition replaced */
	struct u64_map class_index;      /* class id -> index + 1 */
	/* What the shared names and bodies this table refers to would cost
	 * it alone: counted against its user, although another JVM may
	 * share them (shared_blobs.h). */
	size_t shared_bytes;
	/* Answers of method_table_bad_call, which every decoded sample asks
	 * for each of its calls: a cache, allocated on first use and grown
	 * with the edges it meets, that any change of a method's record
	 * voids (generation). */
	struct call_memo *memo;
	uint32_t memo_slots, memo_fill;
	uint32_t generation;
	/* Counts every change a walk could see (walk_reuse.h); kept across
	 * method_table_keep. */
	uint64_t changes;
	uint64_t changes_at_tick;
	/* Classes reported unloaded whose records are still here. */
	size_t unloaded_classes;
	uint64_t dropped_classes, dropped_methods; /* by method_table_drop_unloaded, in all */
};

void method_table_init(struct method_table *t);
void method_table_free(struct method_table *t);

/* Parse one record; -1 if malformed or out of bounds (nothing changes). */
int method_table_put_class(struct method_table *t, struct rbuf *r);
int method_table_put_method(struct method_table *t, struct rbuf *r);
int method_table_put_ref(struct method_table *t, struct rbuf *r);

/* CLASS_UNLOAD: marks the classes unloaded (method_table_drop_unloaded
 * drops them later); ids not known are ignored. -1 if malformed. */
int method_table_unload_classes(struct method_table *t, struct rbuf *r);

/* A method known only by name, from a saved profile (state_file.c). */
int method_table_put_restored(struct method_table *t, uint32_t id, uint32_t class_id, const char *class_name,
			      const char *method_name);

const struct method_info *method_table_get(const struct method_table *t, uint32_t id);
/* The class's name, or NULL if unknown. */
const char *method_table_class_name(const struct method_table *t, uint32_t class_id);
/* The class's source file ("String.java", "" if it has none), or NULL. */
const char *method_table_class_source(const struct method_table *t, uint32_t class_id);
/* Method id of a Method*, 0 if unknown. */
uint32_t method_table_by_ptr(const struct method_table *t, uint64_t method_ptr);
/* Whether bci is an invoke instruction of the method: 1 yes, 0 no, -1
 * unknown (method or its bytecode not known). */
int method_table_is_call_site(const struct method_table *t, uint32_t id, int32_t bci);
/* The same, for a method already looked up (NULL: unknown). */
int method_is_call_site(const struct method_info *m, int32_t bci);
/* Whether the call at bci of method id may run method callee: 1 yes, 0 no
 * (it names another method), -1 unknown (no targets, a dynamic call, or
 * either method not known by name hash). */
int method_table_calls(const struct method_table *t, uint32_t id, int32_t bci, uint32_t callee);
/* Whether the call at bci of caller cannot have called callee: 1 (bci is
 * no invoke instruction, or one that names another method), else 0
 * (fine, or unknown). Cached: the same calls recur in every sample. */
int method_table_bad_call(const struct method_table *t, uint32_t caller, int32_t bci, uint32_t callee);
/* Source line of bci, or -1. */
int method_table_line(const struct method_table *t, uint32_t id, int32_t bci);
/* "package.Class.method"; a placeholder naming the id when unknown. */
void method_table_name(const struct method_table *t, uint32_t id, char *out, size_t outlen);
/* Whether the method is native (JVM_ACC_NATIVE). */
bool method_is_native(const struct method_info *m);
/* Its memory, the shared names and bodies it refers to counted whole. */
size_t method_table_bytes(const struct method_table *t);
/* Of that, the shared part (what it would cost alone). */
size_t method_table_shared_bytes(const struct method_table *t);
/* Called now and then: once nothing changed since the last call (a JVM
 * that stopped loading classes), gives back the room its arrays grew
 * beyond their contents. */
void method_table_tick(struct method_table *t);
/* Keeps only the methods used() says yes to (with their classes, names and
 * lines; Method* and call sites are dropped): what an exited process's
 * profile still names. -1 (t unchanged) if out of memory. */
int method_table_keep(struct method_table *t, bool (*used)(void *ctx, uint32_t id), void *ctx);
/* Drops the classes unloaded before before_ns with their methods, except
 * the methods used() says yes to, which keep their names and lines (not
 * their Method*: its memory may hold another method now). Everything else
 * stays whole. -1 (t unchanged) if out of memory. */
int method_table_drop_unloaded(struct method_table *t, uint64_t before_ns, bool (*used)(void *ctx, uint32_t id),
			       void *ctx);

#endif
