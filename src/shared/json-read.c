/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict JSON for what users and machines hand mboot: jansson's parser, which keeps to RFC
 * 8259 and checks UTF-8 and escapes, with duplicate keys refused, and before it one pass of
 * our own over the bytes for what jansson does not bound: the nesting depth (its limit is
 * 2048, ours the caller's) and a NUL byte (reported where it is); that pass also finds the long
 * plain strings jansson need not read (JSON_LONG_STRING).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/json.h"
#include "shared/reader.h"
#include "shared/text-escape.h"

/* Line and column (characters, so a UTF-8 sequence counts once) of doc[at], from 1. */
static void text_position(const char *doc, size_t at, size_t *line, size_t *column)
{
	*line = 1;
	*column = 1;
	for (size_t i = 0; i < at; i++) {
		if (doc[i] == '\n') {
			(*line)++;
			*column = 1;
		} else if (((unsigned char) doc[i] & 0xc0) != 0x80) {
			(*column)++;
		}
	}
}

static int fail_at(const char *doc, size_t at, mb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(const char *doc, size_t at, mb_error *err, const char *fmt, ...)
{
	char what[256];
	size_t line, column;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	text_position(doc, at, &line, &column);
	return set_error_at(err, -EBADMSG, at, "line %zu, column %zu: %s", line, column, what);
}

/*
 * A string value this long, of printable ASCII without escapes (the base64 and hex that
 * evidence, sealed files and tokens carry), is cut out of the text jansson reads and put back
 * afterwards: jansson's lexer takes a string a byte at a time through its UTF-8 stream, which
 * was most of the time of judging a machine's evidence (81 KB, the log's base64 nearly all).
 */
#define JSON_LONG_STRING 256

typedef struct long_string {
	size_t at, len; /* the content (between the quotes) in doc */
} long_string;

typedef struct text_scan {
	long_string *cut;
	size_t n_cut, cap;
	bool nul_escape; /* a \u0000: nothing is cut (it is jansson's to refuse, and the
			  * placeholders are made of it) */
} text_scan;

/* Is the string that closed at doc[end] a key (a ':' follows)? Then it is not cut. */
static bool is_key(const char *doc, size_t end, size_t stop)
{
	size_t i = end + 1;

	while (i < stop && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r'))
		i++;
	return i < stop && doc[i] == ':';
}

static int note_long_string(text_scan *s, size_t at, size_t len)
{
	if (s->n_cut == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		long_string *p = reallocarray(s->cut, cap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->cut = p;
		s->cap = cap;
	}
	s->cut[s->n_cut++] = (long_string) { at, len };
	return 0;
}

static bool plain_byte(uint8_t c)
{
	return (unsigned) (c - 0x20) < 0x5f && c != '\\' && c != '"';
}

/* How many bytes of p[0, n) are plain string text: up to the first quote, backslash, control
 * character, DEL or non-ASCII byte. Eight bytes at a time while none of them is one (the words'
 * bit tricks may flag a word that holds none: the byte loop decides). */
static size_t plain_run(const uint8_t *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, q, b, del;

		memcpy(&x, p + i, 8);
		q = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		del = x ^ (ones * 0x7f);
		/* a zero byte in q, b or del; a byte below 0x20; a byte of 0x80 or more */
		if (((q - ones) & ~q & high) | ((b - ones) & ~b & high) | ((del - ones) & ~del & high) |
		    ((x - ones * 0x20) & ~x & high) | (x & high))
			break;
	}
	for (; i < n && plain_byte(p[i]); i++)
		;
	return i;
}

/* The nesting depth and NUL bytes of doc[start, start + len), strings skipped (their
 * brackets are text), and the long plain strings noted in s; the grammar is jansson's to check. */
static int scan_text(const char *doc, size_t start, size_t len, unsigned max_depth, text_scan *s, mb_error *err)
{
	byte_reader r;
	unsigned depth = 0;
	bool in_string = false, plain = false;
	size_t content = 0;
	uint8_t c;

	reader_init(&r, doc + start, len, start);
	while (reader_left(&r) > 0) {
		size_t at = (size_t) reader_offset(&r);

		if (in_string) {
			/* the plain run at once: most of a document's bytes are in strings */
			size_t k = plain_run(reader_cur(&r), reader_left(&r));

			if (k && read_skip(&r, k) < 0)
				break;
			at += k;
			if (reader_left(&r) == 0)
				break;
		}
		if (read_u8(&r, &c) < 0)
			break;
		if (c == 0)
			return fail_at(doc, at, err, "a NUL byte");
		if (in_string) {
			if (c == '\\') {
				plain = false;
				/* \" and \\ are text; any other byte after a backslash is looked at next round */
				if (reader_left(&r) > 0 && (*reader_cur(&r) == '"' || *reader_cur(&r) == '\\'))
					r.pos++;
				else if (reader_left(&r) >= 5 && memcmp(reader_cur(&r), "u0000", 5) == 0)
					s->nul_escape = true;
			} else if (c == '"') {
				in_string = false;
				if (plain && at - content >= JSON_LONG_STRING && !is_key(doc, at, start + len) &&
				    note_long_string(s, content, at - content) < 0)
					return set_error(err, -ENOMEM, "out of memory");
			} else {
				plain = false; /* a control character (jansson refuses it) or UTF-8 */
			}
		} else if (c == '"') {
			in_string = plain = true;
			content = at + 1;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return fail_at(doc, at, err, "nested deeper than %u arrays and objects", max_depth);
		} else if (c == ']' || c == '}') {
			if (depth > 0)
				depth--;
		}
	}
	return 0;
}

/* doc[start, start + len) with each cut string's content replaced by "\u0000" and its index. */
static char *text_with_placeholders(const char *doc, size_t start, size_t len, const text_scan *s, size_t *ret_size)
{
	size_t size = len, i, at = start, o = 0, cap;
	char *t;

	for (i = 0; i < s->n_cut; i++)
		size -= s->cut[i].len;
	/* "\u0000" and at most 20 digits each */
	if (s->n_cut > (SIZE_MAX - size - 1) / 26)
		return NULL;
	cap = size + 26 * s->n_cut + 1;
	if (!(t = malloc(cap)))
		return NULL;
	for (i = 0; i < s->n_cut; i++) {
		memcpy(t + o, doc + at, s->cut[i].at - at);
		o += s->cut[i].at - at;
		o += (size_t) snprintf(t + o, cap - o, "\\u0000%zu", i);
		at = s->cut[i].at + s->cut[i].len;
	}
	memcpy(t + o, doc + at, start + len - at);
	o += start + len - at;
	t[o] = '\0';
	*ret_size = o;
	return t;
}

/* The cut string a placeholder names, as a string value; NULL when v is no placeholder. */
static json_t *cut_string(const json_t *v, const char *doc, const text_scan *s, bool *ret_oom)
{
	const char *p = json_string_value(v);
	size_t n = json_string_length(v), i = 0, k;

	if (!p || n < 2 || p[0] != '\0')
		return NULL;
	for (k = 1; k < n && p[k] >= '0' && p[k] <= '9' && k < 21; k++)
		i = 10 * i + (size_t) (p[k] - '0');
	if (k != n || i >= s->n_cut)
		return NULL;
	v = json_stringn_nocheck(doc + s->cut[i].at, s->cut[i].len);
	*ret_oom = !v;
	return (json_t *) v;
}

/* Every placeholder in v replaced by its string; the count put back added to *n. */
static int put_back(json_t *v, const char *doc, const text_scan *s, size_t *n)
{
	bool oom = false;
	json_t *x;
	size_t i;
	int r;

	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);

			if ((x = cut_string(e, doc, s, &oom))) {
				if (json_array_set_new(v, i, x) < 0)
					return -ENOMEM;
				(*n)++;
			} else if (oom) {
				return -ENOMEM;
			} else if ((r = put_back(e, doc, s, n)) < 0) {
				return r;
			}
		}
	} else if (json_is_object(v)) {
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			json_t *e = json_object_iter_value(it);

			if ((x = cut_string(e, doc, s, &oom))) {
				if (json_object_iter_set_new(v, it, x) < 0)
					return -ENOMEM;
				(*n)++;
			} else if (oom) {
				return -ENOMEM;
			} else if ((r = put_back(e, doc, s, n)) < 0) {
				return r;
			}
		}
	}
	return 0;
}

