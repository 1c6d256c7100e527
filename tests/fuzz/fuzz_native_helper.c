/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the native helper's request path (daemon/native/native_helper.c)
 * on a crafted library, as a profiled process would hand one over: the
 * input's first part is the file (an ELF header, sections, DWARF CFI,
 * symbol tables, compressed sections: all the crafted library controls),
 * the rest the registers and stack copy of a sample whose pc lies in it.
 * The helper is told the mappings, given the file as a descriptor and asked
 * to walk and name the sample, as jsampled does; then the perf map form of
 * the same bytes. It must answer, within its limits, whatever the file. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "daemon/native/native_helper.h"
#include "daemon/native/native_protocol.h"
#include "userspace/common/wire.h"

#define LIB_LO 0x400000ull
#define LIB_HI 0x500000ull

static int no_debug(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2])
{
	(void)ctx;
	(void)key;
	(void)id;
	(void)n;
	fds[0] = fds[1] = -1;
	return 0;
}

static void head(struct wbuf *w, uint32_t type)
{
	wbuf_reset(w);
	wbuf_u32(w, type);
	wbuf_u32(w, 1);
	wbuf_u64(w, 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char maps[] = "00400000-00500000 r-xp 00000000 00:2a 12 /fuzz/libcrafted.so\n"
				   "7ffd00000000-7ffd00100000 rw-p 00000000 00:00 0 [stack]\n";
	struct native_helper *h = native_helper_new(no_debug, NULL);
	struct wbuf m, out;
	size_t lib_len = size >= 4 ? ((size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16) : 0;
	const uint8_t *rest;
	size_t rest_len;
	uint64_t regs[JS_NREGS] = {0};
	int fd;

	if (!h)
		return 0;
	if (lib_len > size - (size >= 4 ? 4 : size))
		lib_len = size >= 4 ? size - 4 : 0;
	rest = data + (size >= 4 ? 4 : size) + lib_len;
	rest_len = size - (size_t)(rest - data);
	wbuf_init(&m);
	wbuf_init(&out);

	head(&m, NATIVE_MSG_MAPS);
	wbuf_u32(&m, 4242);
	wbuf_u8(&m, 1);
	wbuf_put(&m, maps, sizeof(maps) - 1);
	native_helper_handle(h, m.data, m.len, NULL, 0, &out);

	fd = memfd_create("fuzz-lib", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, data + 4, lib_len) == (ssize_t)lib_len) {
		head(&m, NATIVE_MSG_FILE);
		wbuf_str(&m, "/fuzz/libcrafted.so");
		wbuf_u64(&m, 0x2a);
		wbuf_u64(&m, 12);
		native_helper_handle(h, m.data, m.len, &fd, 1, &out);
	} else if (fd >= 0) {
		close(fd);
	}

	/* The sample: registers from the input, the pc inside the library,
	 * the stack the input's remainder. */
	memcpy(regs, rest, rest_len < sizeof(regs) ? rest_len : sizeof(regs));
	regs[JS_REG_IP] = LIB_LO + regs[JS_REG_IP] % (LIB_HI - LIB_LO);
	regs[JS_REG_SP] = 0x7ffd00000000ull + (regs[JS_REG_SP] & 0xfff8);
	head(&m, NATIVE_MSG_WALK);
	wbuf_u8(&m, NATIVE_WALK_LEAF);
	wbuf_u8(&m, 1);
	wbuf_u64(&m, 0);
	wbuf_u64(&m, 0);
	wbuf_u64(&m, LIB_LO + (regs[JS_REG_BX] % (LIB_HI - LIB_LO))); /* a crossing, from the library */
	wbuf_u64(&m, regs[JS_REG_SP]);
	wbuf_u64(&m, regs[JS_REG_BP]);
	wbuf_u32(&m, 4242);
	wbuf_u32(&m, 0);
	for (int i = 0; i < JS_NREGS; i++)
		wbuf_u64(&m, regs[i]);
	wbuf_u64(&m, regs[JS_REG_SP]);
	{
		size_t stack = rest_len > sizeof(regs) ? rest_len - sizeof(regs) : 0;

		if (stack > JS_MAX_FRAGMENT_BYTES)
			stack = JS_MAX_FRAGMENT_BYTES;
		wbuf_u32(&m, (uint32_t)stack);
		wbuf_put(&m, rest + (rest_len - stack), stack);
	}
	if (m.len <= NATIVE_MSG_MAX) {
		native_helper_handle(h, m.data, m.len, NULL, 0, &out);
		if (out.len < NATIVE_MSG_HEAD + 2)
			abort(); /* every walk is answered */
	}
	head(&m, NATIVE_MSG_DROP);
	native_helper_handle(h, m.data, m.len, NULL, 0, &out);
	/* The input as a whole message too. */
	native_helper_handle(h, data, size, NULL, 0, &out);
	native_helper_free(h);
	wbuf_free(&m);
	wbuf_free(&out);
	return 0;
}
