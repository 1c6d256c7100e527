/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolisation for an unwinder (native_unwind_internal.h): per module,
 * its function symbols sorted by address; names cleaned and demangled,
 * and cached per pc. */
#include "native_unwind_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (link with -lstdc++); libdw has none. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Symbol cache bounds: past either, it starts over. */
#define SYM_CACHE_MAX_ENTRIES 32768u
#define SYM_CACHE_MAX_BYTES (4u << 20)
#define SYM_NAME_MAX 1024u

struct symbol_range {
	uint64_t lo, hi; /* hi: lo + size, or the next symbol's lo for a size 0 */
	const char *name; /* libelf's string: valid while the module is reported */
	int global; /* rank_of: at one address the highest wins */
};

struct module_symbols {
	Dwfl_Module *mod;
	struct symbol_range *v; /* sorted by lo; NULL: no symbol table */
	size_t n;
};

static void modsyms_clear(struct native_unwinder *u)
{
	for (size_t i = 0; i < u->nmodsyms; i++)
		free(u->modsyms[i].v);
	free(u->modsyms);
	u->modsyms = NULL;
	u->nmodsyms = 0;
}

void native_symbols_clear(struct native_unwinder *u)
{
	u64_map_free(&u->sym_index);
	u64_map_init(&u->sym_index);
	u->names_len = 0;
	modsyms_clear(u); /* a re-report may have replaced modules */
}

static int by_lo(const void *a, const void *b)
{
	const struct symbol_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->global - y->global; /* at one address the global one last: it wins */
}

/* Which of several names at one address a frame shows: the exported
 * one, not glibc's internal __GI_ alias or a local or weak one. */
static int rank_of(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);

	if (bind == STB_GLOBAL && GELF_ST_VISIBILITY(sym->st_other) == STV_DEFAULT && strncmp(name, "__GI_", 5) != 0)
		return 3;
	return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

static void build_symbols(struct module_symbols *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t k = 0;

	if (n <= 0 || !(m->v = malloc((size_t)n * sizeof(*m->v))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr == 0)
			continue;
		m->v[k++] = (struct symbol_range){.lo = addr, .hi = addr + sym.st_size, .name = name,
						  .global = rank_of(&sym, name)};
	}
	m->n = k;
	qsort(m->v, k, sizeof(*m->v), by_lo);
	for (size_t i = 0; i < k; i++)
		if (m->v[i].hi == m->v[i].lo)
			m->v[i].hi = i + 1 < k ? m->v[i + 1].lo : UINT64_MAX;
}

/* pc's function in mod, or NULL (then the module's name stands for it). */
static const char *module_function(struct native_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	struct module_symbols *m = NULL;
	size_t lo = 0, hi;

	for (size_t i = 0; i < u->nmodsyms; i++)
		if (u->modsyms[i].mod == mod)
			m = &u->modsyms[i];
	if (!m) {
		struct module_symbols *v = realloc(u->modsyms, (u->nmodsyms + 1) * sizeof(*v));
		if (!v)
			return NULL;
		u->modsyms = v;
		m = &v[u->nmodsyms++];
		*m = (struct module_symbols){.mod = mod};
		build_symbols(m);
	}
	/* the last symbol starting at or below pc */
	hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < m->v[lo - 1].hi ? m->v[lo - 1].name : NULL;
}

void native_symbols_free(struct native_unwinder *u)
{
	u64_map_free(&u->sym_index);
	modsyms_clear(u);
	free(u->names);
}

/* --- Names --- */

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The function's name in a demangled signature: without the parameter list
 * (from the first '(' at nesting depth 0 on: also drops " const" and
 * " [clone .cold]") and without a template function's return type (up to
 * the last space at depth 0). "(anonymous namespace)", "{lambda(int)#1}",
 * "operator()", "operator<<" and "operator new" are kept whole. */
static void name_part(const char *d, const char **startp, size_t *lenp)
{
	size_t start = 0, end = strlen(d), i;
	int depth = 0;
	bool op = false;

	for (i = 0; d[i]; i++) {
		char c = d[i];

		if (depth == 0 && strncmp(d + i, "(anonymous namespace)", 21) == 0) {
			i += 20;
			continue;
		}
		if (c == 'o' && strncmp(d + i, "operator", 8) == 0 && (i == 0 || !is_ident(d[i - 1])) &&
		    !is_ident(d[i + 8])) {
			i += 8;
			if (depth == 0)
				op = true;
			if (d[i] == '(' && d[i + 1] == ')') {
				i++;
				continue;
			}
			while (d[i] && strchr("<>=!+-*/%&|^~[],", d[i]))
				i++;
			if (!d[i])
				break;
			i--;
			continue;
		}
		if (c == '<' || c == '{' || c == '[') {
			depth++;
		} else if (c == '>' || c == '}' || c == ']') {
			if (depth > 0)
				depth--;
		} else if (c == '(') {
			if (depth == 0) {
				end = i;
				break;
			}
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		} else if (c == ' ' && depth == 0 && !op) {
			start = i + 1;
		}
	}
	if (start >= end)
		start = 0;
	*startp = d + start;
	*lenp = end - start;
}

