/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PCR-values reader (`--pcrs FILE`): the real files of tests/data/corpus read to the same
 * values json-c reads from them (corpus-util, not mboot's reader), tpm2_pcrread YAML as
 * tpm2-tools printed it, and hostile input (truncated, oversized, binary, deep, duplicated,
 * trailing garbage) refused with a message and no crash.
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

static const char *const json_files[] = {
	"fwupd/binary_bios_measurements-v2.pcrs.json",
	"go-tpm-tools/arch-linux-workstation.bin.pcrs.json",
	"go-attestation/linux_tpm12.pcrs.json",
	"tpm2-tss/binary_measurements_hcrtm.pcrs.json",
};

static void same_values(const mb_pcr_values *x, const mb_pcr_values *y)
{
	size_t b;
	uint32_t p;

	assert_int_equal(x->n_banks, y->n_banks);
	for (b = 0; b < x->n_banks; b++) {
		const mb_pcr_bank *bx = &x->banks[b], *by = pcrv_bank_const(y, bx->alg);

		assert_non_null(by);
		assert_int_equal(bx->present, by->present);
		for (p = 0; p < MB_PCR_COUNT; p++)
			if (bx->present & (1u << p))
				assert_memory_equal(bx->value[p], by->value[p], bx->size);
	}
}

static void test_real_json(void **state)
{
	size_t i, size;

	(void) state;
	for (i = 0; i < sizeof(json_files) / sizeof(json_files[0]); i++) {
		uint8_t *text = corpus_load(json_files[i], &size);
		mb_pcr_values v, truth;
		mb_error err = { 0 };

		assert_non_null(text);
		assert_true(truth_load(json_files[i], "json", &truth));
		assert_int_equal(mb_pcr_values_parse((const char *) text, size, &v, &err), 0);
		same_values(&v, &truth);
		free(text);
	}
}

/* The accessors new code uses: what a corpus file holds reads back through them, and bad sets are refused. */
static void test_accessors(void **state)
{
	size_t size, b;
	uint8_t *text = corpus_load(json_files[0], &size);
	mb_pcr_values *v = mb_pcr_values_new(), *copy = mb_pcr_values_new(), truth;
	uint8_t d[MB_DIGEST_MAX] = { 0 };
	mb_error err = { 0 };
	uint32_t p;

	(void) state;
	assert_non_null(text);
	assert_non_null(v);
	assert_non_null(copy);
	assert_true(truth_load(json_files[0], "json", &truth));
	assert_int_equal(mb_pcr_values_parse((const char *) text, size, v, &err), 0);
	assert_int_equal(mb_pcr_values_n_banks(v), truth.n_banks);
	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		const mb_pcr_bank *t = pcrv_bank_const(&truth, alg);

		assert_non_null(t);
		assert_int_equal(mb_pcr_values_present(v, alg), t->present);
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *got = mb_pcr_values_get(v, alg, p);

			if (!(t->present & (1u << p))) {
				assert_null(got);
				continue;
			}
			assert_non_null(got);
			assert_memory_equal(got, t->value[p], t->size);
			assert_int_equal(mb_pcr_values_set(copy, alg, p, got, t->size, &err), 0);
		}
	}
	same_values(copy, &truth);
	assert_null(mb_pcr_values_get(v, 0x0012 /* sm3_256: not in the file */, 0));
	assert_int_equal(mb_pcr_values_present(v, 0x0012), 0);
	assert_true(mb_pcr_values_present(copy, 0x000b) & 1u);
	assert_int_equal(mb_pcr_values_set(copy, 0x000b, 0, d, 32, &err), -EEXIST);
	assert_int_equal(mb_pcr_values_set(copy, 0x000b, 24, d, 32, &err), -EINVAL);
	assert_int_equal(mb_pcr_values_set(copy, 0x000b, 23, d, 20, &err), -EINVAL);
	assert_int_equal(mb_pcr_values_set(copy, 0x7777, 0, d, 32, &err), -EOPNOTSUPP);
	mb_pcr_values_free(v);
	mb_pcr_values_free(copy);
	free(text);
}

/*
 * A bank copied out (what the sealing API takes) and a bank removed (log replay --bank):
 * tpm2-tools' file has sha1 and sha256; the values are transcribed from it.
 */
