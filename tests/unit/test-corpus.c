/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every log of tests/data/corpus (a copy of the project's shared corpus of real logs):
 * parses or is rejected as it should, replays to the PCR values the real machine's TPM
 * held, re-serialises byte for byte, and survives being cut and bit-flipped.
 */
#include <errno.h>
#include <ftw.h>
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
#include "corpus-util.h"
#include "lib/grub/grub.h"

enum expect { PARSES, REJECTED };

static const struct corpus_log {
	const char *path;
	enum expect expect;
	const char *truth;      /* ground-truth file, or NULL */
	const char *truth_kind; /* "json", "hirs", "tss" */
} logs[] = {
	{ "HIRS/TpmLog.bin", PARSES, "HIRS/TpmLogExpectedPcrs.txt", "hirs" },
	{ "HIRS/TpmLogSHA1.bin", PARSES, "HIRS/TpmLogSHA1ExpectedPcrs.txt", "hirs" },
	{ "HIRS/laptop_default_binary_bios_measurements", PARSES, NULL, NULL },
	{ "fwupd/binary_bios_measurements-v1", PARSES, "fwupd/binary_bios_measurements-v1.pcrs.json", "json" },
	{ "fwupd/binary_bios_measurements-v2", PARSES, "fwupd/binary_bios_measurements-v2.pcrs.json", "json" },
	/* fwupd's fuzzing seed is in fwupd's own builder format, 16 bytes: not a log. */
	{ "fwupd/fuzzing-v2.bin", REJECTED, NULL, NULL },
	{ "go-attestation/coreos_36_shielded_vm_no_secure_boot_eventlog", PARSES, NULL, NULL },
	{ "go-attestation/crypto_agile_eventlog", PARSES, NULL, NULL },
	/* ebs_event_missing_eventlog: its own test below. */
	{ "go-attestation/linux_tpm12.bin", PARSES, "go-attestation/linux_tpm12.pcrs.json", "json" },
	{ "go-attestation/sb_cert_eventlog", PARSES, "go-attestation/sb_cert_eventlog.pcrs.json", "json" },
	{ "go-attestation/short_no_action_eventlog", PARSES, NULL, NULL },
	{ "go-attestation/ubuntu_2104_shielded_vm_no_secure_boot_eventlog", PARSES, NULL, NULL },
	{ "go-attestation/windows_gcp_shielded_vm.bin", PARSES, "go-attestation/windows_gcp_shielded_vm.pcrs.json", "json" },
	/* ACPI CCEL tables (56 bytes, signature "CCEL"): they point at a log, they are not one. */
	{ "go-eventlog/ccel/CCEL.bin", REJECTED, NULL, NULL },
	{ "go-eventlog/ccel/cos-113-intel-tdx.table.bin", REJECTED, NULL, NULL },
	{ "go-eventlog/ccel/CCEL_unpadded.data.bin", PARSES, NULL, NULL },
	{ "go-eventlog/ccel/cos-113-intel-tdx-dupe-separator-unpadded.bin", PARSES, NULL, NULL },
	{ "go-eventlog/ccel/cos-113-intel-tdx-dupe-separator.bin", PARSES, NULL, NULL },
	{ "go-eventlog/ccel/cos-113-intel-tdx.bin", PARSES, NULL, NULL },
	{ "go-eventlog/ccel/event_log.bin", PARSES, NULL, NULL },
	{ "go-tpm-tools/arch-linux-workstation.bin", PARSES, "go-tpm-tools/arch-linux-workstation.bin.pcrs.json", "json" },
	{ "go-tpm-tools/cos-101-amd-sev.bin", PARSES, "go-tpm-tools/cos-101-amd-sev.bin.pcrs.json", "json" },
	{ "go-tpm-tools/cos-85-amd-sev.bin", PARSES, "go-tpm-tools/cos-85-amd-sev.bin.pcrs.json", "json" },
	{ "go-tpm-tools/debian-10.bin", PARSES, "go-tpm-tools/debian-10.bin.pcrs.json", "json" },
	{ "go-tpm-tools/eventlogwithsp800155.bin", PARSES, "go-tpm-tools/eventlogwithsp800155.bin.pcrs.json", "json" },
	{ "go-tpm-tools/gdc-host.bin", PARSES, "go-tpm-tools/gdc-host.bin.pcrs.json", "json" },
	{ "go-tpm-tools/ubuntu-1804-amd-sev.bin", PARSES, "go-tpm-tools/ubuntu-1804-amd-sev.bin.pcrs.json", "json" },
	{ "go-tpm-tools/ubuntu-2104-no-secure-boot.bin", PARSES, "go-tpm-tools/ubuntu-2104-no-secure-boot.bin.pcrs.json", "json" },
	{ "go-tpm-tools/ubuntu-2404-amd-sevsnp.bin", PARSES, "go-tpm-tools/ubuntu-2404-amd-sevsnp.bin.pcrs.json", "json" },
	{ "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9", PARSES, "ima-evm-utils/sample-tpm-2.0-pcrs-8-9", "tss" },
	{ "ima-evm-utils/test_binary_bios_measurements", PARSES, NULL, NULL },
	{ "keylime-tests/mb_log.bin", PARSES, NULL, NULL },
	{ "keylime-tests/mb_log_secureboot.bin", PARSES, NULL, NULL },
	{ "keylime/create-mb-policy/binary_bios_measurements", PARSES, NULL, NULL },
	{ "keylime/create-mb-policy/binary_bios_measurements-secureboot", PARSES, NULL, NULL },
	{ "keylime/create-mb-policy/binary_bios_measurements-bogus", REJECTED, NULL, NULL },
	{ "keylime/create-mb-policy/binary_bios_measurements-empty", REJECTED, NULL, NULL },
	{ "keylime/mb_log.bin", PARSES, NULL, NULL },
	{ "rust-keylime/uefi_log.bin", PARSES, NULL, NULL },
	{ "sbctl/t14_eventlog", PARSES, NULL, NULL },
	{ "sbctl/t480s_eventlog", PARSES, NULL, NULL },
	{ "tcglog-parser/binary_bios_measurements", PARSES, NULL, NULL },
	{ "tpm2-tools/event-arch-linux.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-bootorder.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-gce-ubuntu-2104-log.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-moklisttrusted.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-postcode.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-sd-boot-fedora37.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-uefi-sha1-log.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-uefiaction.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-uefiservices.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event-uefivar.bin", PARSES, NULL, NULL },
	{ "tpm2-tools/event.bin", PARSES, NULL, NULL },
	/* eventSize 37, but the Spec ID data needs 41 (vendorInfoSize 4): tpm2_eventlog reads past
	 * the event; we refuse. tpm2-tss's copy of the fixture is consistent. */
	{ "tpm2-tools/specid-vendordata.bin", REJECTED, NULL, NULL },
	{ "tpm2-tss/binary_measurements_hcrtm.bin", PARSES, "tpm2-tss/binary_measurements_hcrtm.pcrs.json", "json" },
	{ "tpm2-tss/binary_measurements_nuc.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/binary_measurements_pc_client.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/event-uefiaction.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/event-uefiservices.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/event-uefivar.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/event.bin", PARSES, NULL, NULL },
	{ "tpm2-tss/specid-vendordata.bin", PARSES, NULL, NULL },
};

#define N_LOGS (sizeof(logs) / sizeof(logs[0]))

/* Files in the corpus that are not firmware logs: ground truth, other tools' output, IMA logs. */
static bool not_a_firmware_log(const char *rel)
{
	static const char *const suffixes[] = { ".json", ".txt", ".md", ".b64", ".yaml", ".warn" };
	static const char *const names[] = {
		"go-attestation/ebs_event_missing_eventlog", /* tested on its own */
		"ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9",
		"ima-evm-utils/sample-tpm-2.0-pcrs-8-9",
		"ima-evm-utils/test_ascii_runtime_measurements",
		"rust-keylime/ima/ascii_runtime_measurements",
	};
	size_t i, n = strlen(rel);

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (n > strlen(suffixes[i]) && strcmp(rel + n - strlen(suffixes[i]), suffixes[i]) == 0)
			return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(rel, names[i]) == 0)
			return true;
	if (strncmp(rel, "keylime/ima/", 12) == 0 || strstr(rel, "/sml-"))
		return true;
	return false;
}

