/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RFC 6238 TOTP over RFC 4226 HOTP (dynamic truncation, §5.3), with OpenSSL's HMAC. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <mboot/digest.h>
#include <mboot/totp.h>
#include "shared/fail.h"
#include "shared/reader.h"

MB_EXPORT int mb_totp(const uint8_t *seed, size_t seed_len, uint64_t unix_time, uint32_t step, uint64_t t0,
		      unsigned digits, uint16_t alg, uint32_t *ret_code)
{
	static const uint32_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
					  1000000000 };
	const EVP_MD *md = alg == MB_ALG_SHA1 ? EVP_sha1() : alg == MB_ALG_SHA256 ? EVP_sha256() :
			   alg == MB_ALG_SHA512 ? EVP_sha512() : NULL;
	uint8_t counter[8], mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0, off, i;
	uint64_t t;
	uint32_t bin;

	if (!md || !seed || seed_len == 0 || seed_len > 1024 || step == 0 || unix_time < t0 || digits < 6 ||
	    digits > 10)
		return -EINVAL;
	t = (unix_time - t0) / step;
	for (i = 0; i < 8; i++)
		counter[i] = (uint8_t) (t >> (56 - 8 * i));
	if (!HMAC(md, seed, (int) seed_len, counter, sizeof(counter), mac, &mac_len) || mac_len < 20)
		return -EIO;
	off = mac[mac_len - 1] & 0x0f;
	bin = (uint32_t) (mac[off] & 0x7f) << 24 | (uint32_t) mac[off + 1] << 16 | (uint32_t) mac[off + 2] << 8 |
	      mac[off + 3];
	OPENSSL_cleanse(mac, sizeof(mac));
	*ret_code = digits == 10 ? bin : bin % pow10[digits];
	return 0;
}

MB_EXPORT char *mb_base32_encode(const uint8_t *in, size_t n)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	char *out = malloc((n * 8 + 4) / 5 + 1);
	size_t o = 0, i;
	uint32_t buf = 0;
	int bits = 0;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		buf = buf << 8 | in[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = alphabet[(buf >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[o++] = alphabet[(buf << (5 - bits)) & 31];
	out[o] = 0;
	buf = 0;
	return out;
}

/* Percent-encoding of a URI component (issuer and account may hold anything). */
static char *uri_escape(const char *s)
{
	static const char hex_upper[] = "0123456789ABCDEF";
	char *out = malloc(3 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char) *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c)) {
			*o++ = (char) c;
		} else {
			*o++ = '%';
			*o++ = hex_upper[c >> 4];
			*o++ = hex_upper[c & 15];
		}
	}
	*o = 0;
	return out;
}

MB_EXPORT char *mb_totp_uri(const uint8_t *seed, size_t seed_len, const char *issuer, const char *account,
			    unsigned digits, uint32_t step, uint16_t alg)
{
	char *b32 = mb_base32_encode(seed, seed_len), *iss = uri_escape(issuer), *acc = uri_escape(account), *uri = NULL;
	const char *algname = alg == MB_ALG_SHA256 ? "SHA256" : alg == MB_ALG_SHA512 ? "SHA512" : "SHA1";

	if (b32 && iss && acc &&
	    asprintf(&uri, "otpauth://totp/%s:%s?secret=%s&issuer=%s&algorithm=%s&digits=%u&period=%u", iss, acc, b32,
		     iss, algname, digits, step) < 0)
		uri = NULL;
	if (b32) {
		OPENSSL_cleanse(b32, strlen(b32));
		free(b32);
	}
	free(iss);
	free(acc);
	return uri;
}

static const char totp_magic[8] = "MBTOTP1"; /* with its NUL: 8 bytes */

static bool settings_valid(const mb_totp_settings *s)
{
	return s->digits >= 6 && s->digits <= 10 && s->period >= 1 && s->period <= 3600;
}

MB_EXPORT int mb_totp_secret_pack(const uint8_t *seed, size_t seed_len, const mb_totp_settings *s, uint8_t *out,
				  size_t *ret_len)
{
	if (!seed_len || seed_len > MB_TOTP_SECRET_MAX - 13 || !settings_valid(s))
		return -EINVAL;
	memcpy(out, totp_magic, 8);
	out[8] = (uint8_t) s->digits;
	out[9] = (uint8_t) (s->period >> 24);
	out[10] = (uint8_t) (s->period >> 16);
	out[11] = (uint8_t) (s->period >> 8);
	out[12] = (uint8_t) s->period;
	memcpy(out + 13, seed, seed_len);
	*ret_len = 13 + seed_len;
	return 0;
}

MB_EXPORT int mb_totp_secret_unpack(const uint8_t *secret, size_t len, const uint8_t **ret_seed,
				    size_t *ret_seed_len, mb_totp_settings *ret)
{
	byte_reader r;
	uint8_t digits;
	uint32_t period;

	if (len < 8 || memcmp(secret, totp_magic, 8) != 0) {
		/* sealed before the settings were: what init then always used */
		if (!len)
			return -EBADMSG;
		*ret_seed = secret;
		*ret_seed_len = len;
		*ret = (mb_totp_settings) { .digits = 6, .period = 30 };
		return 0;
	}
	reader_init(&r, secret, len, 0);
	if (read_skip(&r, 8) < 0 || read_u8(&r, &digits) < 0 || read_u32be(&r, &period) < 0 || !reader_left(&r))
		return -EBADMSG;
	*ret = (mb_totp_settings) { .digits = digits, .period = period };
	if (!settings_valid(ret))
		return -EBADMSG;
	*ret_seed = reader_cur(&r);
	*ret_seed_len = reader_left(&r);
	return 0;
}
