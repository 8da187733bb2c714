/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA runtime list (src/lib/ima): the corpus's lists parsed (entry counts, templates,
 * violations and incomplete tails read off the files' bytes by hand), the boot_aggregate of
 * ima-evm-utils' samples against the PCRs of their firmware logs (the kernel's value, recorded
 * in the list; the sha1 PCRs checked against the machine's tsspcrread dump), and hostile input:
 * truncated, oversized, past the end, a PCR of 99, NUL in a name, empty; an error with the
 * byte offset each. The template hashes and PCR 10 against Python's hashlib: tests/cli/test-ima.sh.
 */
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
#include "corpus-util.h"
#include "shared/hex.h"

static mb_ima_log *load(const char *rel, uint16_t alg)
{
	size_t size = 0;
	uint8_t *data = corpus_load(rel, &size);
	mb_ima_log *log = NULL;
	mb_error err = { 0 };
	int rc;

	assert_non_null(data);
	rc = mb_ima_log_parse(data, size, alg, &log, &err);
	if (rc < 0)
		fail_msg("%s: %s", rel, err.message);
	free(data);
	return log;
}

static void test_binary_corpus(void **state)
{
	static const struct {
		const char *rel;
		size_t n, tail_off, tail_size, violations;
		mb_ima_template t;
	} cases[] = {
		/* sizes and offsets from the files (xxd): the 1-6 byte trailing record of PROVENANCE */
		{ "tpm2-tss/sml-ima-ng-sha1.bin", 6, 558, 1, 0, MB_IMA_TEMPLATE_IMA_NG },
		{ "tpm2-tss/sml-ima-sha1.bin", 12, 916, 1, 0, MB_IMA_TEMPLATE_IMA },
		{ "tpm2-tss/sml-ima-sig-sha256.bin", 9, 987, 6, 0, MB_IMA_TEMPLATE_IMA_SIG },
		{ "tpm2-tss/sml-ima-sha1-invalidated.bin", 1, 0, 0, 1, MB_IMA_TEMPLATE_IMA },
		{ "tpm2-tss/sml-ima-sig-sha256-invalidated.bin", 2, 0, 0, 1, MB_IMA_TEMPLATE_IMA_SIG },
	};
	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		mb_ima_log *log = load(cases[c].rel, 0);
		uint64_t off = 0;
		size_t size = 0, viol = 0;

		assert_false(mb_ima_log_is_ascii(log));
		assert_int_equal(mb_ima_log_count(log), cases[c].n);
		assert_int_equal(mb_ima_log_n_bad(log), 0);
		assert_int_equal(mb_ima_log_tail(log, &off, &size), cases[c].tail_size > 0);
		assert_int_equal(off, cases[c].tail_off);
		assert_int_equal(size, cases[c].tail_size);
		for (size_t i = 0; i < cases[c].n; i++) {
			const mb_ima_entry *e = mb_ima_log_entry(log, i);

			assert_int_equal(e->pcr, 10);
			assert_int_equal(e->template_kind, cases[c].t);
			assert_int_equal(e->template_hash_alg, MB_ALG_SHA1);
			viol += e->check == MB_IMA_CHECK_VIOLATION;
			assert_true(e->check == MB_IMA_CHECK_OK || e->check == MB_IMA_CHECK_VIOLATION);
		}
		assert_int_equal(viol, cases[c].violations);
		{
			const mb_ima_entry *e = mb_ima_log_entry(log, 0);

			assert_string_equal(e->path, "boot_aggregate");
		}
		mb_ima_log_free(log);
	}
}

/* Entries decoded: what xxd shows of sml-ima-ng-sha1.bin's second entry and the legacy list's. */
static void test_decoded_fields(void **state)
{
	mb_ima_log *log = load("tpm2-tss/sml-ima-ng-sha1.bin", 0);
	const mb_ima_entry *e = mb_ima_log_entry(log, 1);
	char hex[2 * MB_DIGEST_MAX + 1];

	(void) state;
	assert_int_equal(e->offset, 0x57);
	assert_string_equal(e->template_name, "ima-ng");
	assert_string_equal(e->digest_algo, "sha1");
	assert_int_equal(e->digest_size, 20);
	assert_string_equal(hex_format(e->digest, 20, hex), "e9002ba6c5a98f5b7a33dc6bbf9ac1863873b713");
	assert_string_equal(e->path, "/init");
	assert_string_equal(hex_format(e->template_hash, 20, hex), "972d62ff5b3a74e89952e0980b2099eed49bf8f0");
	mb_ima_log_free(log);

	log = load("tpm2-tss/sml-ima-sha1.bin", 0);
	e = mb_ima_log_entry(log, 5);
	assert_int_equal(e->offset, 357);
	assert_string_equal(e->template_name, "ima");
	assert_string_equal(e->digest_algo, "sha1");
	assert_string_equal(e->path, "/usr/lib/x86_64-linux-gnu/libc-2.31.so");
	mb_ima_log_free(log);
}

