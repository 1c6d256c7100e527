/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's model of a JVM from agent records: code map lookups over time
 * and nesting, scope lookups, frame states, methods, and refusal of
 * malformed or lying records. */
#include <stdlib.h>

#include "daemon/decode/decoder.h"
#include "daemon/decode/jvm_model.h"
#include "daemon/decode/walk_reuse.h"
#include "check.h"
#include "model_builder.h"

static void test_find_nested_and_timed(void)
{
	struct jvm_model m;
	const struct code_blob *b;
	const struct test_code outer = {.id = 1, .kind = JS_CODE_STUB, .start = 0x1000, .size = 0x1000,
					.frame_size = 0, .frame_complete = -1, .name = "StubRoutines (1)"};
	const struct test_code inner = {.id = 2, .kind = JS_CODE_STUB, .start = 0x1400, .size = 0x40,
					.frame_size = 0, .frame_complete = -1, .name = "jbyte_arraycopy"};
	const struct test_code old = {.id = 3, .kind = JS_CODE_NMETHOD, .start = 0x8000, .size = 0x100,
				      .frame_size = 4, .frame_complete = 8, .method_id = 7, .load_ns = 10};
	const struct test_code young = {.id = 4, .kind = JS_CODE_NMETHOD, .start = 0x8000, .size = 0x80,
					.frame_size = 4, .frame_complete = 8, .method_id = 8, .load_ns = 300};

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &inner) == 0);
	CHECK(tb_apply_code(&m, &outer) == 0);
	CHECK(tb_apply_code(&m, &old) == 0);
	b = codemap_find(&m.code, 0x1410, 5);
	CHECK(b && b->id == 2); /* the smallest range wins */
	b = codemap_find(&m.code, 0x1500, 5);
	CHECK(b && b->id == 1);
	CHECK(codemap_find(&m.code, 0x2000, 5) == NULL);
	CHECK(codemap_find(&m.code, 0xfff, 5) == NULL);

	CHECK(tb_apply_unload(&m, 3, 200) == 0);
	CHECK(tb_apply_code(&m, &young) == 0);
	b = codemap_find(&m.code, 0x8010, 100); /* live at 100: the old one */
	CHECK(b && b->id == 3);
	b = codemap_find(&m.code, 0x8010, 400);
	CHECK(b && b->id == 4);
	/* Between the old one's unload and the young one's load event: the
	 * young one was installed before its event arrived. */
	b = codemap_find(&m.code, 0x8010, 250);
	CHECK(b && b->id == 4);
	/* Only the old range covers it, but the old code was gone by 400: the
	 * code there then is not known (yet), and the sample must wait. */
	CHECK(codemap_find(&m.code, 0x80f0, 400) == NULL);
	b = codemap_find(&m.code, 0x80f0, 150);
	CHECK(b && b->id == 3);
	CHECK(tb_apply_unload(&m, 99, 1) == -1); /* unknown id */
	CHECK_EQ(codemap_prune(&m.code, 200), 0); /* unloaded at 200, not before */
	CHECK_EQ(codemap_prune(&m.code, 250), 1);
	CHECK(codemap_find(&m.code, 0x80f0, 100) == NULL);
	CHECK_EQ(codemap_prune(&m.code, 1000), 0); /* nothing else unloaded */
	CHECK(tb_apply_unload(&m, 2, 900) == 0);
	CHECK(tb_apply_unload(&m, 4, 500) == 0);
	CHECK_EQ(codemap_prune(&m.code, 600), 1); /* the oldest unload only */
	b = codemap_find(&m.code, 0x1410, 800);
	CHECK(b && b->id == 2);
	CHECK_EQ(codemap_prune(&m.code, 1000), 1); /* the one after it, still known */
	b = codemap_find(&m.code, 0x1410, 800);
	CHECK(b && b->id == 1); /* only the outer stub is left there */
	jvm_model_free(&m);
}

/* Cached lookups across new indexes (codemap.c keeps a hit through a
 * rebuild unless a blob added since holds its pc too, or a blob went): a
 * blob added over a cached pc wins where it should, one added elsewhere
 * leaves the cached answer, and a replaced or pruned blob is never
 * answered from the cache. */
static void test_cached_hits_across_indexes(void)
{
	struct jvm_model m;
	const struct code_blob *b;
	const struct test_code a = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x1000,
				    .frame_size = 4, .frame_complete = 8, .method_id = 1, .load_ns = 10};
	const struct test_code inside = {.id = 2, .kind = JS_CODE_STUB, .start = 0x1400, .size = 0x40,
					 .frame_size = 0, .frame_complete = -1, .name = "stub", .load_ns = 20};
	const struct test_code elsewhere = {.id = 3, .kind = JS_CODE_NMETHOD, .start = 0x9000, .size = 0x100,
					    .frame_size = 4, .frame_complete = 8, .method_id = 3, .load_ns = 20};
	struct test_code again = a;

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &a) == 0);
	b = codemap_find(&m.code, 0x1410, 50);
	CHECK(b && b->id == 1);
	CHECK(codemap_find(&m.code, 0x1800, 50) && codemap_find(&m.code, 0x1800, 50)->id == 1);
	CHECK(tb_apply_code(&m, &elsewhere) == 0);
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 1);
	CHECK(tb_apply_code(&m, &inside) == 0);
	b = codemap_find(&m.code, 0x1410, 50); /* cached as blob 1's before */
	CHECK(b && b->id == 2);
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 1);
	b = codemap_find(&m.code, 0x9010, 50);
	CHECK(b && b->id == 3);
	/* The same id again replaces (and frees) blob 1. */
	again.method_id = 9;
	CHECK(tb_apply_code(&m, &again) == 0);
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 1 && b->method_id == 9);
	CHECK(tb_apply_unload(&m, 3, 30) == 0);
	CHECK(codemap_find(&m.code, 0x9010, 50) == NULL); /* unloaded by then */
	b = codemap_find(&m.code, 0x9010, 25); /* not yet */
	CHECK(b && b->id == 3);
	b = codemap_find(&m.code, 0x1800, 50); /* live through another blob's unload */
	CHECK(b && b->id == 1);
	CHECK(tb_apply_unload(&m, 1, 60) == 0);
	CHECK(codemap_find(&m.code, 0x1800, 70) == NULL); /* its slot said live before */
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 1);
	CHECK_EQ(codemap_prune(&m.code, 40), 1);
	CHECK(codemap_find(&m.code, 0x9010, 25) == NULL); /* pruned */
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->method_id == 9);
	jvm_model_free(&m);
}

/* A hit cached several indexes ago is checked against the code every
 * index since added (codemap.h, CODEMAP_ADDED_LOG), not only the last:
 * a blob added over its pc two rebuilds ago wins; and past what the log
 * holds (one batch of more blobs than that), the cache starts over. */
