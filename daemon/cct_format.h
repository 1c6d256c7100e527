/* Renders a CCT as text: an indented tree, FlameGraph's collapsed (folded)
 * format, or JSON. */
#ifndef JSAMPLED_CCT_FORMAT_H
#define JSAMPLED_CCT_FORMAT_H

#include "../userspace/common/wire.h"
#include "cct.h"
#include "method_table.h"

enum cct_format { CCT_FORMAT_TREE, CCT_FORMAT_COLLAPSED, CCT_FORMAT_JSON };

/* Parses "tree", "collapsed", "json"; -1 if none. */
int cct_format_parse(const char *s);

/* Appends the rendering of c to out. Frame names come from methods. */
int cct_render(const struct cct *c, const struct method_table *methods, enum cct_format f,
	       struct wbuf *out);
/* The same, streamed: out's contents are written to fd (blocking) as they
 * grow, and at the end; -1 on an allocation or write error. */
int cct_render_stream(const struct cct *c, const struct method_table *methods, enum cct_format f,
		      struct wbuf *out, int fd);

/* "package.Class.method_[j]" and friends. */
void cct_frame_name(const struct method_table *methods, uint32_t method_id, uint8_t type,
		    char *out, size_t outlen);

#endif
