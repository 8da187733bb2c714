/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define JSON_DL_IMPL
#include "shared/json-dl.h"

JSON_DL(DL_DEFINE)

static const dl_sym json_syms[] = { JSON_DL(DL_ENTRY) };

/* Debian 12's soname and package. */
dl_lib json_dl_lib = {
	"libjson-c.so.5", "json-c", "libjson-c5", json_syms, sizeof(json_syms) / sizeof(json_syms[0]), false,
};