/* Length of a C name without a compiler suffix: "foo.part.0", "foo.isra.0",
 * "foo.constprop.0", "foo.cold", "foo.lto_priv.0" -> "foo". */
static size_t c_name_len(const char *s)
{
	static const char *const suffixes[] = {"isra", "constprop", "part", "cold", "lto_priv", "llvm",
					       "localalias", "clone"};
	size_t len = strlen(s);

	for (size_t i = 1; i < len; i++) {
		if (s[i] != '.')
			continue;
		for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			size_t sl = strlen(suffixes[k]);

			if (strncmp(s + i + 1, suffixes[k], sl) == 0 && !is_ident(s[i + 1 + sl]))
				return i;
		}
	}
	return len;
}

static void copy_name(char *out, size_t outlen, const char *s, size_t n)
{
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Symbol name -> the name shown, into out (outlen > 0). A symbol version
 * ("__libc_start_main@@GLIBC_2.34") is dropped first. */
static void clean_name(const char *sym, char *out, size_t outlen)
{
	size_t at = strcspn(sym, "@");
	char *unversioned = NULL;
	const char *raw = sym;

	if (sym[at] && at > 0 && (unversioned = strndup(sym, at)))
		raw = unversioned;
	if (raw[0] == '_' && raw[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(raw, NULL, NULL, &status);

		if (d && status == 0 && d[0]) {
			const char *start;
			size_t n;

			name_part(d, &start, &n);
			copy_name(out, outlen, start, n);
			free(d);
			free(unversioned);
			return;
		}
		free(d);
	}
	copy_name(out, outlen, raw, c_name_len(raw));
	free(unversioned);
}

static void describe_pc(struct native_unwinder *u, uint64_t pc, char *out, size_t outlen)
{
	Dwfl_Module *mod = native_module_at(u, pc);
	const char *sym, *mname, *base;
	Dwarf_Addr start = 0;

	if (!mod) {
		const char *jit = perf_map_find(&u->perf_map, pc);

		if (jit)
			copy_name(out, outlen, jit, strlen(jit));
		else
			copy_name(out, outlen, "[unknown]", 9);
		return;
	}
	sym = module_function(u, mod, pc);
	if (sym && sym[0]) {
		clean_name(sym, out, outlen);
		return;
	}
	mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	if (!mname)
		mname = "?";
	if (mname[0] == '[') {
		base = strncmp(mname, "[vdso", 5) == 0 ? "[vdso]" : mname;
	} else {
		base = strrchr(mname, '/');
		base = base ? base + 1 : mname;
	}
	/* No symbol (a stripped static function): the file stands for all
	 * of them, so one frame name per library, not one per pc. */
	snprintf(out, outlen, "%s", base);
}

const char *native_symbolize(struct native_unwinder *u, uint64_t pc, char *buf, size_t len)
{
	char name[SYM_NAME_MAX];
	uint64_t *idx;
	size_t n;

	if (!buf || len == 0)
		return buf;
	if (!u) {
		copy_name(buf, len, "[unknown]", 9);
		return buf;
	}
	idx = pc ? u64_map_get(&u->sym_index, pc) : NULL;
	if (idx) {
		const char *s = u->names + *idx;

		copy_name(buf, len, s, strlen(s));
		return buf;
	}
	if (!native_module_at(u, pc))
		u->unknown_seen = true; /* dlopen since the last report? */
	describe_pc(u, pc, name, sizeof(name));
	copy_name(buf, len, name, strlen(name));
	if (pc == 0 || strcmp(name, "[unknown]") == 0)
		return buf; /* not cached: a later re-report may find it */

	n = strlen(name) + 1;
	if (u->sym_index.count >= SYM_CACHE_MAX_ENTRIES || u->names_len + n > SYM_CACHE_MAX_BYTES)
		native_symbols_clear(u);
	if (u->names_len + n > u->names_cap) {
		size_t cap = u->names_cap ? u->names_cap : 4096;
		char *nb;

		while (cap < u->names_len + n)
			cap *= 2;
		nb = realloc(u->names, cap);
		if (!nb)
			return buf;
		u->names = nb;
		u->names_cap = cap;
	}
	memcpy(u->names + u->names_len, name, n);
	if (u64_map_put(&u->sym_index, pc, u->names_len) == 0)
		u->names_len += n;
	return buf;
}
