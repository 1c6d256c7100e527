/* SPDX-License-Identifier: GPL-2.0-only */
#include "constant_pool.h"

#include <stdlib.h>
#include <string.h>

#include "bytecode_calls.h"

enum {
	CP_UTF8 = 1,
	CP_INTEGER = 3,
	CP_FLOAT = 4,
	CP_LONG = 5,
	CP_DOUBLE = 6,
	CP_CLASS = 7,
	CP_STRING = 8,
	CP_FIELDREF = 9,
	CP_METHODREF = 10,
	CP_INTERFACE_METHODREF = 11,
	CP_NAME_AND_TYPE = 12,
	CP_METHOD_HANDLE = 15,
	CP_METHOD_TYPE = 16,
	CP_DYNAMIC = 17,
	CP_INVOKE_DYNAMIC = 18,
	CP_MODULE = 19,
	CP_PACKAGE = 20,
};

/* Bytes an entry takes after its tag; 0 for an unknown tag. */
static size_t entry_size(const uint8_t *p, size_t left)
{
	switch (p[0]) {
	case CP_UTF8:
		return left >= 3 ? 2 + (size_t)(p[1] << 8 | p[2]) : 0;
	case CP_CLASS:
	case CP_STRING:
	case CP_METHOD_TYPE:
	case CP_MODULE:
	case CP_PACKAGE:
		return 2;
	case CP_METHOD_HANDLE:
		return 3;
	case CP_INTEGER:
	case CP_FLOAT:
	case CP_FIELDREF:
	case CP_METHODREF:
	case CP_INTERFACE_METHODREF:
	case CP_NAME_AND_TYPE:
	case CP_DYNAMIC:
	case CP_INVOKE_DYNAMIC:
		return 4;
	case CP_LONG:
	case CP_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

int constant_pool_parse(struct constant_pool *cp, uint32_t count, const uint8_t *bytes, size_t len)
{
	size_t at = 0;

	memset(cp, 0, sizeof(*cp));
	if (count == 0 || count > 65536)
		return -1;
	cp->offset = calloc(count, sizeof(*cp->offset));
	if (!cp->offset)
		return -1;
	cp->bytes = bytes;
	cp->len = len;
	cp->count = count;
	for (uint32_t i = 1; i < count; i++) {
		size_t size = at < len ? entry_size(bytes + at, len - at) : 0;

		if (size == 0 || at + 1 + size > len) {
			constant_pool_free(cp);
			return -1;
		}
		cp->offset[i] = (uint32_t)at;
		at += 1 + size;
		if (bytes[cp->offset[i]] == CP_LONG || bytes[cp->offset[i]] == CP_DOUBLE)
			i++; /* takes two slots (JVMS 4.4.5) */
	}
	return 0;
}

void constant_pool_free(struct constant_pool *cp)
{
	free(cp->offset);
	memset(cp, 0, sizeof(*cp));
}

/* Entry i if it has tag, else NULL (points at the tag). */
static const uint8_t *entry(const struct constant_pool *cp, uint32_t i, uint8_t tag)
{
	if (i == 0 || i >= cp->count || (!cp->offset[i] && i != 1))
		return NULL;
	return cp->bytes[cp->offset[i]] == tag ? cp->bytes + cp->offset[i] : NULL;
}

static uint16_t u2(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static const uint8_t *utf8(const struct constant_pool *cp, uint32_t i, size_t *len)
{
	const uint8_t *e = entry(cp, i, CP_UTF8);

	if (!e)
		return NULL;
	*len = u2(e + 1);
	return e + 3;
}

uint32_t method_name_hash(const char *name, size_t name_len, const char *desc, size_t desc_len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < name_len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	for (size_t i = 0; i < desc_len; i++)
		h = (h ^ (uint8_t)desc[i]) * 16777619u;
	return h ? h : 1;
}

/* Calls of these classes' signature-polymorphic methods run lambda forms
 * (JVMS 2.9.3): their frames never carry the name the call site has. */
static int polymorphic_class(const uint8_t *name, size_t len)
{
	static const char *const classes[] = {"java/lang/invoke/MethodHandle", "java/lang/invoke/VarHandle"};

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (len == strlen(classes[i]) && memcmp(name, classes[i], len) == 0)
			return 1;
	return 0;
}

uint32_t constant_pool_call_target(const struct constant_pool *cp, uint16_t index, uint8_t opcode)
{
	const uint8_t *ref, *cls, *nat, *name, *desc, *cname;
	size_t name_len = 0, desc_len = 0, cname_len = 0;

	if (opcode == OP_INVOKEDYNAMIC || !cp->offset)
		return 0;
	ref = entry(cp, index, CP_METHODREF);
	if (!ref)
		ref = entry(cp, index, CP_INTERFACE_METHODREF);
	if (!ref)
		return 0;
	cls = entry(cp, u2(ref + 1), CP_CLASS);
	nat = entry(cp, u2(ref + 3), CP_NAME_AND_TYPE);
	if (!cls || !nat)
		return 0;
	cname = utf8(cp, u2(cls + 1), &cname_len);
	name = utf8(cp, u2(nat + 1), &name_len);
	desc = utf8(cp, u2(nat + 3), &desc_len);
	if (!cname || !name || !desc || polymorphic_class(cname, cname_len))
		return 0;
	return method_name_hash((const char *)name, name_len, (const char *)desc, desc_len);
}