static void test_bank_copy_and_remove(void **state)
{
	size_t size;
	uint8_t *text = corpus_load("tpm2-tools/expected/event-raw/event-bootorder.bin.yaml", &size);
	const char *pcrs;
	mb_pcr_values *v = mb_pcr_values_new();
	mb_pcr_bank bank;
	char hex[2 * MB_DIGEST_MAX + 1];

	(void) state;
	assert_non_null(text);
	assert_non_null(v);
	pcrs = strstr((const char *) text, "\npcrs:\n");
	assert_non_null(pcrs);
	assert_int_equal(mb_pcr_values_parse(pcrs, size - (size_t) (pcrs - (const char *) text), v, NULL), 0);
	assert_int_equal(mb_pcr_values_get_bank(v, MB_ALG_SHA256, &bank), 0);
	assert_int_equal(bank.alg, MB_ALG_SHA256);
	assert_int_equal(bank.size, 32);
	assert_int_equal(bank.present, 0x3ff);
	assert_string_equal(hex_format(bank.value[9], 32, hex), "d734aa05ed0dfe770bcf88e0ff26113bb3aab42e2e8b8f287aa84aee86acefa1");
	assert_int_equal(mb_pcr_values_get_bank(v, MB_ALG_SHA384, &bank), -ENOENT);
	assert_int_equal(bank.present, 0);

	assert_int_equal(mb_pcr_values_n_banks(v), 2);
	assert_int_equal(mb_pcr_values_bank_alg(v, 0), MB_ALG_SHA1);
	assert_int_equal(mb_pcr_values_remove_bank(v, MB_ALG_SHA384), -ENOENT);
	assert_int_equal(mb_pcr_values_remove_bank(v, MB_ALG_SHA1), 0);
	assert_int_equal(mb_pcr_values_n_banks(v), 1);
	/* The bank left is sha256, whole. */
	assert_int_equal(mb_pcr_values_bank_alg(v, 0), MB_ALG_SHA256);
	assert_int_equal(mb_pcr_values_present(v, MB_ALG_SHA256), 0x3ff);
	assert_null(mb_pcr_values_get(v, MB_ALG_SHA1, 8));
	assert_int_equal(mb_pcr_values_remove_bank(v, mb_pcr_values_bank_alg(v, 0)), 0);
	assert_int_equal(mb_pcr_values_n_banks(v), 0);
	assert_null(mb_pcr_values_get(v, MB_ALG_SHA256, 9));
	assert_null(mb_pcr_values_get(v, MB_ALG_SHA1, 8));
	mb_pcr_values_free(v);
	free(text);
}

static void test_real_yaml(void **state)
{
	size_t size;
	uint8_t *text = corpus_load("tpm2-tools/expected/event-raw/event-bootorder.bin.yaml", &size);
	const char *pcrs;
	mb_pcr_values v;
	mb_error err = { 0 };
	const mb_pcr_bank *b;
	char hex[2 * MB_DIGEST_MAX + 1];

	(void) state;
	assert_non_null(text);
	/* The "pcrs:" section tpm2_eventlog printed, which has tpm2_pcrread's shape. */
	pcrs = strstr((const char *) text, "\npcrs:\n");
	assert_non_null(pcrs);
	assert_int_equal(mb_pcr_values_parse(pcrs, size - (size_t) (pcrs - (const char *) text), &v, &err), 0);
	assert_int_equal(v.n_banks, 2);
	b = pcrv_bank_const(&v, MB_ALG_SHA256);
	assert_non_null(b);
	assert_int_equal(b->present, 0x3ff);
	/* Transcribed from tpm2-tools' file. */
	assert_string_equal(hex_format(b->value[0], 32, hex), "804c3cb76b471627372c8e5ebd068d1f8f8af088af43dc9de620af652f11116f");
	assert_string_equal(hex_format(b->value[9], 32, hex), "d734aa05ed0dfe770bcf88e0ff26113bb3aab42e2e8b8f287aa84aee86acefa1");
	b = pcrv_bank_const(&v, MB_ALG_SHA1);
	assert_non_null(b);
	assert_string_equal(hex_format(b->value[8], 20, hex), "43aaff1eb3b4ec57d1a5c1427f6ae4748fe40cd8");
	free(text);
}

