/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TPM_INTERNAL_H
#define MB_TPM_INTERNAL_H

#include <tss2/tss2_esys.h>
#include <mboot/tpm.h>

struct mb_tpm {
	char *tcti_conf;
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *esys;
	uint32_t last_rc;
};

/* Record rc in t and fill err with MB_ERR_TPM and Tss2_RC_Decode's words. */
int mb_tpm_fail(mb_tpm *t, mb_error *err, TSS2_RC rc, const char *what);

#endif
