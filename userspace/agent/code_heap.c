/* SPDX-License-Identifier: GPL-2.0-only */
#include "code_heap.h"

#include <string.h>

#include "safe_read.h"

/* Segment-map hops are bounded: a block spans at most this many segments'
 * worth of hops before the walk gives up (a corrupt map cannot loop). */
#define MAX_SEGMAP_HOPS 100000

static int heap_for(const struct hs_layout *L, uint64_t addr, uint64_t *heap, uint64_t *low)
{
	uint64_t arr, data;
	int64_t len;

	if (vm_read_ptr(&L->code_heaps, 0, &arr) != 0 || !arr)
		return -1; /* not initialised yet (early in VM start-up) */
	if (vm_read_int(&L->array_len, arr, &len) != 0 || len <= 0 || len > 64)
		return -1;
	if (vm_read_ptr(&L->array_data, arr, &data) != 0 || !data)
		return -1;
	for (int64_t i = 0; i < len; i++) {
		uint64_t h, lo, hi;

		if (safe_read_u64(data + 8 * (uint64_t)i, &h) != 0 || !h)
			continue;
		if (safe_read_u64(h + L->heap_memory.offset + L->vspace_low.offset, &lo) != 0 ||
		    safe_read_u64(h + L->heap_memory.offset + L->vspace_high.offset, &hi) != 0)
			continue;
		if (addr >= lo && addr < hi) {
			*heap = h;
			*low = lo;
			return 0;
		}
	}
	return -1;
}

static int blob_code_range(const struct hs_layout *L, uint64_t blob, uint64_t *begin, uint64_t *end)
{
	int64_t v, size;

	if (vm_read_int(&L->blob_size, blob, &size) != 0 || size <= 0)
		return -1;
	if (L->blob_code_begin.present) { /* JDK 17: pointers */
		if (vm_read_ptr(&L->blob_code_begin, blob, begin) != 0 ||
		    vm_read_ptr(&L->blob_code_end, blob, end) != 0)
			return -1;
	} else { /* later JDKs (25 has them): offsets from the blob */
		if (vm_read_int(&L->blob_code_offset, blob, &v) != 0)
			return -1;
		*begin = blob + (uint64_t)v;
		if (vm_read_int(&L->blob_data_offset, blob, &v) != 0)
			return -1;
		*end = blob + (uint64_t)v;
	}
	if (*begin < blob || *end < *begin || *end > blob + (uint64_t)size)
		return -1;
	return 0;
}

int hs_blob_find(const struct hs_layout *L, uint64_t addr, struct hs_blob *out)
{
	uint64_t heap, low, segmap, blob;
	int64_t log2, v;
	uint64_t seg;
	uint8_t hop, used;
	int hops = 0;

	memset(out, 0, sizeof(*out));
	out->frame_size_words = -1;
	out->frame_complete_offset = -1;
	if (heap_for(L, addr, &heap, &low) != 0)
		return -1;
	if (safe_read_u64(heap + L->heap_segmap.offset + L->vspace_low.offset, &segmap) != 0 ||
	    vm_read_int(&L->heap_log2_segment, heap, &log2) != 0 || log2 < 4 || log2 > 20)
		return -1;
	seg = (addr - low) >> log2;
	if (safe_read(segmap + seg, &hop, 1) != 0 || hop == 0xff) /* 0xff: free segment */
		return -1;
	while (hop > 0) {
		if (hop > seg || ++hops > MAX_SEGMAP_HOPS)
			return -1;
		seg -= hop;
		if (safe_read(segmap + seg, &hop, 1) != 0)
			return -1;
	}
	uint64_t block = low + (seg << log2);
	if (L->block_used.present && (safe_read(block + L->block_used.offset, &used, 1) != 0 || !used))
		return -1;
	blob = block + (uint64_t)L->heap_block_size;
	if (blob_code_range(L, blob, &out->code_begin, &out->code_end) != 0)
		return -1;
	if (addr < out->code_begin || addr >= out->code_end)
		return -1;
	out->blob = blob;
	if (vm_read_int(&L->blob_frame_size, blob, &v) == 0 && v >= 0 && v < 1 << 20)
		out->frame_size_words = (int32_t)v;
	if (vm_read_int(&L->blob_frame_complete, blob, &v) == 0 && v >= 0 &&
	    v < (int64_t)(out->code_end - out->code_begin))
		out->frame_complete_offset = (int32_t)v;
	uint64_t name;
	if (vm_read_ptr(&L->blob_name, blob, &name) == 0 && name) {
		if (safe_read(name, out->name, sizeof(out->name) - 1) != 0)
			out->name[0] = 0;
		out->name[sizeof(out->name) - 1] = 0;
	}
	return 0;
}

int hs_blob_nmethod(const struct hs_layout *L, const struct hs_blob *b, struct hs_nmethod *out)
{
	int64_t v;
	uint64_t p;
	uint64_t code_size = b->code_end - b->code_begin;

	out->verified_entry_offset = -1;
	out->stub_offset = -1;
	out->orig_pc_offset = -1;
	out->entry_bci = -1;
	out->comp_level = 0;
	if (L->nm_verified_entry_point.present) {
		if (vm_read_ptr(&L->nm_verified_entry_point, b->blob, &p) == 0 && p >= b->code_begin &&
		    p < b->code_end)
			out->verified_entry_offset = (int32_t)(p - b->code_begin);
	} else if (vm_read_int(&L->nm_verified_entry_offset, b->blob, &v) == 0 && v >= 0 &&
		   (uint64_t)v < code_size) {
		out->verified_entry_offset = (int32_t)v;
	}
	/* _stub_offset counts from the blob header in both JDK 17 and 25. */
	if (vm_read_int(&L->nm_stub_offset, b->blob, &v) == 0 && v > 0) {
		uint64_t stub = b->blob + (uint64_t)v;
		if (stub >= b->code_begin && stub <= b->code_end)
			out->stub_offset = (int32_t)(stub - b->code_begin);
	}
	if (vm_read_int(&L->nm_orig_pc_offset, b->blob, &v) == 0 && v >= 0 && v < 1 << 20)
		out->orig_pc_offset = (int32_t)v;
	if (vm_read_int(&L->nm_entry_bci, b->blob, &v) == 0 && v >= -1 && v < 1 << 16)
		out->entry_bci = (int32_t)v;
	if (vm_read_int(&L->nm_comp_level, b->blob, &v) == 0 && v >= 0 && v < 16)
		out->comp_level = (int32_t)v;
	return 0;
}
