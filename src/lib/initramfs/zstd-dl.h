/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ZSTD_DL_H
#define MB_ZSTD_DL_H

/*
 * libzstd, loaded by the first zstd compression or decompression, not linked
 * (src/shared/dl-lib.h). After this header ZSTD_compress2 means sym_ZSTD_compress2. A function
 * called but not listed here is an undefined symbol when libmboot.so links: add it.
 */

#include <zstd.h>
#include <zstd_errors.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define ZSTD_DL(X) \
	X(ZSTD_CCtx_setParameter) \
	X(ZSTD_DCtx_setParameter) \
	X(ZSTD_compress2) \
	X(ZSTD_compressBound) \
	X(ZSTD_createCCtx) \
	X(ZSTD_createDCtx) \
	X(ZSTD_decompressStream) \
	X(ZSTD_freeCCtx) \
	X(ZSTD_freeDCtx) \
	X(ZSTD_getErrorCode) \
	X(ZSTD_getErrorName) \
	X(ZSTD_isError)

ZSTD_DL(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "zstd is needed and cannot be loaded: ..." */
int dlopen_zstd(mb_error *err);


#endif
