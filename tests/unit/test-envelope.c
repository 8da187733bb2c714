/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Envelopes (mboot/envelope.h) without a TPM. The AES-256-GCM core against the known
 * answers of the GCM specification (McGrew & Viega, test cases 13, 14 and 16: AES-256);
 * an envelope around a sealed file of fuzz/corpus/sealed, written, parsed and opened, and
 * decrypted independently here with OpenSSL from the JSON fields and the AAD docs/ssh.md
 * gives; then hostile files (every field changed or broken, every truncation) are refused
 * and nothing unauthenticated is handed out.
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

#include "shared/json.h"
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"
#include "lib/seal/envelope-internal.h"

static uint8_t *unhex(const char *s, size_t *n)
{
	long len = 0;
	uint8_t *p = OPENSSL_hexstr2buf(s, &len);

	assert_non_null(p);
	*n = (size_t) len;
	return p;
}

/* One test case: key, IV, plaintext, AAD (hex, "" for none), and the expected C and T. */
static void gcm_case(const char *k, const char *iv, const char *p, const char *a, const char *c, const char *t)
{
	size_t nk, niv, np = 0, na = 0, nc = 0, nt;
	uint8_t *key = unhex(k, &nk), *nonce = unhex(iv, &niv), *pt = *p ? unhex(p, &np) : NULL;
	uint8_t *aad = *a ? unhex(a, &na) : NULL, *ct = *c ? unhex(c, &nc) : NULL, *tag = unhex(t, &nt);
	uint8_t out[128], back[128], got[MB_ENVELOPE_TAG_SIZE];

	assert_int_equal(nk, 32);
	assert_int_equal(niv, 12);
	assert_int_equal(nt, 16);
	assert_int_equal(envelope_gcm(true, key, nonce, aad ? aad : (const uint8_t *) "", na, NULL, 0, pt, np, out, got), 0);
	assert_memory_equal(got, tag, 16);
	if (np)
		assert_memory_equal(out, ct, nc);
	assert_int_equal(envelope_gcm(false, key, nonce, aad ? aad : (const uint8_t *) "", na, NULL, 0, out, np, back, got), 0);
	if (np)
		assert_memory_equal(back, pt, np);
	/* one bit of the tag: refused, and the output wiped */
	got[15] ^= 1;
	assert_int_equal(envelope_gcm(false, key, nonce, aad ? aad : (const uint8_t *) "", na, NULL, 0, out, np, back, got),
			 -EBADMSG);
	for (size_t i = 0; i < np; i++)
		assert_int_equal(back[i], 0);
	OPENSSL_free(key);
	OPENSSL_free(nonce);
	OPENSSL_free(pt);
	OPENSSL_free(aad);
	OPENSSL_free(ct);
	OPENSSL_free(tag);
}

static void test_gcm_known_answers(void **state)
{
	static const char z32[] = "0000000000000000000000000000000000000000000000000000000000000000";
	static const char z12[] = "000000000000000000000000";

	(void) state;
	gcm_case(z32, z12, "", "", "", "530f8afbc74536b9a963b4f1c4cb738b");
	gcm_case(z32, z12, "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18",
		 "d0d1c8a799996bf0265b98b5d48ab919");
	gcm_case("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
		 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5"
		 "aa0de657ba637b39",
		 "feedfacedeadbeeffeedfacedeadbeefabaddad2",
		 "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e63"
		 "93ba7a0abcc9f662",
		 "76fc6ece0f4e1768cddf8853bb2d551b");
}