static void test_ascii_corpus(void **state)
{
	static const struct {
		const char *rel;
		uint16_t alg;
		size_t n, bad;
		const char *digest_algo;
	} cases[] = {
		{ "keylime/ima/ima-log-sha1", 0, 2, 0, "sha1" },
		{ "keylime/ima/ima-log-sha256", 0, 2, 0, "sha256" },
		{ "keylime/ima/ima-log-sha384", 0, 2, 0, "sha384" },
		{ "keylime/ima/ima-log-sha512", 0, 2, 0, "sha512" },
		/* its template hashes are SM3's: read as SHA-256 (the size's default) they are bad */
		{ "keylime/ima/ima-log-sm3_256", MB_ALG_SM3_256, 2, 0, "sm3_256" },
		{ "keylime/ima/ima-log-sm3_256", 0, 2, 1, "sm3_256" },
		/* a made-up algorithm keylime's test uses; the second hash matches no algorithm */
		{ "keylime/ima/ima-log-unknown", 0, 2, 1, "unknown" },
		{ "ima-evm-utils/test_ascii_runtime_measurements", 0, 3, 0, "sha256" },
		{ "ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9", 0, 1, 0, "sha256" },
	};
	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		mb_ima_log *log = load(cases[c].rel, cases[c].alg);
		const mb_ima_entry *e = mb_ima_log_entry(log, mb_ima_log_count(log) - 1);

		assert_true(mb_ima_log_is_ascii(log));
		assert_int_equal(mb_ima_log_count(log), cases[c].n);
		assert_int_equal(mb_ima_log_n_bad(log), cases[c].bad);
		assert_string_equal(e->digest_algo, cases[c].digest_algo);
		assert_string_equal(mb_ima_log_entry(log, 0)->path, "boot_aggregate");
		if (cases[c].bad)
			assert_int_equal(e->check, MB_IMA_CHECK_BAD);
		mb_ima_log_free(log);
	}
}

/* A real machine's list, long enough that the entries' array grows many times: every entry's
 * decoded strings still read after it moved (ASan saw them freed once). */
static void test_long_list(void **state)
{
	mb_ima_log *log = load("rust-keylime/ima/ascii_runtime_measurements", 0);

	(void) state;
	assert_int_equal(mb_ima_log_count(log), 826);
	assert_int_equal(mb_ima_log_n_bad(log), 0);
	for (size_t i = 0; i < mb_ima_log_count(log); i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);

		assert_int_equal(e->check, MB_IMA_CHECK_OK);
		assert_string_equal(e->template_name, "ima-ng");
		assert_string_equal(e->digest_algo, "sha1");
		assert_int_equal(e->digest_size, 20);
		assert_true(e->path[0] != 0);
	}
	mb_ima_log_free(log);
}

/* boot_aggregate (PITFALLS 27): the kernel's value recorded in the list, against the PCRs of the
 * firmware log of the same boot; the sha1 PCRs 0-9 of that replay equal the tsspcrread dump. */