static size_t corpus_prefix_len;
static int n_unlisted;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + corpus_prefix_len;
	size_t i;

	if (type != FTW_F || not_a_firmware_log(rel))
		return 0;
	for (i = 0; i < N_LOGS; i++)
		if (strcmp(logs[i].path, rel) == 0)
			return 0;
	fprintf(stderr, "corpus file not covered by a test: %s\n", rel);
	n_unlisted++;
	return 0;
}

/* Nothing in the corpus escapes the table above. */
static void test_every_corpus_file_is_covered(void **state)
{
	char root[4096];

	snprintf(root, sizeof(root), "%s", corpus_path(""));
	corpus_prefix_len = strlen(root);
	n_unlisted = 0;
	assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
	assert_int_equal(n_unlisted, 0);
}

static mb_event_log *load_log(const char *rel, int *ret_rc, mb_error *err)
{
	size_t size;
	uint8_t *bytes = corpus_load(rel, &size);
	mb_event_log *log = NULL;

	if (!bytes) {
		fprintf(stderr, "cannot read %s\n", corpus_path(rel));
		fail();
	}
	*ret_rc = mb_event_log_parse(bytes, size, &log, err);
	free(bytes);
	return log;
}

static void test_parse_or_reject(void **state)
{
	size_t i;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		int rc;
		mb_event_log *log = load_log(logs[i].path, &rc, &err);

		if (logs[i].expect == PARSES) {
			if (rc < 0)
				fprintf(stderr, "%s: %s\n", logs[i].path, err.message);
			assert_int_equal(rc, 0);
			assert_true(mb_event_log_count(log) > 0);
		} else {
			assert_true(rc == -EBADMSG || rc == -E2BIG);
			/* The message says where. */
			assert_true(err.has_offset);
			assert_true(err.message[0] != 0);
		}
		mb_event_log_free(log);
	}
}

