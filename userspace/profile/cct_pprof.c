/* SPDX-License-Identifier: GPL-2.0-only */
/* pprof: a profile as Google's profile.proto (the upstream file, from
 * Debian's golang-github-google-pprof-dev, compiled by protoc-c at build
 * time), gzipped, as `go tool pprof` and the fleet stores read it.
 *
 * Two sample types, samples/count and TYPE/nanoseconds (count x the
 * sampling period), TYPE the profile type: cpu, offcpu or wall. One Function per Java method (and per pseudo frame); a Location
 * per distinct physical frame: a compiled frame carries the methods inlined
 * into it as Lines, innermost (the callee) first, each with the source line
 * of its bci. Each Location's Mapping names the frame kind ("interpreted",
 * "compiled", "native", "jvm", "pseudo"), so tools can tell them apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

#include "cct_format.h"
#include "gzip.h"
#include "kernel_symbols.h"
#include "named_tree.h"
#include "string_pool.h"
#include "userspace/common/fnv1a.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Label Label;

/* The string table, deduplicated. */
struct strings {
	VEC(char *) v;
	struct u64_map index; /* hash (+ attempt) -> index + 1 */
	struct string_pool pool;
	bool oom;
};

static uint64_t hash_str(const char *s)
{
	return fnv1a_str(FNV1A_START, s);
}

static int64_t str_id(struct strings *t, const char *s)
{
	uint64_t h = hash_str(s), key;

	for (uint64_t attempt = 0;; attempt++) {
		uint64_t *hit;
		key = u64_hash(h + attempt * 0x9e3779b97f4a7c15ull);
		key = key ? key : 1;
		hit = u64_map_get(&t->index, key);
		if (!hit)
			break;
		if (strcmp(t->v.v[*hit - 1], s) == 0)
			return (int64_t)(*hit - 1);
	}
	char *copy = (char *)string_pool_intern(&t->pool, s, strlen(s));
	if (!copy || vec_push(&t->v, copy) != 0 || u64_map_put(&t->index, key, t->v.n) != 0) {
		t->oom = true;
		return 0;
	}
	return (int64_t)(t->v.n - 1);
}

/* A Location's identity: the location of the frames below it in the same
 * physical frame (0 for the frame's root method), and its own method,
 * kind and bci. */
struct loc_key {
	uint64_t prefix;
	uint32_t method_id;
	uint8_t type;
	int32_t bci;
};

struct builder {
	const struct profile_source *src;
	const struct cct *view;
	struct strings str;
	VEC(Function *) functions;
	struct u64_map function_of; /* method key + 1 -> function id */
	VEC(struct loc_key) locs;   /* location id - 1 -> key */
	struct u64_map loc_index;   /* hash (+ attempt) -> location id */
	uint64_t *loc_of;           /* view node -> location id */
	uint32_t *group;            /* view node -> its physical frame's root node */
	uint64_t mapping_of_kind[KIND_COUNT];
};

static uint64_t method_key(uint32_t method_id, uint8_t type)
{
	/* Three namespaces: Java methods by their JVM's id, pseudo frames,
	 * and frames named by a host-wide symbol id (native, kernel, class,
	 * thread pool), which a method's id may equal. */
	if (type == FRAME_PSEUDO)
		return (1ull << 40) | method_id;
	return frame_named_by_symbol(type) ? (2ull << 40) | method_id : method_id;
}

/* "java/lang/String.java" from "java.lang.String" and "String.java". */
static void source_path(const char *cls, const char *source, char *out, size_t outlen)
{
	const char *dot = strrchr(cls, '.');
	size_t pkg = dot ? (size_t)(dot - cls) + 1 : 0;

	if (!source || !*source) {
		out[0] = 0;
		return;
	}
	if (pkg >= outlen)
		pkg = outlen - 1;
	for (size_t i = 0; i < pkg; i++)
		out[i] = cls[i] == '.' ? '/' : cls[i];
	snprintf(out + pkg, outlen - pkg, "%s", source);
}

