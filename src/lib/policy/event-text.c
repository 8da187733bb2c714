/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include <mboot/policy.h>

/* UTF-16LE (systemd-boot/stub strings, EFI descriptions) to UTF-8; NULL if not plausible UTF-16. */
static char *utf16_to_utf8(const uint8_t *p, size_t n)
{
	size_t units = n / 2, i, o = 0;
	char *out;

	while (units > 0 && p[2 * units - 2] == 0 && p[2 * units - 1] == 0)
		units--;
	if (units == 0 || n % 2)
		return NULL;
	out = malloc(units * 3 + 1);
	if (!out)
		return NULL;
	for (i = 0; i < units; i++) {
		uint32_t c = (uint32_t) p[2 * i] | (uint32_t) p[2 * i + 1] << 8;

		if (c >= 0xd800 && c <= 0xdfff) {
			/* Surrogates in a measured string: not text we will judge. */
			free(out);
			return NULL;
		}
		if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
			free(out);
			return NULL;
		}
		if (c < 0x80) {
			out[o++] = (char) c;
		} else if (c < 0x800) {
			out[o++] = (char) (0xc0 | c >> 6);
			out[o++] = (char) (0x80 | (c & 0x3f));
		} else {
			out[o++] = (char) (0xe0 | c >> 12);
			out[o++] = (char) (0x80 | ((c >> 6) & 0x3f));
			out[o++] = (char) (0x80 | (c & 0x3f));
		}
	}
	out[o] = 0;
	return out;
}

MB_EXPORT char *mb_event_text(const mb_event *ev)
{
	size_t n = ev->data_size, i;
	bool ascii = true;
	char *s;

	while (n > 0 && ev->data[n - 1] == 0)
		n--;
	if (n == 0)
		return NULL;
	for (i = 0; i < n; i++) {
		uint8_t c = ev->data[i];

		if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
			ascii = false;
			break;
		}
	}
	if (!ascii)
		return ev->data_size >= 4 && ev->data[1] == 0 ? utf16_to_utf8(ev->data, ev->data_size) : NULL;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, ev->data, n);
	s[n] = 0;
	return s;
}
