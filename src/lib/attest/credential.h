/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TPM2_MakeCredential in software (TPM 2.0 Part 1 §24, "Credential Protection"), and the two
 * key derivation functions it uses (Part 1 §11.4.10). No TPM and no tpm2-tss: the verifier
 * has neither. Internal to src/lib/attest.
 */
#ifndef MB_ATTEST_CREDENTIAL_H
#define MB_ATTEST_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <mboot/error.h>

/* The hash of a TPM_ALG_ID the credential code accepts as a nameAlg (SHA-256/384/512), or NULL. */
const EVP_MD *attest_md(uint16_t hash_alg);

/*
 * KDFa (Part 1 §11.4.10.2): HMAC in counter mode, K(i) = HMAC(key, [i]32 || label || 00 ||
 * context_u || context_v || [bits]32); label is a C string (its NUL is the 00), either context
 * may be NULL. out_size bytes (bits = 8 * out_size). 0, -EOPNOTSUPP or -EIO.
 */
int attest_kdfa(uint16_t hash_alg, const uint8_t *key, size_t key_size, const char *label, const uint8_t *context_u,
		size_t u_size, const uint8_t *context_v, size_t v_size, uint8_t *out, size_t out_size);

/*
 * KDFe (Part 1 §11.4.10.3): the single-step hash KDF of NIST SP 800-56A, K(i) = H([i]32 || Z ||
 * label || 00 || party_u || party_v). 0, -EOPNOTSUPP or -EIO.
 */
int attest_kdfe(uint16_t hash_alg, const uint8_t *z, size_t z_size, const char *label, const uint8_t *party_u,
		size_t u_size, const uint8_t *party_v, size_t v_size, uint8_t *out, size_t out_size);

/* The key a credential is protected to: the EK's public key and what of its public area counts. */
typedef struct attest_protector {
	EVP_PKEY *pkey;         /* RSA or EC public key */
	uint16_t name_alg;      /* the EK's nameAlg: OAEP hash, KDF hash, HMAC hash, seed size */
	uint16_t sym_bits;      /* AES key bits of the EK's symmetric definition (CFB) */
	const uint8_t *ecc_x;   /* ECC: unique.x exactly as in the EK's public area (KDFe partyVInfo) */
	size_t ecc_x_size;
} attest_protector;

/*
 * Protect cred (a TPM2B_DIGEST's bytes, at most 64) to the key p for the object whose Name is
 * name: a fresh seed, encrypted to p (RSA-OAEP, label "IDENTITY"; ECC: ephemeral ECDH + KDFe);
 * the credential AES-CFB encrypted under KDFa(seed, "STORAGE", name) and an outer HMAC under
 * KDFa(seed, "INTEGRITY"). *ret_id is a marshalled TPM2B_ID_OBJECT, *ret_secret a marshalled
 * TPM2B_ENCRYPTED_SECRET, both malloc'd: what TPM2_ActivateCredential takes.
 */
int attest_make_credential(const attest_protector *p, const uint8_t *name, size_t name_size, const uint8_t *cred,
			   size_t cred_size, uint8_t **ret_id, size_t *ret_id_size, uint8_t **ret_secret,
			   size_t *ret_secret_size, mb_error *err);

#endif
