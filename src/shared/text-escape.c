/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Machine text escaped for printing (text-escape.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/text-escape.h"

/*
 * The length of the well-formed UTF-8 sequence of a printable character at s[0..n), or 0 when
 * s[0] must be escaped (a control character, DEL, a C1 control, or not well-formed UTF-8:
 * overlong forms, surrogates, beyond U+10FFFF, truncated).
 */
static size_t printable_len(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len, i;

	if (s[0] < 0x20 || s[0] == 0x7f)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (c >= 0x80 && c <= 0x9f) /* C1 controls: 0x9b is CSI to some terminals */
		return 0;
	return len;
}

/* Bytes written for the byte s[0] when it must be escaped, into out (NULL: only counted). */
static size_t escape_byte(unsigned char b, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char e = b == '\n' ? 'n' : b == '\r' ? 'r' : b == '\t' ? 't' : 0;

	if (e) {
		if (out) {
			out[0] = '\\';
			out[1] = e;
		}
		return 2;
	}
	if (out) {
		out[0] = '\\';
		out[1] = 'x';
		out[2] = hex[b >> 4];
		out[3] = hex[b & 15];
	}
	return 4;
}

/* One pass: counts (out NULL) or writes; the escaped length. */
static size_t escape_into(const unsigned char *s, size_t len, char *out)
{
	size_t i = 0, o = 0, k;

	while (i < len) {
		k = printable_len(s + i, len - i);
		if (k) {
			if (out)
				memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else if (i + 1 < len && s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
			/* a C1 control: both bytes escaped, so no half sequence is left */
			o += escape_byte(s[i], out ? out + o : NULL);
			o += escape_byte(s[i + 1], out ? out + o : NULL);
			i += 2;
		} else {
			o += escape_byte(s[i], out ? out + o : NULL);
			i++;
		}
	}
	return o;
}

char *text_escape(const char *s, size_t len)
{
	size_t n = escape_into((const unsigned char *) s, len, NULL);
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	escape_into((const unsigned char *) s, len, out);
	out[n] = '\0';
	return out;
}

char *text_escape_str(const char *s)
{
	return s ? text_escape(s, strlen(s)) : NULL;
}

bool text_is_safe(const char *s, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		k = printable_len((const unsigned char *) s + i, len - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}
