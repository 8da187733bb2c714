/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_CURL_DL_H
#define MB_SHARED_CURL_DL_H

/*
 * libcurl, loaded by http_client_new (mboot's attest push, fleet) and by mboot-verifierd's
 * webhooks (src/verifierd/notify.c, only with --notify), not linked (src/shared/dl-lib.h):
 * linked, it maps GnuTLS, Kerberos, LDAP, SSH, RTMP... into every process. One table for both
 * binaries; not part of libmboot (src/shared/meson.build: curl_dl_srcs). After this
 * header curl_easy_perform means sym_curl_easy_perform. curl_easy_setopt and
 * curl_easy_getinfo lose curl's compile-time type checks (typecheck-gcc.h wraps the function
 * in a macro that calls it by name). A function called but not listed here is an undefined
 * symbol when mboot or mboot-verifierd links: add it.
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


#endif
