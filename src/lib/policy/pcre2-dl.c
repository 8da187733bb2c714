/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define PCRE2_DL_IMPL
#include "pcre2-dl.h"

PCRE2_DL(DL_DEFINE)

static const dl_sym pcre2_syms[] = { PCRE2_DL(DL_ENTRY) };

static dl_lib pcre2_lib = DL_LIB("libpcre2-8.so.0", "PCRE2", pcre2_syms);
DL_NOTE("policy", "regular expressions of policy rules", "recommended", "[\"libpcre2-8.so.0\"]");

int dlopen_pcre2(mb_error *err)
{
	return dl_lib_load(&pcre2_lib, err);
}
