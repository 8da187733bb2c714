/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * src/shared/json-read: what RFC 8259 allows parses; what it does not, duplicate keys, NUL
 * bytes, text after the value, too deep nesting and truncation are refused with the line,
 * column and byte offset of the culprit; a file of many keys stays fast; every kind of file
 * users give mboot is read so.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "lib/replay/pcr-values.h" /* the tests link the static core: they may read the values directly */
#include "shared/fileio.h"
#include "shared/json.h"

/* Parses text (size n) with depth 8; the error's message, or NULL when it parsed. */
static const char *refusal(const char *text, size_t n, mb_error *err)
{
	json_t *o = NULL;
	int r;

	mb_error_clear(err);
	r = untrusted_json_parse(text, n, 8, &o, err);
	if (r == 0) {
		json_decref(o);
		return NULL;
	}
	assert_int_equal(r, -EBADMSG);
	assert_int_equal(err->code, -EBADMSG);
	assert_true(err->has_offset);
	return err->message;
}

static void test_accepts(void **state)
{
	static const char *const good[] = {
		"{}", "[]", " {\"a\": 1}\n", "0", "-0", "12", "-1.5e+3", "1E2", "0.25", "\"s\"", "true", "false", "null",
		"{\"a\": [1, 2.5, \"x\", true, false, null, {}, []], \"b\": {\"c\": {\"d\": []}}}",
		"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"]", "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]",
		"{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}}", /* one key in two objects */
		"[{\"x\": 1}, {\"x\": 2}]", "{\"a\": 1, \"ab\": 2, \"A\": 3, \"a \": 4}", "\r\n\t [ ] \r\n\t",
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		json_t *o = NULL, *ref = json_loads(good[i], JSON_DECODE_ANY, NULL);
		mb_error err = { 0 };

		if (untrusted_json_parse(good[i], strlen(good[i]), 8, &o, &err) < 0)
			fail_msg("refused %s: %s", good[i], err.message);
		if (strcmp(good[i], "null") != 0)
			assert_non_null(ref);
		assert_true(json_equal(o, ref));
		json_decref(o);
		json_decref(ref);
	}
}

/* The escapes decode to what Unicode says: U+00E9 is C3 A9, U+1F600 is F0 9F 98 80. */
static void test_escapes_decode(void **state)
{
	static const char text[] = "[\"\\u00e9\\ud83d\\ude00\"]";
	json_t *o = NULL;

	(void) state;
	assert_int_equal(untrusted_json_parse(text, strlen(text), 8, &o, NULL), 0);
	assert_string_equal(json_string_value(json_array_get(o, 0)), "\xc3\xa9\xf0\x9f\x98\x80");
	json_decref(o);
}

