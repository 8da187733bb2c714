/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict JSON for files users hand mboot. Two passes over the text:
 *  1. our scanner (through the bounds-checked reader) checks the RFC 8259 grammar, the
 *     strings' UTF-8 and escapes, the nesting depth and that no object has a key twice.
 *     json-c's JSON_TOKENER_STRICT lets single quotes, NaN, "1.", raw control characters,
 *     lone surrogates and overlong UTF-8 through, reports truncation as its internal
 *     state ("continue") and cannot see duplicate keys, so the scanner is the judge and
 *     gives every message its line and column.
 *  2. json-c builds the tree, strict too; it refusing what the scanner accepted would be
 *     a bug, still reported as an input error rather than trusted.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/json-read.h"
#include "shared/reader.h"

/* A key of an object still open: where its quote is, and its decoded bytes in scan.names. */
typedef struct seen_key {
	uint32_t at, name, len;
} seen_key;

typedef struct open_container {
	bool is_object;
	size_t first_key;  /* its keys are scan.keys[first_key ...] */
	size_t names_mark; /* and their bytes scan.names[names_mark ...] */
} open_container;

typedef struct scan {
	const char *doc;
	byte_reader r; /* over the value's bytes; offsets are doc's */
	unsigned depth, max_depth;
	open_container stack[JSON_READ_MAX_DEPTH];
	seen_key *keys;
	size_t n_keys, cap_keys;
	uint8_t *names;
	size_t n_names, cap_names;
	bool dup_found;
	/* String values long enough to hand json-c as a copy instead (see lift_long_strings()). */
	size_t n_string_values;
	bool last_plain; /* the last string scanned had no escape and no byte over 0x7f */
	struct long_string {
		size_t ordinal; /* among the string values, in text order */
		size_t start, len;
	} *longs;
	size_t n_longs, cap_longs;
	size_t dup_at;     /* the first repeated key, in text order */
	char dup_shown[96]; /* it, printable */
	mb_error *err;
} scan;

/* Line and column (characters, so a UTF-8 sequence counts once) of doc[at], from 1. */
static void text_position(const char *doc, size_t at, size_t *line, size_t *column)
{
	size_t i;

	*line = 1;
	*column = 1;
	for (i = 0; i < at; i++) {
		if (doc[i] == '\n') {
			(*line)++;
			*column = 1;
		} else if (((unsigned char) doc[i] & 0xc0) != 0x80) {
			(*column)++;
		}
	}
}

