/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy's "ima" section (src/lib/policy/policy-ima*.c): rust-keylime's 826-entry list meets
 * the section generated from it (825 files: the list's lines less boot_aggregate, counted off the
 * file), one path's digest changed in the policy is one violation naming that path and the
 * list's digest (read off the file's line); excludes and unlisted; digest spellings; a policy of
 * 100,000 paths loads and finds each; hostile sections refused with the field named.
 * Against hashlib and a real firmware log: tests/cli/test-ima-policy.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "corpus-util.h"

#define LIST "rust-keylime/ima/ascii_runtime_measurements"

static mb_ima_log *load_list(char **ret_text)
{
	size_t size = 0;
	uint8_t *data = corpus_load(LIST, &size);
	mb_ima_log *log = NULL;
	mb_error err = { 0 };

	assert_non_null(data);
	if (mb_ima_log_parse(data, size, 0, &log, &err) < 0)
		fail_msg("%s", err.message);
	if (ret_text) {
		*ret_text = malloc(size + 1);
		memcpy(*ret_text, data, size);
		(*ret_text)[size] = '\0';
	}
	free(data);
	return log;
}

static mb_policy *parse_ok(const char *text)
{
	mb_policy *p = NULL;
	mb_error err = { 0 };

	if (mb_policy_parse(text, strlen(text), &p, &err) < 0)
		fail_msg("%s", err.message);
	return p;
}

static void test_generated_accepts_list(void **state)
{
	mb_ima_log *log = load_list(NULL);
	mb_ima_policy_result r;
	mb_error err = { 0 };
	char *json = NULL;
	mb_policy *p;

	(void) state;
	assert_int_equal(mb_policy_generate_ima(NULL, 0, log, NULL, 0, &json, &err), 0);
	p = parse_ok(json);
	assert_true(mb_policy_has_ima(p));
	assert_int_equal(mb_policy_pcrs(p), 0);
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_entries, 826);
	assert_int_equal(r.n_allowed, 825);
	assert_int_equal(r.n_violations, 0);
	assert_true(mb_ima_policy_result_ok(&r));
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	free(json);
	mb_ima_log_free(log);
}

static void test_changed_digest(void **state)
{
	char *text = NULL, *line, *json = NULL, *edited, *hit;
	mb_ima_log *log = load_list(&text);
	mb_ima_policy_result r;
	mb_error err = { 0 };
	char path[256], digest[128], want[512];
	mb_policy *p;

	(void) state;
	/* the list's line 101 (entry 100): "10 TH ima-ng sha1:HEX PATH" */
	line = text;
	for (int i = 0; i < 100; i++)
		line = strchr(line, '\n') + 1;
	assert_int_equal(sscanf(line, "%*s %*s %*s %127s %255s", digest, path), 2);
	assert_int_equal(mb_policy_generate_ima(NULL, 0, log, NULL, 0, &json, &err), 0);
	/* the policy's digest for that path, its last hex digit changed */
	snprintf(want, sizeof(want), "\"%s\": [\n        \"%s\"", path, digest);
	hit = strstr(json, want);
	assert_non_null(hit);
	edited = strdup(json);
	edited[hit - json + strlen(want) - 2] ^= 1;
	p = parse_ok(edited);
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_violations, 1);
	assert_int_equal(r.violations[0].entry, 100);
	assert_string_equal(r.violations[0].path, path);
	assert_string_equal(r.violations[0].digest, digest);
	assert_non_null(strstr(r.violations[0].reason, "1 other digest"));
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	free(edited);
	free(json);
	free(text);
	mb_ima_log_free(log);
}

static void test_excludes_unlisted(void **state)
{
	mb_ima_log *log = load_list(NULL);
	mb_ima_policy_result r;
	mb_error err = { 0 };
	mb_policy *p;

	(void) state;
	/* nothing allowed: every file but boot_aggregate is a violation... */
	p = parse_ok("{\"version\": 1, \"pcrs\": {}, \"ima\": {\"digests\": {}}}");
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_violations, 825);
	assert_non_null(strstr(r.violations[0].reason, "not in the policy's allowlist"));
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	/* ... ignored when unlisted says so */
	p = parse_ok("{\"version\": 1, \"pcrs\": {}, \"ima\": {\"unlisted\": \"ignore\"}}");
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_violations, 0);
	assert_int_equal(r.n_unlisted, 825);
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	/* ... or excluded by a pattern over the whole path (a literal and a regular expression) */
	p = parse_ok("{\"version\": 1, \"pcrs\": {}, \"ima\": {\"excludes\": [\"/init\", \"/.*\"]}}");
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_violations, 0);
	assert_int_equal(r.n_excluded, 825);
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	/* anchored at both ends: "/bin" matches no path of the list */
	p = parse_ok("{\"version\": 1, \"pcrs\": {}, \"ima\": {\"excludes\": [\"/bin\"]}}");
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), 0);
	assert_int_equal(r.n_excluded, 0);
	mb_ima_policy_result_done(&r);
	mb_policy_free(p);
	/* no section: refused */
	p = parse_ok("{\"version\": 1, \"pcrs\": {\"0\": {\"rules\": []}}}");
	assert_int_equal(mb_policy_check_ima(p, log, NULL, &r, &err), -EINVAL);
	mb_policy_free(p);
	mb_ima_log_free(log);
}

static void test_scale(void **state)
{
	const size_t n = 100000;
	size_t cap = n * 100 + 100, len = 0, i;
	char *text = malloc(cap);
	mb_policy *p;

	(void) state;
	len += (size_t) snprintf(text + len, cap - len, "{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(text + len, cap - len, "%s\"/usr/lib/f%zu\":[\"sha256:%064zx\"]",
					 i ? "," : "", i, i);
	len += (size_t) snprintf(text + len, cap - len, "}}}");
	p = parse_ok(text);
	mb_policy_free(p);
	free(text);
}

static void test_hostile(void **state)
{
	static const char *const bad[] = {
		"{\"version\":1,\"pcrs\":{},\"ima\":1}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"/a\":\"00\"}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"/a\":[\"sha256:00\"]}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"/a\":[\"sha1:" "0000000000000000000000000000000000000000" "00\"]}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"\":[\"" "0000000000000000000000000000000000000000" "\"]}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"/a\":[\"SHA1:" "0000000000000000000000000000000000000000" "\"]}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"excludes\":[\"(a|a)*+b\", \"(\"]}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"excludes\":{}}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"unlisted\":true}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"other\":1}}",
		"{\"version\":1,\"pcrs\":{},\"ima\":{\"ima-buf\":{\"x\":[]}}}",
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mb_policy *p = NULL;
		mb_error err = { 0 };

		if (mb_policy_parse(bad[i], strlen(bad[i]), &p, &err) != -EBADMSG)
			fail_msg("hostile %zu loaded: %s", i, bad[i]);
		assert_non_null(strstr(err.message, "ima"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_accepts_list),
		cmocka_unit_test(test_changed_digest),
		cmocka_unit_test(test_excludes_unlisted),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