static const char label[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOk06mWhEn+Vap7RgKkTWTHqz49Nt2RKF/GsZ1LJn2AI root@test";
static uint8_t key[MB_ENVELOPE_KEY_SIZE], nonce[MB_ENVELOPE_NONCE_SIZE], data[3000];

static mb_sealed *corpus_sealed(void)
{
	const char *root = getenv("MB_SOURCE_ROOT");
	char path[1024];
	uint8_t *buf = NULL;
	size_t size = 0;
	mb_error err = { 0 };
	mb_sealed *s = NULL;

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/fuzz/corpus/sealed/pcr-0-7.json", root);
	if (file_read(path, 1u << 20, &buf, &size, &err) < 0)
		fail_msg("%s: %s", path, err.message);
	if (mb_sealed_parse((const char *) buf, size, &s, &err) < 0)
		fail_msg("%s: %s", path, err.message);
	free(buf);
	return s;
}

/* The envelope's JSON text, from envelope_make with the fixed key, nonce and data above. */
static char *make_text(const char *lbl)
{
	mb_sealed *s = corpus_sealed();
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	char *json;

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t) (0xa0 + i);
	for (size_t i = 0; i < sizeof(nonce); i++)
		nonce[i] = (uint8_t) (0x10 + i);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t) (i * 7 + 3);
	if (envelope_make(&s, key, nonce, data, sizeof(data), lbl, &e, &err) < 0)
		fail_msg("envelope_make: %s", err.message);
	assert_null(s);
	json = mb_envelope_to_json(e);
	assert_non_null(json);
	mb_envelope_free(e);
	return json;
}

static json_t *field(json_t *o, const char *k)
{
	json_t *v = NULL;

	assert_true(((v = json_object_get(o, k)) != NULL));
	return v;
}

static void test_round_trip(void **state)
{
	char *json = make_text(label);
	json_t *root = json_loads(json, JSON_DECODE_ANY, NULL);
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	uint8_t out[sizeof(data)], other[MB_ENVELOPE_KEY_SIZE], *ct, *tag, *iv;
	size_t nct, ntag, niv;
	EVP_CIPHER_CTX *c;
	int len;

	(void) state;
	assert_non_null(root);
	assert_string_equal(json_string_value(field(root, "kind")), "mboot-envelope");
	assert_int_equal((int) json_integer_value(field(root, "version")), 1);
	assert_string_equal(json_string_value(field(root, "cipher")), "aes-256-gcm");
	assert_string_equal(json_string_value(field(root, "label")), label);
	assert_string_equal(json_string_value(field(field(root, "sealed"), "kind")), "mboot-sealed");

	/* Decrypted here from the fields, with the AAD of docs/ssh.md: "mboot-envelope\0", 1, label. */
	iv = unhex(json_string_value(field(root, "nonce")), &niv);
	tag = unhex(json_string_value(field(root, "tag")), &ntag);
	assert_memory_equal(iv, nonce, sizeof(nonce));
	ct = malloc(sizeof(data) + 8);
	assert_non_null(ct);
	nct = (size_t) EVP_DecodeBlock(ct, (const uint8_t *) json_string_value(field(root, "ciphertext")),
				       json_string_length(field(root, "ciphertext")));
	assert_int_equal(nct, (sizeof(data) + 2) / 3 * 3); /* EVP_DecodeBlock counts the padding */
	c = EVP_CIPHER_CTX_new();
	assert_int_equal(EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, iv), 1);
	assert_int_equal(EVP_DecryptUpdate(c, NULL, &len, (const uint8_t *) "mboot-envelope\0\1", 16), 1);
	assert_int_equal(EVP_DecryptUpdate(c, NULL, &len, (const uint8_t *) label, (int) strlen(label)), 1);
	assert_int_equal(EVP_DecryptUpdate(c, out, &len, ct, (int) sizeof(data)), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag), 1);
	assert_int_equal(EVP_DecryptFinal_ex(c, out + len, &len), 1);
	assert_memory_equal(out, data, sizeof(data));
	EVP_CIPHER_CTX_free(c);

	/* Parsed back and opened by the library. */
	if (mb_envelope_parse(json, strlen(json), &e, &err) < 0)
		fail_msg("parse: %s", err.message);
	assert_string_equal(mb_envelope_label(e), label);
	assert_int_equal(mb_envelope_data_size(e), sizeof(data));
	assert_int_equal(mb_sealed_mask(mb_envelope_sealed(e)), (1u << 0) | (1u << 7)); /* pcr-0-7.json: PCRs 0 and 7 */
	memset(out, 0, sizeof(out));
	assert_int_equal(mb_envelope_open(e, key, out, sizeof(out), &err), 0);
	assert_memory_equal(out, data, sizeof(data));
	assert_int_equal(mb_envelope_open(e, key, out, sizeof(out) - 1, &err), -ENOBUFS);
	/* another data key: refused, nothing handed out */
	memcpy(other, key, sizeof(other));
	other[31] ^= 0x80;
	assert_int_equal(mb_envelope_open(e, other, out, sizeof(out), &err), -EBADMSG);
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(out[i], 0);
	/* written again: the same text */
	{
		char *again = mb_envelope_to_json(e);

		assert_string_equal(again, json);
		free(again);
	}
	mb_envelope_free(e);
	json_decref(root);
	free(ct);
	OPENSSL_free(iv);
	OPENSSL_free(tag);
	free(json);
}