/* jansson over the text with the long strings cut: the tree, or NULL (then the caller parses
 * the text as it is, for the error's position, or gives up on ENOMEM in *ret_oom). */
static json_t *parse_cut(const char *doc, size_t start, size_t len, const text_scan *s, bool *ret_oom)
{
	size_t size = 0, n = 0;
	char *t = text_with_placeholders(doc, start, len, s, &size);
	json_t *v = NULL, *x;
	bool oom = false;
	int r;

	*ret_oom = !t;
	if (!t)
		return NULL;
	v = json_loadb(t, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	free(t);
	if (!v)
		return NULL;
	/* the whole value one long string */
	if ((x = cut_string(v, doc, s, &oom))) {
		json_decref(v);
		return x;
	}
	r = oom ? -ENOMEM : put_back(v, doc, s, &n);
	if (r < 0 || n != s->n_cut) {
		/* every cut string is a value of the tree; were one not, the text is read as it is:
		 * never a tree with a placeholder in it */
		json_decref(v);
		*ret_oom = r == -ENOMEM;
		return NULL;
	}
	return v;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The opening quote of the string whose closing quote is at text[end]. */
static size_t key_start(const char *text, size_t end)
{
	size_t i = end;

	while (i > 0) {
		size_t backslashes = 0;

		i--;
		while (i >= backslashes + 1 && text[i - backslashes - 1] == '\\')
			backslashes++;
		if (text[i] == '"' && backslashes % 2 == 0)
			return i;
	}
	return end;
}

int untrusted_json_parse_in(const char *doc, size_t doc_size, size_t start, size_t len, unsigned max_depth,
			    json_t **ret, mb_error *err)
{
	json_error_t je;
	text_scan s = { 0 };
	json_t *v;
	int r;

	*ret = NULL;
	if (max_depth > JSON_READ_MAX_DEPTH || start > doc_size || len > doc_size - start)
		return set_error(err, -EINVAL, "JSON piece outside its document or too deep a limit");
	if (len > INT_MAX)
		return set_error(err, -E2BIG, "JSON text larger than %d bytes", INT_MAX);
	r = scan_text(doc, start, len, max_depth, &s, err);
	if (r < 0) {
		free(s.cut);
		return r;
	}
	if (s.n_cut && !s.nul_escape) {
		bool oom;

		v = parse_cut(doc, start, len, &s, &oom);
		if (v || oom) {
			free(s.cut);
			*ret = v;
			return v ? 0 : set_error(err, -ENOMEM, "out of memory");
		}
	}
	free(s.cut);
	v = json_loadb(doc + start, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		char *what;
		size_t at;

		if (json_error_code(&je) == json_error_out_of_memory)
			return set_error(err, -ENOMEM, "out of memory");
		/* jansson's position is the byte after the token it stopped at; a control character or
		 * newline in a string itself (it puts them back); the end, when the text ended too soon.
		 * A repeated key is shown where it starts, at its opening quote. */
		at = (size_t) je.position;
		if (at > 0 && strncmp(je.text, "control character", 17) != 0 &&
		    strncmp(je.text, "unexpected newline", 18) != 0 && !ends_with(je.text, "near end of file") &&
		    strncmp(je.text, "premature end of input", 22) != 0)
			at--;
		if (at > len)
			at = len;
		if (json_error_code(&je) == json_error_duplicate_key)
			at = key_start(doc + start, at);
		/* its text quotes the input ("near '...'"), which may hold what a terminal acts on; it
		 * names its own flag for \u0000, which means nothing to mboot's users */
		if (strstr(je.text, "JSON_ALLOW_NUL"))
			snprintf(je.text, sizeof(je.text), "\\u0000 in a string");
		what = text_escape_str(je.text);
		r = fail_at(doc, start + at, err, "%s", what ? what : "not JSON");
		free(what);
		return r;
	}
	*ret = v;
	return 0;
}

int untrusted_json_parse(const char *text, size_t size, unsigned max_depth, json_t **ret, mb_error *err)
{
	return untrusted_json_parse_in(text, size, 0, size, max_depth, ret, err);
}

json_t *json_from_text(const char *text)
{
	json_t *v = NULL;

	if (!text || untrusted_json_parse(text, strlen(text), JSON_READ_MAX_DEPTH, &v, NULL) < 0)
		return NULL;
	return v;
}
