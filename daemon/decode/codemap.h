/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One JVM's generated code over time: compiled methods, the interpreter and
 * stubs, each with the interval during which it was live. A sample is
 * decoded against the code that was live when it was taken, even if that
 * code has been unloaded (and its addresses reused) since.
 */
#ifndef JSAMPLED_CODEMAP_H
#define JSAMPLED_CODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "userspace/common/wire.h"

#define CODE_LIVE UINT64_MAX

struct scope_frame {
	uint32_t method_id;
	int32_t bci;
};

/* The inline chain at one pc, innermost first. */
struct pc_scope {
	uint32_t pc_offset; /* from the blob's start */
	uint32_t first;     /* index into frames */
	uint8_t depth;
	/* A descriptor of another inlined call amid one call's code (see
	 * stray_scopes.h): an interrupted pc before it takes the scope
	 * after it. Return addresses (exact lookups) ignore this. */
	bool stray;
};

/* Where the frame is not in place (agent_protocol.h, enum js_frame_state). */
struct frame_state_span {
	uint32_t start, end; /* offsets from the blob's start */
	uint8_t state;
};

struct code_blob {
	uint64_t id;
	uint64_t start;
	uint32_t size;
	uint8_t kind;  /* enum js_code_kind */
	uint8_t flags; /* enum js_code_flags */
	uint64_t load_ns;
	uint64_t unload_ns; /* CODE_LIVE while live */
	int32_t frame_size_words;
	int32_t frame_complete_offset;
	int32_t verified_entry_offset;
	int32_t stub_offset;
	int32_t orig_pc_offset;
	int32_t entry_bci;
	int32_t comp_level;
	uint32_t method_id;
	char *name;
	uint32_t npcs;
	uint32_t nframes;
	struct pc_scope *pcs; /* sorted by pc_offset */
	struct scope_frame *frames;
	uint32_t nstates;
	struct frame_state_span *states; /* sorted, non-overlapping */
	/* The same code reported twice under two ids (an attach's replay of
	 * the code cache racing the JVM's own late load event): both end
	 * together, whichever id the unload names. */
	struct code_blob *twin;
};

/* Lookups by pc go through an implicit interval tree over the blobs sorted
 * by start (each index also stands for a node of a complete binary tree over
 * the array, and node i's max_end is the largest end in its subtree), so a
 * lookup costs O(log n + k) for the k blobs that hold the pc, however large
 * or nested the blobs are. The index is rebuilt lazily: new blobs are sorted
 * and merged in (O(n + new log new)), then max_end is recomputed (O(n)). */
/* The last search for a pc whose answer does not depend on the time from
 * 'from' on: the only blob holding it (or none), or the only one still
 * live among blobs that all were loaded, and the others unloaded, by
 * 'from' (code the JIT freed and reused). Entries of an older index
 * generation are stale. visited is what the search cost, counted again on
 * a hit so the decoder's work bound sees the same figures. The slots count
 * in the model's bytes (jvm_model_bytes).
 *
 * A walk looks up every return address it meets, so the cache is sized to
 * the code: CODEMAP_CACHE_PER_BLOB slots per blob, a power of two between
 * the bounds below (xalan's 3,500 blobs hold more call sites than 4,096
 * slots: a quarter of its lookups searched the index, 700 instructions
 * each, before the cache grew with the code). */
#define CODEMAP_CACHE_MIN_SLOTS 4096u
/* It starts at this size, for the many JVMs of a host that are seldom
 * sampled (256 KiB apiece would be most of their model), and grows to the
 * size above once it has missed as many times as it has slots. */
#define CODEMAP_CACHE_FIRST_SLOTS 256u
#define CODEMAP_CACHE_MAX_SLOTS 65536u
#define CODEMAP_CACHE_PER_BLOB 4u
/* A slot is one cache line, and holds what a walk's step through a plain
 * compiled frame needs (codemap_plain_step): such a step reads the slot of
 * its pc and the stack, not the blob, its scope or its scope's frames (in
 * a deep recursion a step is one each of those misses, in turn: the
 * blob's size gives the caller's return address, which gives the next
 * slot). */
enum codemap_plain { PLAIN_UNKNOWN, PLAIN_NO, PLAIN_YES };