/* Refused with code want (0: any negative) and a message. */
static void refused_n(const char *text, size_t size, int want)
{
	mb_pcr_values v;
	mb_error err = { 0 };
	int rc = mb_pcr_values_parse(text, size, &v, &err);

	if (rc >= 0)
		fprintf(stderr, "accepted: %.80s\n", text);
	assert_true(rc < 0);
	if (want)
		assert_int_equal(rc, want);
	assert_true(err.message[0] != 0);
}

static void refused(const char *text, int want)
{
	refused_n(text, strlen(text), want);
}

#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"
#define Z40 "0000000000000000000000000000000000000000"

static void test_hostile_json(void **state)
{
	char *deep;
	size_t i;

	(void) state;
	refused("", -EBADMSG);
	refused("   \n", -EBADMSG);
	refused("{", -EBADMSG);
	refused("{}", -EBADMSG);
	refused("{\"banks\": []}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": []}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"24\": \"" Z64 "\"}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"-1\": \"" Z64 "\"}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"007\": \"" Z64 "\"}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"0\": 0}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"0\": \"" Z40 "\"}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"0\": \"" Z64 "00\"}}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"0\": \"zz" Z64 "\"}}}", -EBADMSG);
	refused("{\"banks\": {\"md5\": {\"0\": \"00000000000000000000000000000000\"}}}", -EOPNOTSUPP);
	/* No value at all is not a PCR-values file, in JSON as in YAML. */
	refused("{\"banks\": {}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {}}}", -EBADMSG);
	/* Whatever follows the document is not ignored. */
	refused("{\"banks\": {\"sha256\": {\"0\": \"" Z64 "\"}}} {\"banks\": {}}", -EBADMSG);
	refused("{\"banks\": {\"sha256\": {\"0\": \"" Z64 "\"}}}x", -EBADMSG);
	/* A NUL anywhere. */
	refused_n("{\"banks\": {\"sha1\": {\"0\": \"" Z40 "\"}}}\0", 32 + 40 + 6, -EBADMSG);
	/* Deep nesting stops at the tokener's depth, not the stack's. */
	deep = malloc(200002);
	assert_non_null(deep);
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	deep[0] = '{';
	deep[200000] = 0;
	refused(deep, -EBADMSG);
	free(deep);
	/* Every cut of a real file is refused (JSON is complete only at its last brace). */
	{
		size_t size;
		uint8_t *text = corpus_load(json_files[0], &size);
		mb_pcr_values v;

		assert_non_null(text);
		while (size > 0 && (text[size - 1] == '\n' || text[size - 1] == ' '))
			size--;
		for (i = 1; i < size; i++)
			refused_n((const char *) text, i, 0);
		assert_int_equal(mb_pcr_values_parse((const char *) text, size, &v, NULL), 0);
		free(text);
	}
}

static void test_hostile_yaml(void **state)
{
	size_t size, i, n_ok = 0;
	uint8_t *text;

	(void) state;
	refused("sha256:\n  0 : 0x" Z64 "\n  0 : 0x" Z64 "\n", -EBADMSG);
	refused("  0 : 0x" Z64 "\n", -EBADMSG);
	refused("sha256:\n  24 : 0x" Z64 "\n", -EBADMSG);
	refused("sha256:\n  0 : 0x" Z40 "\n", -EBADMSG);
	refused("sha256:\n  0 0x" Z64 "\n", -EBADMSG);
	refused("averyveryverylongbankname:\n  0 : 0x00\n", -EBADMSG);
	refused(":\n  0 : 0x00\n", -EBADMSG);
	refused("md5:\n  0 : 0x00000000000000000000000000000000\n", -EOPNOTSUPP);
	refused("sha256:\n", -EBADMSG);
	refused("# nothing\n\n", -EBADMSG);
	/* Every cut of tpm2-tools' output: read (fewer values) or refused, never a crash. */
	text = corpus_load("tpm2-tools/expected/event-raw/event-bootorder.bin.yaml", &size);
	assert_non_null(text);
	{
		const char *pcrs = strstr((const char *) text, "\npcrs:\n");
		size_t n = size - (size_t) (pcrs - (const char *) text);

		for (i = 1; i <= n; i++) {
			mb_pcr_values v;
			mb_error err = { 0 };

			if (mb_pcr_values_parse(pcrs, i, &v, &err) == 0)
				n_ok++;
			else
				assert_true(err.message[0] != 0);
		}
	}
	assert_true(n_ok > 0);
	free(text);
}

