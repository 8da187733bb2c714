/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_TEXT_ESCAPE_H
#define MB_SHARED_TEXT_ESCAPE_H

/*
 * Text that came from a machine (event data, userspace records: the machine's, hostile) made
 * safe to print on one line: every control character (C0, DEL, and the C1 range U+0080-U+009F)
 * and every byte that is not part of well-formed UTF-8 becomes an escape, "\n", "\r", "\t" or
 * "\xNN" (C1 as the \xNN of both of its UTF-8 bytes), so that the result has no byte below 0x20,
 * no 0x7f and no sequence a terminal acts on. A backslash is kept as it is, so escaping twice
 * gives the same text (a literal "\n" in the input stays the two characters; it can make no
 * line). Well-formed UTF-8 of printable characters is kept.
 */
#include <stdbool.h>
#include <stddef.h>

/* The escaped copy of s[0..len) (NUL bytes included, as \x00); malloc'd, NULL on OOM. */
char *text_escape(const char *s, size_t len);
/* The same of a NUL-terminated string; NULL in, NULL out (and on OOM). */
char *text_escape_str(const char *s);
/* Whether s[0..len) would come out of text_escape unchanged. */
bool text_is_safe(const char *s, size_t len);

#endif