static void test_cached_hits_across_many_indexes(void)
{
	struct jvm_model m;
	const struct code_blob *b;
	const struct test_code a = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x1000,
				    .frame_size = 4, .frame_complete = 8, .method_id = 1, .load_ns = 10};
	const struct test_code inside = {.id = 2, .kind = JS_CODE_STUB, .start = 0x1400, .size = 0x40,
					 .frame_size = 0, .frame_complete = -1, .name = "stub", .load_ns = 20};
	struct test_code other = {.kind = JS_CODE_NMETHOD, .size = 0x10, .frame_size = 4, .frame_complete = 8,
				  .method_id = 3, .load_ns = 20};

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &a) == 0);
	b = codemap_find(&m.code, 0x1410, 50);
	CHECK(b && b->id == 1);
	CHECK(tb_apply_code(&m, &inside) == 0);
	other.id = 3;
	other.start = 0x9000;
	CHECK(tb_apply_code(&m, &other) == 0);
	CHECK(codemap_find(&m.code, 0x9000, 50) != NULL); /* the first rebuild */
	other.id = 4;
	other.start = 0x9100;
	CHECK(tb_apply_code(&m, &other) == 0);
	CHECK(codemap_find(&m.code, 0x9100, 50) != NULL); /* the second */
	b = codemap_find(&m.code, 0x1410, 50);            /* cached two rebuilds ago */
	CHECK(b && b->id == 2);
	CHECK(codemap_exact_scope(&m.code, b, 0x1410) == code_blob_scope(b, 0x1410, true));
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 1);
	/* More new blobs in one index than the log holds, one of them over a
	 * cached pc. */
	for (uint32_t i = 0; i < CODEMAP_ADDED_LOG + 8; i++) {
		other.id = 100 + i;
		other.start = i == CODEMAP_ADDED_LOG / 2 ? 0x1800 : 0x100000 + 0x100 * (uint64_t)i;
		other.kind = i == CODEMAP_ADDED_LOG / 2 ? JS_CODE_STUB : JS_CODE_NMETHOD;
		CHECK(tb_apply_code(&m, &other) == 0);
	}
	b = codemap_find(&m.code, 0x1800, 50);
	CHECK(b && b->id == 100 + CODEMAP_ADDED_LOG / 2);
	b = codemap_find(&m.code, 0x1410, 50);
	CHECK(b && b->id == 2);
	jvm_model_free(&m);
}

/* Code the JIT freed and reused: a pc held by an unloaded blob and a live
 * one is cached for times after both (the live one), and an older sample's
 * lookup still finds the blob live at its time. */
static void test_cached_hits_of_reused_code(void)
{
	struct jvm_model m;
	const struct code_blob *b;
	const struct test_code old = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x100,
				      .frame_size = 4, .frame_complete = 8, .method_id = 1, .load_ns = 10};
	struct test_code reused = old;

	reused.id = 2;
	reused.method_id = 2;
	reused.load_ns = 30;
	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &old) == 0);
	CHECK(tb_apply_unload(&m, 1, 20) == 0);
	CHECK(tb_apply_code(&m, &reused) == 0);
	{
		/* The lookup cache, made with the first index, is the model's
		 * memory too (--max-model-mb). */
		size_t before = jvm_model_bytes(&m);

		CHECK(codemap_find(&m.code, 0x1010, 40) != NULL);
		CHECK(jvm_model_bytes(&m) >= before + CODEMAP_CACHE_FIRST_SLOTS * sizeof(struct codemap_hit));
		/* It starts small and grows once it has missed as often as it
		 * has slots. */
		for (uint64_t pc = 0x10000; pc < 0x10000 + 2 * CODEMAP_CACHE_FIRST_SLOTS; pc++)
			CHECK(codemap_find(&m.code, pc, 40) == NULL);
		CHECK(jvm_model_bytes(&m) >= before + CODEMAP_CACHE_MIN_SLOTS * sizeof(struct codemap_hit));
	}
	for (int pass = 0; pass < 2; pass++) { /* the second pass meets the cache */
		b = codemap_find(&m.code, 0x1010, 40);
		CHECK(b && b->id == 2);
		b = codemap_find(&m.code, 0x1010, 15);
		CHECK(b && b->id == 1);
		b = codemap_find(&m.code, 0x1010, 40);
		CHECK(b && b->id == 2);
	}
	CHECK(tb_apply_unload(&m, 2, 50) == 0);
	b = codemap_find(&m.code, 0x1010, 45);
	CHECK(b && b->id == 2);
	CHECK(codemap_find(&m.code, 0x1010, 60) == NULL);
	b = codemap_find(&m.code, 0x1010, 15);
	CHECK(b && b->id == 1);
	jvm_model_free(&m);
}

/* The same code reported under two ids (a late attach replays the code
 * cache with GenerateEvents while the JVM's own load event for a method
 * compiled meanwhile is still queued: either may come first), and new code
 * loaded at the start of code whose unload has not come: two live blobs
 * never share a start. A stale twin left live nests inside the code that
 * later reuses its addresses and would win every lookup there (the
 * smallest range wins), failing samples as not_a_call_site instead of
 * holding them for the new code. */
static void test_twin_reports_and_reused_starts(void)
{
	struct jvm_model m;
	const struct code_blob *b;
	const struct test_code live = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x4000, .size = 0x100,
				       .frame_size = 4, .frame_complete = 8, .method_id = 5, .load_ns = 100};
	const struct test_code reuse = {.id = 3, .kind = JS_CODE_NMETHOD, .start = 0x3f00, .size = 0x400,
					.frame_size = 6, .frame_complete = 8, .method_id = 9, .load_ns = 600};
	struct test_code replayed = live, first = {.id = 20, .kind = JS_CODE_NMETHOD, .start = 0x8000, .size = 0x80,
						   .frame_size = 4, .frame_complete = 8, .method_id = 1, .load_ns = 100};
	struct test_code over = first;

	replayed.id = 2;
	replayed.load_ns = 0;
	over.id = 21;
	over.size = 0x200;
	over.method_id = 2;
	over.load_ns = 300;
	for (int replay_first = 0; replay_first < 2; replay_first++) {
		jvm_model_init(&m);
		CHECK(tb_apply_code(&m, replay_first ? &replayed : &live) == 0);
		CHECK(tb_apply_code(&m, replay_first ? &live : &replayed) == 0);
		b = codemap_find(&m.code, 0x4010, 50); /* before the live event's time: the replay's */
		CHECK(b && b->id == 2);
		b = codemap_find(&m.code, 0x4010, 200);
		CHECK(b && b->method_id == 5);
		/* The agent's unload names one of the two ids: both end. */
		CHECK(tb_apply_unload(&m, replay_first ? 1 : 2, 500) == 0);
		CHECK(codemap_find(&m.code, 0x4010, 550) == NULL); /* unknown until new code comes */
		CHECK(tb_apply_code(&m, &reuse) == 0);
		b = codemap_find(&m.code, 0x4010, 700);
		CHECK(b && b->id == 3);
		b = codemap_find(&m.code, 0x4010, 200);
		CHECK(b && b->method_id == 5);
		/* A late unload of the other twin changes nothing. */
		CHECK(tb_apply_unload(&m, replay_first ? 2 : 1, 650) == 0);
		b = codemap_find(&m.code, 0x4010, 550);
		CHECK(b && b->id == 3); /* installed before its event: as for reused code */
		CHECK_EQ(codemap_prune(&m.code, 520), 2);
		jvm_model_free(&m);
	}
	/* New code at a live blob's start, its unload not come: the old ends
	 * at the new one's load. */
	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &first) == 0);
	CHECK(tb_apply_code(&m, &over) == 0);
	b = codemap_find(&m.code, 0x8010, 400);
	CHECK(b && b->id == 21);
	b = codemap_find(&m.code, 0x8010, 200);
	CHECK(b && b->id == 20);
	CHECK(tb_apply_unload(&m, 20, 350) == 0); /* its own unload, later: the earlier end stands */
	b = codemap_find(&m.code, 0x8010, 320);
	CHECK(b && b->id == 21);
	jvm_model_free(&m);
}

/* Lookups stay cheap whatever the agent reports: 20,000 blobs plus one
 * huge blob over all of them (a lying agent's), blobs loaded in any order
 * and after lookups (the index is rebuilt), and a reference lookup by
 * scanning agrees with the index on every probe. */
