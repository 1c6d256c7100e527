/* SPDX-License-Identifier: GPL-2.0-only */
/* A class's constant pool, as JVMTI's GetConstantPool gives it (the
 * constant_pool item of the class file format, JVMS 4.4): which method an
 * invoke instruction names, as a hash of its name and descriptor, so
 * jsampled can check that a caller's frame calls the method the next frame
 * runs. The class is not part of it: a virtual call runs an override of the
 * same name and descriptor. */
#ifndef JSAGENT_CONSTANT_POOL_H
#define JSAGENT_CONSTANT_POOL_H

#include <stddef.h>
#include <stdint.h>

struct constant_pool {
	const uint8_t *bytes;
	size_t len;
	uint32_t count;   /* constant_pool_count: entries are 1 .. count-1 */
	uint32_t *offset; /* entry i at bytes + offset[i]; 0 for none (the slot after a long) */
};

/* Indexes bytes (not copied: they must outlive cp). -1 if malformed or out
 * of memory. */
int constant_pool_parse(struct constant_pool *cp, uint32_t count, const uint8_t *bytes, size_t len);
void constant_pool_free(struct constant_pool *cp);

/* The hash of the method an invoke instruction (opcode, cp index) names;
 * 0 when it is not known from the bytecode alone: invokedynamic, the
 * signature-polymorphic methods of MethodHandle and VarHandle (their frames
 * are lambda forms and linkers), or an entry that is not a method. */
uint32_t constant_pool_call_target(const struct constant_pool *cp, uint16_t index, uint8_t opcode);

/* FNV-1a over the method's name and then its descriptor, in modified UTF-8
 * as the class file and JVMTI have them; never 0. The METHOD record carries
 * each method's own, and the targets of its invoke instructions. */
uint32_t method_name_hash(const char *name, size_t name_len, const char *desc, size_t desc_len);

#endif
