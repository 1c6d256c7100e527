/* SPDX-License-Identifier: GPL-2.0-only */
#include "bytecode_calls.h"

/* Lengths of the standard JVM instructions (JVMS 6.5), 0 for the variable
 * ones (tableswitch, lookupswitch, wide) and for unused opcodes. */
static const uint8_t length[256] = {
	[0x00] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                  /* nop .. dconst_1 */
	[0x10] = 2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,                  /* bipush .. lload_0 */
	[0x20] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[0x30] = 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,                  /* .. istore .. */
	[0x40] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[0x50] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[0x60] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[0x70] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[0x80] = 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                  /* iinc */
	[0x90] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,                  /* ifeq .. */
	[0xa0] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1,                  /* goto, jsr, ret, *switch */
	[0xb0] = 1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,                  /* getstatic .. athrow */
	[0xc0] = 3, 3, 1, 1, 0, 4, 3, 3, 5, 5,                                    /* checkcast .. jsr_w */
};

static int is_invoke(uint8_t op)
{
	return op >= OP_INVOKEVIRTUAL && op <= OP_INVOKEDYNAMIC;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int bytecode_calls(const uint8_t *code, size_t len, struct bytecode_call *calls, size_t max)
{
	size_t bci = 0;
	int n = 0;

	while (bci < len) {
		uint8_t op = code[bci];
		size_t size = length[op];

		if (op == 0xaa || op == 0xab) { /* tableswitch, lookupswitch */
			size_t pad = 3 - (bci & 3), at = bci + 1 + pad;
			if (at + 12 > len)
				return -1;
			if (op == 0xaa) {
				int32_t lo = (int32_t)be32(code + at + 4), hi = (int32_t)be32(code + at + 8);
				if (hi < lo || (int64_t)hi - lo > 65535)
					return -1;
				size = 1 + pad + 12 + 4 * (size_t)((int64_t)hi - lo + 1);
			} else {
				uint32_t pairs = be32(code + at + 4);
				if (pairs > 65535)
					return -1;
				size = 1 + pad + 8 + 8 * (size_t)pairs;
			}
		} else if (op == 0xc4) { /* wide */
			if (bci + 1 >= len)
				return -1;
			size = code[bci + 1] == 0x84 ? 6 : 4;
		}
		if (size == 0 || bci + size > len)
			return -1;
		if (is_invoke(op)) {
			if ((size_t)n < max) {
				calls[n].bci = (uint16_t)bci;
				calls[n].opcode = op;
				calls[n].cp_index = (uint16_t)(code[bci + 1] << 8 | code[bci + 2]);
			}
			n++;
		}
		bci += size;
	}
	return n;
}
