/* SPDX-License-Identifier: GPL-2.0-only */
/* Reader of HotSpot's exported serviceability tables (gHotSpotVMStructs,
 * gHotSpotVMTypes, gHotSpotVMIntConstants, gHotSpotVMLongConstants): the same
 * tables the Serviceability Agent uses. Everything the agent knows about
 * HotSpot's data layout is looked up here by name, at run time. */
#ifndef JSAGENT_VMSTRUCTS_H
#define JSAGENT_VMSTRUCTS_H

#include <stddef.h>
#include <stdint.h>

struct vm_field {
	int present;
	int is_static;
	uint64_t offset;  /* instance fields */
	uint64_t address; /* static fields */
	unsigned size;    /* bytes, from the field's type (0 if unknown) */
	int is_signed;
};

struct vmstructs;

/* Finds the tables in the already loaded libjvm. */
struct vmstructs *vmstructs_open(char *err, size_t errlen);
void vmstructs_close(struct vmstructs *vs);

struct vm_field vmstructs_field(const struct vmstructs *vs, const char *type, const char *field);
/* sizeof(type), or -1 if the type is not exported. */
long vmstructs_type_size(const struct vmstructs *vs, const char *type);
/* 0 and *out on success, -1 if the constant is not exported. */
int vmstructs_int_constant(const struct vmstructs *vs, const char *name, int64_t *out);
int vmstructs_long_constant(const struct vmstructs *vs, const char *name, int64_t *out);

/* Reads an integer field of the object at base, sign- or zero-extended
 * according to its declared type. Returns -1 if unreadable or unknown. */
int vm_read_int(const struct vm_field *f, uint64_t base, int64_t *out);
/* Reads a pointer-sized field (instance: base+offset; static: its address). */
int vm_read_ptr(const struct vm_field *f, uint64_t base, uint64_t *out);

#endif
