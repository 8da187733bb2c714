/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define ZLIB_DL_IMPL
#include "zlib-dl.h"

ZLIB_DL(DL_DEFINE)

static const dl_sym zlib_syms[] = { ZLIB_DL(DL_ENTRY) };

dl_lib zlib_dl_lib = {
	"libz.so.1", "zlib", "zlib1g", zlib_syms, sizeof(zlib_syms) / sizeof(zlib_syms[0]), false,
};

int dlopen_zlib(mb_error *err)
{
	return dl_lib_load(&zlib_dl_lib, err);
}
