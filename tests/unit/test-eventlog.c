/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parser, writer and replay rules on hand-built logs, with values from the TCG specs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include <mboot/mboot.h>
#include "lib/replay/pcr-values.h" /* the tests link the static core: they may read the values directly */
#include "shared/hex.h"

static const mb_spec_id_alg sha1_sha256[] = { { MB_ALG_SHA1, 20 }, { MB_ALG_SHA256, 32 } };

static mb_event_log *parse_writer(mb_log_writer *w, int expect_rc, mb_error *err)
{
	const uint8_t *bytes;
	size_t size;
	mb_event_log *log = NULL;

	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &log, err), expect_rc);
	return log;
}

/* OpenSSL directly, as the independent computation: new = H(old || digest). */
static void ossl_extend(const char *md, uint8_t *pcr, size_t n, const uint8_t *digest)
{
	uint8_t buf[128];
	unsigned len;

	memcpy(buf, pcr, n);
	memcpy(buf + n, digest, n);
	assert_true(EVP_Digest(buf, 2 * n, pcr, &len, EVP_get_digestbyname(md), NULL));
}

/* EV_SEPARATOR 00000000: SHA-256 df3f6198...4b81119 (TCG PFP; systemd's 500-separator pcrlock). */
static void test_separator_vector(void **state)
{
	static const uint8_t zero4[4];
	uint8_t md[32];
	char hex[65];

	assert_int_equal(mb_digest(MB_ALG_SHA256, zero4, 4, md), 0);
	hex_format(md, 32, hex);
	assert_memory_equal(hex, "df3f6198", 8);
	assert_string_equal(hex + 57, "4b81119");
	/* "Calling EFI Application from Boot Option": SHA-256 3d6772b4...d5633ba, SHA-1 cd0fdb45...7f256. */
	{
		static const char s[] = "Calling EFI Application from Boot Option";
		uint8_t md1[20];

		assert_int_equal(mb_digest(MB_ALG_SHA256, s, strlen(s), md), 0);
		hex_format(md, 32, hex);
		assert_memory_equal(hex, "3d6772b4", 8);
		assert_string_equal(hex + 57, "d5633ba");
		assert_int_equal(mb_digest(MB_ALG_SHA1, s, strlen(s), md1), 0);
		hex_format(md1, 20, hex);
		assert_memory_equal(hex, "cd0fdb45", 8);
		assert_string_equal(hex + 35, "7f256");
	}
}

/* Writer output parses back; replay equals OpenSSL's own chain, with the PFP start values. */
static void test_replay_rules(void **state)
{
	static const uint8_t locality[17] = "StartupLocality\0\3";
	mb_log_writer *w;
	mb_event_log *log;
	mb_pcr_values v;
	mb_replay_info info;
	mb_error err = { 0 };
	uint8_t pcr0[32] = { 0 }, pcr17[32], pcr4[20] = { 0 }, d256[32], d1[20];
	unsigned len;
	const mb_pcr_bank *b256, *b1;

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, sha1_sha256, 2), 0);
	/* EV_NO_ACTION: never extended, whatever its digests say. */
	assert_int_equal(mb_log_writer_add_hashed(w, 0, MB_EV_NO_ACTION, "x", 1, locality, sizeof(locality)), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 0, MB_EV_S_CRTM_VERSION, "v", 1, "v", 1), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 17, MB_EV_EFI_ACTION, "drtm", 4, "drtm", 4), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 4, MB_EV_SEPARATOR, "\0\0\0\0", 4, "\0\0\0\0", 4), 0);
	/* A Windows-style PCR index: shown, never used as an index. */
	assert_int_equal(mb_log_writer_add_hashed(w, 0xFFFFFFFFu, MB_EV_NO_ACTION + 1, "w", 1, "w", 1), 0);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_log_format(log), MB_LOG_FORMAT_CRYPTO_AGILE);
	assert_int_equal(mb_event_log_count(log), 6);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, &info, &err), 0);
	assert_true(info.startup_locality_seen);
	assert_int_equal(info.startup_locality, 3);
	assert_int_equal(info.events_out_of_range, 1);
	assert_int_equal(info.events_no_action, 2); /* the Spec ID header and StartupLocality */

	b256 = pcrv_bank_const(&v, MB_ALG_SHA256);
	b1 = pcrv_bank_const(&v, MB_ALG_SHA1);
	assert_non_null(b256);
	assert_non_null(b1);
	assert_int_equal(b256->present, (1u << 0) | (1u << 4) | (1u << 17));

	pcr0[31] = 3;
	assert_true(EVP_Digest("v", 1, d256, &len, EVP_sha256(), NULL));
	ossl_extend("SHA256", pcr0, 32, d256);
	assert_memory_equal(b256->value[0], pcr0, 32);

	memset(pcr17, 0xff, 32);
	assert_true(EVP_Digest("drtm", 4, d256, &len, EVP_sha256(), NULL));
	ossl_extend("SHA256", pcr17, 32, d256);
	assert_memory_equal(b256->value[17], pcr17, 32);

	assert_true(EVP_Digest("\0\0\0\0", 4, d1, &len, EVP_sha1(), NULL));
	ossl_extend("SHA1", pcr4, 20, d1);
	assert_memory_equal(b1->value[4], pcr4, 20);

	/* A prefix replay stops before the given event. */
	assert_int_equal(mb_replay_log(log, 3, &v, &info, &err), 0);
	assert_int_equal(pcrv_bank_const(&v, MB_ALG_SHA256)->present, 1u);

	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/* An algorithm mboot does not know is carried, shown and skipped, never a crash. */