static void test_lookup_cost(void)
{
	struct jvm_model m;
	const uint32_t n = 20000;
	uint32_t work = 0, worst = 0;

	jvm_model_init(&m);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = (i * 7919u) % n; /* any order */
		const struct test_code c = {.id = 10 + k, .kind = JS_CODE_NMETHOD, .start = 0x100000 + 0x100 * (uint64_t)k,
					    .size = 0x80, .frame_size = 2, .frame_complete = 0, .method_id = 1};
		CHECK(tb_apply_code(&m, &c) == 0);
		if (i == n / 2)
			codemap_find(&m.code, 0x100000, 0); /* index built half way */
	}
	const struct test_code huge = {.id = 5, .kind = JS_CODE_STUB, .start = 0x100000, .size = 0x100 * n,
				       .frame_size = 0, .frame_complete = -1};
	CHECK(tb_apply_code(&m, &huge) == 0);
	for (uint32_t probe = 0; probe < 4000; probe++) {
		uint64_t pc = 0x100000 + (uint64_t)probe * 0x100 * (n / 4000) + (probe % 2 ? 0x90 : 0x10);
		const struct code_blob *slow = NULL;

		work = 0;
		const struct code_blob *b = codemap_find_counted(&m.code, pc, 1, &work);
		if (work > worst)
			worst = work;
		for (size_t i = 0; i < m.code.blobs.n; i++) { /* the reference: every blob */
			const struct code_blob *c = m.code.blobs.v[i];
			if (pc >= c->start && pc < c->start + c->size && (!slow || c->size < slow->size))
				slow = c;
		}
		CHECK(b == slow);
	}
	/* log2(20001) is about 15: a lookup visits a few dozen nodes, not 20,000. */
	printf("  worst lookup: %u index nodes of %zu blobs\n", worst, m.code.blobs.n);
	CHECK(worst < 100);
	jvm_model_free(&m);
}

/* The index merged batch by batch (blobs in any order, many at equal
 * starts: nested, the smallest wins), with blobs replaced, unloaded and
 * pruned between merges: every lookup agrees with a scan of all blobs.
 * Stubs, which may nest (two live compiled methods never overlap:
 * test_twin_reports_and_reused_starts). */
static void test_index_merges_and_removals(void)
{
	struct jvm_model m;
	uint32_t x = 12345, next_id = 1;

	jvm_model_init(&m);
	for (int round = 0; round < 60; round++) {
		uint32_t batch = 1 + (x = x * 1103515245u + 12345u) % 40;

		for (uint32_t i = 0; i < batch; i++) {
			x = x * 1103515245u + 12345u;
			/* Every fifth round replaces an id loaded before (the old
			 * blob goes); starts fall on a coarse grid: some equal. */
			uint32_t id = round % 5 == 4 && next_id > 10 ? 1 + x % (next_id - 1) : next_id++;
			const struct test_code c = {.id = id, .kind = JS_CODE_STUB,
						    .start = 0x100000 + 0x100 * (uint64_t)(x >> 8 & 255),
						    .size = 0x20 + 0x20 * (x >> 20 & 7), .frame_size = 2,
						    .frame_complete = 0, .method_id = 1, .load_ns = (uint64_t)round};
			CHECK(tb_apply_code(&m, &c) == 0);
		}
		if (round % 7 == 6) {
			(void)tb_apply_unload(&m, 1 + x % (next_id - 1), (uint64_t)round); /* pruned already: -1 */
			codemap_prune(&m.code, (uint64_t)round);
		}
		for (int probe = 0; probe < 200; probe++) {
			uint64_t pc = 0x100000 + (x = x * 1103515245u + 12345u) % (0x100 * 256);
			const struct code_blob *slow = NULL, *b = codemap_find(&m.code, pc, 1000);

			for (size_t i = 0; i < m.code.blobs.n; i++) { /* the reference: every blob live at 1000 */
				const struct code_blob *c = m.code.blobs.v[i];
				if (pc >= c->start && pc < c->start + c->size && c->unload_ns > 1000 &&
				    (!slow || c->size < slow->size ||
				     (c->size == slow->size && c->load_ns > slow->load_ns)))
					slow = c;
			}
			CHECK(b == slow || (b && slow && b->size == slow->size && b->load_ns == slow->load_ns));
		}
	}
	jvm_model_free(&m);
}

static void test_scopes_and_states(void)
{
	struct jvm_model m;
	static const struct test_scope scopes[] = {{0x40, 1, {1}, {3}}, {0x20, 2, {2, 1}, {4, 5}}};
	static const struct test_state states[] = {{0, 5, JS_FRAME_STATE_NO_FRAME},
						   {5, 8, JS_FRAME_STATE_RBP_PUSHED},
						   {0x60, 0x61, JS_FRAME_STATE_NO_FRAME}};
	const struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x80,
				    .frame_size = 4, .frame_complete = 8, .method_id = 1,
				    .scopes = scopes, .nscopes = 2, .states = states, .nstates = 3};
	const struct code_blob *b;
	const struct pc_scope *sc;

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &c) == 0);
	b = codemap_find(&m.code, 0x1000, 0);
	CHECK(b != NULL);
	if (!b)
		return;
	sc = code_blob_scope(b, 0x1020, true);
	CHECK(sc && sc->depth == 2 && b->frames[sc->first].method_id == 2);
	CHECK(code_blob_scope(b, 0x1021, true) == NULL);
	sc = code_blob_scope(b, 0x1020, false); /* strictly after: the next one */
	CHECK(sc && sc->pc_offset == 0x40);
	sc = code_blob_scope(b, 0x101f, false);
	CHECK(sc && sc->pc_offset == 0x20);
	CHECK(code_blob_scope(b, 0x1041, false) == NULL);
	CHECK_EQ(code_blob_frame_state(b, 0x1000), JS_FRAME_STATE_NO_FRAME);
	CHECK_EQ(code_blob_frame_state(b, 0x1004), JS_FRAME_STATE_NO_FRAME);
	CHECK_EQ(code_blob_frame_state(b, 0x1005), JS_FRAME_STATE_RBP_PUSHED);
	CHECK_EQ(code_blob_frame_state(b, 0x1008), -1);
	CHECK_EQ(code_blob_frame_state(b, 0x1060), JS_FRAME_STATE_NO_FRAME);
	CHECK_EQ(code_blob_frame_state(b, 0x1061), -1);
	jvm_model_free(&m);
}

/* A code-lookup slot summarizes a plain compiled frame at a return address
 * (codemap_plain_step): the exact scope's frames, the frame's size and
 * kind, as the blob has them; not where the step needs the blob (no exact
 * scope there, a stub section, a stub). */
static void test_plain_step_slots(void)
{
	struct jvm_model m;
	static const struct test_scope scopes[] = {{0x20, 2, {2, 1}, {4, 5}}, {0x40, 1, {1}, {3}}};
	const struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x80,
				    .frame_size = 6, .frame_complete = 8, .method_id = 1, .stub_offset = 0x30,
				    .scopes = scopes, .nscopes = 2, .load_ns = 1};
	const struct test_code stub = {.id = 2, .kind = JS_CODE_STUB, .start = 0x2000, .size = 0x40,
				       .frame_size = 2, .frame_complete = 0, .name = "stub", .load_ns = 1};
	const struct codemap_hit *h;
	struct codemap_hit *slot;
	const struct code_blob *b;

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &c) == 0);
	CHECK(tb_apply_code(&m, &stub) == 0);
	for (int twice = 0; twice < 2; twice++) { /* made, then as made */
		b = codemap_find_slot(&m.code, 0x1020, 5, NULL, &slot);
		h = b ? codemap_plain_step(&m.code, slot, b, 0x1020) : NULL;
		CHECK(h && h->depth == 2 && h->frames[0].method_id == 2 && h->frames[0].bci == 4 &&
		      h->frames[1].method_id == 1 && h->frames[1].bci == 5 && h->frame_size_words == 6 &&
		      h->kind == JS_CODE_NMETHOD);
	}
	b = codemap_find_slot(&m.code, 0x1021, 5, NULL, &slot); /* no exact scope */
	CHECK(b && !codemap_plain_step(&m.code, slot, b, 0x1021));
	b = codemap_find_slot(&m.code, 0x1040, 5, NULL, &slot); /* in the stub section */
	CHECK(b && !codemap_plain_step(&m.code, slot, b, 0x1040));
	b = codemap_find_slot(&m.code, 0x2010, 5, NULL, &slot);
	CHECK(b && b->id == 2 && !codemap_plain_step(&m.code, slot, b, 0x2010));
	CHECK(codemap_slot_kind(slot, b, 0x2010) == JS_CODE_STUB);
	jvm_model_free(&m);
}