static const struct {
	const char *text;
	size_t size; /* 0: strlen */
	uint64_t offset;
	const char *message;
} bad[] = {
	{ "{\"a\": 1,}", 0, 8, "line 1, column 9: string or '}' expected near '}'" },
	{ "[1, 2,\n]", 0, 7, "line 2, column 1: unexpected token near ']'" },
	{ "{\n  \"a\": 1,\n  \"b\": [\n", 0, 21, "line 4, column 1: ']' expected near end of file" },
	{ "{\"a\": ", 0, 6, "line 1, column 7: unexpected token near end of file" },
	{ "{\"a\": \"x", 0, 8, "line 1, column 9: premature end of input near '\"x'" },
	{ "{\"a\": tr", 0, 7, "line 1, column 8: invalid token near 'tr'" },
	{ "[1.", 0, 2, "line 1, column 3: invalid token near '1.'" },
	{ "[\"\\u00", 0, 5, "line 1, column 6: invalid escape near '\"\\u00'" },
	{ "", 0, 0, "line 1, column 1: unexpected token near end of file" },
	{ " \n ", 0, 3, "line 2, column 2: unexpected token near end of file" },
	{ "{\"a\": 1} x", 0, 9, "line 1, column 10: end of file expected near 'x'" },
	{ "{\"a\": 1}{\"b\": 2}", 0, 8, "line 1, column 9: end of file expected near '{'" },
	{ "{\"a\": 1}\n// c\n", 0, 9, "line 2, column 1: end of file expected near '/'" },
	{ "{\"a\": 1}\0", 9, 8, "line 1, column 9: a NUL byte" },
	{ "{\"a\":\n \"b\0\"}", 12, 9, "line 2, column 4: a NUL byte" },
	{ "{'a': 1}", 0, 1, "line 1, column 2: string or '}' expected near '''" },
	{ "[/* c */ 1]", 0, 1, "line 1, column 2: invalid token near '/'" },
	{ "{a: 1}", 0, 1, "line 1, column 2: string or '}' expected near 'a'" },
	{ "{\"a\" 1}", 0, 5, "line 1, column 6: ':' expected near '1'" },
	{ "{\"a\": 1 \"b\": 2}", 0, 10, "line 1, column 11: '}' expected near '\"b\"'" },
	{ "[1 2]", 0, 3, "line 1, column 4: ']' expected near '2'" },
	{ "[1,}", 0, 3, "line 1, column 4: unexpected token near '}'" },
	{ "[NaN]", 0, 3, "line 1, column 4: invalid token near 'NaN'" },
	{ "[Infinity]", 0, 8, "line 1, column 9: invalid token near 'Infinity'" },
	{ "[-Infinity]", 0, 1, "line 1, column 2: invalid token near '-'" },
	{ "[TRUE]", 0, 4, "line 1, column 5: invalid token near 'TRUE'" },
	{ "[tru]", 0, 3, "line 1, column 4: invalid token near 'tru'" },
	{ "[1.]", 0, 2, "line 1, column 3: invalid token near '1.'" },
	{ "[.5]", 0, 1, "line 1, column 2: invalid token near '.'" },
	{ "[+1]", 0, 1, "line 1, column 2: invalid token near '+'" },
	{ "[01]", 0, 1, "line 1, column 2: invalid token near '0'" },
	{ "[1e]", 0, 2, "line 1, column 3: invalid token near '1e'" },
	{ "[\"a\tb\"]", 0, 3, "line 1, column 4: control character 0x9 near '\"a'" },
	{ "[\"a\\x\"]", 0, 4, "line 1, column 5: invalid escape near '\"a\\x'" },
	{ "[\"\\u12g4\"]", 0, 6, "line 1, column 7: invalid escape near '\"\\u12g'" },
	{ "[\"a\\u0000b\"]", 0, 10, "line 1, column 11: \\u0000 in a string" },
	{ "[\"\\ud800\"]", 0, 8, "line 1, column 9: invalid Unicode '\\uD800' near '\"\\ud800\"'" },
	{ "[\"\\ud800\\u0041\"]", 0, 14, "line 1, column 15: invalid Unicode '\\uD800\\u0041' near '\"\\ud800\\u0041\"'" },
	{ "[\"\\udc00\"]", 0, 8, "line 1, column 9: invalid Unicode '\\uDC00' near '\"\\udc00\"'" },
	{ "[\"\xc0\x80\"]", 0, 1, "line 1, column 2: unable to decode byte 0xc0 near '\"'" },         /* overlong NUL */
	{ "[\"\xe0\x80\xaf\"]", 0, 1, "line 1, column 2: unable to decode byte 0xe0 near '\"'" },     /* overlong '/' */
	{ "[\"\xed\xa0\x80\"]", 0, 1, "line 1, column 2: unable to decode byte 0xed near '\"'" },     /* a surrogate */
	{ "[\"\xf4\x90\x80\x80\"]", 0, 1, "line 1, column 2: unable to decode byte 0xf4 near '\"'" }, /* over U+10FFFF */
	{ "[\"\xff\"]", 0, 1, "line 1, column 2: unable to decode byte 0xff near '\"'" },
	{ "[\"\xc3\"]", 0, 1, "line 1, column 2: unable to decode byte 0xc3 near '\"'" },
	{ "\xef\xbb\xbf{}", 0, 2, "line 1, column 2: invalid token near '\xef\xbb\xbf'" },
	/* columns count characters: "é" is one */
	{ "{\"\xc3\xa9\": 1,}", 0, 9, "line 1, column 9: string or '}' expected near '}'" },
	{ "[[[[[[[[[1]]]]]]]]]", 0, 8, "line 1, column 9: nested deeper than 8 arrays and objects" },
	/* duplicate keys: the second one is named, with its place */
	{ "{\"8\": 1, \"8\": 2}", 0, 9, "line 1, column 10: duplicate object key near '\"8\"'" },
	{ "{\"8\": \"strict\",\n \"\\u0038\": \"lax\"}", 0, 17, "line 2, column 2: duplicate object key near '\"\\u0038\"'" },
	{ "{\"a\\/b\": 1, \"a/b\": 2}", 0, 12, "line 1, column 13: duplicate object key near '\"a/b\"'" },
	{ "{\"\xc3\xa9\": 1, \"\\u00e9\": 2}", 0, 10, "line 1, column 10: duplicate object key near '\"\\u00e9\"'" },
	{ "{\"\\ud83d\\ude00\": 1, \"\xf0\x9f\x98\x80\": 2}", 0, 20, "line 1, column 21: duplicate object key near '\"\xf0\x9f\x98\x80\"'" },
	{ "{\"pcrs\": {\"4\": {\"rules\": []},\n  \"7\": {},\n  \"4\": {}}}", 0, 43, "line 3, column 3: duplicate object key near '\"4\"'" },
	{ "[{\"x\": 1}, {\"y\": 1, \"x\": 2, \"y\": 3}]", 0, 28, "line 1, column 29: duplicate object key near '\"y\"'" },
	{ "{\"a\": 1, \"b\": 2, \"a\": 3, \"a\": 4}", 0, 17, "line 1, column 18: duplicate object key near '\"a\"'" },
	{ "{\"\": 1, \"\": 2}", 0, 8, "line 1, column 9: duplicate object key near '\"\"'" },
	/* the first in the text, though the inner object closes first */
	{ "{\"a\": 1, \"a\": 2, \"b\": {\"c\": 1, \"c\": 2}}", 0, 9, "line 1, column 10: duplicate object key near '\"a\"'" },
	{ "{\"b\": {\"c\": 1, \"c\": 2}, \"a\": 1, \"a\": 2}", 0, 15, "line 1, column 16: duplicate object key near '\"c\"'" },
	/* a key a terminal would take as a command is shown escaped */
	{ "{\"\\u001b[2J\\\"\": 1, \"\\u001b[2J\\\"\": 2}", 0, 19, "line 1, column 20: duplicate object key near '\"\\u001b[2J\\\"\"'" },
	{ "{\"\\u0085\": 1, \"\xc2\x85\": 2}", 0, 14, "line 1, column 15: duplicate object key near '\"\\xc2\\x85\"'" },
	/* the first error in the text is the one named */
	{ "{\"a\": 1, \"a\": 2,}", 0, 9, "line 1, column 10: duplicate object key near '\"a\"'" },
};