static void test_boot_aggregate(void **state)
{
	static const struct {
		const char *list, *fwlog;
		mb_ima_aggregate want;
	} cases[] = {
		{ "ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9",
		  "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9", MB_IMA_AGGREGATE_MATCH },
		{ "ima-evm-utils/test_ascii_runtime_measurements", "ima-evm-utils/test_binary_bios_measurements",
		  MB_IMA_AGGREGATE_MATCH_0_7 },
	};
	mb_pcr_values *truth = mb_pcr_values_new();

	(void) state;
	assert_non_null(truth);
	assert_true(truth_load("ima-evm-utils/sample-tpm-2.0-pcrs-8-9", "tss", truth));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		mb_ima_log *log = load(cases[c].list, 0);
		mb_event_log *fw = corpus_log(cases[c].fwlog);
		mb_pcr_values *v = mb_pcr_values_new();
		mb_error err = { 0 };
		uint8_t h[MB_DIGEST_MAX];

		assert_non_null(fw);
		assert_non_null(v);
		assert_int_equal(mb_replay_log(fw, SIZE_MAX, v, NULL, &err), 0);
		if (c == 0)
			for (uint32_t p = 0; p <= 9; p++)
				assert_memory_equal(mb_pcr_values_get(v, MB_ALG_SHA1, p),
						    mb_pcr_values_get(truth, MB_ALG_SHA1, p), 20);
		assert_int_equal(mb_ima_boot_aggregate_check(log, v), cases[c].want);
		assert_int_equal(mb_ima_boot_aggregate(v, MB_ALG_SHA256, c == 1, h, &err), 0);
		assert_memory_equal(h, mb_ima_log_entry(log, 0)->digest, 32);
		/* the other definition does not give it */
		if (mb_ima_boot_aggregate(v, MB_ALG_SHA256, c == 0, h, &err) == 0)
			assert_memory_not_equal(h, mb_ima_log_entry(log, 0)->digest, 32);
		/* a PCR missing is said */
		mb_pcr_values_free(v);
		v = mb_pcr_values_new();
		assert_non_null(v);
		assert_int_equal(mb_ima_boot_aggregate(v, MB_ALG_SHA256, false, h, &err), -ENOENT);
		assert_int_equal(mb_ima_boot_aggregate_check(log, v), MB_IMA_AGGREGATE_NO_PCRS);
		mb_pcr_values_free(v);
		mb_event_log_free(fw);
		mb_ima_log_free(log);
	}
	mb_pcr_values_free(truth);
}

/* Replay and the two documents (the values: hashlib's, as tests/cli/ima-ref.py printed them;
 * test-ima.sh recomputes them at test time for every list). */
static void test_replay_json(void **state)
{
	mb_ima_log *log = load("tpm2-tss/sml-ima-ng-sha1.bin", 0);
	mb_pcr_values *rec = mb_pcr_values_new(), *pad = mb_pcr_values_new();
	mb_error err = { 0 };
	char hex[2 * MB_DIGEST_MAX + 1], *doc;

	(void) state;
	assert_non_null(rec);
	assert_non_null(pad);
	assert_int_equal(mb_ima_replay(log, rec, pad, &err), 0);
	assert_int_equal(mb_pcr_values_present(rec, MB_ALG_SHA1), 1u << 10);
	assert_string_equal(hex_format(mb_pcr_values_get(rec, MB_ALG_SHA1, 10), 20, hex),
			    "ef2a20de2a84a4780f92ab11d5c4934c709dff00");
	assert_string_equal(hex_format(mb_pcr_values_get(rec, MB_ALG_SHA256, 10), 32, hex),
			    "700a1bb47bc2bc005f2d8e23d80e2a1e301733c1d29023c52d1d7d149719eb64");
	assert_string_equal(hex_format(mb_pcr_values_get(pad, MB_ALG_SHA256, 10), 32, hex),
			    "f4059058172c2d1d279b7ce206ce9373249786f9a9dc59a2af279e0eaed14a26");
	assert_int_equal(mb_ima_pcr_compare(rec, pad, pad, MB_ALG_SHA256, 10), MB_IMA_MATCH_PADDED);
	assert_int_equal(mb_ima_pcr_compare(rec, pad, rec, MB_ALG_SHA256, 10), MB_IMA_MATCH_RECOMPUTED);
	doc = mb_ima_log_to_json(log, false);
	if (doc) { /* NULL only when out of memory (the oom build) */
		assert_non_null(strstr(doc, "\"incomplete_tail\":{\"offset\":558,\"size\":1}"));
		assert_non_null(strstr(doc, "\"path\":\"/init\""));
		free(doc);
	}
	doc = mb_ima_replay_to_json(log, rec, pad, pad, true);
	if (doc) {
		assert_non_null(strstr(doc, "\"match\": \"padded\""));
		free(doc);
	}
	mb_pcr_values_free(rec);
	mb_pcr_values_free(pad);
	mb_ima_log_free(log);
}

/* A one-entry ima-ng list: PCR, 20-byte hash, name, data with d-ng and n-ng (75 bytes). */
static size_t build_entry(uint8_t *p, uint32_t pcr, uint32_t name_len, const char *name, uint32_t data_len)
{
	static const uint8_t dng[] = "sha1:\0aaaaaaaaaaaaaaaaaaaa";
	size_t n = 0;

#define U32(v) do { uint32_t x_ = (v); p[n] = (uint8_t) x_; p[n + 1] = (uint8_t) (x_ >> 8); \
		p[n + 2] = (uint8_t) (x_ >> 16); p[n + 3] = (uint8_t) (x_ >> 24); n += 4; } while (0)
	U32(pcr);
	memset(p + n, 0x11, 20);
	n += 20;
	U32(name_len);
	memcpy(p + n, name, strlen(name));
	n += strlen(name);
	U32(data_len);
	U32(26);
	memcpy(p + n, dng, 26);
	n += 26;
	U32(3);
	memcpy(p + n, "/a", 3);
	n += 3;
