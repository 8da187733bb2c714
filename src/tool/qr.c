/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A QR code in the terminal (libqrencode), two modules a character with half blocks. */
#include <stdio.h>
#include <string.h>

#include "tool/qrencode-dl.h"
#include "tool/tool.h"

#define QUIET 2 /* modules of white border: phones need some */

static bool dark(const QRcode *q, int x, int y)
{
	if (x < 0 || y < 0 || x >= q->width || y >= q->width)
		return false;
	return q->data[y * q->width + x] & 1;
}

int tool_print_qr(FILE *f, const char *text)
{
	mb_error err = { 0 };
	QRcode *q;
	int x, y;

	/* Without libqrencode the URI, printed already, is typed in by hand: not a failure. */
	if (dlopen_qrencode(&err) < 0) {
		fprintf(f, "(no QR code: %s)\n", err.message);
		return 0;
	}
	q = sym_QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
	if (!q)
		return -1;
	/* Light modules are drawn (the terminal background is usually dark): an inverted code
	 * scans on most phones, a light-on-dark one on all. */
	for (y = -QUIET; y < q->width + QUIET; y += 2) {
		for (x = -QUIET; x < q->width + QUIET; x++) {
			bool top = !dark(q, x, y), bottom = !dark(q, x, y + 1);

			fputs(top && bottom ? "\xe2\x96\x88" : top ? "\xe2\x96\x80" : bottom ? "\xe2\x96\x84" : " ", f);
		}
		fputc('\n', f);
	}
	/* the code is the secret (a TOTP key, a recovery key): its modules are wiped before the free */
	explicit_bzero(q->data, (size_t) q->width * (size_t) q->width);
	sym_QRcode_free(q);
	return 0;
}
