/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel symbols: a generated kallsyms file (types, modules, compiler
 * suffixes, shared addresses, malformed lines, kptr_restrict's zeros), the
 * intern table, lookup boundaries, and the running kernel's /proc/kallsyms. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "userspace/profile/kernel_symbols.h"
#include "check.h"

static char tmp_path[64];

static const char *write_tmp(const char *text)
{
	int fd;
	FILE *f;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test_kallsyms.XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return NULL;
	}
	fputs(text, f);
	fclose(f);
	return tmp_path;
}

/* Loads text as a kallsyms file (written, loaded, removed): the load's
 * result, or -2 if the file could not be written. */
static int load_text(const char *text)
{
	const char *path = write_tmp(text);
	int rc;

	if (!path)
		return -2;
	rc = kernel_symbols_load(path);
	unlink(path);
	return rc;
}

static const char *lookup_name(uint64_t addr)
{
	return kernel_symbols_name(kernel_symbols_lookup(addr));
}

static const char sample[] =
	/* A module's symbols first: the file is not sorted. */
	"0000000000009000 t mod_fn\t[mymod]\n"
	"0000000000009100 T mod_exported\t[mymod]\n"
	"0000000000009100 t mod_alias\t[mymod]\n"
	"0000000000009200 t mod_last.cold\t[mymod]\n"
	/* Shared addresses: T beats t, then file order. */
	"0000000000001000 t small_first\n"
	"0000000000001000 T _stext\n"
	"0000000000001000 T _text\n"
	"0000000000001100 t foo.isra.0\n"
	"0000000000001200 T vfs_write\n"
	"0000000000001280 D some_data\n"
	"0000000000001290 r some_rodata\n"
	"0000000000001300 b some_bss\n"
	"0000000000001400 t foo.cold\n"
	"0000000000001500 W weak_fn\n"
	"0000000000001500 w weak_local\n"
	"0000000000001600 t bar.constprop.0.isra.0\n"
	"0000000000001700 t baz.part.0\n"
	"0000000000001800 t qux.llvm.1234567\n"
	"0000000000001900 t keep.dots.here\n"
	"0000000000001a00 t __x64_sys_write\n"
	"0000000000001a80 w weak_only\n"
	"0000000000001a80 t local_beats_weak_local\n"
	"0000000000001b00 t .cold\n"
	/* Malformed lines, all skipped. */
	"garbage line\n"
	"zzzz T bad_hex\n"
	"0000000000001c00\n"
	"0000000000001c10 T\n"
	"0000000000001c20 T \n"
	"0000000000001c30 TT two_char_type\n"
	"00000000000001c40 T seventeen_digits\n"
	"\n"
	"   \n"
	"0000000000001c50Tno_space\n"
	/* kptr_restrict'd line amid real ones: dropped. */
	"0000000000000000 T zero_addr\n"
	"0000000000002000 T _etext"; /* no final newline */