/*
 * GRUB's labels are outside the digest, so the policy judges each PCR 8 string by the kind
 * mboot derives from the chain (grub_string_walk_next). On every real log GRUB's own label and
 * the derived kind must agree, or honest boots would be flagged as relabelled.
 */
static void test_grub_labels_derived(void **state)
{
	size_t i, cmdlines = 0, strings = 0;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		int rc;
		mb_event_log *log = load_log(logs[i].path, &rc, &err);
		grub_string_walk walk = { 0 };
		size_t k;

		if (rc < 0)
			continue;
		for (k = 0; k < mb_event_log_count(log); k++) {
			const mb_event *ev = mb_event_log_event(log, k);
			const uint8_t *text;
			size_t len;
			grub_string_kind label, derived;

			if (ev->pcr != 8 || ev->type == MB_EV_NO_ACTION)
				continue;
			label = grub_string_split(ev, &text, &len);
			derived = grub_string_walk_next(&walk, ev);
			if (label != derived) {
				fprintf(stderr, "%s: event %u labelled %d, derived %d\n", logs[i].path, ev->number, label, derived);
				fail();
			}
			strings += label != GRUB_STRING_NONE;
			cmdlines += label == GRUB_STRING_KERNEL_CMDLINE;
		}
		mb_event_log_free(log);
	}
	/* The corpus has real GRUB boots: the test saw their command lines. */
	assert_true(strings > 100);
	assert_true(cmdlines >= 3);
}

/* Compare a replay with ground truth; returns how many values were compared. */
static size_t compare_with_truth(const char *name, const mb_pcr_values *replayed, const mb_replay_info *info,
				 const mb_pcr_values *truth, uint32_t skip_pcrs)
{
	size_t b, compared = 0;

	for (b = 0; b < truth->n_banks; b++) {
		const mb_pcr_bank *t = &truth->banks[b];
		const mb_pcr_bank *r = pcrv_bank_const(replayed, t->alg);
		uint32_t p;

		if (!r) {
			/* A SHA-1 log cannot say anything about the TPM's other banks (PITFALLS #5). */
			fprintf(stderr, "%s: truth has bank 0x%04x, the log does not: not comparable\n", name, t->alg);
			continue;
		}
		for (p = 0; p < MB_PCR_COUNT; p++) {
			uint8_t expect[MB_DIGEST_MAX];
			const uint8_t *got;

			if (!(t->present & (1u << p)) || (skip_pcrs & (1u << p)))
				continue;
			if (r->present & (1u << p)) {
				got = r->value[p];
			} else {
				mb_pcr_initial(t->alg, p, info->startup_locality, info->hcrtm, expect);
				got = expect;
				/* The OS extends PCRs 8+ (IMA: 10) without a firmware log event: not covered. */
				if (p >= 8 && memcmp(got, t->value[p], t->size) != 0) {
					fprintf(stderr, "%s: bank 0x%04x PCR %u: extended outside the firmware log\n",
						name, t->alg, p);
					continue;
				}
			}
			if (memcmp(got, t->value[p], t->size) != 0) {
				fprintf(stderr, "%s: bank 0x%04x PCR %u differs from the real TPM\n", name, t->alg, p);
				fail();
			}
			compared++;
		}
	}
	return compared;
}

