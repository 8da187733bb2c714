/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-c-pretty: one JSON document from stdin, printed to stdout by json-c itself with
 * JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE and a
 * newline: the layout every pretty --json promises (docs/json.md), from outside mboot, for
 * test-log-show-pretty.sh to compare with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

int main(void)
{
	json_tokener *tok = json_tokener_new_ex(1000);
	json_object *o = NULL;
	char *text = NULL;
	size_t n = 0, cap = 0, got;
	const char *out;

	if (!tok)
		return 1;
	do {
		if (cap - n < 65536) {
			char *p = realloc(text, cap = cap ? 2 * cap : 1 << 20);

			if (!p)
				return 1;
			text = p;
		}
		got = fread(text + n, 1, cap - n, stdin);
		n += got;
	} while (got);
	/* json-c parses at most INT_MAX bytes at once: the test documents are far smaller. */
	if (n > (size_t) 1 << 30)
		return 1;
	o = json_tokener_parse_ex(tok, text, (int) n);
	if (!o || json_tokener_get_error(tok) != json_tokener_success) {
		fprintf(stderr, "json-c-pretty: %s\n", json_tokener_error_desc(json_tokener_get_error(tok)));
		return 1;
	}
	out = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						 JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!out || printf("%s\n", out) < 0 || fflush(stdout) != 0)
		return 1;
	json_object_put(o);
	json_tokener_free(tok);
	free(text);
	return 0;
}
