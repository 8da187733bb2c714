/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * src/shared/jsonout (the hand-written JSON of `log show --json`) against json-c itself:
 * jsonout_json() must print exactly the bytes json_object_to_json_string_ext() prints with
 * JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE (and, pretty, with
 * JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED instead of _PLAIN), for hostile strings,
 * numbers and nesting; and the JSON of the decoded data of every event of every log in
 * tests/data/corpus (jsonout_decoded, compact and pretty) is what json-c prints for those
 * values once it has read them.
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

#include <json-c/json.h>

#include <mboot/mboot.h>
#include "lib/events/decode-internal.h"
#include "shared/fileio.h"
#include "shared/jsonout.h"

#define FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define PRETTY_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Compare with json-c, compact and pretty; returns 1 when they differ (and says how). */
static int differs(json_object *o, const char *what)
{
	int bad = 0, pretty;

	for (pretty = 0; pretty < 2; pretty++) {
		jsonout b = { .pretty = pretty };
		size_t len = 0;
		const char *ref = json_object_to_json_string_length(o, pretty ? PRETTY_FLAGS : FLAGS, &len);

		jsonout_json(&b, o);
		assert_false(b.oom);
		assert_non_null(ref);
		assert_int_equal(b.depth, 0);
		if (b.n != len || memcmp(b.p, ref, len) != 0) {
			fprintf(stderr, "%s%s:\n json-c:  %s\n jsonout: %.*s\n", what, pretty ? " (pretty)" : "", ref,
				(int) b.n, b.p);
			bad = 1;
		}
		free(b.p);
	}
	return bad;
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
		json_object *o = json_tokener_parse(docs[i]);

		assert_non_null(o);
		assert_string_equal(json_object_to_json_string_ext(o, FLAGS), docs[i]);
		assert_int_equal(differs(o, docs[i]), 0);
		json_object_put(o);
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
	json_object *o = json_object_new_object(), *arr = json_object_new_array(), *inner = json_object_new_object();
	char all[256];
	int i;

	(void) state;
	for (i = 0; i < 256; i++)
		all[i] = (char) i; /* every byte, NUL and controls included */
	json_object_object_add(o, "all bytes", json_object_new_string_len(all, 256));
	json_object_object_add(o, "quote\"back\\slash/ctl\x01\x1f\x7f", json_object_new_string("a/b\\c\"d\te\nf\rg\bh\fi"));
	json_object_object_add(o, "utf8", json_object_new_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	json_object_object_add(o, "empty", json_object_new_string(""));
	json_object_object_add(o, "long", json_object_new_string("0123456789abcdef0123456789abcdef0123456789\"abcdef"));
	json_object_object_add(o, "i0", json_object_new_int64(0));
	json_object_object_add(o, "imin", json_object_new_int64(INT64_MIN));
	json_object_object_add(o, "imax", json_object_new_int64(INT64_MAX));
	json_object_object_add(o, "ineg", json_object_new_int64(-12345));
	json_object_object_add(o, "i32", json_object_new_int(-7));
	json_object_object_add(o, "umax", json_object_new_uint64(UINT64_MAX));
	json_object_object_add(o, "ubig", json_object_new_uint64((uint64_t) INT64_MAX + 1));
	json_object_object_add(o, "usmall", json_object_new_uint64(42));
	json_object_object_add(o, "t", json_object_new_boolean(1));
	json_object_object_add(o, "f", json_object_new_boolean(0));
	json_object_object_add(o, "null", NULL);
	json_object_object_add(o, "emptyobj", json_object_new_object());
	json_object_object_add(o, "emptyarr", json_object_new_array());
	json_object_array_add(arr, json_object_new_int(1));
	json_object_array_add(arr, NULL);
	json_object_array_add(arr, json_object_new_string("x"));
	json_object_object_add(inner, "k", json_object_new_array());
	json_object_array_add(arr, inner);
	json_object_object_add(o, "arr", arr);
	json_object_object_add(o, "double", json_object_new_double(1.5)); /* falls back to json-c */
	/* A key added twice keeps its first place with the last value. */
	json_object_object_add(o, "i0", json_object_new_string("replaced"));
	assert_int_equal(differs(o, "crafted values"), 0);
	assert_int_equal(differs(NULL, "null"), 0);
	json_object_put(o);
}

/* Strings of every length around jsonout_string's 16-byte steps, with one byte json-c escapes
 * (or one that looks close: 0x20, 0x7f, 0xff, 0x9f) at every place, against json-c's own. */
static void test_string_steps(void **state)
{
	static const unsigned char probes[] = { '"', '\\', 0x00, 0x01, 0x1f, '\n', 0x20, 0x7f, 0x80, 0x9f, 0xff, '/' };
	char s[50];
	size_t n, at, k;

	(void) state;
	for (n = 0; n <= sizeof(s); n++)
		for (at = 0; at <= n; at++)
			for (k = 0; k < sizeof(probes); k++) {
				json_object *o;
				char what[64];
				size_t i;

				for (i = 0; i < n; i++)
					s[i] = (char) ('a' + i % 26);
				if (at < n)
					s[at] = (char) probes[k];
				o = json_object_new_string_len(s, (int) n);
				snprintf(what, sizeof(what), "length %zu, byte 0x%02x at %zu", n, probes[k], at);
				assert_int_equal(differs(o, what), 0);
				json_object_put(o);
			}
}

/* Keys of a decoded tree (written without a length, copied while scanned) of every length
 * around the short-key limit, with a byte json-c escapes at every place, against json-c. */
static void test_decoded_keys(void **state)
{
	static const unsigned char probes[] = { 'k', '"', '\\', 0x01, 0x1f, '\n', 0x7f, 0xc3 };
	mb_event_decoded *dec = mb_event_decoded_new();
	char key[80];
	size_t n, at, k, pretty;

	(void) state;
	assert_non_null(dec);
	for (n = 1; n < sizeof(key); n++)
		for (at = 0; at < n; at += n > 8 ? 7 : 1)
			for (k = 0; k < sizeof(probes); k++) {
				mb_decoded_node *root = dec_begin(dec);
				json_object *o = json_object_new_object();
				size_t i;

				for (i = 0; i < n; i++)
					key[i] = (char) ('a' + i % 26);
				key[at] = (char) probes[k];
				key[n] = '\0';
				dec_add_str(root, "first", "x");
				dec_add_str(root, key, "v");
				assert_int_equal(dec_end(dec, 0), 0);
				json_object_object_add(o, "first", json_object_new_string("x"));
				json_object_object_add(o, key, json_object_new_string("v"));
				for (pretty = 0; pretty < 2; pretty++) {
					jsonout b = { .pretty = pretty };
					const char *ref = json_object_to_json_string_ext(o, pretty ? PRETTY_FLAGS : FLAGS);

					jsonout_decoded(&b, mb_event_decoded_root(dec));
					jsonout_put(&b, "", 1);
					assert_false(b.oom);
					if (strcmp(b.p, ref) != 0)
						fail_msg("key of %zu bytes, 0x%02x at %zu:\n json-c:  %s\n jsonout: %s", n,
							 probes[k], at, ref, b.p);
					free(b.p);
				}
				json_object_put(o);
			}
	mb_event_decoded_free(dec);
}

static unsigned n_logs, n_events, n_bad;

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
		json_object *d;

		assert_int_equal(mb_event_decode(log, mb_event_log_event(log, i), dec), 0);
		text = mb_event_decoded_json(dec);
		assert_non_null(text);
		/* The typed tree's JSON is json-c's own printing of the same values. */
		d = json_tokener_parse(text);
		assert_non_null(d);
		snprintf(what, sizeof(what), "%s event %zu", path, i);
		n_bad += (unsigned) differs(d, what);
		n_bad += (unsigned) (strcmp(json_object_to_json_string_ext(d, FLAGS), text) != 0);
		{
			jsonout p = { .pretty = true };
			const char *ref = json_object_to_json_string_ext(d, PRETTY_FLAGS);

			jsonout_decoded(&p, mb_event_decoded_root(dec));
			jsonout_put(&p, "", 1);
			assert_false(p.oom);
			if (strcmp(p.p, ref) != 0) {
				fprintf(stderr, "%s (pretty):\n json-c:  %s\n jsonout: %s\n", what, ref, p.p);
				n_bad++;
			}
			free(p.p);
		}
		json_object_put(d);
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
	fprintf(stderr, "compared the decoded data of %u events of %u logs with json-c\n", n_events, n_logs);
	assert_true(n_logs > 20);
	assert_int_equal(n_bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_string_steps),
		cmocka_unit_test(test_decoded_keys),
		cmocka_unit_test(test_hex_numbers),
		cmocka_unit_test(test_corpus_decoded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
