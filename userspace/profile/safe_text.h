/* SPDX-License-Identifier: GPL-2.0-only */
/* Text that other processes supply (agents' names and messages, thread
 * names from /proc) reaches the journal, terminals and JSON. It is stored
 * escaped: control bytes, DEL and bytes that are not valid UTF-8 become
 * "\xNN", so no output can carry terminal escapes or break a parser. */
#ifndef JSAMPLED_SAFE_TEXT_H
#define JSAMPLED_SAFE_TEXT_H

#include <stddef.h>

/* Writes in[0..n) escaped into out (always NUL-terminated, truncated at a
 * character boundary to fit cap); returns the length written. */
size_t safe_text(char *out, size_t cap, const char *in, size_t n);

/* Escapes a NUL-terminated string in place (it may only shrink by
 * truncation: the buffer's capacity is cap). */
void safe_text_inplace(char *s, size_t cap);

#endif
