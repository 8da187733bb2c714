/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_PCRE2_DL_H
#define MB_PCRE2_DL_H

/*
 * PCRE2, loaded by the first mb_policy_parse, not linked (src/shared/dl-lib.h): only policies
 * have regular expressions. After this header pcre2_match means sym_pcre2_match (the pointer
 * to the library's pcre2_match_8). A function called but not listed here is an undefined
 * symbol when libmboot.so links: add it.
 */

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define PCRE2_DL(X) \
	X(pcre2_code_free) \
	X(pcre2_compile) \
	X(pcre2_get_error_message) \
	X(pcre2_match) \
	X(pcre2_match_context_copy) \
	X(pcre2_match_context_create) \
	X(pcre2_match_context_free) \
	X(pcre2_match_data_create) \
	X(pcre2_match_data_create_from_pattern) \
	X(pcre2_match_data_free) \
	X(pcre2_pattern_info) \
	X(pcre2_set_depth_limit) \
	X(pcre2_set_heap_limit) \
	X(pcre2_set_match_limit)

PCRE2_DL(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "PCRE2 is needed and cannot be loaded: ..." */
int dlopen_pcre2(mb_error *err);


#endif
