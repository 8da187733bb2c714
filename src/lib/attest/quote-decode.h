/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ATTEST_QUOTE_DECODE_H
#define MB_ATTEST_QUOTE_DECODE_H
/*
 * The two TPM structures of a quote, decoded from untrusted bytes (TPM 2.0 Part 2; big-endian,
 * as TPM2_Quote returns them): TPMS_ATTEST (§10.12.12) and TPMT_SIGNATURE (§11.3.4). Decoding
 * judges nothing: a wrong magic or type is a verdict of the caller, not a decoding error; only
 * bytes that do not form the structure (truncated, over a cap, trailing) are -EBADMSG/-E2BIG.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/error.h>

#define TPM_GENERATED_VALUE 0xff544347u
#define TPM_ST_ATTEST_QUOTE 0x8018

/* Signature algorithms (TPM_ALG_ID, Part 2 §6.3); same values as attest/tpm-public.h. */
#define QUOTE_SIG_RSASSA 0x0014
#define QUOTE_SIG_RSAPSS 0x0016
#define QUOTE_SIG_ECDSA 0x0018
#define QUOTE_SIG_ECDAA 0x001a
#define QUOTE_SIG_SM2 0x001b
#define QUOTE_SIG_ECSCHNORR 0x001c
#define QUOTE_SIG_HMAC 0x0005
#define QUOTE_SIG_NULL 0x0010

/* Caps (Part 2: TPMU_NAME and TPM2B_DATA hold at most a TPMT_HA or a handle; TPML_PCR_SELECTION
 * at most TPM_NUM_PCR_BANKS = 16 entries of at most PCR_SELECT_MAX = 4 bytes in reference TPMs). */
#define QUOTE_NAME_MAX 68
#define QUOTE_DATA_MAX 66
#define QUOTE_DIGEST_MAX 64
#define QUOTE_SELECTIONS_MAX 16
#define QUOTE_SELECT_MAX 4
#define QUOTE_RSA_SIG_MAX 512
#define QUOTE_ECC_PARAM_MAX 66
/* A TPMS_ATTEST of any type is far smaller (the largest, a certify of a long Name, < 1 KiB). */
#define QUOTE_ATTEST_MAX 4096
#define QUOTE_SIGNATURE_MAX 1024

typedef struct quote_selection {
	uint16_t hash;
	uint8_t size_of_select;
	uint32_t mask;          /* bit n: PCR n selected (pcrSelect[n / 8] bit n % 8) */
} quote_selection;

typedef struct quote_attest {
	uint32_t magic;
	uint16_t type;
	uint8_t signer[QUOTE_NAME_MAX];
	uint16_t signer_size;
	uint8_t extra[QUOTE_DATA_MAX];
	uint16_t extra_size;
	uint64_t clock;
	uint32_t reset_count, restart_count;
	uint8_t safe;
	uint64_t firmware_version;
	/* TPMS_QUOTE_INFO, when type is TPM_ST_ATTEST_QUOTE (else n_selections 0) */
	size_t n_selections;
	quote_selection selections[QUOTE_SELECTIONS_MAX];
	uint8_t pcr_digest[QUOTE_DIGEST_MAX];
	uint16_t pcr_digest_size;
} quote_attest;

typedef struct quote_signature {
	uint16_t alg;           /* sigAlg */
	uint16_t hash;          /* the scheme's hash (TPM_ALG_NULL for a NULL signature) */
	/* RSA: the signature in a; ECC: r in a, s in b; HMAC: the digest in a */
	uint8_t a[QUOTE_RSA_SIG_MAX];
	uint16_t a_size;
	uint8_t b[QUOTE_ECC_PARAM_MAX];
	uint16_t b_size;
} quote_signature;

/*
 * Decode a TPMS_ATTEST that fills data. The attested union is decoded for a quote only; for
 * another type the bytes after firmwareVersion are left unread (their layout is that type's).
 */
int quote_attest_parse(const uint8_t *data, size_t size, quote_attest *ret, mb_error *err);

/* Decode a TPMT_SIGNATURE that fills data: RSASSA, RSAPSS, ECDSA (and the ECC schemes of the same
 * shape), HMAC, NULL; another sigAlg is -EOPNOTSUPP. */
int quote_signature_parse(const uint8_t *data, size_t size, quote_signature *ret, mb_error *err);

/* "rsassa", "ecdsa", ...; "0x%04x" into buf for others. */
const char *quote_sig_alg_name(uint16_t alg, char buf[8]);

#endif
