/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The userspace measurement log parser and writer: known answers and hostile input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "shared/hex.h"

/* sha256("hello") and sha1("hello"), as printed by sha256sum / sha1sum. */
#define SHA256_HELLO "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define SHA1_HELLO "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"

static int parse(const char *s, mb_cel_log **ret, mb_error *err)
{
	return mb_cel_log_parse(s, strlen(s), ret, err);
}

static void test_systemd_record(void **state)
{
	static const char text[] =
		"\x1e{\"pcr\":11,\"digests\":[{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"},"
		"{\"hashAlg\":\"md5\",\"digest\":\"00\"}],\"content_type\":\"systemd\","
		"\"content\":{\"string\":\"hello\",\"eventType\":\"phase\"}}\n"
		"\x1e{\"nv_index\":16777216,\"digests\":[{\"hashAlg\":\"sha256\",\"digest\":\"00\"}]}\n";
	mb_cel_log *log = NULL;
	mb_error err = { 0 };
	const mb_cel_record *r;
	char hex[2 * MB_DIGEST_MAX + 1];

	assert_int_equal(parse(text, &log, &err), 0);
	assert_int_equal(mb_cel_log_count(log), 1);
	assert_int_equal(mb_cel_log_skipped(log), 1);
	r = mb_cel_log_record(log, 0);
	assert_int_equal(r->pcr, 11);
	assert_int_equal(r->offset, 0);
	assert_int_equal(r->n_digests, 1); /* md5 is no PCR bank: skipped */
	assert_int_equal(r->digests[0].alg, MB_ALG_SHA256);
	assert_string_equal(hex_format(r->digests[0].bytes, 32, hex), SHA256_HELLO);
	mb_cel_log_free(log);
}

static void test_format_known_bytes(void **state)
{
	uint8_t d256[32], d1[20];
	mb_event_digest d[2] = {
		{ MB_ALG_SHA1, 20, d1 },
		{ MB_ALG_SHA256, 32, d256 },
	};
	char *out = NULL;
	size_t n = 0;
	static const char want[] = "\x1e{\"pcr\":9,\"digests\":[{\"hashAlg\":\"sha1\",\"digest\":\"" SHA1_HELLO "\"},"
				   "{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"}],"
				   "\"content_type\":\"mboot\"}\n";

	assert_int_equal(hex_parse(SHA256_HELLO, 64, d256, 32), 0);
	assert_int_equal(hex_parse(SHA1_HELLO, 40, d1, 20), 0);
	assert_int_equal(mb_cel_format_record(9, d, 2, "mboot", NULL, &out, &n), 0);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
	free(out);
	assert_int_equal(mb_cel_format_record(24, d, 2, "mboot", NULL, &out, &n), -EINVAL);
	d[0].size = 19;
	assert_int_equal(mb_cel_format_record(9, d, 2, "mboot", NULL, &out, &n), -EINVAL);
}

/* Content given as JSON text: written on the record's one line, and read back as the record's text. */
static void test_format_content(void **state)
{
	uint8_t d256[32];
	mb_event_digest d = { MB_ALG_SHA256, 32, d256 };
	char *out = NULL;
	size_t n = 0;
	mb_cel_log *log = NULL;
	static const char want[] = "\x1e{\"pcr\":11,\"digests\":[{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"}],"
				   "\"content_type\":\"mboot\",\"content\":{\"text\":\"a/b \xc3\xa9\",\"stdin\":false}}\n";

	assert_int_equal(hex_parse(SHA256_HELLO, 64, d256, 32), 0);
	assert_int_equal(mb_cel_format_record(11, &d, 1, "mboot", "{\n  \"text\": \"a\\/b \\u00e9\",\n  \"stdin\": false\n}\n",
					      &out, &n), 0);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
	assert_int_equal(mb_cel_log_parse(out, n, &log, NULL), 0);
	assert_string_equal(mb_cel_log_record(log, 0)->text, "a/b \xc3\xa9");
	mb_cel_log_free(log);
	free(out);
	/* Not one JSON value: refused, nothing written. */
	out = NULL;
	assert_int_equal(mb_cel_format_record(11, &d, 1, "mboot", "{\"text\": \"a\"", &out, &n), -EINVAL);
	assert_int_equal(mb_cel_format_record(11, &d, 1, "mboot", "{} {}", &out, &n), -EINVAL);
	assert_int_equal(mb_cel_format_record(11, &d, 1, "mboot", "", &out, &n), -EINVAL);
	assert_null(out);
}

/* More records than the first allocation: digests must survive the store moving. */
static void test_many_records(void **state)
{
	size_t n = 300, i, len = 0;
	char *text = malloc(n * 200), hex[65];
	mb_cel_log *log = NULL;
	mb_error err = { 0 };

	assert_non_null(text);
	for (i = 0; i < n; i++)
		len += (size_t) sprintf(text + len,
					"\x1e{\"pcr\":%zu,\"digests\":[{\"hashAlg\":\"sha256\",\"digest\":\"%064zx\"}]}\n",
					i % 24, i);
	assert_int_equal(mb_cel_log_parse(text, len, &log, &err), 0);
	assert_int_equal(mb_cel_log_count(log), n);
	for (i = 0; i < n; i++) {
		char want[65];

		snprintf(want, sizeof(want), "%064zx", i);
		assert_string_equal(hex_format(mb_cel_log_record(log, i)->digests[0].bytes, 32, hex), want);
	}
	mb_cel_log_free(log);
	free(text);
}