static void test_refuses(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mb_error err;
		size_t n = bad[i].size ? bad[i].size : strlen(bad[i].text);
		const char *msg = refusal(bad[i].text, n, &err);

		if (!msg)
			fail_msg("accepted #%zu %s", i, bad[i].text);
		if (strcmp(msg, bad[i].message) != 0 || err.offset != bad[i].offset)
			fail_msg("#%zu %s:\n got  %s (offset %llu)\n want %s (offset %llu)", i, bad[i].text, msg,
				 (unsigned long long) err.offset, bad[i].message, (unsigned long long) bad[i].offset);
	}
}

/* A piece of a larger text: offsets, lines and columns are the whole text's. */
static void test_piece(void **state)
{
	static const char doc[] = "\x1e{\"pcr\": 1}\n\x1e{\"pcr\": 2,\n \"pcr\": 3}\n";
	json_t *o = NULL;
	mb_error err = { 0 };

	(void) state;
	assert_int_equal(untrusted_json_parse_in(doc, sizeof(doc) - 1, 1, 11, 8, &o, &err), 0);
	assert_int_equal((int) json_integer_value(json_object_get(o, "pcr")), 1);
	json_decref(o);
	assert_int_equal(untrusted_json_parse_in(doc, sizeof(doc) - 1, 13, 22, 8, &o, &err), -EBADMSG);
	assert_null(o);
	assert_string_equal(err.message, "line 3, column 2: duplicate object key near '\"pcr\"'");
	assert_int_equal(err.offset, 25);
	assert_int_equal(untrusted_json_parse_in(doc, sizeof(doc) - 1, 13, 5, 8, &o, &err), -EBADMSG);
	assert_string_equal(err.message, "line 2, column 7: premature end of input near '\"pcr'");
	assert_int_equal(err.offset, 18);
	assert_int_equal(untrusted_json_parse_in(doc, sizeof(doc) - 1, 30, 20, 8, &o, &err), -EINVAL);
}

