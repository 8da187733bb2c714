/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define CURL_DL_IMPL
#include "tool/curl-dl.h"

CURL_DL(DL_DEFINE)

static const dl_sym curl_syms[] = { CURL_DL(DL_ENTRY) };

/* Debian's libcurl4 (the OpenSSL flavour, as libcurl-dev links) */
static dl_lib curl_lib = {
	"libcurl.so.4", "libcurl", "libcurl4", curl_syms, sizeof(curl_syms) / sizeof(curl_syms[0]), false,
};

int dlopen_curl(mb_error *err)
{
	return dl_lib_load(&curl_lib, err);
}