static void test_unknown_bank(void **state)
{
	static const mb_spec_id_alg algs[] = { { MB_ALG_SHA256, 32 }, { 0x0099, 40 } };
	uint8_t d256[32] = { 1 }, dx[40] = { 2 };
	mb_event_digest d[2] = { { MB_ALG_SHA256, 32, d256 }, { 0x0099, 40, dx } };
	mb_log_writer *w;
	mb_event_log *log;
	mb_pcr_values v;
	mb_replay_info info;
	mb_error err = { 0 };

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, algs, 2), 0);
	assert_int_equal(mb_log_writer_add(w, 7, MB_EV_SEPARATOR, d, 2, "\0\0\0\0", 4), 0);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_log_event(log, 1)->n_digests, 2);
	assert_int_equal(mb_event_log_event(log, 1)->digests[1].size, 40);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, &info, &err), 0);
	assert_int_equal(v.n_banks, 1);
	assert_int_equal(info.n_unknown_algs, 1);
	assert_int_equal(info.unknown_algs[0], 0x0099);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/*
 * Eight 1-byte banks make records of 40 bytes with 8 digests each, more digests than the parser
 * reserves for a log of that size: the log's digest array grows (and moves) while it is read,
 * and every event must still see its own digests, the same as a one-pass visit does.
 */
static int check_visited(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	const mb_event_log *parsed = ctx;
	const mb_event *kept = mb_event_log_event(parsed, ev->number);
	uint32_t k;

	(void) log;
	(void) err;
	assert_non_null(kept);
	assert_int_equal(kept->n_digests, ev->n_digests);
	for (k = 0; k < ev->n_digests; k++) {
		assert_int_equal(kept->digests[k].alg, ev->digests[k].alg);
		assert_int_equal(kept->digests[k].size, ev->digests[k].size);
		assert_memory_equal(kept->digests[k].bytes, ev->digests[k].bytes, ev->digests[k].size);
	}
	return 0;
}

