/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recovery keys' text (mboot/luks.h): 32 random bytes as 64 modhex characters, 8 groups of 8.
 * Modhex's 16 letters are at the same place on QWERTY, AZERTY, QWERTZ, Dvorak and the others a
 * boot prompt may have loaded, and no two look alike.
 */
#include <errno.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <mboot/luks.h>
#include "shared/fail.h"

static const char modhex[16] = "cbdefghijklnrtuv";

MB_EXPORT int mb_luks_recovery_key_new(char *out, size_t out_size, mb_error *err)
{
	uint8_t bytes[32];
	size_t o = 0;

	if (!out || out_size < MB_LUKS_RECOVERY_KEY_LEN + 1)
		return set_error(err, -EINVAL, "a recovery key needs %d bytes", MB_LUKS_RECOVERY_KEY_LEN + 1);
	if (RAND_priv_bytes(bytes, sizeof(bytes)) != 1) {
		OPENSSL_cleanse(bytes, sizeof(bytes));
		return set_error(err, -EIO, "no random bytes for the recovery key");
	}
	for (size_t i = 0; i < sizeof(bytes); i++) {
		if (i && i % 4 == 0)
			out[o++] = '-';
		out[o++] = modhex[bytes[i] >> 4];
		out[o++] = modhex[bytes[i] & 15];
	}
	out[o] = '\0';
	OPENSSL_cleanse(bytes, sizeof(bytes));
	return 0;
}
