/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ATTEST_TPM_PUBLIC_H
#define MB_ATTEST_TPM_PUBLIC_H
/*
 * A TPM object's public area (TPMT_PUBLIC, TPM 2.0 Part 2 §12.2.4) decoded from untrusted
 * bytes, for a verifier that has no TPM and no tpm2-tss: an EK or AK sent by a machine.
 * Only RSA and ECC keys are decoded (what EKs and AKs are); anything else is -EOPNOTSUPP.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include <mboot/error.h>

/* TPM_ALG_ID values (Part 2 §6.3) this code names. */
#define TPM_ALG_RSA 0x0001
#define TPM_ALG_SHA1 0x0004
#define TPM_ALG_HMAC 0x0005
#define TPM_ALG_AES 0x0006
#define TPM_ALG_KEYEDHASH 0x0008
#define TPM_ALG_XOR 0x000a
#define TPM_ALG_SHA256 0x000b
#define TPM_ALG_SHA384 0x000c
#define TPM_ALG_SHA512 0x000d
#define TPM_ALG_NULL 0x0010
#define TPM_ALG_RSASSA 0x0014
#define TPM_ALG_RSAES 0x0015
#define TPM_ALG_RSAPSS 0x0016
#define TPM_ALG_OAEP 0x0017
#define TPM_ALG_ECDSA 0x0018
#define TPM_ALG_ECDH 0x0019
#define TPM_ALG_ECDAA 0x001a
#define TPM_ALG_ECC 0x0023
#define TPM_ALG_CFB 0x0043

/* TPM_ECC_CURVE (Part 2 §6.4) */
#define TPM_ECC_NIST_P256 0x0003
#define TPM_ECC_NIST_P384 0x0004
#define TPM_ECC_NIST_P521 0x0005

/* TPMA_OBJECT bits (Part 2 §8.3) */
#define TPMA_FIXED_TPM (1u << 1)
#define TPMA_ST_CLEAR (1u << 2)
#define TPMA_FIXED_PARENT (1u << 4)
#define TPMA_SENSITIVE_DATA_ORIGIN (1u << 5)
#define TPMA_USER_WITH_AUTH (1u << 6)
#define TPMA_ADMIN_WITH_POLICY (1u << 7)
#define TPMA_NO_DA (1u << 10)
#define TPMA_ENCRYPTED_DUPLICATION (1u << 11)
#define TPMA_RESTRICTED (1u << 16)
#define TPMA_DECRYPT (1u << 17)
#define TPMA_SIGN (1u << 18)

/* Largest RSA modulus (4096 bits) and ECC coordinate (P-521) accepted. */
#define TPM_PUBLIC_RSA_MAX 512
#define TPM_PUBLIC_ECC_MAX 66
/* nameAlg (2 bytes) + the largest digest */
#define TPM_NAME_MAX (2 + 64)

typedef struct tpm_public {
	uint16_t type;            /* TPM_ALG_RSA or TPM_ALG_ECC */
	uint16_t name_alg;
	uint32_t attributes;      /* TPMA_OBJECT */
	uint8_t auth_policy[64];
	uint16_t auth_policy_size;
	/* TPMT_SYM_DEF_OBJECT of a storage key (an EK's: AES-128-CFB); sym_alg TPM_ALG_NULL for none */
	uint16_t sym_alg, sym_bits, sym_mode;
	/* signing or decryption scheme; scheme TPM_ALG_NULL when the key leaves it to the caller */
	uint16_t scheme, scheme_hash;
	uint16_t rsa_bits;
	uint32_t rsa_exponent;    /* as marshalled: 0 means 65537 */
	uint16_t curve;
	uint16_t kdf, kdf_hash;
	/* RSA: the modulus in x; ECC: the point's coordinates */
	uint8_t x[TPM_PUBLIC_RSA_MAX];
	uint16_t x_size;
	uint8_t y[TPM_PUBLIC_ECC_MAX];
	uint16_t y_size;
	/* the Name: nameAlg (big-endian) || H_nameAlg(TPMT_PUBLIC as marshalled) */
	uint8_t name[TPM_NAME_MAX];
	size_t name_size;
} tpm_public;

/*
 * Decode a TPM2B_PUBLIC (size-prefixed, as tpm2-tools writes it with -f tss) that fills all
 * of data. The Name is computed over the bytes as given, which is what the TPM and a
 * credential bind to. -EBADMSG (offset set) for malformed bytes, -EOPNOTSUPP for a type,
 * nameAlg, curve or scheme outside what attestation uses.
 */
int tpm_public_parse(const uint8_t *data, size_t size, tpm_public *ret, mb_error *err);

/* The same for a bare TPMT_PUBLIC (no size prefix). */
int tpm_public_parse_area(const uint8_t *data, size_t size, tpm_public *ret, mb_error *err);

/* The key as an OpenSSL public key; caller frees with EVP_PKEY_free. */
int tpm_public_to_pkey(const tpm_public *p, EVP_PKEY **ret, mb_error *err);

/* Does the OpenSSL key (from a certificate) hold the same public key as p? */
bool tpm_public_matches_pkey(const tpm_public *p, const EVP_PKEY *pkey);

/* OpenSSL's name of the digest of a TPM_ALG_ID ("SHA256"), NULL for others. */
const char *tpm_alg_digest_name(uint16_t alg);

#endif