/* Whether the scope code_blob_scope gives for pc is the descriptor at
 * offset, with method at inline level (0: innermost). */
static bool scope_at(const struct code_blob *b, uint64_t pc, bool exact, uint32_t offset, uint32_t level,
		     uint32_t method)
{
	const struct pc_scope *sc = code_blob_scope(b, pc, exact);

	return sc && sc->pc_offset == offset && level < sc->depth && b->frames[sc->first + level].method_id == method;
}

/* A node GVN shared across a method's inlined calls keeps its first call's
 * scope: its descriptors stand alone in the code of other calls (as
 * phaseHash@54 in runPhase's phaseSort and fib code, seen in a real
 * runPhase nmethod). An interrupted pc before one takes the scope after
 * it; return addresses keep the exact scope; two calls unrolled together
 * in one loop interleave without either being taken for a shared node. */
static void test_stray_scopes(void)
{
	enum { RUNPHASE = 1, HASH = 2, SORT = 3, RECURSE = 4, FIB = 5, VALUEOF = 6, A = 7, B = 8 };
	static const struct test_scope scopes[] = {
		{0x10, 1, {RUNPHASE}, {-1}},
		{0x20, 2, {SORT, RUNPHASE}, {3, 43}},
		{0x28, 2, {HASH, RUNPHASE}, {54, 36}}, /* shared node in phaseSort's code */
		{0x40, 2, {SORT, RUNPHASE}, {29, 43}},
		{0x90, 2, {HASH, RUNPHASE}, {54, 36}}, /* and in its loop */
		{0x98, 2, {SORT, RUNPHASE}, {47, 43}},
		{0xa0, 2, {HASH, RUNPHASE}, {54, 36}},
		{0xb0, 2, {SORT, RUNPHASE}, {47, 43}},
		{0xc0, 3, {FIB, RECURSE, RUNPHASE}, {13, 12, 50}},
		{0xc8, 2, {HASH, RUNPHASE}, {54, 36}}, /* in phaseRecurse's code */
		{0xd0, 3, {FIB, RECURSE, RUNPHASE}, {19, 12, 50}},
		{0xe0, 2, {HASH, RUNPHASE}, {60, 36}},
		{0xe8, 2, {HASH, RUNPHASE}, {54, 36}}, /* phaseHash's own code */
		{0xf0, 3, {VALUEOF, HASH, RUNPHASE}, {23, 54, 36}},
	};
	const struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x100,
				    .frame_size = 4, .frame_complete = 8, .method_id = RUNPHASE,
				    .scopes = scopes, .nscopes = sizeof(scopes) / sizeof(scopes[0])};
	static const struct test_scope unrolled[] = {
		{0x10, 2, {A, RUNPHASE}, {1, 10}}, {0x18, 2, {B, RUNPHASE}, {1, 12}}, {0x20, 2, {A, RUNPHASE}, {1, 10}},
		{0x28, 2, {B, RUNPHASE}, {1, 12}}, {0x30, 2, {A, RUNPHASE}, {1, 10}}, {0x38, 2, {B, RUNPHASE}, {1, 12}},
		{0x40, 2, {A, RUNPHASE}, {1, 10}}, {0x48, 2, {B, RUNPHASE}, {1, 12}}, {0x50, 2, {A, RUNPHASE}, {1, 10}},
	};
	const struct test_code u = {.id = 2, .kind = JS_CODE_NMETHOD, .start = 0x2000, .size = 0x100,
				    .frame_size = 4, .frame_complete = 8, .method_id = RUNPHASE,
				    .scopes = unrolled, .nscopes = sizeof(unrolled) / sizeof(unrolled[0])};
	const struct code_blob *b;
	const struct pc_scope *sc;
	struct jvm_model m;

	jvm_model_init(&m);
	CHECK(tb_apply_code(&m, &c) == 0);
	CHECK(tb_apply_code(&m, &u) == 0);
	b = codemap_find(&m.code, 0x1000, 0);
	CHECK(b != NULL);
	if (b) {
		/* In phaseSort's loop: the next descriptor is the shared node's. */
		CHECK(scope_at(b, 0x1080, false, 0x98, 0, SORT));
		sc = code_blob_scope(b, 0x1024, false);
		CHECK(sc && sc->pc_offset == 0x40);
		CHECK(scope_at(b, 0x10c4, false, 0xd0, 0, FIB));
		/* In phaseHash's own code the same scope is phaseHash's. */
		CHECK(scope_at(b, 0x10e4, false, 0xe8, 0, HASH));
		/* A return address there is exactly what the JIT said. */
		CHECK(scope_at(b, 0x1090, true, 0x90, 0, HASH));
	}
	b = codemap_find(&m.code, 0x2000, 0);
	CHECK(b != NULL);
	for (uint32_t i = 0; b && i < b->npcs; i++)
		CHECK(!b->pcs[i].stray);
	jvm_model_free(&m);
}

/* A runPhase nmethod at 0x1000 of size bytes with these descriptors,
 * loaded into m (initialised here); the blob, NULL if it did not load. */
static const struct code_blob *load_runphase(struct jvm_model *m, const struct test_scope *scopes, uint32_t n,
					     uint32_t size)
{
	const struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = size,
				    .frame_size = 4, .frame_complete = 8, .method_id = 1, /* RUNPHASE */
				    .scopes = scopes, .nscopes = n};
	const struct code_blob *b;

	jvm_model_init(m);
	CHECK(tb_apply_code(m, &c) == 0);
	b = codemap_find(&m->code, 0x1000, 0);
	CHECK(b != NULL);
	return b;
}

/* Two shared nodes' descriptors side by side amid a call's code, so that
 * each has the other for a neighbour (JDK 17's runPhase: phaseHash@54 then
 * phaseRecurse@20 in phaseSort's code; phaseRecurse@20 stood alone only
 * twice otherwise, and 10 samples of phaseSort and phaseHash were charged
 * to it in a test_sample_truth run): once phaseHash@54 is found, seen
 * through, phaseRecurse@20 stands alone a third time and is found too. */
