/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_TOTP_H
#define MBOOT_TOTP_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP), as tpmtotp shows them: a
 * seed only a good boot can unseal gives the code a phone also computes, so the user can tell
 * the machine booted properly before typing a password into it.
 */
#define MB_TOTP_SEED_SIZE 20   /* 160 bits, RFC 4226's recommendation for HMAC-SHA-1 */

/* The code for unix_time: T = (unix_time - t0) / step; alg is MB_ALG_SHA1/SHA256/SHA512;
 * digits 6 to 10. Returns 0 or -EINVAL / -EIO. */
MB_EXPORT int mb_totp(const uint8_t *seed, size_t seed_len, uint64_t unix_time, uint32_t step, uint64_t t0,
		      unsigned digits, uint16_t alg, uint32_t *ret_code) MB_WUR;

/* RFC 4648 base32, no padding (as otpauth URIs carry secrets). Caller frees. */
MB_EXPORT char *mb_base32_encode(const uint8_t *in, size_t n);

/* otpauth://totp/ISSUER:ACCOUNT?secret=...&issuer=...&algorithm=SHA1&digits=6&period=30.
 * The URI holds the secret: callers wipe it (explicit_bzero) before freeing. */
MB_EXPORT char *mb_totp_uri(const uint8_t *seed, size_t seed_len, const char *issuer, const char *account,
			    unsigned digits, uint32_t step, uint16_t alg);

#ifdef __cplusplus
}
#endif
#endif
