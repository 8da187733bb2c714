/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSON_DL_H
#define MB_SHARED_JSON_DL_H

/*
 * json-c, loaded at its first use, not linked (src/shared/dl-lib.h): 'mboot hash' and
 * 'log replay' without --json never touch JSON, and every other process would pay for mapping
 * it. Files include this instead of <json-c/json.h>, and no json-c header after it; then each
 * function F below means "load json-c if needed, then sym_F" (dl_lib_ensure), so no call can
 * reach an empty slot. A function called but not listed here is an undefined symbol at link
 * time: add it to the list and its #define.
 */

#include <json-c/json.h>
#include "shared/dl-lib.h"

#define JSON_DL(X) \
	X(json_object_array_add) \
	X(json_object_array_get_idx) \
	X(json_object_array_length) \
	X(json_object_array_put_idx) \
	X(json_object_get) \
	X(json_object_get_boolean) \
	X(json_object_get_int) \
	X(json_object_get_int64) \
	X(json_object_get_object) \
	X(json_object_get_string) \
	X(json_object_get_string_len) \
	X(json_object_get_type) \
	X(json_object_get_uint64) \
	X(json_object_is_type) \
	X(json_object_new_array) \
	X(json_object_new_boolean) \
	X(json_object_new_int) \
	X(json_object_new_int64) \
	X(json_object_new_object) \
	X(json_object_new_string) \
	X(json_object_new_string_len) \
	X(json_object_new_uint64) \
	X(json_object_object_add) \
	X(json_object_object_del) \
	X(json_object_object_get) \
	X(json_object_object_get_ex) \
	X(json_object_object_length) \
	X(json_object_put) \
	X(json_object_set_int) \
	X(json_object_set_int64) \
	X(json_object_to_json_string_ext) \
	X(json_object_to_json_string_length) \
	X(json_tokener_error_desc) \
	X(json_tokener_free) \
	X(json_tokener_get_error) \
	X(json_tokener_get_parse_end) \
	X(json_tokener_new) \
	X(json_tokener_new_ex) \
	X(json_tokener_parse) \
	X(json_tokener_parse_ex) \
	X(json_tokener_set_flags)

JSON_DL(DL_DECLARE)

extern dl_lib json_dl_lib;

#ifndef JSON_DL_IMPL
#define json_object_array_add (dl_lib_ensure(&json_dl_lib), sym_json_object_array_add)
#define json_object_array_get_idx (dl_lib_ensure(&json_dl_lib), sym_json_object_array_get_idx)
#define json_object_array_length (dl_lib_ensure(&json_dl_lib), sym_json_object_array_length)
#define json_object_array_put_idx (dl_lib_ensure(&json_dl_lib), sym_json_object_array_put_idx)
#define json_object_get (dl_lib_ensure(&json_dl_lib), sym_json_object_get)
#define json_object_get_boolean (dl_lib_ensure(&json_dl_lib), sym_json_object_get_boolean)
#define json_object_get_int (dl_lib_ensure(&json_dl_lib), sym_json_object_get_int)
#define json_object_get_int64 (dl_lib_ensure(&json_dl_lib), sym_json_object_get_int64)
#define json_object_get_object (dl_lib_ensure(&json_dl_lib), sym_json_object_get_object)
#define json_object_get_string (dl_lib_ensure(&json_dl_lib), sym_json_object_get_string)
#define json_object_get_string_len (dl_lib_ensure(&json_dl_lib), sym_json_object_get_string_len)
#define json_object_get_type (dl_lib_ensure(&json_dl_lib), sym_json_object_get_type)
#define json_object_get_uint64 (dl_lib_ensure(&json_dl_lib), sym_json_object_get_uint64)
#define json_object_is_type (dl_lib_ensure(&json_dl_lib), sym_json_object_is_type)
#define json_object_new_array (dl_lib_ensure(&json_dl_lib), sym_json_object_new_array)
#define json_object_new_boolean (dl_lib_ensure(&json_dl_lib), sym_json_object_new_boolean)
#define json_object_new_int (dl_lib_ensure(&json_dl_lib), sym_json_object_new_int)
#define json_object_new_int64 (dl_lib_ensure(&json_dl_lib), sym_json_object_new_int64)
#define json_object_new_object (dl_lib_ensure(&json_dl_lib), sym_json_object_new_object)
#define json_object_new_string (dl_lib_ensure(&json_dl_lib), sym_json_object_new_string)
#define json_object_new_string_len (dl_lib_ensure(&json_dl_lib), sym_json_object_new_string_len)
#define json_object_new_uint64 (dl_lib_ensure(&json_dl_lib), sym_json_object_new_uint64)
#define json_object_object_add (dl_lib_ensure(&json_dl_lib), sym_json_object_object_add)
#define json_object_object_del (dl_lib_ensure(&json_dl_lib), sym_json_object_object_del)
#define json_object_object_get (dl_lib_ensure(&json_dl_lib), sym_json_object_object_get)
#define json_object_object_get_ex (dl_lib_ensure(&json_dl_lib), sym_json_object_object_get_ex)
#define json_object_object_length (dl_lib_ensure(&json_dl_lib), sym_json_object_object_length)
#define json_object_put (dl_lib_ensure(&json_dl_lib), sym_json_object_put)
#define json_object_set_int (dl_lib_ensure(&json_dl_lib), sym_json_object_set_int)
#define json_object_set_int64 (dl_lib_ensure(&json_dl_lib), sym_json_object_set_int64)
#define json_object_to_json_string_ext (dl_lib_ensure(&json_dl_lib), sym_json_object_to_json_string_ext)
#define json_object_to_json_string_length (dl_lib_ensure(&json_dl_lib), sym_json_object_to_json_string_length)
#define json_tokener_error_desc (dl_lib_ensure(&json_dl_lib), sym_json_tokener_error_desc)
#define json_tokener_free (dl_lib_ensure(&json_dl_lib), sym_json_tokener_free)
#define json_tokener_get_error (dl_lib_ensure(&json_dl_lib), sym_json_tokener_get_error)
#define json_tokener_get_parse_end (dl_lib_ensure(&json_dl_lib), sym_json_tokener_get_parse_end)
#define json_tokener_new (dl_lib_ensure(&json_dl_lib), sym_json_tokener_new)
#define json_tokener_new_ex (dl_lib_ensure(&json_dl_lib), sym_json_tokener_new_ex)
#define json_tokener_parse (dl_lib_ensure(&json_dl_lib), sym_json_tokener_parse)
#define json_tokener_parse_ex (dl_lib_ensure(&json_dl_lib), sym_json_tokener_parse_ex)
#define json_tokener_set_flags (dl_lib_ensure(&json_dl_lib), sym_json_tokener_set_flags)
#endif

#endif