static void test_stray_scope_pairs(void)
{
	enum { RUNPHASE = 1, HASH = 2, SORT = 3, RECURSE = 4, VALUEOF = 5, FIB = 6 };
	static const struct test_scope scopes[] = {
		{0x0c, 1, {RUNPHASE}, {-1}},
		{0x11, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x2e, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* alone in phaseHash's code */
		{0x70, 2, {HASH, RUNPHASE}, {0, 36}},
		{0x167, 2, {SORT, RUNPHASE}, {3, 43}},
		{0x16d, 2, {HASH, RUNPHASE}, {54, 36}}, /* alone in phaseSort's code (3x) */
		{0x186, 2, {SORT, RUNPHASE}, {29, 43}},
		{0x281, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x286, 2, {SORT, RUNPHASE}, {47, 43}},
		{0x2b0, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x2d3, 2, {SORT, RUNPHASE}, {47, 43}},
		{0x2d6, 2, {HASH, RUNPHASE}, {54, 36}}, /* the pair, */
		{0x2e7, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* neither alone */
		{0x2ee, 2, {SORT, RUNPHASE}, {51, 43}},
		{0x3fc, 3, {FIB, RECURSE, RUNPHASE}, {13, 12, 50}},
		{0x401, 2, {HASH, RUNPHASE}, {54, 36}}, /* and in phaseRecurse's */
		{0x40c, 3, {FIB, RECURSE, RUNPHASE}, {19, 12, 50}},
		{0x59f, 2, {HASH, RUNPHASE}, {53, 36}},
		{0x5a2, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x5bb, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* alone in phaseHash's code */
		{0x5d8, 3, {VALUEOF, HASH, RUNPHASE}, {23, 60, 36}},
		{0x5f5, 2, {HASH, RUNPHASE}, {54, 36}},
	};
	struct jvm_model m;
	const struct code_blob *b = load_runphase(&m, scopes, sizeof(scopes) / sizeof(scopes[0]), 0x700);

	if (b) {
		/* In phaseHash's loop, before phaseRecurse's shared node: phaseHash. */
		CHECK(scope_at(b, 0x15ab, false, 0x5d8, 1, HASH));
		/* In phaseSort's code, before the pair: phaseSort. */
		CHECK(scope_at(b, 0x12d5, false, 0x2ee, 0, SORT));
		CHECK(scope_at(b, 0x12e0, false, 0x2ee, 0, SORT));
		/* phaseHash's own code keeps its descriptors. */
		CHECK(scope_at(b, 0x1020, false, 0x70, 0, HASH));
		/* Return addresses are exact. */
		CHECK(scope_at(b, 0x12e7, true, 0x2e7, 0, RECURSE));
	}
	jvm_model_free(&m);
}

/* Shared nodes' descriptors in a run, none standing alone (JDK 25's
 * runPhase: phaseHash's and phaseRecurse's `sink` nodes one after the
 * other in phaseMatrix's loop, 0.7 % of the profile charged to phaseHash):
 * once the rounds know their scopes, the run is stray too. */
static void test_stray_scope_runs(void)
{
	enum { RUNPHASE = 1, HASH = 2, MATRIX = 3, RECURSE = 4, FIB = 5 };
	static const struct test_scope scopes[] = {
		{0x10, 1, {RUNPHASE}, {-1}},
		{0x20, 2, {MATRIX, RUNPHASE}, {97, 29}},
		{0x28, 2, {HASH, RUNPHASE}, {54, 36}}, /* alone in phaseMatrix's code */
		{0x30, 2, {MATRIX, RUNPHASE}, {118, 29}},
		{0x38, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x40, 2, {MATRIX, RUNPHASE}, {97, 29}},
		{0x48, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* alone too */
		{0x50, 2, {MATRIX, RUNPHASE}, {118, 29}},
		{0x58, 2, {HASH, RUNPHASE}, {54, 36}}, /* a run of three */
		{0x60, 2, {RECURSE, RUNPHASE}, {20, 50}},
		{0x68, 2, {HASH, RUNPHASE}, {54, 36}},
		{0x70, 2, {MATRIX, RUNPHASE}, {142, 29}},
		{0x78, 2, {RECURSE, RUNPHASE}, {20, 50}},
		{0x80, 2, {MATRIX, RUNPHASE}, {148, 29}},
		{0x90, 3, {FIB, RECURSE, RUNPHASE}, {13, 12, 50}}, /* in phaseRecurse's code */
		{0x98, 2, {HASH, RUNPHASE}, {54, 36}},
		{0xa0, 3, {FIB, RECURSE, RUNPHASE}, {19, 12, 50}},
		{0xa8, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* phaseRecurse's own */
		{0xb0, 2, {HASH, RUNPHASE}, {60, 36}},
		{0xb8, 2, {HASH, RUNPHASE}, {54, 36}}, /* phaseHash's own */
		{0xc0, 2, {HASH, RUNPHASE}, {66, 36}},
		{0xc8, 2, {RECURSE, RUNPHASE}, {20, 50}}, /* alone in phaseHash's code */
		{0xd0, 2, {HASH, RUNPHASE}, {60, 36}},
	};
	struct jvm_model m;
	const struct code_blob *b = load_runphase(&m, scopes, sizeof(scopes) / sizeof(scopes[0]), 0x100);

	if (b) {
		/* Before the run, and inside it: phaseMatrix's next descriptor. */
		CHECK(scope_at(b, 0x1054, false, 0x70, 0, MATRIX));
		CHECK(scope_at(b, 0x1064, false, 0x70, 0, MATRIX));
		/* The owners' own code keeps its descriptors. */
		CHECK(scope_at(b, 0x10b4, false, 0xb8, 0, HASH));
		CHECK(scope_at(b, 0x10a4, false, 0xa8, 0, RECURSE));
		/* Return addresses are exact. */
		CHECK(scope_at(b, 0x1058, true, 0x58, 0, HASH));
	}
	jvm_model_free(&m);
}

static void test_lying_code_records(void)
{
	struct jvm_model m;
	static const struct test_state overlapping[] = {{0, 8, 0}, {4, 9, 1}};
	static const struct test_state outside[] = {{0, 0x200, 0}};
	static const struct test_state bad_state[] = {{0, 4, 77}};
	static const struct test_scope bad_pc[] = {{0x500, 1, {1}, {0}}};
	struct test_code c = {.id = 1, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x100,
			      .frame_size = 4, .frame_complete = 8, .method_id = 1};
	struct wbuf w;

	jvm_model_init(&m);
	c.states = overlapping, c.nstates = 2;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.states = outside, c.nstates = 1;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.states = bad_state, c.nstates = 1;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.states = NULL, c.nstates = 0;
	c.scopes = bad_pc, c.nscopes = 1;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.scopes = NULL, c.nscopes = 0;
	c.kind = 200;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.kind = JS_CODE_NMETHOD;
	c.size = 0;
	CHECK(tb_apply_code(&m, &c) == -1);
	c.size = 0x100;
	c.start = UINT64_MAX - 10; /* wraps */
	CHECK(tb_apply_code(&m, &c) == -1);
	CHECK_EQ(m.code.blobs.n, 0);
	CHECK_EQ(m.malformed_records, 7);

	/* Truncations of a valid record at every length are all refused. */
	c.start = 0x1000;
	wbuf_init(&w);
	tb_code_load(&w, &c);
	for (size_t len = 0; len < w.len; len++)
		CHECK(jvm_model_apply_record(&m, JS_REC_CODE_LOAD, w.data, len) == -1);
	CHECK(jvm_model_apply_record(&m, JS_REC_CODE_LOAD, w.data, w.len) == 0);
	CHECK_EQ(m.code.blobs.n, 1);
	/* The same id again replaces it. */
	CHECK(jvm_model_apply_record(&m, JS_REC_CODE_LOAD, w.data, w.len) == 0);
	CHECK_EQ(m.code.blobs.n, 1);
	wbuf_free(&w);
	jvm_model_free(&m);
}

static void test_methods(void)
{
	struct jvm_model m;
	char name[128];

	jvm_model_init(&m);
	CHECK(tb_apply_class(&m, 3, "Ljava/util/HashMap;", "HashMap.java") == 0);
	CHECK(tb_apply_method(&m, 10, 3, 0xabc0, 0xdef0, 30, "put") == 0);
	CHECK(tb_apply_method(&m, 11, 99, 0, 0, 0, "orphan") == 0);
	method_table_name(&m.methods, 10, name, sizeof(name));
	CHECK_STR(name, "java.util.HashMap.put");
	method_table_name(&m.methods, 11, name, sizeof(name));
	CHECK_STR(name, "[unknown class].orphan");
	method_table_name(&m.methods, 12, name, sizeof(name));
	CHECK_STR(name, "[unknown method #12]");
	CHECK_EQ(method_table_by_ptr(&m.methods, 0xabc0), 10);
	CHECK_EQ(method_table_by_ptr(&m.methods, 0xabc8), 0);
	CHECK_EQ(method_table_line(&m.methods, 10, 0), 10);
	CHECK_EQ(method_table_line(&m.methods, 10, 7), 11);
	CHECK_EQ((uint64_t)(int64_t)method_table_line(&m.methods, 10, -1), (uint64_t)(int64_t)-1);
	/* Ids out of bounds are refused. */
	CHECK(tb_apply_method(&m, JS_MAX_METHOD_ID, 3, 0, 0, 0, "x") == -1);
	CHECK(tb_apply_method(&m, 0, 3, 0, 0, 0, "x") == -1);
	CHECK(tb_apply_class(&m, JS_MAX_CLASS_ID, "LX;", "") == -1);
	jvm_model_free(&m);
}

/* Two JVMs that load the same classes hold their names and method bodies
 * once; each is still charged them whole, and the last one out frees them.
 * A redefined method keeps its old Method*; a Method* reused by another
 * method names the newest. */
static void test_shared_methods(void)
{
	struct jvm_model a, b;
	size_t empty = shared_blobs_stats().blobs, one, both;
	char name[128];

	jvm_model_init(&a);
	jvm_model_init(&b);
	CHECK(tb_apply_class(&a, 3, "Ljava/util/HashMap;", "HashMap.java") == 0);
	CHECK(tb_apply_method(&a, 10, 3, 0xabc0, 0xdef0, 30, "put") == 0);
	CHECK(tb_apply_method(&a, 11, 3, 0xabd0, 0xdf00, 30, "get") == 0);
	one = shared_blobs_stats().blobs;
	CHECK(one > empty);
	/* The other JVM picks other ids and pointers for the same class. */
	CHECK(tb_apply_class(&b, 7, "Ljava/util/HashMap;", "HashMap.java") == 0);
	CHECK(tb_apply_method(&b, 20, 7, 0x5550, 0x6660, 30, "put") == 0);
	CHECK(tb_apply_method(&b, 21, 7, 0x5560, 0x6670, 30, "get") == 0);
	both = shared_blobs_stats().blobs;
	CHECK_EQ(both, one);
	CHECK_EQ(method_table_shared_bytes(&a.methods), method_table_shared_bytes(&b.methods));
	CHECK(method_table_bytes(&b.methods) > method_table_shared_bytes(&b.methods));
	method_table_name(&b.methods, 21, name, sizeof(name));
	CHECK_STR(name, "java.util.HashMap.get");
	CHECK_EQ(method_table_line(&b.methods, 20, 7), 11);
	CHECK_EQ(method_table_by_ptr(&b.methods, 0x5560), 21);
	CHECK_EQ(method_table_by_ptr(&b.methods, 0xabd0), 0);

	/* Redefined: a new Method*, the old one still maps to the method. */
	CHECK(tb_apply_method(&a, 10, 3, 0xfff0, 0xeee0, 30, "put") == 0);
	CHECK_EQ(method_table_by_ptr(&a.methods, 0xfff0), 10);
	CHECK_EQ(method_table_by_ptr(&a.methods, 0xabc0), 10);
	/* Another method loaded where get's Method* was: the newest wins. */
	CHECK(tb_apply_method(&a, 12, 3, 0xabd0, 0xdf10, 30, "remove") == 0);
	CHECK_EQ(method_table_by_ptr(&a.methods, 0xabd0), 12);
	CHECK(method_table_get(&a.methods, 11) != NULL);
	/* Many methods: the indexes grow and every one is still found. */
	for (uint32_t id = 100; id < 5000; id++)
		CHECK(tb_apply_method(&a, id, 3, 0x100000 + 16 * (uint64_t)id, 0, 30, "m") == 0);
	for (uint32_t id = 100; id < 5000; id++)
		CHECK_EQ(method_table_by_ptr(&a.methods, 0x100000 + 16 * (uint64_t)id), id);
	CHECK_EQ(method_table_by_ptr(&a.methods, 0xfff0), 10);

	jvm_model_free(&a);
	CHECK_EQ(shared_blobs_stats().blobs, both);
	method_table_name(&b.methods, 20, name, sizeof(name));
	CHECK_STR(name, "java.util.HashMap.put");
	jvm_model_free(&b);
	CHECK_EQ(shared_blobs_stats().blobs, empty);
}

static bool in_id_list(void *ctx, uint32_t id)
{
	for (const uint32_t *p = ctx; *p; p++)
		if (*p == id)
			return true;
	return false;
}

/* Unloaded classes leave the table once old enough, with the methods no
 * one names; a named one keeps its name but not its Method*. */
static void test_class_unload(void)
{
	struct jvm_model m;
	char name[128];
	const uint32_t first[] = {2, 99 /* never reported */}, again[] = {2, 3}, used[] = {21, 0};
	size_t bytes_before;

	jvm_model_init(&m);
	CHECK(tb_apply_class(&m, 1, "LLive;", "Live.java") == 0);
	CHECK(tb_apply_class(&m, 2, "LGone$$Lambda/0x1;", "") == 0);
	CHECK(tb_apply_class(&m, 3, "LRecent;", "") == 0);
	CHECK(tb_apply_method(&m, 10, 1, 0x1000, 0x1100, 30, "stays") == 0);
	CHECK(tb_apply_method(&m, 20, 2, 0x2000, 0x2100, 30, "unnamed") == 0);
	CHECK(tb_apply_method(&m, 21, 2, 0x2200, 0x2300, 30, "named") == 0);
	CHECK(tb_apply_method(&m, 30, 3, 0x3000, 0x3100, 30, "recent") == 0);
	CHECK(tb_apply_class_unload(&m, 100, first, 2) == 0);
	CHECK(tb_apply_class_unload(&m, 500, again, 2) == 0); /* class 2 keeps its first time */
	CHECK_EQ(m.methods.unloaded_classes, 2);
	/* Marking changes nothing else. */
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x2000), 20);
	bytes_before = method_table_bytes(&m.methods);

	CHECK(method_table_drop_unloaded(&m.methods, 200, in_id_list, (void *)used) == 0);
	CHECK_EQ(m.methods.dropped_classes, 0); /* class 2 stays for method 21's name */
	CHECK_EQ(m.methods.dropped_methods, 1);
	CHECK_EQ(m.methods.unloaded_classes, 1); /* class 3: not old enough */
	CHECK(method_table_get(&m.methods, 20) == NULL);
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x2000), 0);
	method_table_name(&m.methods, 21, name, sizeof(name));
	CHECK_STR(name, "Gone$$Lambda.0x1.named");
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x2200), 0);
	CHECK_EQ(method_table_line(&m.methods, 21, 7), 11);
	/* The loaded and the recently unloaded stay whole. */
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x1000), 10);
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x3000), 30);
	CHECK_EQ(method_table_line(&m.methods, 10, 7), 11);
	method_table_name(&m.methods, 30, name, sizeof(name));
	CHECK_STR(name, "Recent.recent");
	CHECK(method_table_bytes(&m.methods) <= bytes_before);

	/* Later, with no one naming method 21: both unloaded classes go. */
	CHECK(method_table_drop_unloaded(&m.methods, 1000, in_id_list, (void *)(const uint32_t[]){0}) == 0);
	CHECK_EQ(m.methods.dropped_classes, 2);
	CHECK_EQ(m.methods.dropped_methods, 3);
	CHECK_EQ(m.methods.unloaded_classes, 0);
	CHECK_EQ(m.methods.classes.n, 1);
	CHECK(method_table_class_name(&m.methods, 2) == NULL);
	method_table_name(&m.methods, 10, name, sizeof(name));
	CHECK_STR(name, "Live.stays");

	/* Malformed: more ids than the record holds, or than allowed. */
	CHECK(tb_apply_class_unload(&m, 5, first, 0) == 0);
	struct wbuf w;
	wbuf_init(&w);
	wbuf_u64(&w, 5);
	wbuf_u32(&w, 3);
	wbuf_u32(&w, 1);
	CHECK(jvm_model_apply_record(&m, JS_REC_CLASS_UNLOAD, w.data, w.len) == -1);
	wbuf_reset(&w);
	wbuf_u64(&w, 5);
	wbuf_u32(&w, JS_MAX_UNLOADS_PER_RECORD + 1);
	for (uint32_t i = 0; i <= JS_MAX_UNLOADS_PER_RECORD; i++)
		wbuf_u32(&w, 1);
	CHECK(jvm_model_apply_record(&m, JS_REC_CLASS_UNLOAD, w.data, w.len) == -1);
	wbuf_free(&w);
	CHECK(method_table_class_name(&m.methods, 1) != NULL);
	CHECK_EQ(m.methods.unloaded_classes, 0);
	jvm_model_free(&m);
}

