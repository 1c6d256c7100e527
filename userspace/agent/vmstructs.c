/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmstructs.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safe_read.h"
#include "libc_baseline.h"

/* One exported table: its base and the entry layout HotSpot publishes
 * alongside it (gHotSpotVM*Entry*Offset symbols), so nothing about the entry
 * layout is assumed either. */
struct table {
	const char *base;
	uint64_t stride;
};

struct vmstructs {
	struct table structs, types, ints, longs;
	uint64_t s_type, s_field, s_typestr, s_static, s_offset, s_address;
	uint64_t t_name, t_size;
	uint64_t i_name, i_value;
	uint64_t l_name, l_value;
};

static int sym_u64(void *lib, const char *name, uint64_t *out)
{
	const uint64_t *p = dlsym(lib, name);

	if (!p)
		return -1;
	*out = *p;
	return 0;
}

static int sym_ptr(void *lib, const char *name, const char **out)
{
	const char *const *p = dlsym(lib, name);

	if (!p || !*p)
		return -1;
	*out = *p;
	return 0;
}

struct vmstructs *vmstructs_open(char *err, size_t errlen)
{
	struct vmstructs *vs = calloc(1, sizeof(*vs));
	void *lib = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
	int bad = 0;

	if (!vs) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!lib) {
		snprintf(err, errlen, "libjvm.so is not loaded in this process");
		free(vs);
		return NULL;
	}
	bad |= sym_ptr(lib, "gHotSpotVMStructs", &vs->structs.base);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryArrayStride", &vs->structs.stride);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", &vs->s_type);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", &vs->s_field);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryTypeStringOffset", &vs->s_typestr);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryIsStaticOffset", &vs->s_static);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryOffsetOffset", &vs->s_offset);
	bad |= sym_u64(lib, "gHotSpotVMStructEntryAddressOffset", &vs->s_address);
	bad |= sym_ptr(lib, "gHotSpotVMTypes", &vs->types.base);
	bad |= sym_u64(lib, "gHotSpotVMTypeEntryArrayStride", &vs->types.stride);
	bad |= sym_u64(lib, "gHotSpotVMTypeEntryTypeNameOffset", &vs->t_name);
	bad |= sym_u64(lib, "gHotSpotVMTypeEntrySizeOffset", &vs->t_size);
	bad |= sym_ptr(lib, "gHotSpotVMIntConstants", &vs->ints.base);
	bad |= sym_u64(lib, "gHotSpotVMIntConstantEntryArrayStride", &vs->ints.stride);
	bad |= sym_u64(lib, "gHotSpotVMIntConstantEntryNameOffset", &vs->i_name);
	bad |= sym_u64(lib, "gHotSpotVMIntConstantEntryValueOffset", &vs->i_value);
	bad |= sym_ptr(lib, "gHotSpotVMLongConstants", &vs->longs.base);
	bad |= sym_u64(lib, "gHotSpotVMLongConstantEntryArrayStride", &vs->longs.stride);
	bad |= sym_u64(lib, "gHotSpotVMLongConstantEntryNameOffset", &vs->l_name);
	bad |= sym_u64(lib, "gHotSpotVMLongConstantEntryValueOffset", &vs->l_value);
	dlclose(lib); /* RTLD_NOLOAD took a reference; libjvm stays loaded */
	if (bad || !vs->structs.stride || !vs->types.stride || !vs->ints.stride || !vs->longs.stride) {
		snprintf(err, errlen, "libjvm does not export the gHotSpotVM* serviceability tables");
		free(vs);
		return NULL;
	}
	return vs;
}

void vmstructs_close(struct vmstructs *vs)
{
	free(vs);
}

static const char *str_at(const char *entry, uint64_t off)
{
	return *(const char *const *)(entry + off);
}