static int fail_position(const char *doc, size_t at, mb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_position(const char *doc, size_t at, mb_error *err, const char *fmt, ...)
{
	char what[sizeof(err->message)];
	size_t line, column;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	text_position(doc, at, &line, &column);
	return set_error_at(err, -EBADMSG, at, "line %zu, column %zu: %s", line, column, what);
}

#define fail(s, at, ...) fail_position((s)->doc, (at), (s)->err, __VA_ARGS__)

static size_t here(const scan *s)
{
	return (size_t) reader_offset(&s->r);
}

static int peek(const scan *s)
{
	return reader_left(&s->r) ? *reader_cur(&s->r) : -1;
}

/* The next byte, consumed; -1 at the end. */
static int next(scan *s)
{
	uint8_t c;

	return read_u8(&s->r, &c) < 0 ? -1 : c;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static void skip_space(scan *s)
{
	int c;

	while ((c = peek(s)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		next(s);
}

/* At the byte the grammar did not allow; expected says what it wanted. */
static int fail_unexpected(scan *s, const char *expected)
{
	size_t at = here(s);
	int c = peek(s);

	if (c < 0)
		return fail(s, at, "unexpected end of input");
	if (c == '/')
		return fail(s, at, "comments are not JSON");
	if (c == '\'')
		return fail(s, at, "single quotes are not JSON (strings and keys take double quotes)");
	if (c > 0x20 && c < 0x7f)
		return fail(s, at, "unexpected '%c', expected %s", c, expected);
	return fail(s, at, "unexpected byte 0x%02x, expected %s", (unsigned) c, expected);
}

static int add_name_byte(scan *s, uint8_t b)
{
	if (s->n_names == s->cap_names) {
		size_t ncap = s->cap_names ? s->cap_names * 2 : 256;
		uint8_t *n = realloc(s->names, ncap);

		if (!n)
			return set_error(s->err, -ENOMEM, "out of memory");
		s->names = n;
		s->cap_names = ncap;
	}
	s->names[s->n_names++] = b;
	return 0;
}

static int add_name_utf8(scan *s, uint32_t cp)
{
	uint8_t b[4];
	size_t n, i;
	int r;

	if (cp < 0x80) {
		b[0] = (uint8_t) cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t) (0xc0 | cp >> 6);
		b[1] = (uint8_t) (0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t) (0xe0 | cp >> 12);
		b[1] = (uint8_t) (0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t) (0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (uint8_t) (0xf0 | cp >> 18);
		b[1] = (uint8_t) (0x80 | (cp >> 12 & 0x3f));
		b[2] = (uint8_t) (0x80 | (cp >> 6 & 0x3f));
		b[3] = (uint8_t) (0x80 | (cp & 0x3f));
		n = 4;
	}
	for (i = 0; i < n; i++)
		if ((r = add_name_byte(s, b[i])) < 0)
			return r;
	return 0;
}

static int scan_hex4(scan *s, size_t escape_at, uint32_t *ret)
{
	uint32_t v = 0;
	int i, c;

	for (i = 0; i < 4; i++) {
		c = next(s);
		if (c < 0)
			return fail(s, here(s), "unexpected end of input");
		if (is_digit(c))
			v = v << 4 | (uint32_t) (c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v << 4 | (uint32_t) ((c | 0x20) - 'a' + 10);
		else
			return fail(s, escape_at, "\\u needs four hex digits");
	}
	*ret = v;
	return 0;
}

/* After a backslash at escape_at. */
static int scan_escape(scan *s, size_t escape_at, bool keep)
{
	static const char letters[] = "\"\\/bfnrt", meaning[] = "\"\\/\b\f\n\r\t";
	const char *known;
	uint32_t cp, low;
	int c = next(s), r;

	if (c < 0)
		return fail(s, here(s), "unexpected end of input");
	known = c ? strchr(letters, c) : NULL;
	if (known)
		return keep ? add_name_byte(s, (uint8_t) meaning[known - letters]) : 0;
	if (c != 'u')
		return fail(s, escape_at, "invalid escape in a string");
	if ((r = scan_hex4(s, escape_at, &cp)) < 0)
		return r;
	/* Every reader here takes strings as C strings: "\u0000" would cut one short. */
	if (cp == 0)
		return fail(s, escape_at, "\\u0000 in a string");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(s, escape_at, "lone surrogate \\u%04x in a string", (unsigned) cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (peek(s) < 0)
			return fail(s, here(s), "unexpected end of input");
		if (next(s) != '\\' || peek(s) != 'u')
			return fail(s, escape_at, "lone surrogate \\u%04x in a string", (unsigned) cp);
		next(s);
		if ((r = scan_hex4(s, escape_at, &low)) < 0)
			return r;
		if (low < 0xdc00 || low > 0xdfff)
			return fail(s, escape_at, "lone surrogate \\u%04x in a string", (unsigned) cp);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	return keep ? add_name_utf8(s, cp) : 0;
}

/* One UTF-8 sequence whose lead byte (at at) was read, as RFC 3629 §4 allows it. */
static int scan_utf8(scan *s, size_t at, int lead, bool keep)
{
	int lo = 0x80, hi = 0xbf, more, i, c, r;

	if (lead >= 0xc2 && lead <= 0xdf)
		more = 1;
	else if (lead >= 0xe0 && lead <= 0xef)
		more = 2;
	else if (lead >= 0xf0 && lead <= 0xf4)
		more = 3;
	else
		return fail(s, at, "invalid UTF-8 in a string");
	/* The second byte's range rules out overlong forms, surrogates and past U+10FFFF. */
	if (lead == 0xe0)
		lo = 0xa0;
	else if (lead == 0xed)
		hi = 0x9f;
	else if (lead == 0xf0)
		lo = 0x90;
	else if (lead == 0xf4)
		hi = 0x8f;
	if (keep && (r = add_name_byte(s, (uint8_t) lead)) < 0)
		return r;
	for (i = 0; i < more; i++) {
		c = peek(s);
		if (c < 0)
			return fail(s, here(s), "unexpected end of input");
		if (c < lo || c > hi)
			return fail(s, at, "invalid UTF-8 in a string");
		next(s);
		if (keep && (r = add_name_byte(s, (uint8_t) c)) < 0)
			return r;
		lo = 0x80;
		hi = 0xbf;
	}
	return 0;
}

/* After the opening quote. keep: append the decoded bytes to names (a key). */
static int scan_string(scan *s, bool keep)
{
	for (;;) {
		size_t at, run = 0;
		int c, r;

		if (!keep) {
			/* a run of plain ASCII at once: strings here are mostly long base64 */
			const uint8_t *p = reader_cur(&s->r);
			size_t left = reader_left(&s->r);

			while (run < left && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
				run++;
			if (run && read_skip(&s->r, run) < 0)
				return fail(s, here(s), "unexpected end of input");
		}
		at = here(s);
		c = next(s);

		if (c < 0)
			return fail(s, at, "unexpected end of input");
		if (c == '"')
			return 0;
		if (c < 0x20)
			return fail(s, at, "control character 0x%02x in a string (JSON needs it escaped)", (unsigned) c);
		if (c == '\\') {
			s->last_plain = false;
			r = scan_escape(s, at, keep);
		} else if (c < 0x80) {
			r = keep ? add_name_byte(s, (uint8_t) c) : 0;
		} else {
			s->last_plain = false;
			r = scan_utf8(s, at, c, keep);
		}
		if (r < 0)
			return r;
	}
}

static int scan_digits(scan *s, const char *expected)
{
	if (!is_digit(peek(s)))
		return fail_unexpected(s, expected);
	while (is_digit(peek(s)))
		next(s);
	return 0;
}

/* RFC 8259 §6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(scan *s)
{
	size_t at = here(s);
	int r;

	if (peek(s) == '-')
		next(s);
	if (peek(s) == '0') {
		next(s);
		if (is_digit(peek(s)))
			return fail(s, at, "number with a leading zero");
	} else if ((r = scan_digits(s, "a digit")) < 0) {
		return r;
	}
	if (peek(s) == '.') {
		next(s);
		if ((r = scan_digits(s, "a digit after '.'")) < 0)
			return r;
	}
	if (peek(s) == 'e' || peek(s) == 'E') {
		next(s);
		if (peek(s) == '+' || peek(s) == '-')
			next(s);
		if ((r = scan_digits(s, "a digit in the exponent")) < 0)
			return r;
	}
	return 0;
}

static int scan_literal(scan *s, const char *word, const char *expected)
{
	for (; *word; word++) {
		if (peek(s) != (unsigned char) *word)
			return fail_unexpected(s, expected);
		next(s);
	}
	return 0;
}

static int compare_keys(const void *a, const void *b, void *names)
{
	const seen_key *x = a, *y = b;
	int c = memcmp((const uint8_t *) names + x->name, (const uint8_t *) names + y->name,
		       x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* The key for a message: printable ASCII and UTF-8 as they are, anything a terminal could
 * take as a control (C0, DEL, C1) as \uXXXX; long keys cut. */
static void show_key(const uint8_t *p, size_t n, char *out, size_t out_size)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t len = p[i] < 0x80 ? 1 : p[i] < 0xe0 ? 2 : p[i] < 0xf0 ? 3 : 4;
		bool control = p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && i + 1 < n && p[i + 1] < 0xa0);

		if (i + len > n)
			break; /* cannot happen: the scanner decoded valid UTF-8 */
		if (o + 12 > out_size) {
			snprintf(out + o, out_size - o, "...");
			return;
		}
		if (control) {
			uint32_t cp = len == 1 ? p[i] : p[i + 1];

			o += (size_t) snprintf(out + o, out_size - o, "\\u%04x", (unsigned) cp);
		} else if (p[i] == '"' || p[i] == '\\') {
			out[o++] = '\\';
			out[o++] = (char) p[i];
		} else {
			memcpy(out + o, p + i, len);
			o += len;
		}
		i += len;
	}
	out[o] = '\0';
}

/* The object at the top of the stack closes: find a key it has twice (sorting, so a file of
 * many keys costs n log n), keep the first such in text order, forget its keys. */
static void close_object(scan *s, const open_container *o)
{
	size_t n = s->n_keys - o->first_key, i;
	seen_key *k;

	if (n < 2)
		goto forget;
	k = s->keys + o->first_key;
	qsort_r(k, n, sizeof(*k), compare_keys, s->names);
	for (i = 1; i < n; i++)
		if (k[i].len == k[i - 1].len && memcmp(s->names + k[i].name, s->names + k[i - 1].name, k[i].len) == 0 &&
		    (!s->dup_found || k[i].at < s->dup_at)) {
			s->dup_found = true;
			s->dup_at = k[i].at;
			show_key(s->names + k[i].name, k[i].len, s->dup_shown, sizeof(s->dup_shown));
		}
forget:
	s->n_keys = o->first_key;
	s->n_names = o->names_mark;
}

static int open_container_at(scan *s, bool is_object, size_t at)
{
	if (s->depth == s->max_depth)
		return fail(s, at, "nested deeper than %u arrays and objects", s->max_depth);
	s->stack[s->depth].is_object = is_object;
	s->stack[s->depth].first_key = s->n_keys;
	s->stack[s->depth].names_mark = s->n_names;
	s->depth++;
	return 0;
}

static void close_container(scan *s)
{
	s->depth--;
	if (s->stack[s->depth].is_object)
		close_object(s, &s->stack[s->depth]);
}

/* After a key's opening quote at at. */
static int scan_key(scan *s, size_t at)
{
	size_t start = s->n_names;
	int r;

	if ((r = scan_string(s, true)) < 0)
		return r;
	if (s->n_keys == s->cap_keys) {
		size_t ncap = s->cap_keys ? s->cap_keys * 2 : 64;
		seen_key *n = reallocarray(s->keys, ncap, sizeof(*n));

		if (!n)
			return set_error(s->err, -ENOMEM, "out of memory");
		s->keys = n;
		s->cap_keys = ncap;
	}
	/* offsets fit: the text is at most INT_MAX bytes */
	s->keys[s->n_keys++] = (seen_key) { (uint32_t) at, (uint32_t) start, (uint32_t) (s->n_names - start) };
	return 0;
}

/* Plain strings at least this long go around json-c's tokener (it copies them byte by byte). */
#define LONG_STRING 256

static int note_string_value(scan *s, size_t start, size_t len)
{
	size_t ordinal = s->n_string_values++;

	if (!s->last_plain || len < LONG_STRING)
		return 0;
	if (s->n_longs == s->cap_longs) {
		size_t ncap = s->cap_longs ? s->cap_longs * 2 : 8;
		struct long_string *n = reallocarray(s->longs, ncap, sizeof(*n));

		if (!n)
			return set_error(s->err, -ENOMEM, "out of memory");
		s->longs = n;
		s->cap_longs = ncap;
	}
	s->longs[s->n_longs++] = (struct long_string) { ordinal, start, len };
	return 0;
}

static int scan_scalar(scan *s)
{
	int c = peek(s);

	if (c == '"') {
		size_t start;
		int r;

		next(s);
		start = here(s);
		s->last_plain = true;
		if ((r = scan_string(s, false)) < 0)
			return r;
		return note_string_value(s, start, here(s) - 1 - start);
	}
	if (c == '-' || is_digit(c))
		return scan_number(s);
	if (c == 't')
		return scan_literal(s, "true", "true");
	if (c == 'f')
		return scan_literal(s, "false", "false");
	if (c == 'n')
		return scan_literal(s, "null", "null");
	return fail_unexpected(s, "a JSON value");
}

static int scan_text(scan *s)
{
	enum { WANT_VALUE, WANT_KEY, AFTER_VALUE } state = WANT_VALUE;
	int c, r;

	for (;;) {
		skip_space(s);
		c = peek(s);
		if (state == WANT_VALUE && (c == '{' || c == '[')) {
			if ((r = open_container_at(s, c == '{', here(s))) < 0)
				return r;
			next(s);
			skip_space(s);
			if (peek(s) == (c == '{' ? '}' : ']')) {
				next(s);
				close_container(s);
				state = AFTER_VALUE;
			} else {
				state = c == '{' ? WANT_KEY : WANT_VALUE;
			}
		} else if (state == WANT_VALUE) {
			if ((r = scan_scalar(s)) < 0)
				return r;
			state = AFTER_VALUE;
		} else if (state == WANT_KEY) {
			size_t at = here(s);

			if (c != '"')
				return fail_unexpected(s, "a key in double quotes");
			next(s);
			if ((r = scan_key(s, at)) < 0)
				return r;
			skip_space(s);
			if (peek(s) != ':')
				return fail_unexpected(s, "':' after the key");
			next(s);
			state = WANT_VALUE;
		} else if (s->depth == 0) {
			if (c >= 0)
				return fail(s, here(s), "text after the end of the JSON value");
			return 0;
		} else {
			bool in_object = s->stack[s->depth - 1].is_object;
			int close = in_object ? '}' : ']';

			if (c == ',') {
				size_t comma_at = here(s);

				next(s);
				skip_space(s);
				if (peek(s) == close)
					return fail(s, comma_at, "trailing comma before '%c'", close);
				state = in_object ? WANT_KEY : WANT_VALUE;
			} else if (c == close) {
				next(s);
				close_container(s);
			} else {
				return fail_unexpected(s, in_object ? "',' or '}'" : "',' or ']'");
			}
		}
	}
}

/*
 * json-c's tokener copies a string's bytes one at a time through its buffer: the base64 of an
 * event log (tens of KiB in evidence) cost more than the rest of judging it. The scanner has
 * already checked every string, so the long plain ones (no escape, ASCII) are cut out of the
 * text json-c reads and put back into the tree as copies of the original bytes. The tree's
 * order is the text's (json-c keeps keys in insertion order; the scanner refused a key twice),
 * so the k-th string value met walking the tree is the k-th in the text.
 */
typedef struct lift {
	const char *doc;
	const struct long_string *longs;
	size_t n_longs, next_long, ordinal;
} lift;

/* For a string value met on the walk: 1 and *ret, the original long string to put in its
 * place; 0 when it is not one of them; -ENOMEM. */
static int lifted_string(lift *l, json_object *v, json_object **ret)
{
	const struct long_string *ls;

	if (!json_object_is_type(v, json_type_string))
		return 0;
	if (l->next_long == l->n_longs || l->longs[l->next_long].ordinal != l->ordinal++)
		return 0;
	ls = &l->longs[l->next_long++];
	*ret = json_object_new_string_len(l->doc + ls->start, (int) ls->len);
	return *ret ? 1 : -ENOMEM;
}

static int put_back_long_strings(lift *l, json_object *o)
{
	json_object *n;
	size_t i, count;
	int r;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, v) {
			if ((r = lifted_string(l, v, &n)) < 0)
				return r;
			/* Replacing the value of a key in place keeps the key's position. */
			if (r > 0 && json_object_object_add(o, key, n) < 0) {
				json_object_put(n);
				return -ENOMEM;
			}
			if (r == 0 && (r = put_back_long_strings(l, v)) < 0)
				return r;
		}
	} else if (json_object_is_type(o, json_type_array)) {
		count = json_object_array_length(o);
		for (i = 0; i < count; i++) {
			json_object *v = json_object_array_get_idx(o, i);

			if ((r = lifted_string(l, v, &n)) < 0)
				return r;
			if (r > 0 && json_object_array_put_idx(o, i, n) < 0) {
				json_object_put(n);
				return -ENOMEM;
			}
			if (r == 0 && (r = put_back_long_strings(l, v)) < 0)
				return r;
		}
	}
	return 0;
}

/* doc[start, start + len) without the long strings' bytes; caller frees. */
static char *cut_long_strings(const char *doc, size_t start, size_t len, const struct long_string *longs,
			      size_t n_longs, size_t *ret_len)
{
	size_t cut = 0, i, from = start, o = 0;
	char *text;

	for (i = 0; i < n_longs; i++)
		cut += longs[i].len;
	text = malloc(len - cut + 1);
	if (!text)
		return NULL;
	for (i = 0; i < n_longs; i++) {
		memcpy(text + o, doc + from, longs[i].start - from);
		o += longs[i].start - from;
		from = longs[i].start + longs[i].len;
	}
	memcpy(text + o, doc + from, start + len - from);
	o += start + len - from;
	text[o] = '\0';
	*ret_len = o;
	return text;
}

int untrusted_json_parse_in(const char *doc, size_t doc_size, size_t start, size_t len, unsigned max_depth,
			    json_object **ret, mb_error *err)
{
	scan s = { .doc = doc, .max_depth = max_depth, .err = err };
	json_tokener *tok = NULL;
	json_object *root = NULL;
	const char *nul;
	char *cut = NULL;
	size_t end, cut_len = 0;
	int r;

	*ret = NULL;
	if (max_depth > JSON_READ_MAX_DEPTH || start > doc_size || len > doc_size - start)
		return set_error(err, -EINVAL, "invalid argument");
	if (len > INT_MAX || start > UINT32_MAX - len)
		return set_error(err, -E2BIG, "JSON text over %d bytes", INT_MAX);
	nul = memchr(doc + start, 0, len);
	if (nul)
		return fail(&s, (size_t) (nul - doc), "NUL byte in the text");

	/* allocated up front so that empty keys never compare through a NULL pointer */
	s.cap_keys = 64;
	s.cap_names = 256;
	s.keys = malloc(s.cap_keys * sizeof(*s.keys));
	s.names = malloc(s.cap_names);
	if (!s.keys || !s.names) {
		free(s.keys);
		free(s.names);
		return set_error(err, -ENOMEM, "out of memory");
	}
	reader_init(&s.r, doc + start, len, start);
	r = scan_text(&s);
	free(s.keys);
	free(s.names);
	if (r >= 0 && s.dup_found)
		r = fail(&s, s.dup_at, "duplicate key \"%s\"", s.dup_shown);
	if (r >= 0 && s.n_longs) {
		cut = cut_long_strings(doc, start, len, s.longs, s.n_longs, &cut_len);
		if (!cut)
			r = set_error(err, -ENOMEM, "out of memory");
	}
	if (r < 0) {
		free(s.longs);
		return r;
	}

	/* json-c counts the scalar inside the innermost container as a level too. */
	tok = json_tokener_new_ex((int) max_depth + 1);
	if (!tok)
		return set_error(err, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, cut ? cut : doc + start, (int) (cut ? cut_len : len));
	end = json_tokener_get_parse_end(tok);
	if (cut)
		end = 0; /* an offset in the cut text: say where the value starts */
	/* A number alone needs to see the end before json-c takes it as complete. */
	if (!root && json_tokener_get_error(tok) == json_tokener_continue) {
		root = json_tokener_parse_ex(tok, "", 1);
		end = len;
	}
	if (json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error jerr = json_tokener_get_error(tok);

		r = fail(&s, start + (end < len ? end : len), "%s",
			 jerr == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(jerr));
		json_object_put(root);
		json_tokener_free(tok);
		free(cut);
		free(s.longs);
		return r;
	}
	json_tokener_free(tok);
	free(cut);
	if (s.n_longs) {
		lift l = { .doc = doc, .longs = s.longs, .n_longs = s.n_longs };

		json_object *n = NULL;

		/* The value itself may be the one long string. */
		r = lifted_string(&l, root, &n);
		if (r > 0) {
			json_object_put(root);
			root = n;
			r = 0;
		} else if (r == 0) {
			r = put_back_long_strings(&l, root);
		}
		/* a long string the walk did not meet would be a bug: refuse rather than trust */
		if (r == 0 && l.next_long != l.n_longs)
			r = set_error(err, -EBADMSG, "JSON tree does not match its text");
		else if (r < 0)
			r = set_error(err, -ENOMEM, "out of memory");
		free(s.longs);
		if (r < 0) {
			json_object_put(root);
			return r;
		}
	}
	*ret = root;
	return 0;
}

int untrusted_json_parse(const char *text, size_t size, unsigned max_depth, json_object **ret, mb_error *err)
{
	return untrusted_json_parse_in(text, size, 0, size, max_depth, ret, err);
}
