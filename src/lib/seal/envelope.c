/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Envelopes (mboot/envelope.h, docs/ssh.md): data of any size sealed to a good boot.
 * AES-256-GCM under a fresh data key; the data key is what the TPM seals. The file is
 * untrusted input: it goes through the strict JSON reader with caps on every field, and
 * nothing is handed out before GCM's tag has checked.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <mboot/envelope.h>
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "envelope-internal.h"
#include "shared/json-doc.h"
#include "sealed-internal.h"

struct mb_envelope {
	mb_sealed *sealed;                     /* the data key, sealed */
	char *label;                           /* never NULL */
	uint8_t nonce[MB_ENVELOPE_NONCE_SIZE];
	uint8_t tag[MB_ENVELOPE_TAG_SIZE];
	uint8_t *ct;
	size_t ct_size;                        /* = the data's size */
};

/* The AAD: a context string (so the tag cannot be valid for another kind of file), the version, the label. */
static const char aad_context[] = "mboot-envelope"; /* with its NUL: 15 bytes */

static int label_check(const char *label, size_t len, mb_error *err)
{
	if (len > MB_ENVELOPE_MAX_LABEL)
		return set_error(err, -EINVAL, "label larger than %u bytes", MB_ENVELOPE_MAX_LABEL);
	/* one line of text: what a person reads in the file, not bytes that hide in a terminal */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char) label[i] < 0x20 || label[i] == 0x7f)
			return set_error(err, -EINVAL, "label has a control character at byte %zu", i);
	return 0;
}

static int gcm_aad(EVP_CIPHER_CTX *c, const char *label, size_t label_len)
{
	static const uint8_t version = 1;
	int n;

	return EVP_CipherUpdate(c, NULL, &n, (const uint8_t *) aad_context, sizeof(aad_context)) == 1 &&
	       EVP_CipherUpdate(c, NULL, &n, &version, 1) == 1 &&
	       (label_len == 0 || EVP_CipherUpdate(c, NULL, &n, (const uint8_t *) label, (int) label_len) == 1);
}

int envelope_gcm(bool encrypt, const uint8_t key[MB_ENVELOPE_KEY_SIZE], const uint8_t nonce[MB_ENVELOPE_NONCE_SIZE],
		 const uint8_t *aad, size_t aad_len, const char *label, size_t label_len, const uint8_t *in, size_t n,
		 uint8_t *out, uint8_t tag[MB_ENVELOPE_TAG_SIZE])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len = 0, fin = 0, ok;

	if (!c)
		return -ENOMEM;
	if (n > INT_MAX || aad_len > INT_MAX || label_len > INT_MAX) {
		EVP_CIPHER_CTX_free(c);
		return -EINVAL;
	}
	ok = EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, MB_ENVELOPE_NONCE_SIZE, NULL) == 1 &&
	     EVP_CipherInit_ex(c, NULL, NULL, key, nonce, encrypt) == 1;
	if (ok && aad)
		ok = aad_len == 0 || EVP_CipherUpdate(c, NULL, &len, aad, (int) aad_len) == 1;
	else if (ok)
		ok = gcm_aad(c, label, label_len);
	ok = ok && (n == 0 || EVP_CipherUpdate(c, out, &len, in, (int) n) == 1);
	if (ok && !encrypt)
		ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, MB_ENVELOPE_TAG_SIZE, tag) == 1;
	/* decrypting, this is where the tag is checked */
	ok = ok && EVP_CipherFinal_ex(c, out + len, &fin) == 1;
	if (ok && encrypt)
		ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, MB_ENVELOPE_TAG_SIZE, tag) == 1;
	EVP_CIPHER_CTX_free(c); /* also cleanses the key schedule */
	if (!ok && n)
		OPENSSL_cleanse(out, n);
	return ok ? 0 : -EBADMSG;
}

MB_EXPORT void mb_envelope_free(mb_envelope *e)
{
	if (!e)
		return;
	mb_sealed_free(e->sealed);
	free(e->label);
	free(e->ct);
	free(e);
}