static uint64_t function_id(struct builder *b, uint32_t method_id, uint8_t type)
{
	uint64_t key = method_key(method_id, type) + 1;
	uint64_t *hit = u64_map_get(&b->function_of, key);
	char name[1024], system[2048], file[1024];
	Function *f;

	if (hit)
		return *hit;
	f = malloc(sizeof(*f));
	if (!f || vec_push(&b->functions, f) != 0) {
		free(f);
		b->str.oom = true;
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = b->functions.n;
	if (type == FRAME_PSEUDO || frame_named_by_symbol(type)) {
		snprintf(name, sizeof(name), "%s",
			 type == FRAME_PSEUDO ? pseudo_frame_name(method_id) : kernel_symbols_name(method_id));
		f->name = f->system_name = str_id(&b->str, name);
	} else {
		const struct method_info *m = method_table_get(b->src->methods, method_id);
		const char *cls = m ? method_table_class_name(b->src->methods, m->class_id) : NULL;

		method_table_name(b->src->methods, method_id, name, sizeof(name));
		f->name = str_id(&b->str, name);
		snprintf(system, sizeof(system), "%s%s", name, m && method_signature(m) ? method_signature(m) : "");
		f->system_name = str_id(&b->str, system);
		source_path(cls ? cls : "", m ? method_table_class_source(b->src->methods, m->class_id) : NULL, file,
			    sizeof(file));
		f->filename = str_id(&b->str, file);
		if (m)
			for (uint32_t i = 0; i < m->body->nlines; i++)
				if (f->start_line == 0 || (int64_t)method_lines(m)[i].line < f->start_line)
					f->start_line = method_lines(m)[i].line;
	}
	if (u64_map_put(&b->function_of, key, f->id) != 0)
		b->str.oom = true;
	return f->id;
}

static uint64_t loc_hash(const struct loc_key *k, uint64_t attempt)
{
	uint64_t h = u64_hash(k->prefix ^ ((uint64_t)k->method_id << 32 | k->type)) ^
		     u64_hash((uint64_t)(uint32_t)k->bci + attempt * 0x9e3779b97f4a7c15ull);
	return h ? h : 1;
}

/* The location id of k, made if new (0: out of memory). */
static uint64_t location_id(struct builder *b, const struct loc_key *k)
{
	uint64_t key;

	for (uint64_t attempt = 0;; attempt++) {
		uint64_t *hit;
		key = loc_hash(k, attempt);
		hit = u64_map_get(&b->loc_index, key);
		if (!hit)
			break;
		const struct loc_key *o = &b->locs.v[*hit - 1];
		if (o->prefix == k->prefix && o->method_id == k->method_id && o->type == k->type && o->bci == k->bci)
			return *hit;
	}
	if (vec_push(&b->locs, *k) != 0 || u64_map_put(&b->loc_index, key, b->locs.n) != 0) {
		b->str.oom = true;
		return 0;
	}
	return b->locs.n;
}

/* A view node's location: its physical frame's methods up to it. */
static void assign_locations(struct builder *b)
{
	for (size_t i = 1; i < b->view->nodes.n; i++) {
		const struct cct_node *n = &b->view->nodes.v[i];
		const struct cct_node *p = &b->view->nodes.v[n->parent];
		bool continues = n->type == FRAME_INLINED && n->parent &&
				 (p->type == FRAME_COMPILED || p->type == FRAME_INLINED);
		struct loc_key k = {.prefix = continues ? b->loc_of[n->parent] : 0,
				    .method_id = n->method_id, .type = n->type, .bci = n->bci};

		b->group[i] = continues ? b->group[n->parent] : (uint32_t)i;
		b->loc_of[i] = location_id(b, &k);
	}
}

static Location *make_location(struct builder *b, uint64_t id)
{
	Location *l = malloc(sizeof(*l));
	size_t depth = 0;

	if (!l)
		return NULL;
	perftools__profiles__location__init(l);
	l->id = id;
	for (uint64_t k = id; k; k = b->locs.v[k - 1].prefix)
		depth++;
	l->line = calloc(depth, sizeof(*l->line));
	if (!l->line) {
		free(l);
		return NULL;
	}
	/* Innermost first: this location's own method, then the ones it was
	 * inlined into, down to the compiled method. */
	for (uint64_t k = id; k; k = b->locs.v[k - 1].prefix) {
		const struct loc_key *key = &b->locs.v[k - 1];
		Line *line = malloc(sizeof(*line));
		int src;

		if (!line)
			break;
		perftools__profiles__line__init(line);
		line->function_id = function_id(b, key->method_id, key->type);
		src = key->type == FRAME_PSEUDO || frame_named_by_symbol(key->type) ? -1 : method_table_line(b->src->methods, key->method_id, key->bci);
		line->line = src > 0 ? src : 0;
		l->line[l->n_line++] = line;
		if (!key->prefix)
			l->mapping_id = b->mapping_of_kind[frame_kind_of(key->type, key->method_id)];
	}
	return l;
}

static void free_profile(Profile *p)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		free(p->sample[i]->location_id);
		free(p->sample[i]->value);
		if (p->sample[i]->n_label)
			free(p->sample[i]->label[0]);
		free(p->sample[i]->label);
		free(p->sample[i]);
	}
	free(p->sample);
	for (size_t i = 0; i < p->n_location; i++) {
		for (size_t j = 0; j < p->location[i]->n_line; j++)
			free(p->location[i]->line[j]);
		free(p->location[i]->line);
		free(p->location[i]);
	}
	free(p->location);
	for (size_t i = 0; i < p->n_mapping; i++)
		free(p->mapping[i]);
	free(p->mapping);
	for (size_t i = 0; i < p->n_sample_type; i++)
		free(p->sample_type[i]);
	free(p->sample_type);
	free(p->period_type);
	free(p->comment);
}