static void test_oversized_and_binary(void **state)
{
	size_t size, i;
	char *big = malloc((1u << 20) + 2);
	uint8_t *bin;
	static const char *const binaries[] = {
		"ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9",
		"tpm2-tools/event-bootorder.bin",
	};

	(void) state;
	assert_non_null(big);
	/* 1 MiB is the cap: one byte more is refused before parsing. */
	memset(big, ' ', (1u << 20) + 1);
	memcpy(big, "sha1:\n  0 : 0x" Z40 "\n", 14 + 40 + 1);
	refused_n(big, (1u << 20) + 1, -E2BIG);
	{
		mb_pcr_values v;

		assert_int_equal(mb_pcr_values_parse(big, 1u << 20, &v, NULL), 0);
	}
	free(big);
	for (i = 0; i < sizeof(binaries) / sizeof(binaries[0]); i++) {
		bin = corpus_load(binaries[i], &size);
		assert_non_null(bin);
		refused_n((const char *) bin, size, -EBADMSG);
		free(bin);
	}
}

/*
 * The text every mboot output of PCR values prints (pcrs, log replay, predict): tpm2_pcrread's
 * layout byte for byte, as tpm2-tools 5 prints it ("  sha1:\n    9 : 0x...\n    10: 0x..."),
 * no heading for a bank without values, and it reads back to the same values.
 */
static void test_text_layout(void **state)
{
	static const char want[] =
		"  sha256:\n"
		"    0 : 0x00000000000000000000000000000000000000000000000000000000000000AB\n"
		"    10: 0xFF00000000000000000000000000000000000000000000000000000000000001\n"
		"  sha1:\n"
		"    7 : 0x0102030405060708090A0B0C0D0E0F1011121314\n";
	mb_pcr_values v = { 0 }, back;
	uint8_t d[MB_DIGEST_MAX] = { 0 };
	mb_error err = { 0 };
	char *text;
	size_t i;

	(void) state;
	d[31] = 0xab;
	assert_int_equal(mb_pcr_values_set(&v, MB_ALG_SHA256, 0, d, 32, NULL), 0);
	memset(d, 0, sizeof(d));
	d[0] = 0xff;
	d[31] = 1;
	assert_int_equal(mb_pcr_values_set(&v, MB_ALG_SHA256, 10, d, 32, NULL), 0);
	/* A bank with no value (a log bank nothing extended, a TPM bank outside --pcr). */
	v.banks[v.n_banks].alg = MB_ALG_SHA384;
	v.banks[v.n_banks++].size = 48;
	for (i = 0; i < 20; i++)
		d[i] = (uint8_t) (i + 1);
	assert_int_equal(mb_pcr_values_set(&v, MB_ALG_SHA1, 7, d, 20, NULL), 0);
	text = mb_pcr_values_to_text(&v);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(mb_pcr_values_parse(text, strlen(text), &back, &err), 0);
	assert_int_equal(back.n_banks, 2);
	assert_int_equal(mb_pcr_values_present(&back, MB_ALG_SHA256), (1u << 0) | (1u << 10));
	assert_int_equal(mb_pcr_values_present(&back, MB_ALG_SHA1), 1u << 7);
	assert_memory_equal(mb_pcr_values_get(&back, MB_ALG_SHA1, 7), d, 20);
	free(text);

	/* Only empty banks: nothing at all, not a heading. */
	v.n_banks = 1;
	v.banks[0].alg = MB_ALG_SHA384;
	v.banks[0].size = 48;
	v.banks[0].present = 0;
	text = mb_pcr_values_to_text(&v);
	assert_non_null(text);
	assert_string_equal(text, "");
	free(text);
}