/* Long strings in every position a string can be (value of a key, array element, the value
 * itself, next to short, escaped and non-ASCII strings, in nested containers) read as
 * Python's json module reads them (the lengths it gives), and a duplicate key or a bad byte
 * inside one is still refused where it is. */
static char *long_text(size_t n, char c)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_long_strings(void **state)
{
	char *a = long_text(300, 'A'), *b = long_text(70000, 'b'), *c = long_text(255, 'c'), *d = long_text(256, 'd');
	char *docs[10], *refused;
	size_t i, n = 0;
	json_t *o, *ref;
	mb_error err = { 0 };

	(void) state;
	assert_true(asprintf(&docs[n++], "{\"eventlog\": \"%s\", \"x\": 1}", b) > 0);
	assert_true(asprintf(&docs[n++], "\"%s\"", b) > 0);
	assert_true(asprintf(&docs[n++], "[\"%s\", \"s\", \"%s\", [\"%s\"], {\"k\": \"%s\"}, \"%s\"]", a, c, d, b, a) > 0);
	assert_true(asprintf(&docs[n++], "{\"a\": {\"b\": [\"%s\\n%s\", \"caf\xc3\xa9%s\"]}, \"c\": \"%s\", \"d\": null}",
			     a, a, a, d) > 0);
	assert_true(asprintf(&docs[n++], "{\"k1\": \"%s\", \"k2\": \"short\", \"k3\": \"%s\", \"k4\": [], \"k5\": \"%s\"}", d, a, b) >
		    0);
	/* long keys are not cut (only values are); a long string next to one */
	assert_true(asprintf(&docs[n++], "{\"%s\" :\"%s\", \"%s\"\n: [\"%s\"]}", b, b, a, d) > 0);
	/* what a placeholder would look like, as text */
	assert_true(asprintf(&docs[n++], "[\"%s\", \"\\\\u00000\", \"\\\\u0000\"]", d) > 0);
	for (i = 0; i < n; i++) {
		o = NULL;
		ref = json_loads(docs[i], JSON_DECODE_ANY, NULL);
		assert_non_null(ref);
		if (untrusted_json_parse(docs[i], strlen(docs[i]), 8, &o, &err) < 0)
			fail_msg("refused document %zu: %s", i, err.message);
		assert_true(json_equal(o, ref));
		json_decref(o);
		json_decref(ref);
		free(docs[i]);
	}
	/* A key twice next to long strings, and a raw control byte deep in one. */
	assert_true(asprintf(&refused, "{\"a\": \"%s\", \"a\": \"%s\"}", d, d) > 0);
	assert_non_null(refusal(refused, strlen(refused), &err));
	assert_non_null(strstr(err.message, "duplicate object key"));
	free(refused);
	/* Refused after a long string: where the text has it (not where the text jansson read
	 * with the long strings cut has it). */
	assert_true(asprintf(&refused, "{\"a\": \"%s\", \"b\" 1}", b) > 0);
	assert_non_null(refusal(refused, strlen(refused), &err));
	assert_int_equal(err.offset, (size_t) (strrchr(refused, '1') - refused));
	free(refused);
	assert_true(asprintf(&refused, "[\"%s\", \"x\\u0000\"]", b) > 0);
	assert_string_equal(refusal(refused, strlen(refused), &err), "line 1, column 70014: \\u0000 in a string");
	free(refused);
	b[60000] = '\x01';
	assert_true(asprintf(&refused, "[\"%s\"]", b) > 0);
	assert_non_null(refusal(refused, strlen(refused), &err));
	assert_int_equal(err.offset, 60002);
	free(refused);
	free(a);
	free(b);
	free(c);
	free(d);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double) (t.tv_sec - t0->tv_sec) + (double) (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* 100,000 keys in one object: n log n, not n² (which takes 20 s). One repeated at the very end
 * is still found. Sanitizers slow everything down several times. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define MANY_KEYS_SECONDS 5.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MANY_KEYS_SECONDS 5.0
#endif
#endif
#ifndef MANY_KEYS_SECONDS
/* CPU time of this thread, not wall time: a busy machine does not make it fail; n² is 20 s. */
#define MANY_KEYS_SECONDS 3.0
#endif

static void test_many_keys(void **state)
{
	enum { N = 100000 };
	size_t cap = (size_t) N * 24 + 64, n = 0;
	char *text = malloc(cap);
	struct timespec t0;
	json_t *o = NULL;
	mb_error err = { 0 };
	double took;
	int i;

	(void) state;
	assert_non_null(text);
	text[n++] = '{';
	for (i = 0; i < N; i++)
		n += (size_t) snprintf(text + n, cap - n, "%s\"key%d\": %d", i ? ", " : "", i, i);
	text[n++] = '}';
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	assert_int_equal(untrusted_json_parse(text, n, 8, &o, &err), 0);
	took = seconds_since(&t0);
	assert_int_equal(json_object_size(o), N);
	json_decref(o);
	fprintf(stderr, "%d distinct keys: %.3f s\n", N, took);
	assert_true(took < MANY_KEYS_SECONDS);

	n--;
	n += (size_t) snprintf(text + n, cap - n, ", \"key%d\": 0}", N / 2);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	assert_int_equal(untrusted_json_parse(text, n, 8, &o, &err), -EBADMSG);
	took = seconds_since(&t0);
	assert_string_equal(strstr(err.message, "duplicate"), "duplicate object key near '\"key50000\"'");
	assert_int_equal(err.offset, n - 14);
	assert_true(took < MANY_KEYS_SECONDS);
	free(text);
}

static int parse_policy(const char *t, size_t n, mb_error *err)
{
	mb_policy *p = NULL;
	int r = mb_policy_parse(t, n, &p, err);

	mb_policy_free(p);
	return r;
}

static int parse_pcr_values(const char *t, size_t n, mb_error *err)
{
	mb_pcr_values v;

	return mb_pcr_values_parse(t, n, &v, err);
}

static int parse_sealed(const char *t, size_t n, mb_error *err)
{
	mb_sealed *s = NULL;
	int r = mb_sealed_parse(t, n, &s, err);

	mb_sealed_free(s);
	return r;
}

static int parse_signature(const char *t, size_t n, mb_error *err)
{
	mb_policy_signature sig;
	int r = mb_policy_signature_parse(t, n, &sig, err);

	if (r == 0)
		mb_policy_signature_done(&sig);
	return r;
}

static size_t count_lines(const char *t, size_t n)
{
	size_t lines = 1, i;

	for (i = 0; i < n; i++)
		lines += t[i] == '\n';
	return lines;
}

/* parse(variant) fails with -EBADMSG and a message that starts "line <line>, column" and has words. */
static void expect_refused(const char *what, int (*parse)(const char *, size_t, mb_error *), const char *text,
			   size_t n, size_t line, const char *words)
{
	mb_error err = { 0 };
	char start[64];
	int r = parse(text, n, &err);

	snprintf(start, sizeof(start), "line %zu, column ", line);
	if (r != -EBADMSG || strncmp(err.message, start, strlen(start)) != 0 || !strstr(err.message, words))
		fail_msg("%s: rc %d \"%s\", wanted \"%s...%s\"", what, r, err.message, start, words);
}

/* Every file mboot reads from users goes through the strict reader: a real file of each kind
 * loads, and the same file with a key twice (also spelt with an escape), a trailing comma, cut
 * in half or with text after it is refused with the line. */
static void test_every_user_file(void **state)
{
	static const struct {
		const char *name, *root_env, *path, *key, *escaped_key, *value;
		int (*parse)(const char *, size_t, mb_error *);
	} files[] = {
		{ "policy", "MB_SOURCE_ROOT", "docs/policy-example.json", "version", "\\u0076ersion", "1", parse_policy },
		{ "PCR values", "MB_TESTDATA", "corpus/go-tpm-tools/arch-linux-workstation.bin.pcrs.json", "banks",
		  "b\\u0061nks", "{}", parse_pcr_values },
		{ "sealed file", "MB_SOURCE_ROOT", "fuzz/corpus/sealed/pcr-0-7.json", "kind", "\\u006bind",
		  "\"mboot-sealed\"", parse_sealed },
		{ "signature file", "MB_SOURCE_ROOT", "fuzz/corpus/signature/rsassa.json", "version", "versio\\u006e", "1",
		  parse_signature },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *root = getenv(files[i].root_env);
		char path[1024], *text, *variant, want[128];
		size_t size, body, vsize, cap;
		mb_error err = { 0 };
		uint8_t *bytes;

		assert_non_null(root);
		snprintf(path, sizeof(path), "%s/%s", root, files[i].path);
		if (file_read(path, 1u << 20, &bytes, &size, &err) < 0)
			fail_msg("%s: %s", path, err.message);
		text = (char *) bytes;
		if (files[i].parse(text, size, &err) < 0)
			fail_msg("%s: %s", path, err.message);
		/* body: the text before the last '}' and the white space ahead of it */
		body = size;
		while (body > 0 && text[body - 1] != '}')
			body--;
		assert_true(body > 0);
		body--;
		while (body > 0 && strchr(" \t\r\n", text[body - 1]))
			body--;
		cap = size + 256;
		variant = malloc(cap);
		assert_non_null(variant);

		vsize = (size_t) snprintf(variant, cap, "%.*s,\n  \"%s\": %s\n}\n", (int) body, text, files[i].key,
					  files[i].value);
		snprintf(want, sizeof(want), "duplicate object key near '\"%s\"'", files[i].key);
		expect_refused(files[i].name, files[i].parse, variant, vsize, count_lines(text, body) + 1, want);
		vsize = (size_t) snprintf(variant, cap, "%.*s,\n  \"%s\": %s\n}\n", (int) body, text,
					  files[i].escaped_key, files[i].value);
		snprintf(want, sizeof(want), "duplicate object key near '\"%s\"'", files[i].escaped_key);
		expect_refused(files[i].name, files[i].parse, variant, vsize, count_lines(text, body) + 1, want);

		vsize = (size_t) snprintf(variant, cap, "%.*s,\n}\n", (int) body, text);
		/* the trailing comma is seen at the brace after it */
		expect_refused(files[i].name, files[i].parse, variant, vsize, count_lines(text, body) + 1,
			       "string or '}' expected near '}'");

		/* cut in the middle: what is said depends on the token it was reading */
		expect_refused(files[i].name, files[i].parse, text, size / 2, count_lines(text, size / 2), "");

		vsize = (size_t) snprintf(variant, cap, "%.*s\n{}", (int) size, text);
		expect_refused(files[i].name, files[i].parse, variant, vsize, count_lines(variant, vsize),
			       "end of file expected near '{'");
		free(variant);
		free(bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_escapes_decode),
		cmocka_unit_test(test_refuses),
		
		cmocka_unit_test(test_piece),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_every_user_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
