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
/* The token's sealed file text (t's; valid while t lives). */
const char *luks_token_sealed(const mb_luks_token *t, size_t *ret_size);
/* The token's event summary, decoded (NULL, *ret_size 0: none; t's). */
const uint8_t *luks_token_events(const mb_luks_token *t, size_t *ret_size);

#endif