/* The envelope with root[key] set to value (NULL: removed), parsed: its return and message. */
static int variant(const char *json, const char *path, json_t *value, mb_error *err, mb_envelope **e)
{
	json_t *root = json_loads(json, JSON_DECODE_ANY, NULL), *o = root;
	char k[64];
	const char *dot;
	int r;

	assert_non_null(root);
	while ((dot = strchr(path, '.'))) {
		snprintf(k, sizeof(k), "%.*s", (int) (dot - path), path);
		o = field(o, k);
		path = dot + 1;
	}
	if (value)
		json_object_set_new(o, path, value);
	else
		json_object_del(o, path);
	{
		char *text = json_dumps(root, 0);

		assert_non_null(text);
		*e = NULL;
		r = mb_envelope_parse(text, strlen(text), e, err);
		free(text);
	}
	json_decref(root);
	return r;
}

static void refused(const char *json, const char *path, json_t *value, const char *words)
{
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	int r = variant(json, path, value, &err, &e);

	if (r != -EBADMSG)
		fail_msg("%s: parse returned %d, want -EBADMSG (%s)", path, r, err.message);
	assert_null(e);
	if (!strstr(err.message, words))
		fail_msg("%s: message '%s' lacks '%s'", path, err.message, words);
}

/* Parses, but does not open with the right key: changed authenticated bytes. */
static void does_not_open(const char *json, const char *path, json_t *value)
{
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	uint8_t out[sizeof(data)];

	if (variant(json, path, value, &err, &e) < 0)
		fail_msg("%s: %s", path, err.message);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(mb_envelope_open(e, key, out, sizeof(out), &err), -EBADMSG);
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(out[i], 0);
	mb_envelope_free(e);
}