static void test_batches(void)
{
	struct jvm_model m;
	struct wbuf w, rec;
	struct batch_info info;
	const struct test_code c = {.id = 5, .kind = JS_CODE_NMETHOD, .start = 0x1000, .size = 0x10,
				    .frame_size = 2, .frame_complete = 0, .method_id = 1};

	jvm_model_init(&m);
	wbuf_init(&w);
	wbuf_init(&rec);
	tb_code_load(&rec, &c);
	wbuf_u64(&w, 0);
	wbuf_u64(&w, 3);
	wbuf_u64(&w, 12345);
	wbuf_u8(&w, 1);
	wbuf_u32(&w, 3);
	wbuf_u16(&w, JS_REC_CODE_LOAD); /* a good record */
	wbuf_u32(&w, (uint32_t)rec.len);
	wbuf_put(&w, rec.data, rec.len);
	wbuf_u16(&w, 999); /* an unknown kind: skipped */
	wbuf_u32(&w, 3);
	wbuf_put(&w, "abc", 3);
	wbuf_u16(&w, JS_REC_CLASS); /* garbage inside: counted */
	wbuf_u32(&w, 2);
	wbuf_put(&w, "zz", 2);
	CHECK(jvm_model_apply_batch(&m, w.data, w.len, &info, 0) == 0);
	CHECK_EQ(info.upto, 3);
	CHECK_EQ(info.cut_ns, 12345);
	CHECK(info.more);
	CHECK_EQ(m.records, 1);
	CHECK_EQ(m.unknown_records, 1);
	CHECK_EQ(m.malformed_records, 1);
	/* A record length running past the batch is a malformed batch. */
	w.data[w.len - 3] = 0xff;
	CHECK(jvm_model_apply_batch(&m, w.data, w.len, &info, 0) == -1);
	/* Trailing garbage too. */
	w.data[w.len - 3] = 2;
	wbuf_u8(&w, 7);
	CHECK(jvm_model_apply_batch(&m, w.data, w.len, &info, 0) == -1);
	/* upto below since. */
	CHECK(jvm_model_apply_batch(&m, (uint8_t[]){5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
						   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
				    29, &info, 0) == -1);
	wbuf_free(&w);
	wbuf_free(&rec);
	jvm_model_free(&m);
}

/* What an agent sends is bounded: ids are never array indexes (a method id
 * near 2^24 costs one entry, not 2^24 of them), a line table of the most
 * entries a method can have sorts at once, more is refused, and a batch
 * stops once the model passes its limit. */
static void test_agent_data_limits(void)
{
	struct jvm_model m;
	struct wbuf w, rec;
	struct batch_info info;

	jvm_model_init(&m);
	wbuf_init(&w);
	wbuf_u32(&w, JS_MAX_METHOD_ID - 1);
	wbuf_u32(&w, JS_MAX_CLASS_ID - 1);
	wbuf_u64(&w, 0x1000);
	wbuf_u64(&w, 0x2000);
	wbuf_u32(&w, 10);
	CHECK(jvm_model_apply_record(&m, JS_REC_METHOD_REF, w.data, w.len) == 0);
	CHECK(jvm_model_bytes(&m) < (1u << 20));
	CHECK_EQ(method_table_by_ptr(&m.methods, 0x1000), JS_MAX_METHOD_ID - 1);

	/* A METHOD with 65536 line entries, descending. */
	wbuf_reset(&w);
	wbuf_u32(&w, 5);
	wbuf_u32(&w, 1);
	wbuf_u64(&w, 0x3000);
	wbuf_u64(&w, 0x4000);
	wbuf_u32(&w, 65535);
	wbuf_u32(&w, 0);
	wbuf_str(&w, "m");
	wbuf_str(&w, "()V");
	wbuf_u32(&w, JS_MAX_LINES);
	for (uint32_t i = JS_MAX_LINES; i-- > 0;) {
		wbuf_u32(&w, i);
		wbuf_u32(&w, 100000 + i);
	}
	wbuf_i32(&w, -1);
	CHECK(jvm_model_apply_record(&m, JS_REC_METHOD, w.data, w.len) == 0);
	CHECK_EQ(method_table_line(&m.methods, 5, 0), 100000);
	CHECK_EQ(method_table_line(&m.methods, 5, 40000), 140000);
	/* One more entry than a method can have: refused. */
	w.data[4 + 4 + 8 + 8 + 4 + 4 + 3 + 5] = 1; /* line count 65536 -> 65537 */
	CHECK(jvm_model_apply_record(&m, JS_REC_METHOD, w.data, w.len) == -1);

	/* A batch of many METHOD_REFs against a 1 MiB limit. */
	wbuf_reset(&w);
	wbuf_init(&rec);
	wbuf_u64(&w, 0);
	wbuf_u64(&w, 1);
	wbuf_u64(&w, 1);
	wbuf_u8(&w, 0);
	wbuf_u32(&w, 100000);
	for (uint32_t i = 1; i <= 100000; i++) {
		wbuf_reset(&rec);
		wbuf_u32(&rec, i);
		wbuf_u32(&rec, 1);
		wbuf_u64(&rec, 0x100000 + 8 * (uint64_t)i);
		wbuf_u64(&rec, 0);
		wbuf_u32(&rec, 1);
		wbuf_u16(&w, JS_REC_METHOD_REF);
		wbuf_u32(&w, (uint32_t)rec.len);
		wbuf_put(&w, rec.data, rec.len);
	}
	CHECK_EQ(jvm_model_apply_batch(&m, w.data, w.len, &info, 1u << 20), BATCH_OVER_LIMIT);
	CHECK(jvm_model_bytes(&m) < (1u << 20) + (256u << 10));
	wbuf_free(&rec);
	wbuf_free(&w);
	jvm_model_free(&m);
}

static void test_layout_validation(void)
{
	struct jvm_model m;
	struct wbuf w;

	jvm_model_init(&m);
	CHECK(tb_apply_layout(&m, 0x1234, 0x1000, 0x2000) == 0);
	CHECK(m.layout.valid);
	CHECK_EQ(m.layout.interp_bcp_offset, (uint64_t)(int64_t)-8);
	CHECK_EQ(m.layout.call_stub_return, 0x1234);
	/* A layout missing facts parses but is not valid. */
	wbuf_init(&w);
	wbuf_u16(&w, 1);
	wbuf_str(&w, JS_LAYOUT_INTERP_BCP_OFFSET);
	wbuf_i64(&w, -8);
	CHECK(jvm_model_apply_record(&m, JS_REC_VM_LAYOUT, w.data, w.len) == 0);
	CHECK(!m.layout.valid);
	/* Absurd offsets make it invalid too. */
	CHECK(tb_apply_layout(&m, 0x1234, 0x1000, 0x2000) == 0);
	wbuf_reset(&w);
	wbuf_u16(&w, 1);
	wbuf_str(&w, JS_LAYOUT_INTERP_BCP_OFFSET);
	wbuf_i64(&w, 1000000);
	CHECK(!m.layout.valid || jvm_model_apply_record(&m, JS_REC_VM_LAYOUT, w.data, w.len) == 0);
	CHECK(!m.layout.valid);
	wbuf_free(&w);
	jvm_model_free(&m);
}

/* A METHOD record with call sites and, when targets is not NULL, the name
 * hashes a newer agent appends (own hash, then one per call site). */
static int put_method_calls(struct jvm_model *m, uint32_t id, uint32_t name_hash, int32_t ncalls,
			    const uint16_t *calls, uint32_t ntargets, const uint32_t *targets)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u32(&w, id);
	wbuf_u32(&w, 1);
	wbuf_u64(&w, 0x1000 * (uint64_t)id);
	wbuf_u64(&w, 0x2000 * (uint64_t)id);
	wbuf_u32(&w, 20);
	wbuf_u32(&w, 0);
	wbuf_str(&w, "m");
	wbuf_str(&w, "()V");
	wbuf_u32(&w, 0);
	wbuf_i32(&w, ncalls);
	for (int32_t i = 0; i < ncalls; i++)
		wbuf_u16(&w, calls[i]);
	if (name_hash) {
		wbuf_u32(&w, name_hash);
		wbuf_u32(&w, ntargets);
		for (uint32_t i = 0; i < ntargets; i++)
			wbuf_u32(&w, targets[i]);
	}
	r = jvm_model_apply_record(m, JS_REC_METHOD, w.data, w.len);
	wbuf_free(&w);
	return r;
}

