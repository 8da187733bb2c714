/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_verify_log against PCR values recorded on the real machines that wrote the
 * corpus logs (tests/data/corpus/PROVENANCE.md), and against those values altered.
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
#include "lib/replay/pcr-values.h" /* the tests link the static core: they may read the values directly */
#include "shared/fileio.h"
#include "shared/hex.h"

static char *path_of(const char *rel)
{
	const char *root = getenv("MB_TESTDATA");
	char *p = NULL;

	assert_non_null(root);
	assert_true(asprintf(&p, "%s/corpus/%s", root, rel) > 0);
	return p;
}

static mb_event_log *load_log(const char *rel)
{
	char *p = path_of(rel);
	uint8_t *buf = NULL;
	size_t size = 0;
	mb_event_log *log = NULL;
	mb_error err = { 0 };

	assert_int_equal(file_read(p, MB_LOG_MAX_SIZE, &buf, &size, &err), 0);
	assert_int_equal(mb_event_log_parse(buf, size, &log, &err), 0);
	free(buf);
	free(p);
	return log;
}

static void load_values(const char *rel, mb_pcr_values *v)
{
	char *p = path_of(rel);
	uint8_t *buf = NULL;
	size_t size = 0;
	mb_error err = { 0 };

	assert_int_equal(file_read(p, 1 << 20, &buf, &size, &err), 0);
	assert_int_equal(mb_pcr_values_parse((const char *) buf, size, v, &err), 0);
	free(buf);
	free(p);
}

static const mb_verify_pcr *find(const mb_verify_result *r, uint16_t alg, uint32_t pcr)
{
	return mb_verify_result_pcr(r, alg, pcr);
}

static mb_verify_result *run(const mb_event_log *log, const mb_cel_log *us, const mb_pcr_values *v,
			     const uint16_t *only, size_t n_only)
{
	mb_verify_result *r = NULL;
	mb_error err = { 0 };

	/* PCR 9: the userspace test below measures there (arch-linux-workstation's firmware does not). */
	mb_verify_options opts = { .size = sizeof(opts), .only_banks = only, .n_only = n_only,
				   .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT | 1u << 9 };

	assert_int_equal(mb_verify_log(log, us, v, &opts, &r, &err), 0);
	assert_non_null(r);
	return r;
}

/*
 * The entries one by one: each is the one mb_verify_result_pcr finds, they add up to the counts,
 * bank by bank with PCRs ascending, and log_pcrs is what the events of the log extend.
 */
static void check_entries(const mb_event_log *log, const mb_verify_result *r)
{
	uint32_t extended = 0, verified = 0;
	size_t i, n = mb_verify_result_count(r);

	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (mb_event_extends(ev))
			extended |= 1u << ev->pcr;
	}
	assert_int_equal(mb_verify_result_log_pcrs(r), extended);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		const mb_verify_pcr *e = mb_verify_result_entry(r, i);

		assert_non_null(e);
		assert_ptr_equal(e, mb_verify_result_pcr(r, e->alg, e->pcr));
		if (i > 0 && mb_verify_result_entry(r, i - 1)->alg == e->alg)
			assert_true(mb_verify_result_entry(r, i - 1)->pcr < e->pcr);
		verified += e->verdict == MB_PCR_VERIFIED;
	}
	assert_int_equal(verified, mb_verify_result_n_verified(r));
	assert_null(mb_verify_result_entry(r, n));
}