static void test_replay_equals_real_pcrs(void **state)
{
	size_t i, n_logs = 0, n_values = 0;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		mb_pcr_values truth, replayed;
		mb_replay_info info;
		mb_event_log *log;
		size_t compared;
		int rc;

		if (!logs[i].truth)
			continue;
		assert_true(truth_load(logs[i].truth, logs[i].truth_kind, &truth));
		log = load_log(logs[i].path, &rc, &err);
		assert_int_equal(rc, 0);
		assert_int_equal(mb_replay_log(log, SIZE_MAX, &replayed, &info, &err), 0);
		compared = compare_with_truth(logs[i].path, &replayed, &info, &truth, 0);
		assert_true(compared > 0);
		n_values += compared;
		n_logs++;
		/* The one-pass replay of the raw bytes (what `mboot log replay` runs) too. */
		{
			const uint8_t *bytes;
			size_t size;

			bytes = mb_event_log_bytes(log, &size);
			memset(&replayed, 0xa5, sizeof(replayed));
			assert_int_equal(mb_replay_log_data(bytes, size, &replayed, &info, &err), 0);
			assert_int_equal(compare_with_truth(logs[i].path, &replayed, &info, &truth, 0), compared);
		}
		mb_event_log_free(log);
	}
	fprintf(stderr, "compared %zu PCR values of %zu real machines\n", n_values, n_logs);
}

/* PFP: the two EV_EFI_ACTION strings of PCR 5 logged around ExitBootServices(). */
static const char *const ebs_strings[] = {
	"Exit Boot Services Invocation",
	"Exit Boot Services Returned with Success",
};

/*
 * go-attestation's ebs_event_missing_eventlog: the firmware extended PCR 5 with the Exit Boot
 * Services events but did not log them. A plain replay must NOT match the real PCR 5, and the log
 * with exactly the missing events added must, which names them.
 */
static void test_missing_exit_boot_services(void **state)
{
	mb_error err = { 0 };
	mb_pcr_values truth, replayed;
	mb_replay_info info;
	mb_event_log *log, *fixed = NULL;
	mb_log_writer *w = NULL;
	const uint8_t *bytes;
	size_t size, i, k, missing = 0;
	int rc;

	assert_true(truth_load("go-attestation/ebs_event_missing_eventlog.pcrs.json", "json", &truth));
	log = load_log("go-attestation/ebs_event_missing_eventlog", &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &replayed, &info, &err), 0);
	for (i = 0; i < truth.n_banks; i++) {
		const mb_pcr_bank *r = pcrv_bank_const(&replayed, truth.banks[i].alg);

		if (!r)
			continue; /* a SHA-1 log: its SHA-256 PCR 5 cannot be checked at all (PITFALLS #5) */
		assert_memory_not_equal(r->value[5], truth.banks[i].value[5], r->size);
	}

	assert_int_equal(mb_log_writer_new(&w), 0);
	for (i = 0; i < mb_event_log_count(log); i++)
		assert_int_equal(mb_log_writer_add_event(w, mb_event_log_event(log, i)), 0);
	for (k = 0; k < 2; k++) {
		bool present = false;

		for (i = 0; i < mb_event_log_count(log); i++) {
			const mb_event *ev = mb_event_log_event(log, i);
			if (ev->pcr == 5 && ev->type == MB_EV_EFI_ACTION && ev->data_size == strlen(ebs_strings[k]) &&
			    memcmp(ev->data, ebs_strings[k], ev->data_size) == 0)
				present = true;
		}
		if (present)
			continue;
		missing++;
		assert_int_equal(mb_log_writer_add_hashed(w, 5, MB_EV_EFI_ACTION, ebs_strings[k], strlen(ebs_strings[k]),
							  ebs_strings[k], strlen(ebs_strings[k])), 0);
	}
	assert_true(missing > 0);
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &fixed, &err), 0);
	assert_int_equal(mb_replay_log(fixed, SIZE_MAX, &replayed, &info, &err), 0);
	assert_true(compare_with_truth("ebs+missing events", &replayed, &info, &truth, 0) >= 1);
	mb_event_log_free(fixed);
	mb_log_writer_free(w);
	mb_event_log_free(log);
}

