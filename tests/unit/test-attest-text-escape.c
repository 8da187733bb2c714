/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Machine text escaped for printing (src/shared/text-escape.h), what the attest verdict's details
 * and `mboot verify` print. Expected strings worked out by hand from RFC 3629 (UTF-8 forms: C1
 * U+009B = C2 9B, an overlong '/' = C0 AF, a surrogate U+D800 = ED A0 80, U+110000 = F4 90 80 80).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/text-escape.h"

static void check(const char *in, size_t len, const char *want)
{
	char *got = text_escape(in, len);

	assert_non_null(got);
	assert_string_equal(got, want);
	/* escaping twice changes nothing, and the result is safe */
	assert_true(text_is_safe(got, strlen(got)));
	{
		char *again = text_escape_str(got);

		assert_string_equal(again, got);
		free(again);
	}
	assert_int_equal(text_is_safe(in, len), strcmp(want, in) == 0 && strlen(in) == len);
	free(got);
}

#define CHECK(lit, want) check(lit, sizeof(lit) - 1, want)

static void test_controls(void **state)
{
	(void) state;
	CHECK("plain text, \\ kept", "plain text, \\ kept");
	CHECK("a\nb", "a\\nb");
	CHECK("a\r\tb", "a\\r\\tb");
	CHECK("\033[2J", "\\x1b[2J");
	CHECK("del\177", "del\\x7f");
	CHECK("nul\0x", "nul\\x00x");
	CHECK("\x01\x1f", "\\x01\\x1f");
}

static void test_utf8(void **state)
{
	(void) state;
	CHECK("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK("csi \xc2\x9b" "31m", "csi \\xc2\\x9b31m");          /* C1 CSI */
	CHECK("nbsp \xc2\xa0", "nbsp \xc2\xa0");                  /* U+00A0 is not C1 */
	CHECK("over \xc0\xaf", "over \\xc0\\xaf");                /* overlong '/' */
	CHECK("over3 \xe0\x80\xaf", "over3 \\xe0\\x80\\xaf");
	CHECK("sur \xed\xa0\x80", "sur \\xed\\xa0\\x80");
	CHECK("big \xf4\x90\x80\x80", "big \\xf4\\x90\\x80\\x80");
	CHECK("lone \x80", "lone \\x80");
	CHECK("cut \xe2\x82", "cut \\xe2\\x82");                  /* truncated at the end */
	CHECK("cut \xe2\x82" "x", "cut \\xe2\\x82x");
	CHECK("ff \xff\xfe", "ff \\xff\\xfe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
