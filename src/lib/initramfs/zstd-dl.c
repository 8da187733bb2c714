/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define ZSTD_DL_IMPL
#include "zstd-dl.h"

ZSTD_DL(DL_DEFINE)

static const dl_sym zstd_syms[] = { ZSTD_DL(DL_ENTRY) };

static dl_lib zstd_lib = {
	"libzstd.so.1", "zstd", "libzstd1", zstd_syms, sizeof(zstd_syms) / sizeof(zstd_syms[0]), false,
};

int dlopen_zstd(mb_error *err)
{
	return dl_lib_load(&zstd_lib, err);
}
