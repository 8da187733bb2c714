/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The content of `mboot measure`'s records (mb_measure_content_json), each form: file with a
 * description, text (escaped as RFC 8259 and docs/json.md say: \", \\, \n, \u001F), stdin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>

static void expect(char *text, const char *want)
{
	assert_non_null(text);
	assert_string_equal(text, want);
	free(text);
}

static void test_content(void **state)
{
	(void) state;
	expect(mb_measure_content_json("test", "/etc/f", NULL), "{\"description\":\"test\",\"file\":\"/etc/f\"}");
	expect(mb_measure_content_json(NULL, "/etc/f", "ignored"), "{\"file\":\"/etc/f\"}");
	expect(mb_measure_content_json(NULL, NULL, "a\"b\\c\nd\x1f"), "{\"text\":\"a\\\"b\\\\c\\nd\\u001F\"}");
	expect(mb_measure_content_json("d", NULL, NULL), "{\"description\":\"d\",\"stdin\":true}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