/* IMA's boot_aggregate (ima-evm-utils): SHA-256 over the SHA-256 bank's PCRs 0-7, or 0-9 on Linux >= 5.8. */
static void check_boot_aggregate(const char *log_rel, const char *ima_rel, uint32_t last_pcr)
{
	mb_error err = { 0 };
	mb_pcr_values replayed;
	mb_replay_info info;
	mb_event_log *log;
	size_t size;
	char *ima = (char *) corpus_load(ima_rel, &size), *p;
	uint8_t cat[10 * 32], agg[32], expect[32];
	const mb_pcr_bank *bank;
	uint32_t i;
	int rc;

	assert_non_null(ima);
	ima[size] = 0;
	p = strstr(ima, "sha256:");
	assert_non_null(p);
	for (i = 0; i < 32; i++) {
		unsigned v;
		assert_int_equal(sscanf(p + 7 + 2 * i, "%2x", &v), 1);
		expect[i] = (uint8_t) v;
	}
	log = load_log(log_rel, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, &replayed, &info, &err), 0);
	bank = pcrv_bank_const(&replayed, MB_ALG_SHA256);
	assert_non_null(bank);
	for (i = 0; i <= last_pcr; i++) {
		if (bank->present & (1u << i))
			memcpy(cat + 32 * i, bank->value[i], 32);
		else
			mb_pcr_initial(MB_ALG_SHA256, i, info.startup_locality, info.hcrtm, cat + 32 * i);
	}
	assert_int_equal(mb_digest(MB_ALG_SHA256, cat, 32 * (last_pcr + 1), agg), 0);
	assert_memory_equal(agg, expect, 32);
	free(ima);
	mb_event_log_free(log);
}

static void test_ima_boot_aggregate(void **state)
{
	check_boot_aggregate("ima-evm-utils/test_binary_bios_measurements",
			     "ima-evm-utils/test_ascii_runtime_measurements", 7);
	check_boot_aggregate("ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9",
			     "ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9", 9);
}

/* Parse + write gives the same bytes (tcglog-parser's ground truth for its log, and ours for all). */
static void test_roundtrip(void **state)
{
	size_t i;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		mb_event_log *log;
		mb_log_writer *w;
		const uint8_t *orig, *out;
		size_t orig_size, out_size, k;
		uint64_t toff = 0;
		int rc;

		if (logs[i].expect != PARSES)
			continue;
		log = load_log(logs[i].path, &rc, &err);
		assert_int_equal(rc, 0);
		assert_int_equal(mb_log_writer_new(&w), 0);
		for (k = 0; k < mb_event_log_count(log); k++)
			assert_int_equal(mb_log_writer_add_event(w, mb_event_log_event(log, k)), 0);
		orig = mb_event_log_bytes(log, &orig_size);
		if (mb_event_log_trailer(log, &toff, NULL) != MB_TRAILER_NONE)
			orig_size = (size_t) toff;
		out = mb_log_writer_data(w, &out_size);
		assert_int_equal(out_size, orig_size);
		assert_memory_equal(out, orig, orig_size);
		mb_log_writer_free(w);
		mb_event_log_free(log);
	}
}

/* Event boundaries of a parsed log: ends[k] = offset just past event k. */
static size_t event_ends(const mb_event_log *log, uint64_t *ends, size_t max)
{
	size_t n = mb_event_log_count(log), i;

	for (i = 0; i < n && i < max; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		ends[i] = ev->offset + ev->record_size;
	}
	return i;
}

typedef struct visit_count {
	size_t n;
	uint64_t offset_sum;
} visit_count;