/* A caller frame must stand at an invoke instruction that names the
 * method the next frame runs; a dynamic call, a record of an older agent
 * (no hashes) or a bci that is no call site are judged as before; an
 * inlined callee (the JIT's own scope chain) is not judged. */
static void test_call_targets(void)
{
	static const uint16_t calls[] = {3, 8};
	static const uint32_t targets[] = {0x1111, 0}; /* bci 8: invokedynamic */
	struct jvm_model m;
	struct trace_frame f[2] = {{.method_id = 1, .type = FRAME_INTERPRETED, .bci = 3},
				   {.method_id = 2, .type = FRAME_INTERPRETED, .bci = 0}};

	jvm_model_init(&m);
	CHECK(put_method_calls(&m, 1, 0x9999, 2, calls, 2, targets) == 0);
	CHECK(put_method_calls(&m, 2, 0x1111, 0, NULL, 0, NULL) == 0); /* the callee */
	CHECK(put_method_calls(&m, 3, 0x2222, 0, NULL, 0, NULL) == 0); /* another method */
	CHECK(put_method_calls(&m, 4, 0, 0, NULL, 0, NULL) == 0);      /* an older agent's */
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 3), 0);
	CHECK_EQ(method_table_calls(&m.methods, 1, 8, 3), -1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 5, 2), -1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 4), -1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 77), -1);

	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	f[1].method_id = 3;
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == 0);
	f[0].bci = 8; /* a dynamic call may run anything */
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	f[0].bci = 5; /* not a call site at all */
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == 0);
	f[1].type = FRAME_INLINED; /* named by the JIT's scopes: not checked */
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	f[1].type = FRAME_INTERPRETED;

	/* The answers are memoized: a new method's first record keeps them,
	 * a record sent again (class redefinition) voids them. */
	f[0].bci = 3;
	f[1].method_id = 2;
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	CHECK(put_method_calls(&m, 6, 0x6666, 0, NULL, 0, NULL) == 0);
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	CHECK(put_method_calls(&m, 2, 0x7777, 0, NULL, 0, NULL) == 0); /* the callee, renamed */
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == 0);
	CHECK(put_method_calls(&m, 2, 0x1111, 0, NULL, 0, NULL) == 0);
	CHECK(trace_bad_caller(&m.methods, f, 2, true) == -1);
	/* method_table_calls answers from the same memo: asked twice, the
	 * second from the memo, and voided by the same records. */
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 5, 2), -1);
	CHECK_EQ(method_table_calls(&m.methods, 1, 5, 2), -1);
	CHECK(put_method_calls(&m, 2, 0x7777, 0, NULL, 0, NULL) == 0);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 0);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 0);
	CHECK(put_method_calls(&m, 2, 0x1111, 0, NULL, 0, NULL) == 0);
	CHECK_EQ(method_table_calls(&m.methods, 1, 3, 2), 1);

	/* Targets that do not match the call sites: refused. */
	CHECK(put_method_calls(&m, 5, 0x3333, 2, calls, 1, targets) == -1);
	CHECK(put_method_calls(&m, 5, 0x3333, -1, NULL, 2, targets) == -1);
	jvm_model_free(&m);
}

