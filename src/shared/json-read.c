/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict JSON for what users and machines hand mboot: jansson's parser, which keeps to RFC
 * 8259 and checks UTF-8 and escapes, with duplicate keys refused, and before it one pass of
 * our own over the bytes for what jansson does not bound: the nesting depth (its limit is
 * 2048, ours the caller's) and a NUL byte (reported where it is).
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

/* The nesting depth and NUL bytes of doc[start, start + len), strings skipped (their
 * brackets are text); the grammar is jansson's to check. */
static int check_depth_and_nul(const char *doc, size_t start, size_t len, unsigned max_depth, mb_error *err)
{
	byte_reader r;
	unsigned depth = 0;
	bool in_string = false;
	uint8_t c;

	reader_init(&r, doc + start, len, start);
	while (reader_left(&r) > 0) {
		size_t at = (size_t) reader_offset(&r);

		if (read_u8(&r, &c) < 0)
			break;
		if (c == 0)
			return fail_at(doc, at, err, "a NUL byte");
		if (in_string) {
			/* \" and \\ are text; any other byte after a backslash is looked at next round */
			if (c == '\\' && reader_left(&r) > 0 && (*reader_cur(&r) == '"' || *reader_cur(&r) == '\\'))
				r.pos++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
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
	json_t *v;
	int r;

	*ret = NULL;
	if (max_depth > JSON_READ_MAX_DEPTH || start > doc_size || len > doc_size - start)
		return set_error(err, -EINVAL, "JSON piece outside its document or too deep a limit");
	if (len > INT_MAX)
		return set_error(err, -E2BIG, "JSON text larger than %d bytes", INT_MAX);
	r = check_depth_and_nul(doc, start, len, max_depth, err);
	if (r < 0)
		return r;
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
