/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `mboot unseal --json`'s document (mb_unseal_explanation_to_json) for an explanation built
 * here item by item: every kind, the lists in the order their first item comes, null for a
 * PCR not read, errors left out, wrong_pin last. Digests are the FIPS 180 ones of "abc";
 * a TPM name is 34 bytes (TPMI_ALG_HASH and a SHA-256 digest, TPM 2.0 Part 1, 16);
 * the layouts are those json.dumps(separators=(",", ":")) and json.dumps(indent=2) print.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>

static const uint8_t abc_sha256[32] = {
	0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
	0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
};
static const uint8_t abc_sha1[20] = {
	0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
	0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d,
};

static void test_every_kind(void **state)
{
	mb_unseal_item it[7];
	mb_unseal_explanation e = { .items = it, .n_items = 7 };
	char *text;

	(void) state;
	memset(it, 0, sizeof(it));
	it[0] = (mb_unseal_item) { .kind = MB_UNSEAL_NOTE, .text = "Not unsealed: \"why\"." };
	it[1] = (mb_unseal_item) { .kind = MB_UNSEAL_OTHER_KEY, .signature = "a.sig" };
	memset(it[1].key_name, 0x11, MB_TPM_NAME_SIZE);
	memset(it[1].sealed_key_name, 0xee, MB_TPM_NAME_SIZE);
	it[2] = (mb_unseal_item) { .kind = MB_UNSEAL_PCR, .pcr = 7, .alg = MB_ALG_SHA256, .now_read = false,
				   .signature = "b.sig" };
	memcpy(it[2].expected, abc_sha256, 32);
	it[3] = (mb_unseal_item) { .kind = MB_UNSEAL_ERROR, .what = "log", .error = { .code = -5 } };
	it[4] = (mb_unseal_item) { .kind = MB_UNSEAL_EVENT, .pcr = 8, .change = "removed", .before = "#3 EV_IPL: x" };
	it[5] = (mb_unseal_item) { .kind = MB_UNSEAL_PCR, .pcr = 0, .alg = MB_ALG_SHA1, .now_read = true };
	memcpy(it[5].expected, abc_sha1, 20);
	memset(it[5].now, 0, 20);
	it[6] = (mb_unseal_item) { .kind = MB_UNSEAL_NOTE, .text = "second" };
	text = mb_unseal_explanation_to_json(&e, true, false);
	assert_non_null(text);
	assert_string_equal(text,
		"{\"unsealed\":false,\"notes\":[\"Not unsealed: \\\"why\\\".\",\"second\"],"
		"\"signatures\":[{\"file\":\"a.sig\","
		"\"key\":\"11111111111111111111111111111111111111111111111111111111111111111111\","
		"\"sealed_key\":\"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\"}],"
		"\"pcrs\":[{\"pcr\":7,\"bank\":\"sha256\","
		"\"expected\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\",\"actual\":null,"
		"\"signature\":\"b.sig\"},{\"pcr\":0,\"bank\":\"sha1\","
		"\"expected\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
		"\"actual\":\"0000000000000000000000000000000000000000\"}],"
		"\"events\":[{\"pcr\":8,\"change\":\"removed\",\"before\":\"#3 EV_IPL: x\"}],\"wrong_pin\":true}");
	free(text);
}

static void test_empty(void **state)
{
	char *text;

	(void) state;
	text = mb_unseal_explanation_to_json(NULL, false, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"unsealed\": false\n}");
	free(text);
	text = mb_unseal_explanation_to_json(NULL, true, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"unsealed\": false,\n  \"wrong_pin\": true\n}");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
