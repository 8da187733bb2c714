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

/*
 * What `totp init` seals: the seed with the settings of the codes it was enrolled with, so
 * that `totp show` gives the digits and period the phone uses (and they are as tamper-proof
 * as the seed). Layout: "MBTOTP1" NUL, digits (1 byte), period (4 bytes, big-endian), seed.
 * A secret without that header is a seed sealed before (6 digits, 30 s).
 */
#define MB_TOTP_SECRET_MAX (12 + 64)

typedef struct mb_totp_settings {
	unsigned digits;   /* 6 to 10 */
	uint32_t period;   /* seconds, 1 to 3600 */
} mb_totp_settings;

/* Pack seed (1 to 64 bytes) and settings into out (MB_TOTP_SECRET_MAX bytes). -EINVAL. */
MB_EXPORT int mb_totp_secret_pack(const uint8_t *seed, size_t seed_len, const mb_totp_settings *s, uint8_t *out,
				  size_t *ret_len) MB_WUR;
/* The seed (pointing into secret) and settings of an unsealed secret; -EBADMSG for a header
 * with impossible settings or no seed. */
MB_EXPORT int mb_totp_secret_unpack(const uint8_t *secret, size_t len, const uint8_t **ret_seed,
				    size_t *ret_seed_len, mb_totp_settings *ret) MB_WUR;

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
