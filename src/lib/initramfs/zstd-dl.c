/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define ZSTD_DL_IMPL
#include "zstd-dl.h"

ZSTD_DL(DL_DEFINE)

static const dl_sym zstd_syms[] = { ZSTD_DL(DL_ENTRY) };

static dl_lib zstd_lib = DL_LIB("libzstd.so.1", "zstd", zstd_syms);
DL_NOTE("zstd", "initramfs images compressed with zstd", "recommended", "[\"libzstd.so.1\"]");

int dlopen_zstd(mb_error *err)
{
	return dl_lib_load(&zstd_lib, err);
}