static ValueType *value_type(struct builder *b, const char *type, const char *unit)
{
	ValueType *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	perftools__profiles__value_type__init(v);
	v->type = str_id(&b->str, type);
	v->unit = str_id(&b->str, unit);
	return v;
}

/* The sample types of each kind of values: [0] and [1], and the period's. */
static const struct {
	const char *type[2], *unit[2], *period_type, *period_unit;
} value_names[] = {
	[VALUES_ALLOC] = {.type = {"alloc_objects", "alloc_space"}, .unit = {"count", "bytes"},
			  .period_type = "space", .period_unit = "bytes"},
	[VALUES_LOCK] = {.type = {"contentions", "delay"}, .unit = {"count", "nanoseconds"},
			 .period_type = "contentions", .period_unit = "count"},
};

int cct_render_pprof(const struct profile_source *src, const struct cct *view, const uint64_t *second,
		     struct wbuf *out)
{
	static const char *const mapping_names[KIND_COUNT] = {
		[KIND_ROOT] = "[root]", [KIND_INTERPRETED] = "[interpreted Java]", [KIND_COMPILED] = "[compiled Java]",
		[KIND_INLINED] = "[compiled Java]", [KIND_NATIVE] = "[native]", [KIND_KERNEL] = "[kernel]",
		[KIND_JVM] = "[JVM]", [KIND_PSEUDO] = "[pseudo]", [KIND_JAVA] = "[Java]", [KIND_CLASS] = "[class]"};
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct builder b = {.src = src, .view = view};
	int64_t period = src->frequency_hz ? 1000000000ll / src->frequency_hz : 0;
	uint64_t *stack = malloc((view->nodes.n + 1) * sizeof(*stack));
	uint8_t *packed = NULL;
	int rc = -1;

	u64_map_init(&b.str.index);
	string_pool_init(&b.str.pool);
	u64_map_init(&b.function_of);
	u64_map_init(&b.loc_index);
	b.loc_of = calloc(view->nodes.n + 1, sizeof(*b.loc_of));
	b.group = calloc(view->nodes.n + 1, sizeof(*b.group));
	if (!stack || !b.loc_of || !b.group)
		goto cleanup;
	str_id(&b.str, ""); /* string 0 is the empty string */
	p.sample_type = calloc(2, sizeof(*p.sample_type));
	if (!p.sample_type)
		goto cleanup;
	if (src->values == VALUES_ALLOC || src->values == VALUES_LOCK) {
		/* Without the second tree (a fleet store's one value), the
		 * first value alone. */
		p.period_type = value_type(&b, value_names[src->values].period_type, value_names[src->values].period_unit);
		for (int k = second ? 0 : 1; k < 2; k++)
			p.sample_type[p.n_sample_type++] =
				value_type(&b, value_names[src->values].type[k], value_names[src->values].unit[k]);
		p.period = src->values == VALUES_ALLOC ? (int64_t)src->interval : 1;
	} else {
		const char *type = src->profile_type ? src->profile_type : cct_profile_type_name(src->view);
		p.period_type = value_type(&b, type, "nanoseconds");
		p.sample_type[p.n_sample_type++] = value_type(&b, "samples", "count");
		p.sample_type[p.n_sample_type++] = value_type(&b, type, "nanoseconds");
		p.period = period;
	}
	if (!p.period_type || !p.sample_type[0] || (p.n_sample_type > 1 && !p.sample_type[1]))
		goto cleanup;
	p.default_sample_type = p.sample_type[p.n_sample_type - 1]->type;

	/* The first mapping is the program (what pprof calls "File"); then
	 * one per frame kind, naming it. */
	p.mapping = calloc(KIND_COUNT + 1, sizeof(*p.mapping));
	if (!p.mapping)
		goto cleanup;
	Mapping *main_map = malloc(sizeof(*main_map));
	if (!main_map)
		goto cleanup;
	perftools__profiles__mapping__init(main_map);
	main_map->id = 1;
	main_map->filename = str_id(&b.str, src->title ? src->title : "java");
	p.mapping[p.n_mapping++] = main_map;
	for (int k = KIND_INTERPRETED; k < KIND_COUNT; k++) {
		if (k == KIND_INLINED) {
			b.mapping_of_kind[k] = b.mapping_of_kind[KIND_COMPILED];
			continue;
		}
		Mapping *m = malloc(sizeof(*m));
		if (!m)
			goto cleanup;
		perftools__profiles__mapping__init(m);
		m->id = p.n_mapping + 1;
		m->filename = str_id(&b.str, mapping_names[k]);
		m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = 1;
		p.mapping[p.n_mapping++] = m;
		b.mapping_of_kind[k] = m->id;
	}