static int count_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	visit_count *vc = ctx;

	assert_int_equal(ev->number, vc->n);
	assert_null(mb_event_log_event(log, ev->number)); /* a visited log keeps no events */
	vc->n++;
	vc->offset_sum += ev->offset * 31 + ev->record_size + ev->n_digests;
	return 0;
}

static uint64_t vc_offset_sum(const mb_event_log *log)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		sum += ev->offset * 31 + ev->record_size + ev->n_digests;
	}
	return sum;
}

/*
 * mb_replay_log_data() (one pass over the bytes, no event array) must accept exactly what
 * mb_event_log_parse() accepts, fail with the same error at the same offset, and replay to
 * the same values as mb_replay_log() on the parsed log.
 */
static void same_as_one_pass(const mb_event_log *log, int parse_rc, const mb_error *perr,
			     const uint8_t *bytes, size_t size)
{
	mb_pcr_values *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	mb_replay_info ia, ib;
	mb_error e1 = { 0 }, e2 = { 0 };
	int rc;

	assert_non_null(a);
	assert_non_null(b);
	/* mb_event_log_visit() (what both run on) sees the same events, each once, in order. */
	{
		visit_count vc = { 0 };
		mb_error e3 = { 0 };

		rc = mb_event_log_visit(bytes, size, count_event, &vc, &e3);
		assert_int_equal(rc, parse_rc);
		if (rc == 0) {
			assert_int_equal(vc.n, mb_event_log_count(log));
			assert_int_equal(vc.offset_sum, vc_offset_sum(log));
		} else {
			assert_int_equal(e3.offset, perr->offset);
			assert_string_equal(e3.message, perr->message);
		}
	}
	rc = mb_replay_log_data(bytes, size, b, &ib, &e2);
	if (parse_rc < 0) {
		assert_int_equal(rc, parse_rc);
		assert_int_equal(e2.has_offset, perr->has_offset);
		assert_int_equal(e2.offset, perr->offset);
		assert_string_equal(e2.message, perr->message);
	} else {
		assert_int_equal(rc, 0);
		assert_int_equal(mb_replay_log(log, SIZE_MAX, a, &ia, &e1), 0);
		assert_int_equal(a->n_banks, b->n_banks);
		assert_memory_equal(a->banks, b->banks, a->n_banks * sizeof(a->banks[0]));
		/* The info's lists are each replay's values' own, and the same. */
		assert_ptr_equal(ia.incomplete, a->incomplete);
		assert_ptr_equal(ib.incomplete, b->incomplete);
		assert_ptr_equal(ib.unknown_algs, b->unknown_algs);
		assert_memory_equal(a->incomplete, b->incomplete, sizeof(a->incomplete));
		assert_memory_equal(a->unknown_algs, b->unknown_algs, sizeof(a->unknown_algs));
		ib.incomplete = ia.incomplete;
		ib.unknown_algs = ia.unknown_algs;
		assert_memory_equal(&ia, &ib, sizeof(ia));
	}
	free(a);
	free(b);
}

/*
 * Cut every log at every offset: a cut at an event boundary is a shorter valid log with exactly
 * the events before it; a cut inside an event is an error naming an offset inside the input
 * (or, when the cut leaves only zero bytes of a record, a log whose tail is padding).
 */
static void test_truncated_everywhere(void **state)
{
	size_t i, total = 0;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		mb_event_log *log;
		const uint8_t *bytes;
		uint64_t *ends, toff = 0;
		size_t size, n_ends, cut, k;
		int rc;

		if (logs[i].expect != PARSES)
			continue;
		log = load_log(logs[i].path, &rc, &err);
		assert_int_equal(rc, 0);
		bytes = mb_event_log_bytes(log, &size);
		if (mb_event_log_trailer(log, &toff, NULL) != MB_TRAILER_NONE)
			size = (size_t) toff;
		ends = calloc(mb_event_log_count(log), sizeof(*ends));
		assert_non_null(ends);
		n_ends = event_ends(log, ends, mb_event_log_count(log));
		k = 0;
		for (cut = 0; cut < size; cut++) {
			mb_event_log *part = NULL;
			mb_error perr = { 0 };
			size_t complete;

			while (k < n_ends && ends[k] <= cut)
				k++;
			complete = k; /* events wholly before the cut */
			rc = mb_event_log_parse(bytes, cut, &part, &perr);
			if (cut % 7 == 0)
				same_as_one_pass(part, rc, &perr, bytes, cut);
			if (rc == 0) {
				uint64_t pt;
				size_t got = mb_event_log_count(part);

				/* Only whole events, and any cut record must be all padding bytes. */
				assert_int_equal(got, complete);
				if (complete == 0 || ends[complete - 1] != cut) {
					assert_int_not_equal(mb_event_log_trailer(part, &pt, NULL), MB_TRAILER_NONE);
					assert_int_equal(pt, ends[complete - 1]);
				}
				mb_event_log_free(part);
			} else {
				assert_int_equal(rc, -EBADMSG);
				assert_true(perr.has_offset);
				assert_true(perr.offset <= cut);
				assert_true(cut == 0 || complete == 0 || ends[complete - 1] != cut ||
					    complete < 1); /* a boundary cut must parse, except the empty log */
			}
			total++;
		}
		free(ends);
		mb_event_log_free(log);
	}
	fprintf(stderr, "parsed %zu truncated logs\n", total);
}

