/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What luks-token.c (the token format) gives luks-device.c (libcryptsetup). Internal. */
#ifndef MB_LUKS_INTERNAL_H
#define MB_LUKS_INTERNAL_H

#include <mboot/luks.h>

/*
 * The token text for keyslot holding the sealed file sealed_json and the base64 event
 * summary events (NULL: none) (compact JSON; malloc'd).
 */
int luks_token_build(int keyslot, const char *sealed_json, const char *events, char **ret, mb_error *err);

#endif
