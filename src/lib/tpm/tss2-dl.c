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

#define LIB(so, pkg, syms) { so, "tpm2-tss", pkg, syms, sizeof(syms) / sizeof(syms[0]), false }

/* Debian 12's sonames and packages (libtss2-esys-3.0.2-0 ships libtss2-esys.so.0). */
static dl_lib tss2_libs[] = {
	LIB("libtss2-esys.so.0", "libtss2-esys-3.0.2-0", esys_syms),
	LIB("libtss2-mu.so.0", "libtss2-mu0", mu_syms),
	LIB("libtss2-rc.so.0", "libtss2-rc0", rc_syms),
	LIB("libtss2-tctildr.so.0", "libtss2-tctildr0", tctildr_syms),
};

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
