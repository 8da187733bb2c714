/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "shared/json-indent.h"

typedef struct out_buf {
	FILE *f;
	size_t n;
	bool failed;
	char b[16384];
} out_buf;

static void out_flush(out_buf *o)
{
	if (o->n && !o->failed && fwrite(o->b, 1, o->n, o->f) != o->n)
		o->failed = true;
	o->n = 0;
}

static void out_char(out_buf *o, char c)
{
	if (o->n == sizeof(o->b))
		out_flush(o);
	o->b[o->n++] = c;
}

static void out_newline(out_buf *o, size_t depth)
{
	size_t i;

	out_char(o, '\n');
	for (i = 0; i < 2 * depth; i++)
		out_char(o, ' ');
}

int json_indent_write(json_indent *st, const char *s, size_t n, FILE *f)
{
	out_buf o = { .f = f };
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (st->in_string) {
			out_char(&o, c);
			if (st->escaped)
				st->escaped = false;
			else if (c == '\\')
				st->escaped = true;
			else if (c == '"')
				st->in_string = false;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			/* Blanks between top-level values (the final newline) stay; inside, the layout is ours. */
			if (st->depth == 0)
				out_char(&o, c);
			continue;
		}
		if (c == ']' || c == '}') {
			st->opened = false;
			if (st->depth)
				st->depth--;
			out_newline(&o, st->depth);
			out_char(&o, c);
			continue;
		}
		if (st->opened) {
			st->opened = false;
			out_newline(&o, st->depth);
		}
		out_char(&o, c);
		if (c == '"') {
			st->in_string = true;
		} else if (c == '[' || c == '{') {
			st->depth++;
			st->opened = true;
		} else if (c == ',') {
			out_newline(&o, st->depth);
		} else if (c == ':') {
			out_char(&o, ' ');
		}
	}
	out_flush(&o);
	return o.failed ? -EIO : 0;
}