static void test_many_digests(void **state)
{
	enum { N_EVENTS = 5000, N_BANKS = 8 };
	mb_spec_id_alg algs[N_BANKS];
	mb_log_writer *w;
	mb_event_log *log;
	mb_error err = { 0 };
	const uint8_t *bytes;
	size_t size, i, k;

	(void) state;
	for (k = 0; k < N_BANKS; k++)
		algs[k] = (mb_spec_id_alg) { (uint16_t) (0x0100 + k), 1 };
	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, algs, N_BANKS), 0);
	for (i = 0; i < N_EVENTS; i++) {
		uint8_t b[N_BANKS];
		mb_event_digest d[N_BANKS];

		for (k = 0; k < N_BANKS; k++) {
			b[k] = (uint8_t) (i * N_BANKS + k);
			d[k] = (mb_event_digest) { algs[k].alg, 1, &b[k] };
		}
		assert_int_equal(mb_log_writer_add(w, 7, MB_EV_IPL, d, N_BANKS, NULL, 0), 0);
	}
	bytes = mb_log_writer_data(w, &size);
	assert_true(size < (size_t) (N_EVENTS + 1) * 41);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_log_count(log), N_EVENTS + 1);
	for (i = 1; i <= N_EVENTS; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		assert_int_equal(ev->n_digests, N_BANKS);
		for (k = 0; k < N_BANKS; k++) {
			assert_int_equal(ev->digests[k].alg, 0x0100 + k);
			assert_int_equal(ev->digests[k].size, 1);
			assert_int_equal(ev->digests[k].bytes[0], (uint8_t) ((i - 1) * N_BANKS + k));
		}
	}
	assert_int_equal(mb_event_log_visit(bytes, size, check_visited, log, &err), 0);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/* Hand-built headers with impossible sizes and counts: refused with the offset of the field. */
static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t) v; p[1] = (uint8_t) (v >> 8); p[2] = (uint8_t) (v >> 16); p[3] = (uint8_t) (v >> 24); }

static size_t spec_header(uint8_t *buf, uint32_t n_algs, const uint16_t *alg_size, size_t n_table)
{
	size_t n = 0, i;

	put32(buf, 0);
	put32(buf + 4, MB_EV_NO_ACTION);
	memset(buf + 8, 0, 20);
	n = 32;
	memcpy(buf + n, "Spec ID Event03", 16);
	n += 16;
	memset(buf + n, 0, 8);
	buf[n + 5] = 2;
	buf[n + 7] = 2;
	n += 8;
	put32(buf + n, n_algs);
	n += 4;
	for (i = 0; i < n_table; i++) {
		buf[n++] = (uint8_t) alg_size[2 * i];
		buf[n++] = (uint8_t) (alg_size[2 * i] >> 8);
		buf[n++] = (uint8_t) alg_size[2 * i + 1];
		buf[n++] = (uint8_t) (alg_size[2 * i + 1] >> 8);
	}
	buf[n++] = 0;
	put32(buf + 28, (uint32_t) (n - 32));
	return n;
}

static void expect_reject(const uint8_t *buf, size_t n, int rc, const char *words)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };

	assert_int_equal(mb_event_log_parse(buf, n, &log, &err), rc);
	assert_null(log);
	assert_true(err.has_offset);
	assert_true(err.offset <= n);
	if (!strstr(err.message, words)) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", err.message, words);
		fail();
	}
}

static void test_hostile_headers(void **state)
{
	uint8_t buf[512];
	static const uint16_t sha256_only[] = { MB_ALG_SHA256, 32 };
	static const uint16_t wrong_size[] = { MB_ALG_SHA256, 20 };
	static const uint16_t twice[] = { MB_ALG_SHA256, 32, MB_ALG_SHA256, 32 };
	size_t n;

	n = spec_header(buf, 0, NULL, 0);
	expect_reject(buf, n, -EBADMSG, "no digest algorithms");
	n = spec_header(buf, 0xFFFFFFFFu, NULL, 0);
	expect_reject(buf, n, -E2BIG, "digest algorithms");
	n = spec_header(buf, 1, wrong_size, 1);
	expect_reject(buf, n, -EBADMSG, "digest size");
	n = spec_header(buf, 2, twice, 2);
	expect_reject(buf, n, -EBADMSG, "declared twice");

	/* An event whose data size is 0xFFFFFFFF. */
	n = spec_header(buf, 1, sha256_only, 1);
	put32(buf + n, 4); put32(buf + n + 4, MB_EV_SEPARATOR); put32(buf + n + 8, 1);
	buf[n + 12] = (uint8_t) MB_ALG_SHA256; buf[n + 13] = 0;
	memset(buf + n + 14, 0, 32);
	put32(buf + n + 46, 0xFFFFFFFFu);
	expect_reject(buf, n + 50, -E2BIG, "data size");
	put32(buf + n + 46, 1000);
	expect_reject(buf, n + 50, -EBADMSG, "runs past the end");
	/* digestCount 0, more than declared, an algorithm not declared. */
	put32(buf + n + 8, 0);
	expect_reject(buf, n + 50, -EBADMSG, "digests");
	put32(buf + n + 8, 0xFFFFFFFFu);
	expect_reject(buf, n + 50, -EBADMSG, "digests");
	put32(buf + n + 8, 1);
	buf[n + 12] = (uint8_t) MB_ALG_SHA1;
	expect_reject(buf, n + 50, -EBADMSG, "not declared");

	/* Empty input. */
	expect_reject(buf, 0, -EBADMSG, "empty");
}

