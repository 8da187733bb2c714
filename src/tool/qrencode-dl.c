/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define QRENCODE_DL_IMPL
#include "tool/qrencode-dl.h"

QRENCODE_DL(DL_DEFINE)

static const dl_sym qrencode_syms[] = { QRENCODE_DL(DL_ENTRY) };

static dl_lib qrencode_lib = DL_LIB("libqrencode.so.4", "libqrencode", qrencode_syms);
DL_NOTE("qrencode", "the QR code of totp init", "suggested", "[\"libqrencode.so.4\"]");

int dlopen_qrencode(mb_error *err)
{
	return dl_lib_load(&qrencode_lib, err);
}