/* words: NULL, or what the message must say. */
static void expect_fail_saying(const char *text, int code, uint64_t offset, const char *words)
{
	mb_cel_log *log = NULL;
	mb_error err = { 0 };

	assert_int_equal(parse(text, &log, &err), code);
	assert_null(log);
	assert_true(err.message[0] != '\0');
	if (code == -EBADMSG) {
		assert_true(err.has_offset);
		if (err.offset != offset || (words && strcmp(err.message, words) != 0))
			fail_msg("got offset %llu \"%s\", wanted %llu \"%s\"", (unsigned long long) err.offset,
				 err.message, (unsigned long long) offset, words ? words : "");
	}
}

static void expect_fail(const char *text, int code, uint64_t offset)
{
	expect_fail_saying(text, code, offset, NULL);
}

#define REC(pcr, digests) "\x1e{\"pcr\":" pcr ",\"digests\":" digests "}\n"
#define D256 "[{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"}]"

static void test_hostile(void **state)
{
	static const char good[] = REC("1", D256);
	char big[MB_CEL_MAX_RECORD + 64];
	mb_cel_log *log = NULL;
	mb_error err = { 0 };
	size_t gl = strlen(good);

	/* Truncated: the last record has no newline, or its JSON ends early. */
	expect_fail(REC("1", D256) "\x1e{\"pcr\":2,\"digests\":[]}", -EBADMSG, gl);
	/* JSON errors name the byte, and the line and column in the whole log. */
	expect_fail_saying(REC("1", D256) "\x1e{\"pcr\":2,\"dig\n", -EBADMSG, gl + 14,
			   "line 2, column 15: unexpected newline near '\"dig'");
	expect_fail_saying(REC("1", D256) "\x1e{\"pcr\":2,\"digests\":[\n", -EBADMSG, gl + 22,
			   "line 3, column 1: ']' expected near end of file");
	expect_fail("\x1e", -EBADMSG, 0);
	/* Not a JSON text sequence. */
	expect_fail("{\"pcr\":1}\n", -EBADMSG, 0);
	expect_fail(REC("1", D256) "x", -EBADMSG, 0); /* junk after the newline: the record is not whole */
	expect_fail("\x1e[1]\n", -EBADMSG, 0);
	expect_fail_saying("\x1e{\"pcr\":1} {}\n", -EBADMSG, 11, "line 1, column 12: end of file expected near '{'");
	expect_fail_saying("\x1e{\"pcr\":1,}\n", -EBADMSG, 10, "line 1, column 11: string or '}' expected near '}'");
	/* A record naming its PCR twice: a lax reader would keep the second one silently. */
	expect_fail_saying("\x1e{\"pcr\":9,\"digests\":" D256 ",\"p\\u0063r\":1}\n", -EBADMSG, 119,
			   "line 1, column 120: duplicate object key near '\"p\\u0063r\"'");
	/* Fields. */
	expect_fail(REC("24", D256), -EBADMSG, 0);
	expect_fail(REC("-1", D256), -EBADMSG, 0);
	expect_fail(REC("\"9\"", D256), -EBADMSG, 0);
	expect_fail(REC("1.5", D256), -EBADMSG, 0);
	expect_fail("\x1e{\"digests\":" D256 "}\n", -EBADMSG, 0);
	expect_fail("\x1e{\"pcr\":1}\n", -EBADMSG, 0);
	expect_fail(REC("1", "[]"), -EBADMSG, 0);
	expect_fail(REC("1", "{}"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":\"sha256\",\"digest\":\"00\"}]"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "00\"}]"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":\"sha256\",\"digest\":\"zz" SHA256_HELLO "\"}]"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":\"sha256\"}]"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":256,\"digest\":\"00\"}]"), -EBADMSG, 0);
	expect_fail(REC("1", "[{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"},"
			     "{\"hashAlg\":\"sha256\",\"digest\":\"" SHA256_HELLO "\"}]"), -EBADMSG, 0);
	/* Caps: nesting depth, digests per record, record size. */
	expect_fail_saying("\x1e{\"pcr\":1,\"digests\":" D256 ",\"content\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}\n", -EBADMSG,
			   136, "line 1, column 137: nested deeper than 8 arrays and objects");
	expect_fail(REC("1", "[1,2,3,4,5,6,7,8,9]"), -E2BIG, 0);
	memset(big, ' ', sizeof(big));
	memcpy(big, good, gl - 1);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mb_cel_log_parse(big, sizeof(big) - 1, &log, &err), -E2BIG);
	assert_int_equal(mb_cel_log_parse(big, (size_t) MB_CEL_MAX_SIZE + 1, &log, &err), -E2BIG);

	/* Tolerated: an empty log, blank lines between records. */
	assert_int_equal(mb_cel_log_parse("", 0, &log, &err), 0);
	assert_int_equal(mb_cel_log_count(log), 0);
	mb_cel_log_free(log);
	assert_int_equal(parse("\n" REC("1", D256) "\n\n" REC("2", D256), &log, &err), 0);
	assert_int_equal(mb_cel_log_count(log), 2);
	mb_cel_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_systemd_record),
		cmocka_unit_test(test_format_known_bytes),
		cmocka_unit_test(test_format_content),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