/* gdc-host: real server, StartupLocality 3, an S-CRTM version digest that is not H(data). */
static void test_true_values_verify(void **state)
{
	mb_event_log *log = load_log("go-tpm-tools/gdc-host.bin");
	mb_pcr_values v;
	mb_verify_result *r;
	const mb_verify_pcr *p0;

	load_values("go-tpm-tools/gdc-host.bin.pcrs.json", &v);
	r = run(log, NULL, &v, NULL, 0);
	assert_true(mb_verify_result_ok(r));
	assert_int_equal(mb_verify_result_n_failed(r), 0);
	assert_int_equal(mb_verify_result_n_verified(r), 11);
	p0 = find(r, MB_ALG_SHA256, 0);
	assert_non_null(p0);
	assert_int_equal(p0->verdict, MB_PCR_VERIFIED);
	assert_int_equal(p0->n_untrusted_data, 1); /* the S-CRTM version event */
	assert_true(mb_verify_result_replay_info(r)->startup_locality_seen);
	assert_int_equal(mb_verify_result_replay_info(r)->startup_locality, 3);
	check_entries(log, r);
	mb_verify_result_free(r);

	/* One bit of PCR 4 changed: PCR 4 alone fails. */
	pcrv_bank(&v, MB_ALG_SHA256)->value[4][31] ^= 1;
	r = run(log, NULL, &v, NULL, 0);
	assert_false(mb_verify_result_ok(r));
	assert_int_equal(mb_verify_result_n_failed(r), 1);
	assert_int_equal(find(r, MB_ALG_SHA256, 4)->verdict, MB_PCR_MISMATCH);
	assert_int_equal(find(r, MB_ALG_SHA256, 5)->verdict, MB_PCR_VERIFIED);
	mb_verify_result_free(r);
	mb_event_log_free(log);
}

/* The same log without its StartupLocality event: PCR 0 fails, and the quirk names locality 3. */
static void test_startup_locality_quirk(void **state)
{
	mb_event_log *log = load_log("go-tpm-tools/gdc-host.bin"), *cut = NULL;
	const mb_spec_id_alg *banks;
	size_t n_banks = mb_event_log_banks(log, &banks), i, size;
	mb_log_writer *w = NULL;
	mb_error err = { 0 };
	mb_pcr_values v;
	mb_verify_result *r;
	const mb_verify_pcr *p0;
	const uint8_t *bytes;
	int removed = 0;

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, banks, n_banks), 0);
	for (i = 1; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (ev->type == MB_EV_NO_ACTION && ev->data_size == 17 && memcmp(ev->data, "StartupLocality", 16) == 0) {
			removed++;
			continue;
		}
		assert_int_equal(mb_log_writer_add_event(w, ev), 0);
	}
	assert_int_equal(removed, 1);
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &cut, &err), 0);

	load_values("go-tpm-tools/gdc-host.bin.pcrs.json", &v);
	r = run(cut, NULL, &v, NULL, 0);
	assert_false(mb_verify_result_ok(r));
	assert_int_equal(mb_verify_result_n_failed(r), 1);
	p0 = find(r, MB_ALG_SHA256, 0);
	assert_int_equal(p0->verdict, MB_PCR_MISMATCH);
	assert_int_equal(p0->quirk, MB_QUIRK_STARTUP_LOCALITY);
	assert_int_equal(p0->quirk_locality, 3);
	mb_verify_result_free(r);
	mb_event_log_free(cut);
	mb_log_writer_free(w);
	mb_event_log_free(log);
}

/* A firmware that forgot to log ExitBootServices (go-attestation's TestEBSVerifyWorkaround). */
static void test_exit_boot_services_quirk(void **state)
{
	mb_event_log *log = load_log("go-attestation/ebs_event_missing_eventlog");
	mb_pcr_values v;
	mb_verify_result *r;
	uint16_t sha1 = MB_ALG_SHA1;
	const mb_verify_pcr *p5;

	load_values("go-attestation/ebs_event_missing_eventlog.pcrs.json", &v);
	/* The log is SHA-1 only, the values have sha256 too: fail closed. */
	r = run(log, NULL, &v, NULL, 0);
	assert_false(mb_verify_result_ok(r));
	assert_int_equal(find(r, MB_ALG_SHA256, 5)->verdict, MB_PCR_BANK_NOT_IN_LOG);
	mb_verify_result_free(r);

	r = run(log, NULL, &v, &sha1, 1);
	assert_false(mb_verify_result_ok(r));
	p5 = find(r, MB_ALG_SHA1, 5);
	assert_int_equal(p5->verdict, MB_PCR_MISMATCH);
	assert_int_equal(p5->quirk, MB_QUIRK_EXIT_BOOT_SERVICES);
	assert_int_equal(p5->quirk_events, 3);
	assert_int_equal(find(r, MB_ALG_SHA256, 5)->verdict, MB_PCR_UNVERIFIED);
	assert_int_equal(find(r, MB_ALG_SHA1, 0)->verdict, MB_PCR_NO_VALUE);
	mb_verify_result_free(r);
	mb_event_log_free(log);
}

