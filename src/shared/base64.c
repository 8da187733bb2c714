/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Base64 (RFC 4648 §4, padded): the sealed file's, the LUKS token's and the evidence's binary fields. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "shared/base64.h"

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const uint8_t *in, size_t n)
{
	char *out, *o;
	size_t i;

	if (n > (SIZE_MAX / 4) * 3 - 3)
		return NULL;
	out = malloc((n + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	o = out;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8 | in[i + 2];

		*o++ = b64_chars[v >> 18];
		*o++ = b64_chars[(v >> 12) & 63];
		*o++ = b64_chars[(v >> 6) & 63];
		*o++ = b64_chars[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t) in[i] << 16 | (i + 1 < n ? (uint32_t) in[i + 1] << 8 : 0);

		*o++ = b64_chars[v >> 18];
		*o++ = b64_chars[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64_chars[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* Each alphabet character's value + 1; 0 for every other byte. A table, not a search: evidence
 * carries whole event logs in base64, decoded at every verification. */
static const uint8_t b64_rev[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7, ['H'] = 8,
	['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
	['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
	['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
	['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
	['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
	['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
	['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
};

static uint32_t b64_shifted[4][256];
static pthread_once_t b64_once = PTHREAD_ONCE_INIT;

static void b64_shifted_init(void)
{
	for (unsigned k = 0; k < 4; k++)
		for (unsigned c = 0; c < 256; c++)
			b64_shifted[k][c] = b64_rev[c] ? (uint32_t) (b64_rev[c] - 1) << (18 - 6 * k) : UINT32_C(1) << 31;
}

static int b64_val(char c)
{
	return (int) b64_rev[(unsigned char) c] - 1;
}

int base64_decode(const char *s, size_t len, size_t max, uint8_t **ret, size_t *ret_size)
{
	uint8_t *out;
	size_t i, n = 0, pad = 0;

	if (len % 4)
		return -EBADMSG;
	if (len / 4 * 3 > max + 2)
		return -E2BIG;
	if (len >= 1 && s[len - 1] == '=')
		pad++;
	if (len >= 2 && s[len - 2] == '=')
		pad++;
	out = malloc(len / 4 * 3 + 1);
	if (!out)
		return -ENOMEM;
	/* every quantum but the last has no padding: each character's bits already in place
	 * (b64_shifted), a byte outside the alphabet sets bit 31, checked once per quantum */
	pthread_once(&b64_once, b64_shifted_init);
	for (i = 0; i + 4 < len; i += 4) {
		const unsigned char *q = (const unsigned char *) s + i;
		uint32_t v = b64_shifted[0][q[0]] | b64_shifted[1][q[1]] | b64_shifted[2][q[2]] | b64_shifted[3][q[3]];

		if (v >> 31) {
			free(out);
			return -EBADMSG;
		}
		out[n++] = (uint8_t) (v >> 16);
		out[n++] = (uint8_t) (v >> 8);
		out[n++] = (uint8_t) v;
	}
	for (; i < len; i += 4) {
		int v[4], k;
		bool last = i + 4 == len;

		for (k = 0; k < 4; k++) {
			if (last && k >= 4 - (int) pad) {
				v[k] = 0;
				continue;
			}
			v[k] = b64_val(s[i + k]);
			if (v[k] < 0) {
				free(out);
				return -EBADMSG;
			}
		}
		out[n++] = (uint8_t) (v[0] << 2 | v[1] >> 4);
		if (!(last && pad == 2))
			out[n++] = (uint8_t) ((v[1] & 15) << 4 | v[2] >> 2);
		if (!(last && pad >= 1))
			out[n++] = (uint8_t) ((v[2] & 3) << 6 | v[3]);
		/* canonical: the bits padding drops must be zero */
		if (last && ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))) {
			free(out);
			return -EBADMSG;
		}
	}
	if (n > max) {
		free(out);
		return -E2BIG;
	}
	*ret = out;
	*ret_size = n;
	return 0;
}