static void test_hostile(void **state)
{
	char *json = make_text(label), *big;
	json_t *root = json_loads(json, JSON_DECODE_ANY, NULL);
	char ct[8192], tag[40], iv[32];
	mb_envelope *e = NULL;
	mb_error err = { 0 };

	(void) state;
	snprintf(ct, sizeof(ct), "%s", json_string_value(field(root, "ciphertext")));
	snprintf(tag, sizeof(tag), "%s", json_string_value(field(root, "tag")));
	snprintf(iv, sizeof(iv), "%s", json_string_value(field(root, "nonce")));
	json_decref(root);

	refused(json, "kind", json_string_nocheck("mboot-sealed"), "\"kind\"");
	refused(json, "version", json_integer(2), "\"version\"");
	refused(json, "cipher", json_string_nocheck("aes-128-gcm"), "\"cipher\"");
	refused(json, "cipher", NULL, "\"cipher\"");
	refused(json, "nonce", json_string_nocheck("00"), "\"nonce\"");
	refused(json, "nonce", json_string_nocheck("zz0102030405060708090a0b"), "\"nonce\"");
	refused(json, "tag", json_string_nocheck("000102030405060708090a0b0c0d0e0f00"), "\"tag\"");
	refused(json, "tag", json_integer(5), "\"tag\"");
	refused(json, "ciphertext", json_string_nocheck(""), "\"ciphertext\"");
	refused(json, "ciphertext", json_string_nocheck("AAA"), "\"ciphertext\"");
	refused(json, "ciphertext", NULL, "\"ciphertext\"");
	refused(json, "label", json_string_nocheck("two\nlines"), "\"label\"");
	refused(json, "label", json_string_nocheck("bell\a"), "\"label\"");
	refused(json, "label", NULL, "\"label\"");
	refused(json, "sealed", NULL, "\"sealed\"");
	refused(json, "sealed", json_string_nocheck("x"), "\"sealed\"");
	refused(json, "sealed.policy.digest", json_string_nocheck("00"), "in \"sealed\"");
	refused(json, "sealed.kind", json_string_nocheck("mboot-envelope"), "in \"sealed\"");
	refused(json, "sealed.public", NULL, "in \"sealed\"");
	big = malloc(MB_ENVELOPE_MAX_LABEL + 2);
	assert_non_null(big);
	memset(big, 'a', MB_ENVELOPE_MAX_LABEL + 1);
	big[MB_ENVELOPE_MAX_LABEL + 1] = '\0';
	refused(json, "label", json_string_nocheck(big), "\"label\"");
	free(big);

	/* authenticated fields changed: parses, does not open */
	ct[0] = ct[0] == 'A' ? 'B' : 'A';
	does_not_open(json, "ciphertext", json_string_nocheck(ct));
	tag[0] = tag[0] == '0' ? '1' : '0';
	does_not_open(json, "tag", json_string_nocheck(tag));
	iv[0] = iv[0] == '0' ? '1' : '0';
	does_not_open(json, "nonce", json_string_nocheck(iv));
	does_not_open(json, "label", json_string_nocheck("ssh-ed25519 AAAA forged"));
	does_not_open(json, "label", json_string_nocheck(""));

	/* every truncation: refused, no crash, no leak (the ASan build runs this too) */
	for (size_t n = 0; n < strlen(json) - 1; n += 1 + n / 64) {
		assert_true(mb_envelope_parse(json, n, &e, &err) < 0);
		assert_null(e);
	}
	assert_int_equal(mb_envelope_parse(json, MB_ENVELOPE_MAX_FILE + 1u, &e, &err), -E2BIG);
	free(json);
}

static void test_make_refusals(void **state)
{
	mb_sealed *s;
	mb_envelope *e = (mb_envelope *) 1;
	mb_error err = { 0 };
	uint8_t *huge;

	(void) state;
	s = corpus_sealed();
	assert_int_equal(envelope_make(&s, key, nonce, data, 0, "x", &e, &err), -EINVAL);
	assert_null(s); /* taken (and freed) on failure too */
	assert_null(e);
	s = corpus_sealed();
	assert_int_equal(envelope_make(&s, key, nonce, data, sizeof(data), "tab\there", &e, &err), -EINVAL);
	assert_null(s);
	huge = calloc(1, MB_ENVELOPE_MAX_DATA + 1u);
	assert_non_null(huge);
	s = corpus_sealed();
	assert_int_equal(envelope_make(&s, key, nonce, huge, MB_ENVELOPE_MAX_DATA + 1u, NULL, &e, &err), -EINVAL);
	s = corpus_sealed();
	assert_int_equal(envelope_make(&s, key, nonce, huge, MB_ENVELOPE_MAX_DATA, NULL, &e, &err), 0);
	assert_string_equal(mb_envelope_label(e), "");
	mb_envelope_free(e);
	free(huge);
	/* mb_envelope_seal refuses the same before any TPM command (no TPM is given) */
	assert_int_equal(mb_envelope_seal(NULL, data, 0, NULL, NULL, &e, &err), -EINVAL);
	assert_int_equal(mb_envelope_seal(NULL, data, 1, "a\nb", NULL, &e, &err), -EINVAL);
	assert_null(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcm_known_answers),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_make_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