/*
 * The userspace log goes on top: PCR 9 of arch-linux-workstation is untouched by the
 * firmware; one record of sha256("hello") gives the value openssl computes:
 * sha256(32 zero bytes || sha256("hello")).
 */
static void test_userspace_merge(void **state)
{
	static const char rec[] = "\x1e{\"pcr\":9,\"digests\":[{\"hashAlg\":\"sha1\",\"digest\":"
				  "\"aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d\"},{\"hashAlg\":\"sha256\",\"digest\":"
				  "\"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\"}]}\n";
	static const char want256[] = "9851312028952521510e8eaab5be94e7dc24b5fc292b2e9781173cf11ffa9878";
	static const char want1[] = "00629997206c7d587b4ed79aabc3db58c32e1492";
	mb_event_log *log = load_log("go-tpm-tools/arch-linux-workstation.bin");
	mb_cel_log *us = NULL;
	mb_error err = { 0 };
	mb_pcr_values v;
	mb_verify_result *r;
	const mb_verify_pcr *p9;

	assert_int_equal(mb_cel_log_parse(rec, strlen(rec), &us, &err), 0);
	load_values("go-tpm-tools/arch-linux-workstation.bin.pcrs.json", &v);
	assert_int_equal(hex_parse(want256, 64, pcrv_bank(&v, MB_ALG_SHA256)->value[9], 32), 0);
	assert_int_equal(hex_parse(want1, 40, pcrv_bank(&v, MB_ALG_SHA1)->value[9], 20), 0);
	pcrv_bank(&v, MB_ALG_SHA256)->present |= 1u << 9;
	pcrv_bank(&v, MB_ALG_SHA1)->present |= 1u << 9;

	r = run(log, us, &v, NULL, 0);
	assert_true(mb_verify_result_ok(r));
	p9 = find(r, MB_ALG_SHA256, 9);
	assert_int_equal(p9->verdict, MB_PCR_VERIFIED);
	assert_int_equal(p9->n_userspace, 1);
	assert_int_equal(p9->n_events, 0);
	mb_verify_result_free(r);

	/* Without the userspace log PCR 9 is not covered (no claim); with a wrong value it fails. */
	r = run(log, NULL, &v, NULL, 0);
	assert_int_equal(find(r, MB_ALG_SHA256, 9)->verdict, MB_PCR_NOT_COVERED);
	mb_verify_result_free(r);
	pcrv_bank(&v, MB_ALG_SHA256)->value[9][0] ^= 0x80;
	r = run(log, us, &v, NULL, 0);
	assert_false(mb_verify_result_ok(r));
	assert_int_equal(find(r, MB_ALG_SHA256, 9)->verdict, MB_PCR_MISMATCH);
	assert_int_equal(find(r, MB_ALG_SHA1, 9)->verdict, MB_PCR_VERIFIED);
	mb_verify_result_free(r);
	mb_cel_log_free(us);
	mb_event_log_free(log);
}

/*
 * sb_cert_eventlog extends PCRs 0, 4, 5 and 7 only; the true values list PCRs 1-3 and 6
 * at zero. A non-reset value in one of them means measurements missing from the log
 * (only firmware measures PCRs 0-7); in PCR 10 it is no claim either way.
 */