int envelope_make(mb_sealed **sealed, const uint8_t key[MB_ENVELOPE_KEY_SIZE],
		  const uint8_t nonce[MB_ENVELOPE_NONCE_SIZE], const uint8_t *data, size_t size, const char *label,
		  mb_envelope **ret, mb_error *err)
{
	size_t label_len = label ? strlen(label) : 0;
	mb_envelope *e = NULL;
	int r;

	*ret = NULL;
	if (!data || size == 0 || size > MB_ENVELOPE_MAX_DATA)
		r = set_error(err, -EINVAL, "the data to seal must be 1 to %u bytes", MB_ENVELOPE_MAX_DATA);
	else
		r = label_check(label, label_len, err);
	if (r < 0)
		goto fail;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->label = strdup(label ? label : "")) || !(e->ct = malloc(size))) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto fail;
	}
	e->ct_size = size;
	memcpy(e->nonce, nonce, sizeof(e->nonce));
	if (envelope_gcm(true, key, e->nonce, NULL, 0, e->label, label_len, data, size, e->ct, e->tag) < 0) {
		r = set_error(err, -EIO, "AES-256-GCM encryption failed");
		goto fail;
	}
	e->sealed = *sealed;
	*sealed = NULL;
	*ret = e;
	return 0;
fail:
	mb_envelope_free(e);
	mb_sealed_free(*sealed);
	*sealed = NULL;
	return r;
}

MB_EXPORT int mb_envelope_seal(mb_tpm *t, const uint8_t *data, size_t size, const char *label,
			       const mb_seal_options *opt, mb_envelope **ret, mb_error *err)
{
	uint8_t key[MB_ENVELOPE_KEY_SIZE], nonce[MB_ENVELOPE_NONCE_SIZE];
	mb_sealed *sealed = NULL;
	int r;

	*ret = NULL;
	/* before the TPM: a refusal costs no TPM work */
	if (!data || size == 0 || size > MB_ENVELOPE_MAX_DATA)
		return set_error(err, -EINVAL, "the data to seal must be 1 to %u bytes", MB_ENVELOPE_MAX_DATA);
	r = label_check(label, label ? strlen(label) : 0, err);
	if (r < 0)
		return r;
	/* a fresh key per envelope, so a random nonce never repeats under one key */
	if (RAND_priv_bytes(key, sizeof(key)) != 1 || RAND_bytes(nonce, sizeof(nonce)) != 1)
		return set_error(err, -EIO, "no random bytes from OpenSSL");
	r = mb_seal_secret(t, key, sizeof(key), opt, &sealed, err);
	if (r == 0)
		r = envelope_make(&sealed, key, nonce, data, size, label, ret, err);
	OPENSSL_cleanse(key, sizeof(key));
	return r;
}

MB_EXPORT int mb_envelope_parse(const char *text, size_t size, mb_envelope **ret, mb_error *err)
{
	json_t *root = NULL, *v;
	mb_envelope *e;
	int r;

	*ret = NULL;
	if (size > MB_ENVELOPE_MAX_FILE)
		return set_error(err, -E2BIG, "envelope file larger than %u bytes", MB_ENVELOPE_MAX_FILE);
	/* the sealed object's deepest field (policy.branches[i].values) is 5 levels under the root */
	r = untrusted_json_parse(text, size, 8, &root, err);
	if (r < 0)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e) {
		json_decref(root);
		return set_error(err, -ENOMEM, "out of memory");
	}
	if (!json_is_object(root)) {
		r = set_error(err, -EBADMSG, "not a JSON object");
		goto fail;
	}
	r = json_doc_check_kind(root, "mboot-envelope", err);
	if (r < 0)
		goto fail;
	v = json_doc_get(root, "cipher", JSON_STRING);
	if (!v || strcmp(json_string_value(v), "aes-256-gcm") != 0) {
		r = set_error(err, -EBADMSG, "field \"cipher\" is not \"aes-256-gcm\"");
		goto fail;
	}
	v = json_doc_get(root, "label", JSON_STRING);
	if (!v || label_check(json_string_value(v), (size_t) json_string_length(v), NULL) < 0) {
		r = set_error(err, -EBADMSG, "field \"label\" is not one line of text of at most %u bytes",
			      MB_ENVELOPE_MAX_LABEL);
		goto fail;
	}
	e->label = strdup(json_string_value(v));
	if (!e->label) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = json_doc_hex(root, "nonce", "nonce", e->nonce, sizeof(e->nonce), err);
	if (r == 0)
		r = json_doc_hex(root, "tag", "tag", e->tag, sizeof(e->tag), err);
	if (r == 0)
		r = json_doc_b64(root, "ciphertext", MB_ENVELOPE_MAX_DATA, false, &e->ct, &e->ct_size, err);
	if (r < 0)
		goto fail;
	if (e->ct_size == 0) {
		r = set_error(err, -EBADMSG, "field \"ciphertext\" is empty");
		goto fail;
	}
	v = json_doc_get(root, "sealed", JSON_OBJECT);
	if (!v) {
		r = set_error(err, -EBADMSG, "field \"sealed\" is missing or not an object");
		goto fail;
	}
	r = sealed_from_object(v, &e->sealed, err);
	if (r < 0) {
		/* the sealed object's own message names its field: say where that field is */
		if (err && r == -EBADMSG) {
			char inner[sizeof(err->message)];

			memcpy(inner, err->message, sizeof(inner));
			inner[sizeof(inner) - 1] = '\0';
			set_error(err, r, "in \"sealed\": %s", inner);
		}
		goto fail;
	}
	json_decref(root);
	*ret = e;
	return 0;
