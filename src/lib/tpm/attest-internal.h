/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TPM_ATTEST_INTERNAL_H
#define MB_TPM_ATTEST_INTERNAL_H
/*
 * Shared by the machine's side of attestation: attest-ek.c (the EK and its certificate),
 * attest.c (enrollment, the AK file, activation) and quote.c (TPM2_Quote and the evidence).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/json.h"
#include <tss2/tss2_esys.h>

#include <mboot/seal.h>
#include <mboot/tpm.h>

/* The EK kinds mboot creates, in the order enroll prefers them (one with a certificate first). */
typedef enum ek_kind { EK_RSA2048, EK_ECC_P256, EK_ECC_P384, EK_KIND_MAX } ek_kind;

typedef struct attest_ek_kind {
	const char *name;  /* "ek" in the AK file */
	uint32_t nv_index; /* its certificate */
} attest_ek_kind;
extern const attest_ek_kind attest_ek_kinds[EK_KIND_MAX];

/* Create the EK of kind from its template (TPM2_CreatePrimary in the endorsement hierarchy). */
int attest_create_ek(mb_tpm *t, ek_kind kind, ESYS_TR *ret, TPM2B_PUBLIC **ret_pub, mb_error *err);
/* Which EK certificate indices the TPM has: bit k for attest_ek_kinds[k]. */
int attest_ek_cert_indices(mb_tpm *t, unsigned *ret, mb_error *err);
/* The EK certificate (DER) at index; caller frees. */
int attest_read_ek_cert(mb_tpm *t, uint32_t index, uint8_t **ret, size_t *ret_size, mb_error *err);

/* An AK file, read and checked. */
typedef struct ak_file {
	TPM2B_PUBLIC pub;
	TPM2B_PRIVATE priv;
	uint8_t pub_raw[sizeof(TPM2B_PUBLIC)];
	size_t pub_raw_size;
	uint8_t name[MB_TPM_NAME_SIZE];
	bool parent_persistent;
	uint32_t parent_handle;
	ek_kind ek;
} ak_file;

/* Read and check an AK file (docs/attest.md). */
int attest_ak_file_read(const char *text, size_t size, ak_file *ak, mb_error *err);
/* Load the AK under its parent; *parent and *flush are for tpm_drop_parent. */
int attest_load_ak(mb_tpm *t, const ak_file *ak, ESYS_TR *parent, bool *flush, ESYS_TR *ret, mb_error *err);

/* A challenge (docs/attest.md), read and checked: each binary field one marshalled structure. */
typedef struct attest_challenge {
	uint8_t name[2 + 64];
	size_t name_size;
	TPM2B_ID_OBJECT blob;
	TPM2B_ENCRYPTED_SECRET secret;
} attest_challenge;
int attest_challenge_read(const char *text, size_t size, attest_challenge *ret, mb_error *err);

/* JSON documents of docs/attest.md: {"version": 1, "kind": kind}, then the text. */
json_t *attest_doc_new(const char *kind);
/* mark: json_build_begin() before the document was begun. */
int attest_doc_finish(json_t *root, json_build_mark mark, char **ret, mb_error *err);

#endif
