/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's versioned record log: everything jsampled needs to decode
 * samples of this JVM, serialized once when the event happens, each record
 * stamped with a version so jsampled can fetch "everything since N".
 *
 * JVMTI callbacks append under a mutex and never call back into the JVM
 * while holding it. Records that jsampled has confirmed (acked) and that
 * describe dead code are compacted away, so the log stays bounded by the
 * live code plus what has not been fetched yet.
 *
 * The store knows nothing about JVMTI: method handles are opaque nonzero
 * u64 keys (jmethodIDs), which keeps it testable without a JVM.
 */
#ifndef JSAGENT_AGENT_STORE_H
#define JSAGENT_AGENT_STORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "userspace/common/wire.h"

struct store_entry {
	uint64_t version;
	uint64_t key;      /* code id for code records, tid for threads, class id for a class's records */
	uint16_t kind;     /* enum js_record_kind */
	uint8_t ends_life; /* unload / thread end: pairs with an earlier record */
	uint64_t end_version; /* for a start record: the version of its end, 0 while open */
	uint32_t len;
	uint8_t *bytes;    /* the record payload */
};

struct pending_method {
	uint32_t method_id;
	uint32_t class_id;
	uint64_t handle; /* jmethodID */
};

struct agent_store {
	pthread_mutex_t lock;
	uint64_t version; /* last version handed out */
	VEC(struct store_entry) log; /* ascending versions */
	struct u64_map method_ids;   /* handle -> class id << 32 | method id */
	struct u64_map live_code;    /* code start address -> code id */
	struct u64_map open_version; /* (key, kind group) -> version of the open start record */
	VEC(struct pending_method) pending;
	uint32_t next_method_id;
	uint32_t next_class_id;
	uint64_t next_code_id;
	size_t bytes;    /* payload bytes held */
	size_t dead;     /* entries compaction may remove */
	uint64_t classes_unloaded;
	uint64_t dropped_oom;
	uint64_t oversized; /* records too large for any BATCH, skipped */
};

int store_init(struct agent_store *s);
void store_destroy(struct agent_store *s);

/* Locking: every function below named *_locked expects the caller to hold
 * s->lock; the others take it themselves. */
static inline void store_lock(struct agent_store *s) { pthread_mutex_lock(&s->lock); }
static inline void store_unlock(struct agent_store *s) { pthread_mutex_unlock(&s->lock); }

/* The id of a method handle, registering it (and queueing its METHOD record
 * for resolution) if new. class_id 0 means "not known yet"; a known class
 * is remembered for a handle first seen without one. 0 on OOM. */
uint32_t store_method_id_locked(struct agent_store *s, uint64_t handle, uint32_t class_id,
				int *is_new);
/* 1 if the handle already has an id. */
int store_has_method_locked(const struct agent_store *s, uint64_t handle);
/* The class id a method's handle is known under, 0 if none yet. */
uint32_t store_method_class_locked(const struct agent_store *s, uint64_t handle);
uint32_t store_new_class_id_locked(struct agent_store *s);
uint64_t store_new_code_id_locked(struct agent_store *s);

/* Appends a record; returns its version (0 on OOM). key and ends_life as in
 * store_entry: a code load (key: code id) or thread start (key: tid) opens a
 * life that the matching unload or thread end (ends_life) closes, which lets
 * compaction drop both once jsampled has them. */
uint64_t store_append_locked(struct agent_store *s, uint16_t kind, uint64_t key, int ends_life,
			     const void *payload, size_t len);
/* The JVM unloaded these classes: appends CLASS_UNLOAD records (stamped
 * time_ns) and ends the life of each class's CLASS, METHOD and METHOD_REF
 * records (appended with the class id as key), so compaction drops them all
 * once jsampled has the unload; the methods' handles and pending
 * resolutions go at once. Returns the last version appended, 0 if none (no
 * ids, or out of memory: counted in dropped_oom). */
uint64_t store_classes_unloaded_locked(struct agent_store *s, const uint32_t *class_ids, size_t n,
				       uint64_t time_ns);

/* Code bookkeeping: a load registers start -> id; an unload looks it up. */
int store_code_loaded_locked(struct agent_store *s, uint64_t start, uint64_t code_id);
/* Returns the code id live at start (and forgets it), or 0. */
uint64_t store_code_unloaded_locked(struct agent_store *s, uint64_t start);

/* Moves up to max pending methods into a new array *out (the caller frees
 * it); *left says how many remain pending. */
void store_take_pending(struct agent_store *s, size_t max, struct pending_method **out, size_t *n,
			size_t *left);

/* Serializes every record with version > since, in version order, into w as
 * the record section of a BATCH (count + records), up to about max_bytes.
 * Sets *upto to the last version included and *more if some were left. */
uint32_t store_write_batch(struct agent_store *s, uint64_t since, size_t max_bytes, struct wbuf *w,
			   uint64_t *upto, int *more);

/* Drops start/end record pairs whose end jsampled has acknowledged
 * (version <= acked), and the records of unloaded classes with them.
 * Returns the number of entries removed. */
size_t store_compact(struct agent_store *s, uint64_t acked);

#endif