/* A TPM 1.2 log whose first event is not a Spec ID event stays SHA-1 throughout. */
static void test_sha1_log(void **state)
{
	mb_log_writer *w;
	mb_event_log *log;
	mb_error err = { 0 };
	uint8_t pcr[20] = { 0 }, d[20];
	unsigned len;
	mb_pcr_values v;

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 4, MB_EV_SEPARATOR, "\0\0\0\0", 4, "\0\0\0\0", 4), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 4, MB_EV_IPL, "abc", 3, "abc", 3), 0);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_log_format(log), MB_LOG_FORMAT_SHA1);
	assert_null(mb_event_log_spec_id(log));
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, NULL, &err), 0);
	assert_true(EVP_Digest("\0\0\0\0", 4, d, &len, EVP_sha1(), NULL));
	ossl_extend("SHA1", pcr, 20, d);
	assert_true(EVP_Digest("abc", 3, d, &len, EVP_sha1(), NULL));
	ossl_extend("SHA1", pcr, 20, d);
	assert_memory_equal(v.banks[0].value[4], pcr, 20);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/* GRUB strings: H(text without prefix and NUL); a forged text is a mismatch. */
static void test_digest_check_grub(void **state)
{
	static const char data[] = "kernel_cmdline: root=/dev/sda1 ro";
	static const char text[] = "root=/dev/sda1 ro";
	mb_log_writer *w;
	mb_event_log *log;
	mb_error err = { 0 };
	mb_digest_check c;

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, sha1_sha256, 2), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 8, MB_EV_IPL, text, strlen(text), data, sizeof(data)), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 8, MB_EV_IPL, "root=/dev/evil", 14, data, sizeof(data)), 0);
	assert_int_equal(mb_log_writer_add_hashed(w, 5, MB_EV_EFI_ACTION, "x", 1, "Exit Boot Services Invocation", 29), 0);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 1), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_MATCH);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 2), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_MISMATCH);
	assert_int_equal(c.mismatched_digests, 3);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 3), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_MISMATCH);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 0), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_NOT_EXTENDED);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/*
 * An EV_IPL that is not a GRUB string: systemd-boot's UTF-16 command line hashes as logged
 * (digests from OpenSSL here); a file's path does not, and proves nothing either way; one bank
 * over the data and another not is forged.
 */
