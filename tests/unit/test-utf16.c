/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one UTF-16LE converter (src/lib/events/utf16.h) and its two callers: the event decoders
 * show what is not text (U+FFFD for a lone surrogate), the policy's mb_event_text refuses to
 * judge it (NULL). Expected bytes are the UTF-8 of RFC 3629 (U+FFFD = EF BF BD, U+1F600 =
 * F0 9F 98 80), worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/eventlog.h>
#include <mboot/events.h>
#include <mboot/policy.h>
#include "lib/events/utf16.h"

/* UTF-16LE bytes of units (0-terminated list; the terminator is not written). */
static size_t le(uint8_t *out, const uint16_t *units)
{
	size_t n = 0;

	for (; *units; units++) {
		out[n++] = (uint8_t) (*units & 0xff);
		out[n++] = (uint8_t) (*units >> 8);
	}
	return n;
}

#define LE(buf, ...) le(buf, (const uint16_t[]) { __VA_ARGS__, 0 })

/* What both callers make of an EV_IPL event with these bytes (as systemd-boot logs in PCR 12). */
static void callers(const uint8_t *p, size_t n, const char *shown, const char *judged)
{
	mb_event ev = { .pcr = 12, .type = MB_EV_IPL, .data = p, .data_size = (uint32_t) n };
	mb_event_decoded *dec = mb_event_decoded_new();
	const mb_decoded_node *text;
	char *t;

	assert_non_null(dec);
	assert_int_equal(mb_event_decode(NULL, &ev, dec), 0);
	assert_string_equal(mb_event_decoded_kind(dec), "utf16_string");
	text = mb_decoded_get(mb_event_decoded_root(dec), "text");
	assert_non_null(text);
	assert_string_equal(mb_decoded_string(text), shown);
	mb_event_decoded_free(dec);
	t = mb_event_text(&ev);
	if (judged) {
		assert_non_null(t);
		assert_string_equal(t, judged);
	} else {
		assert_null(t);
	}
	free(t);
}

static void test_lone_surrogates(void **state)
{
	uint8_t b[64];
	size_t n;
	char *s;

	(void) state;
	/* A high surrogate followed by a letter, a low surrogate alone, one at the very end. */
	n = LE(b, 'A', 0xd800, 'B');
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "A\xef\xbf\xbd" "B");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));
	callers(b, n, "A\xef\xbf\xbd" "B", NULL);

	n = LE(b, 'x', 'y', 0xdc00, 'z');
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "xy\xef\xbf\xbd" "z");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));
	callers(b, n, "xy\xef\xbf\xbd" "z", NULL);

	n = LE(b, 'a', 'b', 'c', 0xdbff);
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "abc\xef\xbf\xbd");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));

	/* A proper pair is shown as its character; a rule still does not judge it. */
	n = LE(b, 'o', 'k', 0xd83d, 0xde00, '!');
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "ok\xf0\x9f\x98\x80!");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));
	callers(b, n, "ok\xf0\x9f\x98\x80!", NULL);
}

static void test_text_and_not(void **state)
{
	uint8_t b[64];
	size_t n;
	char *s;

	(void) state;
	/* systemd-boot's command line with its NUL: both callers agree; é (U+00E9) is C3 A9. */
	n = LE(b, 'q', 'u', 'i', 0xe9, 't', ' ', '\t', 'x');
	b[n++] = 0;
	b[n++] = 0;
	callers(b, n, "qui\xc3\xa9t \tx", "qui\xc3\xa9t \tx");

	/* A NUL inside: shown up to it, never judged. */
	n = LE(b, 'a', 'b', 'c');
	b[n++] = 0;
	b[n++] = 0;
	n += LE(b + n, 'd', 'e');
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "abc");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));

	/* A control character, an odd length, nothing but NULs: not text to judge. */
	n = LE(b, 'a', 0x01, 'b');
	s = utf16le_to_utf8(b, n);
	assert_string_equal(s, "a\x01" "b");
	free(s);
	assert_null(utf16le_to_utf8_strict(b, n));
	n = LE(b, 'a', 'b');
	assert_null(utf16le_to_utf8_strict(b, n + 1));
	memset(b, 0, 4);
	assert_null(utf16le_to_utf8_strict(b, 4));
	s = utf16le_to_utf8(b, 4);
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lone_surrogates),
		cmocka_unit_test(test_text_and_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
