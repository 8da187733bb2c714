/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoders' text checks (src/lib/events/strings.c), which skip printable ASCII eight bytes
 * at a time: looks_text() and utf8_valid() on strings of every length up to 40 with one byte
 * or sequence at every place. What to expect comes from outside mboot: isprint() of the C
 * locale for a lone byte (plus the tab, newline and CR looks_text allows), and for the
 * sequences their UTF-8 per RFC 3629 (C3 A9 is U+00E9; C2 80 is U+0080, a C1 control; 80 alone
 * and C0 AF, an overlong '/', are no UTF-8).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/events/decode-internal.h"

#define MAXLEN 40

/* base: printable ASCII of length n with ins (k bytes) written at at. */
static size_t build(uint8_t *s, size_t n, size_t at, const uint8_t *ins, size_t k)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = (uint8_t) (0x21 + (i * 7) % 94); /* '!'..'~' */
	memcpy(s + at, ins, k);
	return n;
}

static void test_single_bytes(void **state)
{
	uint8_t s[MAXLEN];
	size_t n, at;
	int c;

	(void) state;
	for (c = 1; c < 0x80; c++) /* NUL: only a terminator, below */
		for (n = 1; n <= MAXLEN; n++)
			for (at = 0; at < n; at++) {
				uint8_t b = (uint8_t) c;
				bool text = isprint(c) || c == '\t' || c == '\n' || c == '\r';

				build(s, n, at, &b, 1);
				if (looks_text(s, n) != text)
					fail_msg("looks_text: byte 0x%02x at %zu of %zu", c, at, n);
				assert_true(utf8_valid(s, n));
			}
}

static void test_sequences(void **state)
{
	static const struct {
		uint8_t bytes[2];
		size_t len;
		bool text, utf8;
	} seqs[] = {
		{ { 0xc3, 0xa9 }, 2, true, true },
		{ { 0xc2, 0x80 }, 2, false, true },
		{ { 0x80 }, 1, false, false },
		{ { 0xff }, 1, false, false },
		{ { 0xc0, 0xaf }, 2, false, false },
	};
	uint8_t s[MAXLEN];
	size_t n, at, k;

	(void) state;
	for (k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
		for (n = seqs[k].len; n <= MAXLEN; n++)
			for (at = 0; at + seqs[k].len <= n; at++) {
				build(s, n, at, seqs[k].bytes, seqs[k].len);
				if (looks_text(s, n) != seqs[k].text || utf8_valid(s, n) != seqs[k].utf8)
					fail_msg("sequence %zu at %zu of %zu", k, at, n);
			}
	/* Trailing NULs end a text; none before them is one. */
	for (n = 1; n < MAXLEN; n++) {
		build(s, MAXLEN, 0, (const uint8_t *) "", 0);
		memset(s + n, 0, MAXLEN - n);
		assert_true(looks_text(s, MAXLEN));
		s[0] = 0;
		assert_false(looks_text(s, MAXLEN));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_bytes),
		cmocka_unit_test(test_sequences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
