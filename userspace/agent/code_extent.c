/* SPDX-License-Identifier: GPL-2.0-only */
#include "code_extent.h"

uint32_t code_extent(uint64_t start, uint32_t reported, int32_t stub_offset, uint64_t code_begin, uint64_t code_end)
{
	if (stub_offset < 0 || (uint32_t)stub_offset != reported || code_begin != start || code_end <= start + reported ||
	    code_end - start > INT32_MAX)
		return reported;
	return (uint32_t)(code_end - start);
}
