/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What luks-token.c (the token format) gives luks-device.c (libcryptsetup). Internal. */
#ifndef MB_LUKS_INTERNAL_H
#define MB_LUKS_INTERNAL_H

#include <mboot/luks.h>

/* The token text for keyslot holding the sealed file sealed_json (compact JSON; malloc'd). */
int luks_token_build(int keyslot, const char *sealed_json, char **ret, mb_error *err);
/* The token's sealed file text (t's; valid while t lives). */
const char *luks_token_sealed(const mb_luks_token *t, size_t *ret_size);

#endif
