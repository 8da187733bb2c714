/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_CURL_DL_H
#define MB_TOOL_CURL_DL_H

/*
 * libcurl, loaded by http_client_new (attest push, fleet), not linked (src/shared/dl-lib.h):
 * linked, it maps GnuTLS, Kerberos, LDAP, SSH, RTMP... into every mboot process. After this
 * header curl_easy_perform means sym_curl_easy_perform. curl_easy_setopt and
 * curl_easy_getinfo lose curl's compile-time type checks (typecheck-gcc.h wraps the function
 * in a macro that calls it by name). A function called but not listed here is an undefined
 * symbol when mboot links: add it.
 */

#include <curl/curl.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define CURL_DL(X) \
	X(curl_easy_cleanup) \
	X(curl_easy_getinfo) \
	X(curl_easy_init) \
	X(curl_easy_perform) \
	X(curl_easy_reset) \
	X(curl_easy_setopt) \
	X(curl_easy_strerror) \
	X(curl_global_cleanup) \
	X(curl_global_init) \
	X(curl_slist_append) \
	X(curl_slist_free_all)

CURL_DL(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "libcurl is needed and cannot be loaded: ..." */
int dlopen_curl(mb_error *err);

#ifndef CURL_DL_IMPL
#undef curl_easy_cleanup
#define curl_easy_cleanup sym_curl_easy_cleanup
#undef curl_easy_getinfo
#define curl_easy_getinfo sym_curl_easy_getinfo
#undef curl_easy_init
#define curl_easy_init sym_curl_easy_init
#undef curl_easy_perform
#define curl_easy_perform sym_curl_easy_perform
#undef curl_easy_reset
#define curl_easy_reset sym_curl_easy_reset
#undef curl_easy_setopt
#define curl_easy_setopt sym_curl_easy_setopt
#undef curl_easy_strerror
#define curl_easy_strerror sym_curl_easy_strerror
#undef curl_global_cleanup
#define curl_global_cleanup sym_curl_global_cleanup
#undef curl_global_init
#define curl_global_init sym_curl_global_init
#undef curl_slist_append
#define curl_slist_append sym_curl_slist_append
#undef curl_slist_free_all
#define curl_slist_free_all sym_curl_slist_free_all
#endif

#endif