/* One bit flipped per position (bit = offset mod 8): parse, replay, decode and check whatever parses. */
static void test_bit_flips(void **state)
{
	size_t i, parsed = 0, rejected = 0;

	for (i = 0; i < N_LOGS; i++) {
		mb_error err = { 0 };
		mb_event_log *log;
		const uint8_t *orig;
		uint8_t *copy;
		size_t size, off, step;
		int rc;

		if (logs[i].expect != PARSES)
			continue;
		log = load_log(logs[i].path, &rc, &err);
		assert_int_equal(rc, 0);
		orig = mb_event_log_bytes(log, &size);
		{
			uint64_t toff;
			/* Flipping bits of a 0xFF padding tail only makes the tail garbage: a few are enough. */
			if (mb_event_log_trailer(log, &toff, NULL) != MB_TRAILER_NONE && toff + 64 < size)
				size = (size_t) toff + 64;
		}
		copy = malloc(size);
		assert_non_null(copy);
		memcpy(copy, orig, size);
		step = size > 8192 ? 3 : 1;
		for (off = 0; off < size; off += (off < 4096 ? 1 : step)) {
			mb_event_log *m = NULL;
			mb_error merr = { 0 };

			copy[off] ^= (uint8_t) (1u << (off % 8));
			rc = mb_event_log_parse(copy, size, &m, &merr);
			if (off % 16 == 0)
				same_as_one_pass(m, rc, &merr, copy, size);
			if (rc == 0) {
				mb_pcr_values v;
				size_t e;

				/* Replay hashes every event: sample it; decode the event the flip landed in. */
				if (off % 16 == 0)
					assert_int_equal(mb_replay_log(m, SIZE_MAX, &v, NULL, &merr), 0);
				for (e = 0; e < mb_event_log_count(m); e++) {
					mb_digest_check c;
					const mb_event *ev = mb_event_log_event(m, e);

					/* Decoding builds a tree (signature lists hold hundreds of entries): sample it. */
					if (off < ev->offset || off >= ev->offset + ev->record_size || off % 8 != 0)
						continue;

					assert_int_equal(mb_event_check_digest(ev, &c), 0);
					{
						mb_event_decoded *d = mb_event_decoded_new();

						assert_non_null(d);
						assert_int_equal(mb_event_decode(m, ev, d), 0);
						assert_non_null(mb_event_decoded_root(d));
						mb_event_decoded_free(d);
					}
				}
				mb_event_log_free(m);
				parsed++;
			} else {
				assert_true(rc == -EBADMSG || rc == -E2BIG);
				assert_true(merr.message[0] != 0);
				rejected++;
			}
			copy[off] ^= (uint8_t) (1u << (off % 8));
		}
		free(copy);
		mb_event_log_free(log);
	}
	fprintf(stderr, "bit flips: %zu still valid logs, %zu rejected\n", parsed, rejected);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_corpus_file_is_covered),
		cmocka_unit_test(test_parse_or_reject),
		cmocka_unit_test(test_grub_labels_derived),
		cmocka_unit_test(test_replay_equals_real_pcrs),
		cmocka_unit_test(test_missing_exit_boot_services),
		cmocka_unit_test(test_ima_boot_aggregate),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_bit_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