/* The calls inside the runs of the thread's previous walk that a walk
 * took are that walk's, checked with it: with no bad call there, they are
 * not checked again, but the call from a run's last frame to the next one
 * is, and nothing is trusted from a walk that had a bad call. */
static void test_memo_bad_call_runs(void)
{
	static const uint16_t calls[] = {3};
	static const uint32_t self[] = {0x9999};
	struct jvm_model m;
	struct trace_frame f[6];
	static struct walk_log log; /* large: TRACE_MAX_FRAMES steps */
	struct walk_memo memo = {.bad_known = true, .bad_at = -1};

	jvm_model_init(&m);
	CHECK(put_method_calls(&m, 1, 0x9999, 1, calls, 1, self) == 0); /* 1 calls itself at bci 3 */
	CHECK(put_method_calls(&m, 3, 0x2222, 0, NULL, 0, NULL) == 0);
	for (int i = 0; i < 6; i++)
		f[i] = (struct trace_frame){.method_id = 1, .type = FRAME_COMPILED, .bci = 3};
	f[5] = (struct trace_frame){.method_id = 3, .type = FRAME_COMPILED, .bci = 0}; /* 1@3 -> 3: a bad call */
	CHECK_EQ(trace_bad_caller(&m.methods, f, 6, true), 4);
	CHECK_EQ(walk_memo_bad_call(&memo, 0, NULL, f, 6, &m.methods), 4);
	/* The last two frames (leaf first 0, 1) came from a run: trusted. */
	log.nruns = 1;
	log.run[0] = (struct walk_run_frames){.from = 0, .to = 2};
	CHECK_EQ(walk_memo_bad_call(&memo, 0, &log, f, 6, &m.methods), -1);
	/* A run ending at frame 4 (leaf first 1, 2): its call to 5 is checked. */
	log.run[0] = (struct walk_run_frames){.from = 1, .to = 3};
	CHECK_EQ(walk_memo_bad_call(&memo, 0, &log, f, 6, &m.methods), 4);
	/* Two runs, the bad call between them. */
	log.nruns = 2;
	log.run[0] = (struct walk_run_frames){.from = 0, .to = 1};
	log.run[1] = (struct walk_run_frames){.from = 2, .to = 4};
	CHECK_EQ(walk_memo_bad_call(&memo, 0, &log, f, 6, &m.methods), 4);
	/* A bad call with both frames inside a run (root first [2, 5)). */
	f[5].method_id = 1;
	f[3].method_id = 3;
	log.run[1] = (struct walk_run_frames){.from = 1, .to = 4};
	CHECK_EQ(trace_bad_caller(&m.methods, f, 6, true), 2);
	CHECK_EQ(walk_memo_bad_call(&memo, 0, &log, f, 6, &m.methods), -1);
	/* A previous walk that had a bad call vouches for nothing. */
	memo.bad_at = 5;
	CHECK_EQ(walk_memo_bad_call(&memo, 0, &log, f, 6, &m.methods), 2);
	jvm_model_free(&m);
}

int main(void)
{
	RUN(test_find_nested_and_timed);
	RUN(test_cached_hits_across_indexes);
	RUN(test_cached_hits_across_many_indexes);
	RUN(test_cached_hits_of_reused_code);
	RUN(test_twin_reports_and_reused_starts);
	RUN(test_lookup_cost);
	RUN(test_index_merges_and_removals);
	RUN(test_scopes_and_states);
	RUN(test_stray_scopes);
	RUN(test_stray_scope_runs);
	RUN(test_stray_scope_pairs);
	RUN(test_memo_bad_call_runs);
	RUN(test_class_unload);
	RUN(test_plain_step_slots);
	RUN(test_lying_code_records);
	RUN(test_methods);
	RUN(test_shared_methods);
	RUN(test_batches);
	RUN(test_agent_data_limits);
	RUN(test_layout_validation);
	RUN(test_call_targets);
	return CHECK_DONE();
}
