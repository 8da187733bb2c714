/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define TSS2_DL_IMPL
#include "tss2-dl.h"

TSS2_DL_ESYS(DL_DEFINE)
TSS2_DL_MU(DL_DEFINE)
TSS2_DL_RC(DL_DEFINE)
TSS2_DL_TCTILDR(DL_DEFINE)

static const dl_sym esys_syms[] = { TSS2_DL_ESYS(DL_ENTRY) };
static const dl_sym mu_syms[] = { TSS2_DL_MU(DL_ENTRY) };
static const dl_sym rc_syms[] = { TSS2_DL_RC(DL_ENTRY) };
static const dl_sym tctildr_syms[] = { TSS2_DL_TCTILDR(DL_ENTRY) };

static dl_lib tss2_libs[] = {
	DL_LIB("libtss2-esys.so.0", "tpm2-tss", esys_syms),
	DL_LIB("libtss2-mu.so.0", "tpm2-tss", mu_syms),
	DL_LIB("libtss2-rc.so.0", "tpm2-tss", rc_syms),
	DL_LIB("libtss2-tctildr.so.0", "tpm2-tss", tctildr_syms),
};
/* One note a library: a note's sonames are alternatives, and all four are needed. */
DL_NOTE("tpm2-esys", "TPM commands: pcrs, seal, unseal, quote, measure, attest, luks", "recommended",
	"[\"libtss2-esys.so.0\"]");
DL_NOTE("tpm2-mu", "TPM structures: sealed objects, quotes, attestation", "recommended", "[\"libtss2-mu.so.0\"]");
DL_NOTE("tpm2-rc", "TPM response codes in words", "recommended", "[\"libtss2-rc.so.0\"]");
DL_NOTE("tpm2-tctildr", "the TPM transport (--tcti)", "recommended", "[\"libtss2-tctildr.so.0\"]");

int dlopen_tpm2(mb_error *err)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(tss2_libs) / sizeof(tss2_libs[0]); i++) {
		r = dl_lib_load(&tss2_libs[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}