struct codemap_hit {
	uint64_t pc;
	const struct code_blob *blob; /* NULL: no blob holds pc */
	uint64_t from;                /* the answer stands for times at or after this */
	uint32_t generation;
	uint32_t visited;
	/* The blob's scope at exactly pc (a return address), once asked. */
	const struct pc_scope *exact;
	/* codemap_plain_step's summary of blob at pc, once asked: its exact
	 * scope's frames (innermost first) and depth, the frame's size. */
	const struct scope_frame *frames;
	int32_t frame_size_words;
	/* The map's unload_epoch when blob was last seen live (0: not): no
	 * unload since, so it is live still, without reading it. */
	uint32_t live_epoch;
	uint8_t kind; /* blob's (enum js_code_kind) */
	uint8_t depth;
	bool exact_known;
	uint8_t plain; /* enum codemap_plain */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct codemap_hit) == 64, "a slot is one line");

struct codemap_node {
	uint64_t start, end, max_end, unused; /* 32 bytes: two to a line, none across two */
};

/* A cached hit says only one blob holds its pc: that stays true through a
 * new index unless a blob added since holds the pc too, or a blob went
 * (its pointer with it). The ranges recent index builds added are logged,
 * and a hit of an older index is checked against those added since when it
 * is next used (not every slot at every build: the cache has up to 65,536
 * slots, and a JIT that compiles all the time has the index rebuilt at
 * every batch of its agent's). */
#define CODEMAP_ADDED_LOG 512
struct codemap_added {
	uint64_t start, end;
	uint32_t generation; /* of the index it was added in */
};

struct codemap {
	VEC(struct code_blob *) blobs; /* the first 'sorted' are in start order */
	struct codemap_hit *hits;      /* nhits slots, allocated with the index */
	uint32_t nhits;                /* a power of two */
	uint32_t hit_misses;           /* searches since the cache was sized */
	uint32_t generation;           /* of the index; 0: none built yet */
	bool hits_void;                /* a blob was freed: no cached hit survives the next index */
	uint32_t hits_from;            /* hits of an older index are void */
	struct codemap_added *added;   /* a ring of CODEMAP_ADDED_LOG, newest at added_next - 1 */
	uint32_t added_next, added_n;
	size_t sorted;
	/* The index's nodes, one per sorted blob: the first 'sorted' blobs'
	 * start and end in their order (the index is merged and searched over
	 * these, not over the blobs themselves, each its own allocation: a
	 * miss apiece) and, once indexed, max_end (see above). A node a
	 * search visits is one line. */
	struct codemap_node *nodes;
	size_t nodes_cap;
	bool indexed; /* blobs all sorted and max_end current */
	struct u64_map by_id; /* code id -> struct code_blob * */
	/* Start address -> the live compiled method loaded last there: two
	 * live ones never share a start (HotSpot's code heap), so a load
	 * there ends the older one, or, for the same code, twins them. */
	struct u64_map live_at;
	size_t bytes;
	/* Counts every load, unload and prune; the latest load or unload
	 * time: a walk's outcome holds while neither moves (walk_reuse.h). */
	uint64_t changes;
	uint64_t latest_event_ns;
	uint32_t unload_epoch; /* counts unloads, from 1 (codemap_hit.live_epoch) */
	/* No unloaded blob is older: a prune before it has nothing to do and
	 * skips the walk over every blob (a miss apiece, each second). */
	uint64_t oldest_unload_ns;
};

void codemap_init(struct codemap *m);
void codemap_free(struct codemap *m);

/* Parses a CODE_LOAD / CODE_UNLOAD payload. -1 if malformed (no change).
 * A CODE_LOAD for an id already present replaces it. */
int codemap_load(struct codemap *m, struct rbuf *r);
int codemap_unload(struct codemap *m, struct rbuf *r);

/* The blob holding pc at time t, or NULL (also when the only ones that
 * did were unloaded by t). Where several did over time, the one live at t;
 * where ranges nest (a stub inside a stub blob), the smallest. *work (if not NULL) grows by the index nodes visited: the
 * decoder bounds its work per sample with it. */