	assign_locations(&b);
	if (b.str.oom)
		goto cleanup;
	p.location = calloc(b.locs.n + 1, sizeof(*p.location));
	if (!p.location)
		goto cleanup;
	for (size_t i = 0; i < b.locs.n; i++) {
		p.location[i] = make_location(&b, i + 1);
		if (!p.location[i])
			goto cleanup;
		p.n_location++;
	}

	/* A sample per node where samples ended: its physical frames, leaf
	 * first. */
	size_t nsamples = 0;
	for (size_t i = 0; i < view->nodes.n; i++)
		nsamples += view->self.v[i] > 0 || (second && second[i] > 0);
	p.sample = calloc(nsamples + 1, sizeof(*p.sample));
	if (!p.sample)
		goto cleanup;
	int64_t pid_key = str_id(&b.str, "pid"), thread_key = str_id(&b.str, "thread");
	for (size_t i = 0; i < view->nodes.n; i++) {
		uint64_t self = view->self.v[i], other = second ? second[i] : 0;
		size_t depth = 0;
		int64_t thread = -1;

		if (!self && !other)
			continue;
		/* A path's thread pool (VIEW_THREADS) is a label, not a frame. */
		for (uint32_t k = (uint32_t)i; k; k = view->nodes.v[b.group[k]].parent) {
			if (view->nodes.v[k].type == FRAME_THREAD)
				thread = str_id(&b.str, kernel_symbols_name(view->nodes.v[k].method_id));
			else
				stack[depth++] = b.loc_of[k];
		}
		Sample *s = malloc(sizeof(*s));
		if (!s)
			goto cleanup;
		perftools__profiles__sample__init(s);
		p.sample[p.n_sample++] = s;
		s->location_id = malloc((depth + 1) * sizeof(*s->location_id));
		s->value = malloc(2 * sizeof(*s->value));
		s->label = malloc(2 * sizeof(*s->label));
		Label *l = malloc(2 * sizeof(*l)); /* one block: freed with label[0] */
		if (!s->location_id || !s->value || !s->label || !l) {
			free(l);
			goto cleanup;
		}
		memcpy(s->location_id, stack, depth * sizeof(*stack));
		s->n_location_id = depth;
		if (second || src->values == VALUES_SAMPLED) {
			s->value[0] = second ? (int64_t)other : (int64_t)self;
			s->value[1] = second ? (int64_t)self : (int64_t)self * period;
			s->n_value = 2;
		} else {
			s->value[0] = (int64_t)self;
			s->n_value = 1;
		}
		perftools__profiles__label__init(l);
		l->key = pid_key;
		l->num = src->pid;
		s->label[0] = l;
		s->n_label = 1;
		if (thread >= 0) {
			perftools__profiles__label__init(&l[1]);
			l[1].key = thread_key;
			l[1].str = thread;
			s->label[s->n_label++] = &l[1];
		}
	}

	/* When: the window's samples, or the first to the last sample. */
	if (src->window && src->window->covered_until) {
		p.time_nanos = src->window->covered_from * 1000000000ll;
		p.duration_nanos = (src->window->covered_until - src->window->covered_from) * 1000000000ll;
	} else if (src->cct->slices.first_s) {
		p.time_nanos = src->cct->slices.first_s * 1000000000ll;
		p.duration_nanos = (src->cct->slices.last_s + 1 - src->cct->slices.first_s) * 1000000000ll;
	}
	p.comment = calloc(2, sizeof(*p.comment));
	if (!p.comment)
		goto cleanup;
	p.comment[p.n_comment++] = str_id(&b.str, "jsampled");
	if (src->title)
		p.comment[p.n_comment++] = str_id(&b.str, src->title);
	p.function = b.functions.v;
	p.n_function = b.functions.n;
	if (b.str.oom)
		goto cleanup;
	p.string_table = b.str.v.v;
	p.n_string_table = b.str.v.n;

	size_t len = perftools__profiles__profile__get_packed_size(&p);
	packed = malloc(len ? len : 1);
	if (!packed)
		goto cleanup;
	perftools__profiles__profile__pack(&p, packed);
	rc = gzip_into(packed, len, out);
cleanup:
	p.function = NULL;
	p.n_function = 0;
	free_profile(&p);
	for (size_t i = 0; i < b.functions.n; i++)
		free(b.functions.v[i]);
	vec_free(&b.functions);
	vec_free(&b.str.v);
	u64_map_free(&b.str.index);
	string_pool_free(&b.str.pool);
	u64_map_free(&b.function_of);
	vec_free(&b.locs);
	u64_map_free(&b.loc_index);
	free(b.loc_of);
	free(b.group);
	free(stack);
	free(packed);
	return rc;
}
