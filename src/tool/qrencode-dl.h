/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_QRENCODE_DL_H
#define MB_TOOL_QRENCODE_DL_H

/*
 * libqrencode, loaded when 'totp init' draws its QR code, not linked (src/shared/dl-lib.h).
 * After this header QRcode_free means sym_QRcode_free. A function called but not listed here
 * is an undefined symbol when mboot links: add it.
 */

#include <qrencode.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define QRENCODE_DL(X) \
	X(QRcode_encodeString) \
	X(QRcode_free)

QRENCODE_DL(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "libqrencode is needed and cannot be loaded: ..." */
int dlopen_qrencode(mb_error *err);


#endif
