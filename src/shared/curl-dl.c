/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define CURL_DL_IMPL
#include "shared/curl-dl.h"

CURL_DL(DL_DEFINE)

static const dl_sym curl_syms[] = { CURL_DL(DL_ENTRY) };

/* The OpenSSL flavour of libcurl.so.4 is what libcurl-dev links; any flavour will do. */
static dl_lib curl_lib = DL_LIB("libcurl.so.4", "libcurl", curl_syms);
DL_NOTE("http", "HTTP(S) client: attest push and fleet to mboot-verifierd, its --notify webhooks", "suggested", "[\"libcurl.so.4\"]");

int dlopen_curl(mb_error *err)
{
	return dl_lib_load(&curl_lib, err);
}
