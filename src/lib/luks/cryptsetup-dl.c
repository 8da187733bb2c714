/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define CRYPTSETUP_DL_IMPL
#include "cryptsetup-dl.h"

CRYPTSETUP_DL(DL_DEFINE)

static const dl_sym cryptsetup_syms[] = { CRYPTSETUP_DL(DL_ENTRY) };

static dl_lib cryptsetup_lib = DL_LIB("libcryptsetup.so.12", "libcryptsetup", cryptsetup_syms);
DL_NOTE("luks", "LUKS2 tokens: luks enroll, unlock, list, remove, reseal", "suggested", "[\"libcryptsetup.so.12\"]");

int dlopen_cryptsetup(mb_error *err)
{
	return dl_lib_load(&cryptsetup_lib, err);
}
