/* SPDX-License-Identifier: GPL-2.0-only */
/* Renders a profile (a CCT, or the samples of a time window of it): as an
 * indented tree, FlameGraph's collapsed (folded) lines, JSON, pprof
 * (cct_pprof.c), a self-contained flame-graph page or its data
 * (cct_page.c), or an interactive SVG (cct_svg.c); and the difference of two
 * profiles (cct_page.c). Renders run in a forked child of jsampled, so
 * they may take their time and memory. */
#ifndef JSAMPLED_CCT_FORMAT_H
#define JSAMPLED_CCT_FORMAT_H

#include <stdbool.h>
#include <sys/types.h>

#include "userspace/common/wire.h"
#include "cct.h"
#include "cct_slices.h"
#include "cct_view.h"
#include "method_table.h"

enum cct_format {
	CCT_FORMAT_TREE,
	CCT_FORMAT_COLLAPSED,
	CCT_FORMAT_JSON,
	CCT_FORMAT_PPROF, /* gzipped profile.proto */
	CCT_FORMAT_HTML,  /* the flame-graph page */
	CCT_FORMAT_SVG,
	CCT_FORMAT_PAGE,  /* the page's data (JSON), for the live view */
	CCT_FORMAT_TEXT,  /* diffs: a table of the frames whose share changed most */
	CCT_FORMAT_COUNT
};

/* Parses a format name; -1 if none. */
int cct_format_parse(const char *s);
const char *cct_format_name(enum cct_format f);

/* What a profile's values are (pprof's sample types). */
enum profile_values {
	VALUES_SAMPLED = 0, /* samples/count, TYPE/nanoseconds (samples x the sampling period) */
	VALUES_ALLOC,       /* alloc_objects/count (cct2), alloc_space/bytes (cct) */
	VALUES_LOCK,        /* contentions/count (cct2), delay/nanoseconds (cct) */
};

/* One profile to render. */
struct profile_source {
	const struct cct *cct;
	const struct method_table *methods;
	struct slice_window *window; /* NULL: every sample of the tree */
	const char *title;           /* "pid 4242 (java)"; NULL: none */
	uint32_t frequency_hz;       /* the sampling rate (pprof's period); 0 unknown */
	unsigned view;               /* which frames and samples (cct_view.h VIEW_*) */
	const char *threads;         /* the thread pools shown (thread_pools.h); NULL: all */
	/* The profile type named in pprof ("cpu", "offcpu", "wall"); NULL:
	 * view's. A tree of one type's samples only (the fleet's) counts
	 * them all (VIEW_WALL) under its own type's name. */
	const char *profile_type;
	pid_t pid;
	enum profile_values values;
	/* VALUES_ALLOC, VALUES_LOCK: the tree of the second value (objects,
	 * waits), made from the same events; the renderings but pprof show
	 * cct's value alone. */
	const struct cct *cct2;
	uint64_t interval; /* the events' sampling interval (pprof's period); 0 unknown */
};

/* Appends the rendering to out, written to fd as it grows when fd >= 0
 * (and at the end). -1 on an allocation or write error. */
int cct_render_stream(const struct profile_source *src, enum cct_format f, struct wbuf *out, int fd);
/* The whole tree, into out. */
int cct_render(const struct cct *c, const struct method_table *methods, enum cct_format f, struct wbuf *out);
/* target against base: CCT_FORMAT_HTML (a differential page),
 * CCT_FORMAT_PAGE (its data) or CCT_FORMAT_TEXT (a table). */
int cct_diff_stream(const struct profile_source *base, const struct profile_source *target, enum cct_format f,
		    struct wbuf *out, int fd);

/* "package.Class.method_[j]" and friends. */
void cct_frame_name(const struct method_table *methods, uint32_t method_id, uint8_t type, char *out, size_t outlen);

/* Streaming: writes out's bytes to fd once there are enough of them (all:
 * whatever there is); -1 on a write error, which ends the render. */
int cct_spill(struct wbuf *out, int fd, bool all);

/* The renderers of the other files (on a view, cct_view.h). */
/* second: per node of view, the second value (VALUES_ALLOC, VALUES_LOCK);
 * NULL otherwise. */
int cct_render_pprof(const struct profile_source *src, const struct cct *view, const uint64_t *second,
		     struct wbuf *out);
int cct_render_page(const struct profile_source *src, const struct cct *view, bool html, struct wbuf *out, int fd);
int cct_render_svg(const struct profile_source *src, const struct cct *view, struct wbuf *out, int fd);

#endif
