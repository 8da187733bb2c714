/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSON_INDENT_H
#define MB_SHARED_JSON_INDENT_H

/*
 * Compact JSON (no blanks outside strings, as jsonout writes it) re-indented as json-c prints
 * JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED: one member or element a line, two spaces
 * a level, "key": value, and an empty container as "[" newline "]". It streams: the text may
 * arrive in pieces cut anywhere, the state carries from one piece to the next.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct json_indent {
	size_t depth;
	bool in_string, escaped;
	bool opened;    /* just after '[' or '{': the next value starts a new line */
} json_indent;

/* Write s[0..n) re-indented to f; 0, or -EIO on a write error. */
int json_indent_write(json_indent *st, const char *s, size_t n, FILE *f);

#endif