/* The real files, printed as text, read back to the same values. */
static void test_text_round_trip(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(json_files) / sizeof(json_files[0]); i++) {
		mb_pcr_values truth, back;
		mb_error err = { 0 };
		char *text;

		assert_true(truth_load(json_files[i], "json", &truth));
		text = mb_pcr_values_to_text(&truth);
		assert_non_null(text);
		assert_int_equal(mb_pcr_values_parse(text, strlen(text), &back, &err), 0);
		same_values(&back, &truth);
		free(text);
	}
}

/*
 * tpm2_pcrread -o: digests only, bank by bank in selection order, PCRs ascending. Here
 * sha256:7,0+sha1:3 written by hand: sha256 PCR 0 (bytes 0x00..), PCR 7 (0x20..), sha1 PCR 3.
 */
static void test_digests(void **state)
{
	uint8_t file[32 + 32 + 20 + 1];
	uint16_t algs[] = { MB_ALG_SHA256, MB_ALG_SHA1, MB_ALG_SHA256 };
	uint32_t pcrs[] = { (1u << 7) | 1u, 1u << 3, 1u << 1 };
	mb_pcr_values v;
	mb_error err = { 0 };
	char *text;
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(file); i++)
		file[i] = (uint8_t) i;
	assert_int_equal(mb_pcr_values_parse_digests(file, 84, algs, pcrs, 2, &v, &err), 0);
	assert_int_equal(v.n_banks, 2);
	assert_int_equal(mb_pcr_values_bank_alg(&v, 0), MB_ALG_SHA256);
	assert_int_equal(mb_pcr_values_present(&v, MB_ALG_SHA256), 0x81);
	assert_memory_equal(mb_pcr_values_get(&v, MB_ALG_SHA256, 0), file, 32);
	assert_memory_equal(mb_pcr_values_get(&v, MB_ALG_SHA256, 7), file + 32, 32);
	assert_int_equal(mb_pcr_values_present(&v, MB_ALG_SHA1), 1u << 3);
	assert_memory_equal(mb_pcr_values_get(&v, MB_ALG_SHA1, 3), file + 64, 20);
	text = mb_pcr_values_to_text(&v);
	assert_non_null(text);
	assert_non_null(strstr(text, "  sha1:\n    3 : 0x404142434445464748494A4B4C4D4E4F50515253\n"));
	free(text);

	/* A size that is not the selection's: short, long, empty. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(mb_pcr_values_parse_digests(file, 83, algs, pcrs, 2, &v, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "83 bytes"));
	assert_non_null(strstr(err.message, "takes 84"));
	assert_int_equal(mb_pcr_values_parse_digests(file, 85, algs, pcrs, 2, &v, &err), -EBADMSG);
	assert_int_equal(mb_pcr_values_parse_digests(file, 0, algs, pcrs, 2, &v, &err), -EBADMSG);
	/* A bank named twice, no PCR, a PCR above 23, an unknown bank, no bank, too many. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(mb_pcr_values_parse_digests(file, 84 + 32, algs, pcrs, 3, &v, &err), -EINVAL);
	assert_non_null(strstr(err.message, "twice"));
	pcrs[1] = 0;
	assert_int_equal(mb_pcr_values_parse_digests(file, 64, algs, pcrs, 2, &v, &err), -EINVAL);
	pcrs[1] = 1u << 24;
	assert_int_equal(mb_pcr_values_parse_digests(file, 84, algs, pcrs, 2, &v, &err), -EINVAL);
	pcrs[1] = 1u << 3;
	algs[1] = 0x1234;
	assert_int_equal(mb_pcr_values_parse_digests(file, 84, algs, pcrs, 2, &v, &err), -EOPNOTSUPP);
	assert_int_equal(mb_pcr_values_parse_digests(file, 0, algs, pcrs, 0, &v, &err), -EINVAL);
	assert_int_equal(mb_pcr_values_parse_digests(file, 84, algs, pcrs, MB_MAX_BANKS + 1, &v, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_json),
		cmocka_unit_test(test_real_yaml),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_bank_copy_and_remove),
		cmocka_unit_test(test_hostile_json),
		cmocka_unit_test(test_hostile_yaml),
		cmocka_unit_test(test_oversized_and_binary),
		cmocka_unit_test(test_text_layout),
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_digests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
