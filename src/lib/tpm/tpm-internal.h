/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TPM_INTERNAL_H
#define MB_TPM_INTERNAL_H

#include <stdbool.h>
#include <tss2/tss2_esys.h>
#include <mboot/tpm.h>
#include "tss2-dl.h"

struct mb_tpm {
	char *tcti_conf;
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *esys;
	uint32_t last_rc;
};

/* Record rc in t and fill err with MB_ERR_TPM and Tss2_RC_Decode's words. */
int tpm_fail(mb_tpm *t, mb_error *err, TSS2_RC rc, const char *what);

/* The parts of seal.c that attest.c shares: response codes, the storage parent, sessions. */

/* tpm_load_parent: the persistent handle holds a key that is not a storage key */
#define MB_ERR_TPM_NOT_STORAGE (-4090)

/* rc is the TPM's response code `code` (format-1 codes without their handle/parameter number). */
bool tpm_rc_is(TSS2_RC rc, uint32_t code);
/* tpm_fail, with TPM_RC_LOCKOUT as MB_ERR_TPM_LOCKOUT. */
int tpm_classify(mb_tpm *t, mb_error *err, TSS2_RC rc, const char *what);
/* The parent: the persistent key at handle, or a transient SRK from the template (*flush set). */
int tpm_load_parent(mb_tpm *t, bool persistent, uint32_t handle, ESYS_TR *ret, bool *flush, mb_error *err);
/*
 * The parent seal picks: the persistent SRK at MB_TPM_SRK_HANDLE when it is a storage key
 * (*persistent), else the SRK template's primary (*unusable: the handle holds another key).
 */
int tpm_load_storage_parent(mb_tpm *t, ESYS_TR *ret, bool *flush, bool *persistent, bool *unusable,
			    mb_error *err);
void tpm_drop_parent(mb_tpm *t, ESYS_TR *h, bool flush);
/* A session salted with parent (AES-128-CFB, SHA-256); attrs: TPMA_SESSION_DECRYPT/ENCRYPT or 0. */
int tpm_start_session(mb_tpm *t, ESYS_TR parent, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *ret, mb_error *err);

/* The authValue of a secret sealed with a PIN: SHA-256(pin) (docs/seal.md, "TPM + PIN"); -EINVAL
 * for a PIN of 0 or over MB_PIN_MAX bytes. */
int tpm_pin_auth(const uint8_t *pin, size_t pin_size, uint8_t out[32], mb_error *err);
enum tpm_parent_choice { TPM_PARENT_AUTO, TPM_PARENT_TEMPLATE, TPM_PARENT_PERSISTENT };
/* mb_tpm_seal / mb_tpm_seal_under, with the object's authValue auth (32 bytes; NULL: empty). */
int tpm_seal_blob(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
		  enum tpm_parent_choice choice, uint32_t handle, const uint8_t *auth, mb_tpm_sealed_blob *ret,
		  mb_error *err);

#endif
