/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * src/shared/jsonout (mboot's one JSON writer) against jansson's own: jsonout_json() must
 * print exactly the bytes json_dumps() prints with JSON_COMPACT (and, pretty, with
 * JSON_INDENT(2)), for hostile strings, numbers and nesting; and the JSON of the decoded data
 * of every event of every log in tests/data/corpus (jsonout_decoded, compact and pretty) is
 * what jansson prints for those values once it has read them. jansson cannot print a string
 * that is not UTF-8; for those, bytes the writer must pass as they are, the reference is
 * jansson's print of the string with '#' in their place, put back after.
 */
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/json.h"

#include <mboot/mboot.h>
#include "lib/events/decode-internal.h"
#include "shared/fileio.h"
#include "shared/jsonout.h"

#define FLAGS (JSON_COMPACT | JSON_ENCODE_ANY)
#define PRETTY_FLAGS (JSON_INDENT(2) | JSON_ENCODE_ANY)

/* jansson's text of o (NULL: "null"), malloc'd */
static char *reference(const json_t *o, size_t flags)
{
	char *ref = o ? json_dumps(o, flags) : strdup("null");

	assert_non_null(ref);
	return ref;
}

/* Compare with jansson, compact and pretty; returns 1 when they differ (and says how). When
 * the tree's strings are not UTF-8, alt is the same tree with '#' for those bytes and their
 * bytes are put back (in order) into jansson's text: at is their list, n_at its length. */
static int differs_alt(const json_t *o, const json_t *alt, const unsigned char *at, size_t n_at, const char *what)
{
	int bad = 0, pretty;

	for (pretty = 0; pretty < 2; pretty++) {
		jsonout b = { .pretty = pretty };
		char *ref = reference(alt ? alt : o, pretty ? PRETTY_FLAGS : FLAGS);
		size_t len = strlen(ref), k = 0;

		for (size_t i = 0; i < len && k < n_at; i++)
			if (ref[i] == '#')
				ref[i] = (char) at[k++];
		jsonout_json(&b, o);
		assert_false(b.oom);
		assert_int_equal(b.depth, 0);
		if (b.n != len || memcmp(b.p, ref, len) != 0) {
			fprintf(stderr, "%s%s:\n jansson: %s\n jsonout: %.*s\n", what, pretty ? " (pretty)" : "", ref,
				(int) b.n, b.p);
			bad = 1;
		}
		free(ref);
		free(b.p);
	}
	return bad;
}

static int differs(const json_t *o, const char *what)
{
	return differs_alt(o, NULL, NULL, 0, what);
}

/* Documents whose strings hold what would be structure outside them, empty and nested
 * containers, scalars alone. */
static void test_documents(void **state)
{
	static const char *const docs[] = {
		"{}",
		"[]",
		"{\"a\":1}",
		"{\"a\":[],\"b\":{},\"c\":[[],{}],\"d\":[{\"e\":[]}]}",
		"{\"s\":\"a/b {x} [y], z: \\\"q\\\" \\\\\",\"t\":\"\\\\\",\"u\":\"\\u0001\\n\\t\"}",
		"{\"q\":\"\\\",[{:\",\"r\":[\"\\\\\",\"]\"]}",
		"[1,-2,3.5,true,false,null,\"x\",[1,[2,[3]]]]",
		"{\"events\":[{\"index\":0,\"digests\":{\"sha1\":\"00\"},\"decoded\":null},{\"index\":1}]}",
		"\"just a string, with: {braces}\"",
		"42",
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *o = json_loads(docs[i], JSON_DECODE_ANY, NULL);

		assert_non_null(o);
		{
			char *ref = reference(o, FLAGS);

			assert_string_equal(ref, docs[i]);
			free(ref);
		}
		assert_int_equal(differs(o, docs[i]), 0);
		json_decref(o);
	}
}

/* jsonout_hex and jsonout_u64 against printf's "%02x" and "%" PRIu64: every length up to 80
 * from every alignment, every byte value, and numbers of every width. */
static void test_hex_numbers(void **state)
{
	uint8_t bytes[96];
	char ref[2 * sizeof(bytes) + 1];
	size_t start, n, i;
	uint64_t v;

	(void) state;
	for (i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t) (i * 167 + 13);
	for (start = 0; start < 16; start++)
		for (n = 0; start + n <= 80; n++) {
			jsonout b = { 0 };

			for (i = 0; i < n; i++)
				snprintf(ref + 2 * i, 3, "%02x", bytes[start + i]);
			jsonout_hex(&b, bytes + start, n);
			assert_false(b.oom);
			assert_int_equal(b.n, 2 * n);
			assert_memory_equal(b.p, ref, 2 * n);
			free(b.p);
		}
	for (i = 0; i < 256; i += 16) {
		jsonout b = { 0 };
		uint8_t all[16];
		size_t k;

		for (k = 0; k < 16; k++) {
			all[k] = (uint8_t) (i + k);
			snprintf(ref + 2 * k, 3, "%02x", all[k]);
		}
		jsonout_hex(&b, all, 16);
		assert_memory_equal(b.p, ref, 32);
		free(b.p);
	}
	for (v = 1, i = 0; i < 64; i++, v = v * 3 + i) {
		uint64_t vals[] = { v, v - 1, v % 100, v % 10, UINT64_MAX, 0, 9, 10, 99, 100 };
		size_t k;

		for (k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			jsonout b = { 0 };
			int len = snprintf(ref, sizeof(ref), "%" PRIu64, vals[k]);

			jsonout_u64(&b, vals[k]);
			assert_int_equal(b.n, (size_t) len);
			assert_memory_equal(b.p, ref, (size_t) len);
			free(b.p);
		}
	}
}

static void test_values(void **state)
{
	json_t *o = json_object(), *arr = json_array(), *inner = json_object();
	char all[128];
	int i;

	(void) state;
	for (i = 0; i < 128; i++)
		all[i] = (char) i; /* every ASCII byte, NUL and controls included (the rest: test_string_steps) */
	json_object_set_new(o, "all bytes", json_stringn_nocheck(all, 128));
	json_object_set_new(o, "quote\"back\\slash/ctl\x01\x1f\x7f", json_string_nocheck("a/b\\c\"d\te\nf\rg\bh\fi"));
	json_object_set_new(o, "utf8", json_string_nocheck("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	json_object_set_new(o, "empty", json_string_nocheck(""));
	json_object_set_new(o, "long", json_string_nocheck("0123456789abcdef0123456789abcdef0123456789\"abcdef"));
	json_object_set_new(o, "i0", json_integer(0));
	json_object_set_new(o, "imin", json_integer(INT64_MIN));
	json_object_set_new(o, "imax", json_integer(INT64_MAX));
	json_object_set_new(o, "ineg", json_integer(-12345));
	json_object_set_new(o, "i32", json_integer(-7));
	json_object_set_new(o, "usmall", json_integer(42));
	json_object_set_new(o, "t", json_boolean(1));
	json_object_set_new(o, "f", json_boolean(0));
	json_object_set_new(o, "null", json_null());
	json_object_set_new(o, "emptyobj", json_object());
	json_object_set_new(o, "emptyarr", json_array());
	json_array_append_new(arr, json_integer(1));
	json_array_append_new(arr, json_null());
	json_array_append_new(arr, json_string_nocheck("x"));
	json_object_set_new(inner, "k", json_array());
	json_array_append_new(arr, inner);
	json_object_set_new(o, "arr", arr);
	json_object_set_new(o, "double", json_real(1.5));
	/* A key added twice keeps its first place with the last value. */
	json_object_set_new(o, "i0", json_string_nocheck("replaced"));
	assert_int_equal(differs(o, "crafted values"), 0);
	assert_int_equal(differs(NULL, "null"), 0);
	json_decref(o);
}

/* Strings of every length around jsonout_string's 16-byte steps, with one byte to escape (or
 * one that looks close: 0x20, 0x7f, 0xff, 0x9f) at every place, against jansson's own. */
static void test_string_steps(void **state)
{
	static const unsigned char probes[] = { '"', '\\', 0x00, 0x01, 0x1f, '\n', 0x20, 0x7f, 0x80, 0x9f, 0xff, '/' };
	char s[50];
	size_t n, at, k;

	(void) state;
	for (n = 0; n <= sizeof(s); n++)
		for (at = 0; at <= n; at++)
			for (k = 0; k < sizeof(probes); k++) {
				json_t *o;
				char what[64];
				size_t i;

				for (i = 0; i < n; i++)
					s[i] = (char) ('a' + i % 26);
				if (at < n)
					s[at] = (char) probes[k];
				o = json_stringn_nocheck(s, n);
				snprintf(what, sizeof(what), "length %zu, byte 0x%02x at %zu", n, probes[k], at);
				if (at < n && probes[k] >= 0x80) {
					json_t *alt;

					s[at] = '#';
					alt = json_stringn(s, n);
					assert_non_null(alt);
					assert_int_equal(differs_alt(o, alt, &probes[k], 1, what), 0);
					json_decref(alt);
				} else {
					assert_int_equal(differs(o, what), 0);
				}
				json_decref(o);
			}
}

/* Keys of a decoded tree (written without a length, copied while scanned) of every length
 * around the short-key limit, with a byte to escape at every place, against jansson. */
static void test_decoded_keys(void **state)
{
	static const unsigned char probes[] = { 'k', '"', '\\', 0x01, 0x1f, '\n', 0x7f, 0xc3 };
	static const unsigned char hash = '#';
	mb_event_decoded *dec = mb_event_decoded_new();
	char key[80], alt_key[80];
	size_t n, at, k, pretty;

	(void) state;
	assert_non_null(dec);
	for (n = 1; n < sizeof(key); n++)
		for (at = 0; at < n; at += n > 8 ? 7 : 1)
			for (k = 0; k < sizeof(probes); k++) {
				mb_decoded_node *root = dec_begin(dec);
				json_t *o = json_object();
				size_t i;

				for (i = 0; i < n; i++)
					key[i] = (char) ('a' + i % 26);
				key[at] = (char) probes[k];
				key[n] = '\0';
				dec_add_str(root, "first", "x");
				dec_add_str(root, key, "v");
				assert_int_equal(dec_end(dec, 0), 0);
				json_object_set_new(o, "first", json_string_nocheck("x"));
				memcpy(alt_key, key, n + 1);
				if (probes[k] >= 0x80)
					alt_key[at] = (char) hash; /* put back after, see the top */
				json_object_set_new(o, alt_key, json_string_nocheck("v"));
				for (pretty = 0; pretty < 2; pretty++) {
					jsonout b = { .pretty = pretty };
					char *ref = reference(o, pretty ? PRETTY_FLAGS : FLAGS);

					for (char *h = strchr(ref, '#'); h && probes[k] >= 0x80; h = NULL)
						*h = (char) probes[k];
					jsonout_decoded(&b, mb_event_decoded_root(dec));
					jsonout_put(&b, "", 1);
					assert_false(b.oom);
					if (strcmp(b.p, ref) != 0)
						fail_msg("key of %zu bytes, 0x%02x at %zu:\n jansson: %s\n jsonout: %s", n,
							 probes[k], at, ref, b.p);
					free(ref);
					free(b.p);
				}
				json_decref(o);
			}
	mb_event_decoded_free(dec);
}

/* Text that is not UTF-8 (a hostile log's) goes into a tree as json_text() makes it: what the
 * writer prints of it, jansson's strict reader reads back (json-c wrote such bytes raw, which a
 * strict reader refuses). */
static void test_text_not_utf8(void **state)
{
	static const char *const texts[] = { ("a\xff" "b"), "\xc3", "caf\xc3\xa9 \xe2\x82", "\xed\xa0\x80", "ok" };
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		json_t *o = json_object(), *back;
		char *out;

		assert_int_equal(json_object_set_new(o, "text", json_text(texts[i])), 0);
		out = json_write(o, JSON_LAYOUT_COMPACT);
		assert_non_null(out);
		back = json_loads(out, 0, NULL);
		if (!back)
			fail_msg("jansson refuses what mboot wrote of text %zu: %s", i, out);
		if (i == 4)
			assert_string_equal(json_string_value(json_object_get(back, "text")), "ok");
		json_decref(back);
		json_decref(o);
		free(out);
	}
}

static unsigned n_logs, n_events, n_bad, n_big;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	uint8_t *bytes = NULL;
	size_t size = 0, i;
	mb_event_log *log = NULL;
	mb_event_decoded *dec;
	mb_error err = { 0 };

	(void) st;
	(void) ftw;
	if (flag != FTW_F)
		return 0;
	if (file_read(path, MB_LOG_MAX_SIZE, &bytes, &size, &err) < 0)
		return 0;
	if (mb_event_log_parse_take(bytes, size, &log, &err) < 0)
		return 0; /* not an event log: junk, IMA logs, notes */
	n_logs++;
	dec = mb_event_decoded_new();
	assert_non_null(dec);
	for (i = 0; i < mb_event_log_count(log); i++) {
		char what[1200], *text;
		json_t *d;

		assert_int_equal(mb_event_decode(log, mb_event_log_event(log, i), dec), 0);
		text = mb_event_decoded_json(dec);
		assert_non_null(text);
		/* The typed tree's JSON is jansson's own printing of the same values; jansson holds no
		 * integer over 2^63 - 1 (GPT attributes may be): test-log-show-pretty has those. */
		d = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		if (!d) {
			n_big++;
			free(text);
			continue;
		}
		snprintf(what, sizeof(what), "%s event %zu", path, i);
		n_bad += (unsigned) differs(d, what);
		{
			char *ref = reference(d, FLAGS);

			n_bad += (unsigned) (strcmp(ref, text) != 0);
			free(ref);
		}
		{
			jsonout p = { .pretty = true };
			char *ref = reference(d, PRETTY_FLAGS);

			jsonout_decoded(&p, mb_event_decoded_root(dec));
			jsonout_put(&p, "", 1);
			assert_false(p.oom);
			if (strcmp(p.p, ref) != 0) {
				fprintf(stderr, "%s (pretty):\n jansson: %s\n jsonout: %s\n", what, ref, p.p);
				n_bad++;
			}
			free(ref);
			free(p.p);
		}
		json_decref(d);
		free(text);
		n_events++;
	}
	mb_event_decoded_free(dec);
	mb_event_log_free(log);
	return 0;
}

static void test_corpus_decoded(void **state)
{
	const char *d = getenv("MB_TESTDATA");
	char root[1024];

	(void) state;
	snprintf(root, sizeof(root), "%s/corpus", d ? d : "tests/data");
	assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
	fprintf(stderr, "compared the decoded data of %u events of %u logs with jansson (%u not: integers over 2^63 - 1)\n",
		n_events, n_logs, n_big);
	assert_true(n_logs > 20);
	assert_true(n_big < 20);
	assert_int_equal(n_bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_text_not_utf8),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_string_steps),
		cmocka_unit_test(test_decoded_keys),
		cmocka_unit_test(test_hex_numbers),
		cmocka_unit_test(test_corpus_decoded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
