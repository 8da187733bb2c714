/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `mboot luks list --json`'s document (mb_luks_list_to_json): a token of the fuzz corpus
 * (fuzz/corpus/luks-token/events-pcr-0-7.json), whose keyslot, policy kind, bank and PCR
 * selection are read here from the file itself with jansson, a malformed token's message,
 * and recovery keyslots from a mask (bits 0, 2 and 31).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/json.h"

#include <mboot/mboot.h>
#include "shared/fileio.h"

static void test_list(void **state)
{
	const char *root = getenv("MB_SOURCE_ROOT");
	mb_luks_entry e[2] = { { .token = 3 }, { .token = 5 } };
	uint32_t recovery = 0x80000005u, summarised = 0;
	mb_error err = { 0 };
	json_t *file, *doc, *t, *sealed, *sel, *pcrs;
	uint8_t *buf = NULL;
	size_t size = 0;
	char path[1024], *text;
	int n_events;

	(void) state;
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/fuzz/corpus/luks-token/events-pcr-0-7.json", root);
	if (file_read(path, 1u << 20, &buf, &size, &err) < 0)
		fail_msg("%s: %s", path, err.message);
	assert_int_equal(mb_luks_token_parse((const char *) buf, size, &e[0].parsed, &err), 0);
	file = json_loadb((const char *) buf, size, 0, NULL);
	assert_non_null(file);
	free(buf);
	e[1].parsed = NULL;
	snprintf(e[1].error.message, sizeof(e[1].error.message), "token 5: \"mboot\" is not an object");

	text = mb_luks_list_to_json("/dev/x", e, 2, &recovery, false);
	assert_non_null(text);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "device")), "/dev/x");
	t = json_array_get(json_object_get(doc, "tokens"), 0);
	sealed = json_object_get(json_object_get(file, "mboot"), "sealed");
	sel = json_object_get(json_object_get(sealed, "pcrs"), "selection");
	assert_int_equal(json_integer_value(json_object_get(t, "token")), 3);
	assert_int_equal(json_integer_value(json_object_get(t, "keyslot")),
			 atoi(json_string_value(json_array_get(json_object_get(file, "keyslots"), 0))));
	assert_string_equal(json_string_value(json_object_get(t, "policy")),
			    json_string_value(json_object_get(json_object_get(sealed, "policy"), "kind")));
	assert_string_equal(json_string_value(json_object_get(t, "bank")),
			    json_string_value(json_object_get(json_object_get(sealed, "pcrs"), "bank")));
	pcrs = json_object_get(t, "pcrs");
	assert_true(json_equal(pcrs, sel));
	assert_null(json_object_get(t, "pin"));
	/* the event summary: its count as the token says, over the PCRs sealed to */
	n_events = mb_luks_token_events(e[0].parsed, &summarised);
	assert_true(n_events > 0);
	assert_int_equal(json_integer_value(json_object_get(t, "events")), n_events);
	assert_true(json_equal(json_object_get(t, "events_pcrs"), sel));
	/* the malformed one: its number and why, nothing else */
	t = json_array_get(json_object_get(doc, "tokens"), 1);
	assert_int_equal(json_object_size(t), 2);
	assert_string_equal(json_string_value(json_object_get(t, "error")), "token 5: \"mboot\" is not an object");
	json_decref(doc);
	assert_non_null(strstr(text, ",\"recovery_keyslots\":[0,2,31]}"));
	free(text);

	/* recovery keyslots unknown: left out; pretty as jq prints it */
	text = mb_luks_list_to_json("/dev/x", NULL, 0, NULL, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"device\": \"/dev/x\",\n  \"tokens\": []\n}");
	free(text);
	json_decref(file);
	mb_luks_token_free(e[0].parsed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