const struct code_blob *codemap_find(struct codemap *m, uint64_t pc, uint64_t t);
const struct code_blob *codemap_find_counted(struct codemap *m, uint64_t pc, uint64_t t, uint32_t *work);
/* As codemap_find_counted, also giving the lookup cache's slot for pc
 * (NULL: none), which codemap_slot_scope takes. A hit of the current
 * index is answered inline (a walk looks up every return address it
 * meets: most are such hits), the rest out of line. */
const struct code_blob *codemap_find_searched(struct codemap *m, uint64_t pc, uint64_t t, uint32_t *work,
					      struct codemap_hit **slot);
static inline const struct code_blob *codemap_find_slot(struct codemap *m, uint64_t pc, uint64_t t, uint32_t *work,
							struct codemap_hit **slot)
{
	struct codemap_hit *h = m->hits ? &m->hits[u64_hash(pc) & (m->nhits - 1)] : NULL;

	if (!h || !m->blobs.n || !m->indexed || h->pc != pc || h->generation != m->generation || t < h->from)
		return codemap_find_searched(m, pc, t, work, slot);
	*slot = h;
	if (work)
		*work += h->visited;
	if (!h->blob || h->live_epoch == m->unload_epoch)
		return h->blob;
	if (h->blob->unload_ns == CODE_LIVE) {
		h->live_epoch = m->unload_epoch; /* live still, after another blob's unload */
		return h->blob;
	}
	return h->blob->unload_ns > t ? h->blob : NULL;
}

/* The slot codemap_find_slot gave with blob b for pc, if it summarizes a
 * plain compiled frame at pc (an nmethod's or native wrapper's, of known
 * size, pc outside its stub section, with an exact scope): the step's
 * frames and size without reading b (codemap_hit). NULL if not. */
const struct codemap_hit *codemap_plain_slow(struct codemap *m, struct codemap_hit *slot, const struct code_blob *b,
					     uint64_t pc);
static inline const struct codemap_hit *codemap_plain_step(struct codemap *m, struct codemap_hit *slot,
							   const struct code_blob *b, uint64_t pc)
{
	if (slot && slot->plain == PLAIN_YES && slot->pc == pc && slot->blob == b)
		return slot;
	return codemap_plain_slow(m, slot, b, pc);
}

/* The kind of blob b, found for pc in slot (codemap_find_slot), from the
 * slot where it holds b. */
static inline uint8_t codemap_slot_kind(const struct codemap_hit *slot, const struct code_blob *b, uint64_t pc)
{
	return slot && slot->pc == pc && slot->blob == b ? slot->kind : b->kind;
}

/* The scope at a pc inside blob b: for a return address (exact=true) the
 * descriptor at exactly that pc; for an interrupted pc the first one
 * strictly after it. A descriptor's pc is the end of the instruction it
 * describes (C2 records it after emitting the instruction), so the
 * instruction at pc belongs to the next one. (HotSpot's pc_desc_near takes
 * >=, which names the instruction before pc.) For an interrupted pc, stray
 * descriptors are passed over. NULL if none. */
const struct pc_scope *code_blob_scope(const struct code_blob *b, uint64_t pc, bool exact);

/* code_blob_scope(b, pc, true) for b the blob codemap_find gave for pc,
 * remembered with the lookup: a walk asks it for every return address. */
const struct pc_scope *codemap_exact_scope(struct codemap *m, const struct code_blob *b, uint64_t pc);
/* The same for blob b found at pc by codemap_find_slot, given its slot,
 * while no code came or went since (within one sample's walk): other
 * lookups may have taken the slot, but if it still holds pc and b it
 * holds b's scope at pc, without checking the cache's generation again. */
const struct pc_scope *codemap_slot_scope(struct codemap *m, struct codemap_hit *slot, const struct code_blob *b,
					  uint64_t pc);

/* The frame state at pc, or -1 if the frame is fully built there. */
int code_blob_frame_state(const struct code_blob *b, uint64_t pc);

/* Calls each() with every method id the blobs name (compiled root and
 * inlined methods); stops at, and returns, the first nonzero result. */
int codemap_each_method(const struct codemap *m, int (*each)(void *ctx, uint32_t id), void *ctx);

/* Forgets blobs unloaded before t (no sample that old is left). */
size_t codemap_prune(struct codemap *m, uint64_t before_ns);

#endif