static void test_sample_file(void)
{
	const char *path = write_tmp(sample);

	CHECK(path != NULL);
	if (!path)
		return;
	kernel_symbols_free();
	CHECK_EQ(kernel_symbols_load(path), 0);
	unlink(path);

	/* Below the first symbol, and past the last. */
	CHECK_STR(lookup_name(0), "[kernel]");
	CHECK_STR(lookup_name(0xfff), "[kernel]");
	CHECK_STR(lookup_name(0x9200), "mod_last");
	CHECK_STR(lookup_name(0x9201), "[kernel]");
	CHECK_STR(lookup_name(UINT64_MAX), "[kernel]");

	/* Shared address: the first T. */
	CHECK_STR(lookup_name(0x1000), "_stext");
	CHECK_STR(lookup_name(0x10ff), "_stext");
	/* Suffixes cut; extents up to the next text symbol. */
	CHECK_STR(lookup_name(0x1100), "foo");
	CHECK_STR(lookup_name(0x11ff), "foo");
	CHECK_STR(lookup_name(0x1200), "vfs_write");
	/* Data symbols are not boundaries. */
	CHECK_STR(lookup_name(0x1280), "vfs_write");
	CHECK_STR(lookup_name(0x1300), "vfs_write");
	CHECK_STR(lookup_name(0x13ff), "vfs_write");
	CHECK_STR(lookup_name(0x1400), "foo");
	CHECK_EQ(kernel_symbols_lookup(0x1400), kernel_symbols_lookup(0x1100));
	CHECK_STR(lookup_name(0x1500), "weak_fn");
	CHECK_STR(lookup_name(0x1600), "bar");
	CHECK_STR(lookup_name(0x1700), "baz");
	CHECK_STR(lookup_name(0x1800), "qux");
	CHECK_STR(lookup_name(0x1900), "keep.dots.here");
	CHECK_STR(lookup_name(0x1a00), "__x64_sys_write");
	CHECK_STR(lookup_name(0x1a80), "local_beats_weak_local");
	CHECK_STR(lookup_name(0x1b00), ".cold");
	/* The malformed lines' addresses fall in .cold's extent. */
	CHECK_STR(lookup_name(0x1c30), ".cold");
	CHECK_STR(lookup_name(0x1fff), ".cold");
	CHECK_STR(lookup_name(0x2000), "_etext");
	/* The gap up to the module: the last kernel symbol's. */
	CHECK_STR(lookup_name(0x8fff), "_etext");
	/* Module names without "[mymod]". */
	CHECK_STR(lookup_name(0x9000), "mod_fn");
	CHECK_STR(lookup_name(0x9100), "mod_exported");
	CHECK_STR(lookup_name(0x91ff), "mod_exported");

	/* Names of dropped and malformed lines were never interned... */
	uint32_t before = kernel_symbols_intern("__probe__");
	CHECK_EQ(kernel_symbols_intern("some_data"), before + 1);
	CHECK_EQ(kernel_symbols_intern("seventeen_digits"), before + 2);
	/* ...while lookups' names are the interned ones. */
	CHECK_EQ(kernel_symbols_intern("vfs_write"), kernel_symbols_lookup(0x1234));
	CHECK_EQ(kernel_symbols_intern("mod_alias"), 0 + kernel_symbols_intern("mod_alias"));
	CHECK(kernel_symbols_bytes() > 0);

	kernel_symbols_free();
	CHECK_EQ(kernel_symbols_bytes(), 0);
	CHECK_STR(lookup_name(0x1200), "[kernel]");
	kernel_symbols_free();
}

static void test_restricted(void)
{
	const char *path = write_tmp("0000000000000000 T _stext\n"
				     "0000000000000000 t foo\n"
				     "0000000000000000 T vfs_write\n"
				     "0000000000000000 D data\n");
	CHECK(path != NULL);
	if (!path)
		return;
	kernel_symbols_free();
	CHECK_EQ(kernel_symbols_load(path), -1);
	unlink(path);
	uint32_t k = kernel_symbols_lookup(0);
	CHECK(k != 0);
	CHECK_STR(kernel_symbols_name(k), "[kernel]");
	CHECK_EQ(kernel_symbols_lookup(0xffffffff81000000ull), k);
	CHECK_EQ(kernel_symbols_intern("[kernel]"), k);

	/* A good load, then a failing one: the table is emptied. */
	CHECK_EQ(load_text("ffffffff81000000 T _stext\nffffffff81001000 T _etext\n"), 0);
	CHECK_STR(lookup_name(0xffffffff81000010ull), "_stext");
	CHECK_EQ(kernel_symbols_lookup(0), k); /* ids survive a reload */
	CHECK_EQ(load_text("ffffffff81000000 T _stext\nffffffff81001000 T _etext\n"), 0);
	CHECK_STR(lookup_name(0xffffffff81000010ull), "_stext");
	/* A reload that names the same address otherwise: no lookup answers
	 * from before it (lookups are remembered). */
	CHECK_EQ(load_text("ffffffff81000000 T _stext\nffffffff81000008 T moved_here\nffffffff81001000 T _etext\n"), 0);
	CHECK_STR(lookup_name(0xffffffff81000010ull), "moved_here");
	CHECK_STR(lookup_name(0xffffffff81000010ull), "moved_here");
	CHECK_EQ(kernel_symbols_load(tmp_path), -1); /* gone (load_text removed it) */
	CHECK_EQ(kernel_symbols_lookup(0xffffffff81000010ull), k);

	/* Empty and text-less files. */
	CHECK_EQ(load_text(""), -1);
	CHECK_EQ(load_text("ffffffff82000000 D data\nffffffff82000100 b bss\n"), -1);
	CHECK_STR(lookup_name(0xffffffff82000000ull), "[kernel]");
	kernel_symbols_free();
}