#undef U32
	return n;
}

static void expect_error(const void *data, size_t size, int code, uint64_t offset, const char *what)
{
	mb_ima_log *log = (mb_ima_log *) 1;
	mb_error err = { 0 };
	int rc = mb_ima_log_parse(data, size, 0, &log, &err);

	if (rc != code)
		fail_msg("%s: rc %d (%s), want %d", what, rc, err.message, code);
	assert_null(log);
	assert_true(err.has_offset);
	if (err.offset != offset)
		fail_msg("%s: offset %llu (%s), want %llu", what, (unsigned long long) err.offset, err.message,
			 (unsigned long long) offset);
	assert_true(err.message[0] != 0);
}

static void test_hostile(void **state)
{
	uint8_t buf[256];
	size_t n;
	mb_ima_log *log = NULL;
	mb_error err = { 0 };

	(void) state;
	/* the well-formed entry parses (its template hash is bad: 0x11...) */
	n = build_entry(buf, 10, 6, "ima-ng", 37);
	assert_int_equal(mb_ima_log_parse(buf, n, 0, &log, &err), 0);
	assert_int_equal(mb_ima_log_n_bad(log), 1);
	mb_ima_log_free(log);

	expect_error(buf, 0, -EBADMSG, 0, "empty");
	/* truncated in the template data: its length at 34 says 37, 30 bytes follow */
	expect_error(buf, n - 7, -EBADMSG, 34, "truncated");
	/* template data length over the cap */
	n = build_entry(buf, 10, 6, "ima-ng", MB_IMA_MAX_TEMPLATE_DATA + 1);
	expect_error(buf, n, -E2BIG, 34, "oversized data length");
	/* template name length past the end: the length at 24 */
	n = build_entry(buf, 10, 200, "ima-ng", 37);
	expect_error(buf, n, -EBADMSG, 0, "name past the end"); /* not a list: detection finds no name */
	n = build_entry(buf, 10, 6, "ima-ng", 37);
	n += build_entry(buf + n, 10, 200, "ima-ng", 37);
	expect_error(buf, n, -EBADMSG, 75 + 24, "second name past the end");
	/* template name over 255 */
	n = build_entry(buf, 10, 6, "ima-ng", 37);
	n += build_entry(buf + n, 10, 256, "ima-ng", 37);
	expect_error(buf, n, -E2BIG, 75 + 24, "oversized name length");
	/* a PCR of 99 */
	n = build_entry(buf, 99, 6, "ima-ng", 37);
	expect_error(buf, n, -EBADMSG, 0, "PCR 99");
	/* NUL in the second entry's template name */
	n = build_entry(buf, 10, 6, "ima-ng", 37);
	n += build_entry(buf + n, 10, 6, "ima-ng", 37);
	buf[75 + 31] = 0;
	expect_error(buf, n, -EBADMSG, 75 + 28, "NUL in the name");
	/* a field length past its data: n-ng says 99 */
	n = build_entry(buf, 10, 6, "ima-ng", 37);
	buf[68] = 99;
	expect_error(buf, n, -EBADMSG, 68, "field past its data");
	/* ASCII: a PCR of 99, bad hex, a name over 255 */
	{
		static const char a99[] = "99 0000000000000000000000000000000000000001 ima-ng sha1:00 /a\n";
		static const char ahex[] = "10 zz00000000000000000000000000000000000001 ima-ng sha1:00 /a\n";
		static const char adng[] = "10 1000000000000000000000000000000000000001 ima-ng sha100 /a\n";

		expect_error(a99, strlen(a99), -EBADMSG, 0, "ASCII PCR 99");
		expect_error(ahex, strlen(ahex), -EBADMSG, 3, "ASCII hex");
		expect_error(adng, strlen(adng), -EBADMSG, 51, "ASCII d-ng");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_corpus),
		cmocka_unit_test(test_decoded_fields),
		cmocka_unit_test(test_ascii_corpus),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_replay_json),
		cmocka_unit_test(test_boot_aggregate),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
