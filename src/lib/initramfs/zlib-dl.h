/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ZLIB_DL_H
#define MB_ZLIB_DL_H

/*
 * zlib, loaded by the first gzip compression or decompression, not linked (src/shared/dl-lib.h):
 * only initramfs images need it, and every other process would pay for mapping it. After this
 * header deflate means "load zlib if needed, then sym_deflate" (dl_lib_ensure); the entry
 * points call dlopen_zlib() first for an error that names the package. A function called but
 * not listed here is an undefined symbol when libmboot.so links: add it.
 */

#include <zlib.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define ZLIB_DL(X) \
	X(deflate) \
	X(deflateBound) \
	X(deflateEnd) \
	X(deflateInit2_) \
	X(deflateSetHeader) \
	X(inflate) \
	X(inflateEnd) \
	X(inflateInit2_)

ZLIB_DL(DL_DECLARE)

extern dl_lib zlib_dl_lib;

/* 0, or -EOPNOTSUPP: "zlib is needed and cannot be loaded: ..." */
int dlopen_zlib(mb_error *err);

#ifndef ZLIB_DL_IMPL
#define deflate (dl_lib_ensure(&zlib_dl_lib), sym_deflate)
#define deflateBound (dl_lib_ensure(&zlib_dl_lib), sym_deflateBound)
#define deflateEnd (dl_lib_ensure(&zlib_dl_lib), sym_deflateEnd)
#define deflateInit2_ (dl_lib_ensure(&zlib_dl_lib), sym_deflateInit2_)
#define deflateSetHeader (dl_lib_ensure(&zlib_dl_lib), sym_deflateSetHeader)
#define inflate (dl_lib_ensure(&zlib_dl_lib), sym_inflate)
#define inflateEnd (dl_lib_ensure(&zlib_dl_lib), sym_inflateEnd)
#define inflateInit2_ (dl_lib_ensure(&zlib_dl_lib), sym_inflateInit2_)
#endif

#endif
