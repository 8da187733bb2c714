/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "shared/hex.h"

char *hex_format(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = 0;
	return out;
}

char *hex_dup(const uint8_t *in, size_t n)
{
	char *s = malloc(2 * n + 1);

	return s ? hex_format(in, n, s) : NULL;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_parse(const char *s, size_t len, uint8_t *out, size_t out_size)
{
	size_t i;

	if (len != 2 * out_size)
		return -EINVAL;
	for (i = 0; i < out_size; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t) (hi << 4 | lo);
	}
	return 0;
}

/* EFI_GUID (UEFI spec appendix A): Data1 u32 LE, Data2 u16 LE, Data3 u16 LE, Data4[8] as is. */
char *guid_format(const uint8_t g[16], char out[MB_GUID_STR])
{
	/* Byte order of the text; -1 is a dash. Written by hand: snprintf showed in profiles. */
	static const signed char order[] = { 3, 2, 1, 0, -1, 5, 4, -1, 7, 6, -1, 8, 9, -1,
					      10, 11, 12, 13, 14, 15 };
	static const char digits[] = "0123456789abcdef";
	size_t i;
	char *d = out;

	for (i = 0; i < sizeof(order); i++) {
		if (order[i] < 0) {
			*d++ = '-';
			continue;
		}
		*d++ = digits[g[order[i]] >> 4];
		*d++ = digits[g[order[i]] & 15];
	}
	*d = 0;
	return out;
}
