/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TSS2_DL_H
#define MB_TSS2_DL_H

/*
 * tpm2-tss, loaded at the first mb_tpm_open (or the first TPM2B parse of a key without a
 * TPM), not linked: see src/shared/dl-lib.h. Every file that calls tpm2-tss includes this
 * (through tpm-internal.h), after which Esys_Quote means sym_Esys_Quote. A function that may
 * be the first to call tpm2-tss in a process calls dlopen_tpm2() first; a function given an
 * open mb_tpm may rely on mb_tpm_open having done so.
 */

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

/* Each list is one library (soname in tss2-dl.c). A function called but not listed here is an
 * undefined symbol when libmboot.so links (-Wl,--no-undefined): add it to its list. */
#define TSS2_DL_ESYS(X) \
	X(Esys_ActivateCredential) \
	X(Esys_Create) \
	X(Esys_CreatePrimary) \
	X(Esys_Finalize) \
	X(Esys_FlushContext) \
	X(Esys_Free) \
	X(Esys_GetCapability) \
	X(Esys_Initialize) \
	X(Esys_Load) \
	X(Esys_LoadExternal) \
	X(Esys_NV_DefineSpace) \
	X(Esys_NV_Increment) \
	X(Esys_NV_Read) \
	X(Esys_NV_ReadPublic) \
	X(Esys_PCR_Extend) \
	X(Esys_PCR_Read) \
	X(Esys_PolicyAuthValue) \
	X(Esys_PolicyAuthorize) \
	X(Esys_PolicyNV) \
	X(Esys_PolicyOR) \
	X(Esys_PolicyPCR) \
	X(Esys_PolicySecret) \
	X(Esys_Quote) \
	X(Esys_ReadPublic) \
	X(Esys_StartAuthSession) \
	X(Esys_Startup) \
	X(Esys_TRSess_SetAttributes) \
	X(Esys_TR_Close) \
	X(Esys_TR_SetAuth) \
	X(Esys_TR_FromTPMPublic) \
	X(Esys_TR_GetName) \
	X(Esys_Unseal) \
	X(Esys_VerifySignature)
#define TSS2_DL_MU(X) \
	X(Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal) \
	X(Tss2_MU_TPM2B_ID_OBJECT_Unmarshal) \
	X(Tss2_MU_TPM2B_PRIVATE_Marshal) \
	X(Tss2_MU_TPM2B_PRIVATE_Unmarshal) \
	X(Tss2_MU_TPM2B_PUBLIC_Marshal) \
	X(Tss2_MU_TPM2B_PUBLIC_Unmarshal) \
	X(Tss2_MU_TPMS_ATTEST_Unmarshal) \
	X(Tss2_MU_TPMT_SIGNATURE_Marshal)
#define TSS2_DL_RC(X) \
	X(Tss2_RC_Decode)
#define TSS2_DL_TCTILDR(X) \
	X(Tss2_TctiLdr_Initialize) \
	X(Tss2_TctiLdr_Finalize)

TSS2_DL_ESYS(DL_DECLARE)
TSS2_DL_MU(DL_DECLARE)
TSS2_DL_RC(DL_DECLARE)
TSS2_DL_TCTILDR(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "tpm2-tss is needed and cannot be loaded: ..." */
int dlopen_tpm2(mb_error *err);


#endif
