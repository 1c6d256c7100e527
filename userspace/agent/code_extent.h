/* SPDX-License-Identifier: GPL-2.0-only */
/* How far a compiled method's code reaches. CompiledMethodLoad reports the
 * instructions only on JDK 11 (insts_size), the stub section after them
 * too on JDK 17+: a pc in the exception or deopt handler of a JDK 11
 * method would lie in no blob. */
#ifndef JSAMPLED_CODE_EXTENT_H
#define JSAMPLED_CODE_EXTENT_H

#include <stdint.h>

/* The size of the code at start, reported as reported bytes, of a blob
 * whose code spans code_begin..code_end with its stubs at stub_offset
 * from code_begin (-1 unknown; code_end 0 if the blob was not found):
 * when the reported code ends where the stubs begin, it runs on to the
 * code end. */
uint32_t code_extent(uint64_t start, uint32_t reported, int32_t stub_offset, uint64_t code_begin, uint64_t code_end);

#endif