fail:
	json_decref(root);
	mb_envelope_free(e);
	return r;
}

MB_EXPORT char *mb_envelope_to_json(const mb_envelope *e)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *sealed = sealed_to_object(e->sealed);
	char nonce[2 * MB_ENVELOPE_NONCE_SIZE + 1], tag[2 * MB_ENVELOPE_TAG_SIZE + 1];
	int bad = 0;

	if (!root || !sealed) {
		json_decref(root);
		json_decref(sealed);
		return NULL;
	}
	bad |= json_object_set_new(root, "version", json_integer(1));
	bad |= json_object_set_new(root, "kind", json_text("mboot-envelope"));
	bad |= json_object_set_new(root, "label", json_text(e->label));
	bad |= json_object_set_new(root, "cipher", json_text("aes-256-gcm"));
	bad |= json_object_set_new(root, "nonce", json_text(hex_format(e->nonce, sizeof(e->nonce), nonce)));
	bad |= json_object_set_new(root, "ciphertext", json_doc_b64_obj(e->ct, e->ct_size));
	bad |= json_object_set_new(root, "tag", json_text(hex_format(e->tag, sizeof(e->tag), tag)));
	bad |= json_object_set_new(root, "sealed", sealed);
	if (bad) { /* a member that could not be made (ENOMEM): no document rather than one without it */
		json_decref(root);
		return NULL;
	}
	return json_doc_finish(root, mark);
}

MB_EXPORT const mb_sealed *mb_envelope_sealed(const mb_envelope *e)
{
	return e->sealed;
}

MB_EXPORT const char *mb_envelope_label(const mb_envelope *e)
{
	return e->label;
}

MB_EXPORT size_t mb_envelope_data_size(const mb_envelope *e)
{
	return e->ct_size;
}

MB_EXPORT int mb_envelope_open(const mb_envelope *e, const uint8_t key[MB_ENVELOPE_KEY_SIZE], uint8_t *out,
			       size_t out_cap, mb_error *err)
{
	uint8_t tag[MB_ENVELOPE_TAG_SIZE];
	int r;

	if (out_cap < e->ct_size)
		return set_error(err, -ENOBUFS, "the data is %zu bytes, the buffer %zu", e->ct_size, out_cap);
	memcpy(tag, e->tag, sizeof(tag));
	r = envelope_gcm(false, key, e->nonce, NULL, 0, e->label, strlen(e->label), e->ct, e->ct_size, out, tag);
	if (r == -ENOMEM)
		return set_error(err, r, "out of memory");
	if (r < 0)
		return set_error(err, -EBADMSG, "the envelope does not open: its data key is another, or its "
				 "ciphertext, nonce, tag or label were changed");
	return 0;
}

MB_EXPORT int mb_envelope_unseal(mb_tpm *t, const mb_envelope *e, const mb_unseal_options *opt, uint8_t *out,
				 size_t out_cap, mb_unseal_explanation **explanation, mb_error *err)
{
	uint8_t key[MB_SEAL_MAX_SECRET];
	mb_unseal_explanation *ex = NULL;
	size_t key_size = 0;
	int r;

	if (explanation)
		*explanation = NULL;
	if (out_cap < e->ct_size)
		return set_error(err, -ENOBUFS, "the data is %zu bytes, the buffer %zu", e->ct_size, out_cap);
	r = mb_tpm_unseal_sealed(t, e->sealed, opt, key, &key_size, &ex, err);
	if (explanation)
		*explanation = ex;
	else
		mb_unseal_explanation_free(ex);
	if (r == 0 && key_size != MB_ENVELOPE_KEY_SIZE)
		r = set_error(err, -EBADMSG, "the sealed data key is %zu bytes, not %u", key_size, MB_ENVELOPE_KEY_SIZE);
	if (r == 0)
		r = mb_envelope_open(e, key, out, out_cap, err);
	OPENSSL_cleanse(key, sizeof(key));
	return r;
}