static void test_digest_check_ipl_logged(void **state)
{
	static const uint8_t cmdline[] = { 'r', 0, 'o', 0, ' ', 0, 'q', 0, 0, 0 }; /* u"ro q" with its NUL */
	static const char elsewhere[] = "the kernel image";
	uint8_t d1[2][20], d256[2][32];
	unsigned int len;
	mb_event_digest both[2], mixed[2], none[2];
	mb_log_writer *w;
	mb_event_log *log;
	mb_error err = { 0 };
	mb_digest_check c;

	(void) state;
	assert_true(EVP_Digest(cmdline, sizeof(cmdline), d1[0], &len, EVP_sha1(), NULL));
	assert_true(EVP_Digest(cmdline, sizeof(cmdline), d256[0], &len, EVP_sha256(), NULL));
	assert_true(EVP_Digest(elsewhere, strlen(elsewhere), d1[1], &len, EVP_sha1(), NULL));
	assert_true(EVP_Digest(elsewhere, strlen(elsewhere), d256[1], &len, EVP_sha256(), NULL));
	both[0] = (mb_event_digest) { MB_ALG_SHA1, 20, d1[0] };
	both[1] = (mb_event_digest) { MB_ALG_SHA256, 32, d256[0] };
	mixed[0] = both[0];
	mixed[1] = (mb_event_digest) { MB_ALG_SHA256, 32, d256[1] };
	none[0] = (mb_event_digest) { MB_ALG_SHA1, 20, d1[1] };
	none[1] = mixed[1];
	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, sha1_sha256, 2), 0);
	assert_int_equal(mb_log_writer_add(w, 12, MB_EV_IPL, both, 2, cmdline, sizeof(cmdline)), 0);
	assert_int_equal(mb_log_writer_add(w, 12, MB_EV_IPL, mixed, 2, cmdline, sizeof(cmdline)), 0);
	assert_int_equal(mb_log_writer_add(w, 9, MB_EV_IPL, none, 2, "/vmlinuz", 9), 0);
	log = parse_writer(w, 0, &err);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 1), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_MATCH);
	assert_string_equal(c.rule, "H(event data)");
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 2), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_MISMATCH);
	assert_int_equal(c.mismatched_digests, 2);
	assert_int_equal(mb_event_check_digest(mb_event_log_event(log, 3), &c), 0);
	assert_int_equal(c.status, MB_DIGEST_UNCHECKABLE);
	assert_null(c.rule);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/* Event type names by the TCG PC Client PFP's numbers (Table 9 and 10, written here as the
 * spec writes them, not through MB_EV_*), the ends of both ranges and the gaps between them
 * included; and every name found reads back to its number through mb_event_type_from_name. */
static void test_type_names(void **state)
{
	static const struct {
		uint32_t type;
		const char *name;
	} known[] = {
		{ 0x00000000, "EV_PREBOOT_CERT" }, { 0x00000001, "EV_POST_CODE" },
		{ 0x00000003, "EV_NO_ACTION" }, { 0x00000004, "EV_SEPARATOR" },
		{ 0x00000005, "EV_ACTION" }, { 0x00000006, "EV_EVENT_TAG" },
		{ 0x00000008, "EV_S_CRTM_VERSION" }, { 0x0000000d, "EV_IPL" },
		{ 0x00000012, "EV_OMIT_BOOT_DEVICE_EVENTS" }, { 0x80000000, "EV_EFI_EVENT_BASE" },
		{ 0x80000001, "EV_EFI_VARIABLE_DRIVER_CONFIG" }, { 0x80000002, "EV_EFI_VARIABLE_BOOT" },
		{ 0x80000003, "EV_EFI_BOOT_SERVICES_APPLICATION" }, { 0x80000006, "EV_EFI_GPT_EVENT" },
		{ 0x80000007, "EV_EFI_ACTION" }, { 0x8000000b, "EV_EFI_HANDOFF_TABLES2" },
		{ 0x8000000c, "EV_EFI_VARIABLE_BOOT2" }, { 0x80000010, "EV_EFI_HCRTM_EVENT" },
		{ 0x800000e0, "EV_EFI_VARIABLE_AUTHORITY" }, { 0x800000e1, "EV_EFI_SPDM_FIRMWARE_BLOB" },
	};
	static const uint32_t unknown[] = { 0x00000014, 0x0000ffff, 0x7fffffff, 0x8000000e, 0x8000000f,
					    0x80000011, 0x800000df, 0x800000e5, 0xffffffff };
	size_t i;
	uint32_t t;

	(void) state;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		assert_non_null(mb_event_type_name(known[i].type));
		assert_string_equal(mb_event_type_name(known[i].type), known[i].name);
	}
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		assert_null(mb_event_type_name(unknown[i]));
	for (t = 0; t < 0x200; t++) {
		uint32_t types[2] = { t, 0x80000000u + t }, back;

		for (i = 0; i < 2; i++) {
			const char *name = mb_event_type_name(types[i]);

			if (!name)
				continue;
			assert_int_equal(mb_event_type_from_name(name, &back), 0);
			assert_int_equal(back, types[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separator_vector),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_replay_rules),
		cmocka_unit_test(test_unknown_bank),
		cmocka_unit_test(test_many_digests),
		cmocka_unit_test(test_hostile_headers),
		cmocka_unit_test(test_sha1_log),
		cmocka_unit_test(test_digest_check_grub),
		cmocka_unit_test(test_digest_check_ipl_logged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
