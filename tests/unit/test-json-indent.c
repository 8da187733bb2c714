/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The re-indenter behind the pretty `log show --json` and `initramfs list --json`: compact JSON
 * in, the bytes json-c prints with JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
 * JSON_C_TO_STRING_NOSLASHESCAPE out (the layout of every other --json), whole or fed in
 * pieces cut anywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "shared/json-indent.h"

static const char *const docs[] = {
	"{}",
	"[]",
	"{\"a\":1}",
	"{\"a\":[],\"b\":{},\"c\":[[],{}],\"d\":[{\"e\":[]}]}",
	"{\"s\":\"a/b {x} [y], z: \\\"q\\\" \\\\\",\"t\":\"\\\\\",\"u\":\"\\u0001\\n\\t\"}",
	"{\"q\":\"\\\",[{:\",\"r\":[\"\\\\\",\"]\"]}",
	"[1,-2,3.5,true,false,null,\"x\",[1,[2,[3]]]]",
	"{\"events\":[{\"index\":0,\"digests\":{\"sha1\":\"00\"},\"decoded\":null},{\"index\":1}]}",
	"\"just a string, with: {braces}\"",
	"42",
};

/* What the re-indenter writes for compact, fed `piece` bytes at a time. */
static char *indented(const char *compact, size_t piece)
{
	json_indent st = { 0 };
	char *out = NULL;
	size_t size = 0, i, n = strlen(compact);
	FILE *f = open_memstream(&out, &size);

	assert_non_null(f);
	for (i = 0; i < n; i += piece)
		assert_int_equal(json_indent_write(&st, compact + i, n - i < piece ? n - i : piece, f), 0);
	assert_int_equal(json_indent_write(&st, "\n", 1, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(st.depth, 0);
	assert_false(st.in_string);
	return out;
}

static void test_like_json_c(void **state)
{
	size_t i, piece;

	(void) state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_object *o = json_tokener_parse(docs[i]);
		const char *plain, *pretty;
		char *want;

		assert_non_null(o);
		/* The input is what jsonout writes: json-c's compact form. */
		plain = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		assert_string_equal(plain, docs[i]);
		pretty = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
		assert_true(asprintf(&want, "%s\n", pretty) > 0);
		for (piece = 1; piece <= strlen(docs[i]); piece = piece * 2 + 1) {
			char *got = indented(docs[i], piece);

			if (strcmp(got, want) != 0)
				fail_msg("doc %zu, pieces of %zu:\n%s\nwanted\n%s", i, piece, got, want);
			free(got);
		}
		free(want);
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_like_json_c),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