long vmstructs_type_size(const struct vmstructs *vs, const char *type)
{
	for (const char *e = vs->types.base;; e += vs->types.stride) {
		const char *name = str_at(e, vs->t_name);

		if (!name)
			return -1;
		if (strcmp(name, type) == 0)
			return (long)*(const uint64_t *)(e + vs->t_size);
	}
}

/* Width and signedness of a field from its declared C++ type. */
static void describe_type(const struct vmstructs *vs, const char *t, struct vm_field *f)
{
	long size;

	if (!t) {
		f->size = 0;
		return;
	}
	if (strchr(t, '*')) {
		f->size = sizeof(void *);
		f->is_signed = 0;
		return;
	}
	if (strncmp(t, "const ", 6) == 0) /* "const uint": the type table lists "uint" */
		t += 6;
	size = vmstructs_type_size(vs, t);
	if (size <= 0 || size > 8) {
		f->size = 0;
		return;
	}
	f->size = (unsigned)size;
	f->is_signed = !(t[0] == 'u' || strcmp(t, "size_t") == 0 || strcmp(t, "address") == 0 ||
			 strcmp(t, "bool") == 0 || strncmp(t, "juint", 5) == 0 ||
			 strcmp(t, "julong") == 0 || strcmp(t, "jushort") == 0 ||
			 strcmp(t, "jubyte") == 0 || strcmp(t, "uintptr_t") == 0);
}

struct vm_field vmstructs_field(const struct vmstructs *vs, const char *type, const char *field)
{
	struct vm_field f = {0};

	for (const char *e = vs->structs.base;; e += vs->structs.stride) {
		const char *tn = str_at(e, vs->s_type);
		const char *fn = str_at(e, vs->s_field);

		if (!tn)
			break;
		if (!fn || strcmp(tn, type) != 0 || strcmp(fn, field) != 0)
			continue;
		f.present = 1;
		f.is_static = *(const int32_t *)(e + vs->s_static) != 0;
		f.offset = *(const uint64_t *)(e + vs->s_offset);
		f.address = *(const uint64_t *)(e + vs->s_address);
		describe_type(vs, str_at(e, vs->s_typestr), &f);
		break;
	}
	return f;
}

static int constant(const struct table *t, uint64_t name_off, uint64_t value_off, int is_long,
		    const char *name, int64_t *out)
{
	for (const char *e = t->base;; e += t->stride) {
		const char *n = str_at(e, name_off);

		if (!n)
			return -1;
		if (strcmp(n, name) == 0) {
			*out = is_long ? *(const int64_t *)(e + value_off) : *(const int32_t *)(e + value_off);
			return 0;
		}
	}
}

int vmstructs_int_constant(const struct vmstructs *vs, const char *name, int64_t *out)
{
	return constant(&vs->ints, vs->i_name, vs->i_value, 0, name, out);
}

int vmstructs_long_constant(const struct vmstructs *vs, const char *name, int64_t *out)
{
	return constant(&vs->longs, vs->l_name, vs->l_value, 1, name, out);
}

int vm_read_int(const struct vm_field *f, uint64_t base, int64_t *out)
{
	uint64_t addr = f->is_static ? f->address : base + f->offset;
	uint8_t b[8] = {0};
	uint64_t u = 0;

	if (!f->present || f->size == 0 || (!f->is_static && !base))
		return -1;
	if (safe_read(addr, b, f->size) != 0)
		return -1;
	for (int i = (int)f->size - 1; i >= 0; i--)
		u = u << 8 | b[i];
	if (f->is_signed && f->size < 8 && (u >> (f->size * 8 - 1)) & 1)
		u |= ~0ull << (f->size * 8);
	*out = (int64_t)u;
	return 0;
}

int vm_read_ptr(const struct vm_field *f, uint64_t base, uint64_t *out)
{
	uint64_t addr = f->is_static ? f->address : base + f->offset;

	if (!f->present || (!f->is_static && !base))
		return -1;
	return safe_read_u64(addr, out);
}