static void test_intern(void)
{
	char buf[32];

	kernel_symbols_free();
	CHECK_STR(kernel_symbols_name(0), "[kernel]");
	CHECK_STR(kernel_symbols_name(1), "[kernel]");
	CHECK_STR(kernel_symbols_name(UINT32_MAX), "[kernel]");

	uint32_t a = kernel_symbols_intern("alpha");
	uint32_t b = kernel_symbols_intern("beta");
	CHECK_EQ(a, 1);
	CHECK_EQ(b, 2);
	CHECK_EQ(kernel_symbols_intern("alpha"), a);
	CHECK_STR(kernel_symbols_name(a), "alpha");
	CHECK_STR(kernel_symbols_name(b), "beta");
	CHECK_STR(kernel_symbols_name(3), "[kernel]");
	/* Prefixes are different names. */
	uint32_t al = kernel_symbols_intern("alph");
	CHECK(al != a);
	CHECK_EQ(kernel_symbols_intern(""), 4);
	CHECK_STR(kernel_symbols_name(4), "");
	CHECK_EQ(kernel_symbols_intern(NULL), kernel_symbols_intern("[kernel]"));

	/* Many names: the index and pool grow; earlier pointers don't move. */
	const char *alpha = kernel_symbols_name(a);
	uint32_t first = 0;
	for (int i = 0; i < 300000; i++) {
		snprintf(buf, sizeof(buf), "sym_%d", i);
		uint32_t id = kernel_symbols_intern(buf);
		if (i == 0)
			first = id;
		if (id != first + (uint32_t)i) {
			CHECK_EQ(id, first + (uint32_t)i);
			break;
		}
	}
	int bad = 0;
	for (int i = 0; i < 300000; i++) {
		snprintf(buf, sizeof(buf), "sym_%d", i);
		if (kernel_symbols_intern(buf) != first + (uint32_t)i ||
		    strcmp(kernel_symbols_name(first + (uint32_t)i), buf) != 0)
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK(kernel_symbols_name(a) == alpha);
	CHECK_STR(alpha, "alpha");
	CHECK(kernel_symbols_bytes() > 300000 * 8);

	/* A long name: cut to the cap, the same id each time. */
	char *big = malloc(400000);
	if (big) {
		memset(big, 'x', 399999);
		big[399999] = '\0';
		uint32_t id = kernel_symbols_intern(big);
		CHECK(id != 0);
		CHECK_EQ(strlen(kernel_symbols_name(id)), KERNEL_SYMBOLS_NAME_MAX - 1);
		CHECK(strncmp(kernel_symbols_name(id), big, KERNEL_SYMBOLS_NAME_MAX - 1) == 0);
		CHECK_EQ(kernel_symbols_intern(big), id);
		free(big);
	}
	kernel_symbols_free();
	CHECK_EQ(kernel_symbols_bytes(), 0);
	CHECK_EQ(kernel_symbols_intern("beta"), 1);
	kernel_symbols_free();
}

/* The running kernel's table, when this process may see its addresses. */
static void test_proc_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024];
	unsigned long long vfs_write = 0, addr;
	size_t text = 0, nonzero = 0;
	char type, name[512];

	if (!f) {
		printf("     /proc/kallsyms unreadable: skipped\n");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		if (addr)
			nonzero++;
		if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
			text++;
			if (!vfs_write && strcmp(name, "vfs_write") == 0 && !strchr(line, '['))
				vfs_write = addr;
		}
	}
	fclose(f);
	if (!nonzero) {
		printf("     /proc/kallsyms addresses are 0 (kptr_restrict): load must fail\n");
		kernel_symbols_free();
		CHECK_EQ(kernel_symbols_load(NULL), -1);
		CHECK_STR(lookup_name(0xffffffff81000000ull), "[kernel]");
		kernel_symbols_free();
		return;
	}

	struct timespec t0, t1;
	kernel_symbols_free();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = kernel_symbols_load(NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK_EQ(rc, 0);
	printf("     /proc/kallsyms: %zu text symbols loaded in %.1f ms, %zu bytes held\n", text, ms,
	       kernel_symbols_bytes());
	CHECK(ms < 1000);
	CHECK(vfs_write != 0);
	if (vfs_write) {
		CHECK_STR(lookup_name(vfs_write), "vfs_write");
		CHECK_STR(lookup_name(vfs_write + 1), "vfs_write");
		CHECK_STR(lookup_name(vfs_write + 16), "vfs_write");
		CHECK(kernel_symbols_lookup(vfs_write - 1) != kernel_symbols_lookup(vfs_write));
	}

	/* Lookups are cheap. */
	volatile uint32_t sink = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < 1000000; i++)
		sink += kernel_symbols_lookup(0xffffffff81000000ull + i * 97);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	(void)sink;
	printf("     1M lookups in %.1f ms\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	kernel_symbols_free();
}