static void test_firmware_pcr_not_in_log(void **state)
{
	mb_event_log *log = load_log("go-attestation/sb_cert_eventlog");
	mb_pcr_values v;
	mb_verify_result *r;
	mb_pcr_bank *b;

	load_values("go-attestation/sb_cert_eventlog.pcrs.json", &v);
	r = run(log, NULL, &v, NULL, 0);
	assert_true(mb_verify_result_ok(r));
	assert_int_equal(find(r, MB_ALG_SHA256, 1)->verdict, MB_PCR_NOT_COVERED);
	/* Two EV_EFI_VARIABLE_AUTHORITY events whose data is not what was hashed: noted, not failed. */
	assert_int_equal(find(r, MB_ALG_SHA256, 7)->verdict, MB_PCR_VERIFIED);
	assert_int_equal(find(r, MB_ALG_SHA256, 7)->n_untrusted_data, 2);
	mb_verify_result_free(r);

	b = pcrv_bank(&v, MB_ALG_SHA256);
	b->value[10][0] = 0x11;
	r = run(log, NULL, &v, NULL, 0);
	assert_true(mb_verify_result_ok(r));
	assert_int_equal(find(r, MB_ALG_SHA256, 10)->verdict, MB_PCR_NOT_COVERED);
	mb_verify_result_free(r);
	b->value[1][0] = 0x11;
	r = run(log, NULL, &v, NULL, 0);
	assert_false(mb_verify_result_ok(r));
	assert_int_equal(mb_verify_result_n_failed(r), 1);
	assert_int_equal(find(r, MB_ALG_SHA256, 1)->verdict, MB_PCR_MISMATCH);
	assert_int_equal(find(r, MB_ALG_SHA256, 1)->n_events, 0);
	mb_verify_result_free(r);
	mb_event_log_free(log);
}

/*
 * Twenty PCR 5 EV_EFI_ACTION events whose digest is of other bytes than their data: the PCR
 * matches its replay but is DATA_MISMATCH, all twenty counted, the first sixteen listed by number.
 */
static void test_bad_digest_list(void **state)
{
	static const mb_spec_id_alg algs[] = { { MB_ALG_SHA1, 20 }, { MB_ALG_SHA256, 32 } };
	mb_log_writer *w = NULL;
	mb_event_log *log = NULL;
	mb_pcr_values v;
	mb_verify_result *r;
	const mb_verify_pcr *p5;
	mb_error err = { 0 };
	const uint8_t *bytes;
	size_t size;
	uint32_t i;

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, algs, 2), 0);
	for (i = 0; i < 20; i++)
		assert_int_equal(mb_log_writer_add_hashed(w, 5, MB_EV_EFI_ACTION, "hashed", 6, "logged", 6), 0);
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &log, &err), 0);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, NULL, &err), 0);
	r = run(log, NULL, &v, NULL, 0);
	p5 = find(r, MB_ALG_SHA256, 5);
	assert_int_equal(p5->verdict, MB_PCR_DATA_MISMATCH);
	assert_int_equal(p5->n_bad_digest, 20);
	assert_int_equal(p5->n_bad_listed, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(p5->bad_digest_events[i], i + 1); /* event 0 is the Spec ID header */
	assert_int_equal(find(r, MB_ALG_SHA1, 5)->bad_digest_events[15], 16);
	mb_verify_result_free(r);
	mb_event_log_free(log);
	mb_log_writer_free(w);
}

/*
 * tpm2-tss's event-uefiaction.bin: its PCR 4 event has no sha384 or sha512 digest
 * (tpm2_eventlog: DigestCount 2 of 4 banks). The result's replay info says so, read after
 * mb_verify_log returned (the result keeps the lists).
 */
static void test_replay_info_kept(void **state)
{
	mb_event_log *log = load_log("tpm2-tss/event-uefiaction.bin");
	mb_pcr_values v;
	mb_verify_result *r;
	const mb_replay_info *info;
	mb_error err = { 0 };

	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, NULL, &err), 0);
	r = run(log, NULL, &v, NULL, 0);
	info = mb_verify_result_replay_info(r);
	assert_int_equal(mb_pcr_values_bank_alg(&v, 2), MB_ALG_SHA384);
	assert_int_equal(info->incomplete[0], 0);
	assert_int_equal(info->incomplete[1], 0);
	assert_int_equal(info->incomplete[2], 1u << 4);
	assert_int_equal(info->incomplete[3], 1u << 4);
	assert_int_equal(info->n_unknown_algs, 0);
	assert_int_equal(find(r, MB_ALG_SHA512, 4)->verdict, MB_PCR_BANK_NOT_IN_LOG);
	mb_verify_result_free(r);
	mb_event_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_true_values_verify),
		cmocka_unit_test(test_bad_digest_list),
		cmocka_unit_test(test_replay_info_kept),
		cmocka_unit_test(test_startup_locality_quirk),
		cmocka_unit_test(test_exit_boot_services_quirk),
		cmocka_unit_test(test_userspace_merge),
		cmocka_unit_test(test_firmware_pcr_not_in_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
