/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define CRYPTO_DL_IMPL
#include "crypto-dl.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
CRYPTO_DL(DL_DEFINE)

static const dl_sym crypto_syms[] = { CRYPTO_DL(DL_ENTRY) };
#pragma GCC diagnostic pop

/* Debian 12's soname and package. */
dl_lib crypto_dl_lib = {
	"libcrypto.so.3", "libcrypto (OpenSSL 3)", "libssl3", crypto_syms,
	sizeof(crypto_syms) / sizeof(crypto_syms[0]), false,
};

int dlopen_crypto(mb_error *err)
{
	return dl_lib_load(&crypto_dl_lib, err);
}
