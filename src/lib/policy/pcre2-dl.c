/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define PCRE2_DL_IMPL
#include "pcre2-dl.h"

PCRE2_DL(DL_DEFINE)

static const dl_sym pcre2_syms[] = { PCRE2_DL(DL_ENTRY) };

static dl_lib pcre2_lib = {
	"libpcre2-8.so.0", "PCRE2", "libpcre2-8-0", pcre2_syms, sizeof(pcre2_syms) / sizeof(pcre2_syms[0]), false,
};

int dlopen_pcre2(mb_error *err)
{
	return dl_lib_load(&pcre2_lib, err);
}