/* Names of native frames come from files a profiled process controls:
 * what is interned carries no control byte, no newline and no invalid
 * UTF-8, in any format, and a huge name is cut. */
static void test_intern_escapes(void)
{
	static char huge[100000];
	const char *name = kernel_symbols_name(kernel_symbols_intern("evil\x1b]0;title\x07\nfake;frame 99\xff"));

	CHECK(strchr(name, '\x1b') == NULL && strchr(name, '\x07') == NULL && strchr(name, '\n') == NULL);
	CHECK(strchr(name, '\xff') == NULL);
	CHECK(strstr(name, "\\x1b") != NULL);
	CHECK_EQ(kernel_symbols_intern("evil\x1b]0;title\x07\nfake;frame 99\xff"),
		 kernel_symbols_intern(name)); /* the escaped text is its own name */
	memset(huge, 'a', sizeof(huge) - 1);
	name = kernel_symbols_name(kernel_symbols_intern(huge));
	CHECK(strlen(name) < KERNEL_SYMBOLS_NAME_MAX);
	CHECK(strcmp(kernel_symbols_name(kernel_symbols_intern("plain_name")), "plain_name") == 0);
}

/* Native names held by processes: shared while any holds them, freed
 * with the last, each holder charged; a holder past its share gets one
 * name for all the names it does not hold yet. */
static void test_name_refs(void)
{
	struct name_refs a, b;
	uint32_t x, y, z, before;
	char name[64];
	size_t base = kernel_symbols_bytes();

	name_refs_init(&a);
	name_refs_init(&b);
	x = kernel_symbols_intern_for(&a, "shared_native_fn");
	CHECK_EQ(kernel_symbols_intern_for(&b, "shared_native_fn"), x);
	y = kernel_symbols_intern_for(&a, "only_a_fn");
	CHECK(a.bytes > b.bytes && b.bytes > 0);
	CHECK(kernel_symbols_bytes() > base);
	name_refs_release(&a);
	CHECK_STR(kernel_symbols_name(x), "shared_native_fn"); /* b holds it */
	CHECK(strcmp(kernel_symbols_name(y), "only_a_fn") != 0); /* freed */
	z = kernel_symbols_intern_for(&b, "a_new_fn");
	CHECK_EQ(z, y); /* its id used again */
	name_refs_release(&b);
	CHECK(strcmp(kernel_symbols_name(x), "shared_native_fn") != 0);
	/* A kernel name stays whoever held it. */
	before = kernel_symbols_intern("kernel_kept_fn");
	CHECK_EQ(kernel_symbols_intern_for(&a, "kernel_kept_fn"), before);
	name_refs_release(&a);
	CHECK_STR(kernel_symbols_name(before), "kernel_kept_fn");
	/* The share: 16 MiB of names, then one name for the rest. */
	for (int i = 0; a.capped == 0 && i < 1000000; i++) {
		snprintf(name, sizeof(name), "fn_%d_%040d", i, i);
		kernel_symbols_intern_for(&a, name);
	}
	CHECK(a.capped == 1 && a.bytes <= NAME_REFS_MAX_BYTES);
	CHECK_STR(kernel_symbols_name(kernel_symbols_intern_for(&a, "one_more_fn_with_a_long_name_here_and_there_000000000")),
		  NAME_REFS_CAPPED);
	CHECK_EQ(a.capped, 2);
	CHECK_STR(kernel_symbols_name(kernel_symbols_intern_for(&a, "fn_1_0000000000000000000000000000000000000001")),
		  "fn_1_0000000000000000000000000000000000000001"); /* held already */
	{
		size_t full = kernel_symbols_bytes();

		name_refs_release(&a);
		CHECK(kernel_symbols_bytes() + (8u << 20) < full); /* the names given back */
	}
}

int main(void)
{
	RUN(test_sample_file);
	RUN(test_name_refs);
	RUN(test_intern_escapes);
	RUN(test_restricted);
	RUN(test_intern);
	RUN(test_proc_kallsyms);
	return CHECK_DONE();
}
