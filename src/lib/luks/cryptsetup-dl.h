/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_CRYPTSETUP_DL_H
#define MB_CRYPTSETUP_DL_H

/*
 * libcryptsetup, loaded by the first LUKS device operation, not linked (src/shared/dl-lib.h):
 * linked, it and what it brings (device-mapper, blkid, udev, argon2, ...) would be mapped by
 * every mboot process. After this header crypt_init means sym_crypt_init. A function called
 * but not listed here is an undefined symbol when libmboot.so links: add it.
 */

#include <libcryptsetup.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

#define CRYPTSETUP_DL(X) \
	X(crypt_activate_by_passphrase) \
	X(crypt_free) \
	X(crypt_get_metadata_size) \
	X(crypt_init) \
	X(crypt_keyslot_add_by_passphrase) \
	X(crypt_keyslot_destroy) \
	X(crypt_keyslot_status) \
	X(crypt_load) \
	X(crypt_set_log_callback) \
	X(crypt_set_pbkdf_type) \
	X(crypt_token_is_assigned) \
	X(crypt_token_json_get) \
	X(crypt_token_json_set) \
	X(crypt_token_max) \
	X(crypt_token_status)

CRYPTSETUP_DL(DL_DECLARE)

/* 0, or -EOPNOTSUPP: "libcryptsetup is needed and cannot be loaded: ..." */
int dlopen_cryptsetup(mb_error *err);


#endif
