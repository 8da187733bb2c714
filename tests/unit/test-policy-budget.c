/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading a policy has one budget for all its regular expressions (docs/policy.md, "Limits"):
 * a policy of many patterns that each pass the backtracking probe, but each spend nearly its
 * match limit on it, took half a minute per 28 KB and hours at the size limits. Now it is
 * refused quickly, the rule named, and a large realistic policy still loads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <mboot/mboot.h>

/* Quadratic, not exponential: two bounded runs that retry each other's split. On the probe's
 * long run of one character it spends about 150,000 of the 200,000 steps a match may: under
 * the per-match limit, and costly. The alternatives name every character the probe tries. */
#define QUADRATIC "[^!]{0,300}[^!]{0,300}(?:=|abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/.,:@)"
/* Few steps, each a negative lookahead that scans the rest of the text. */
#define LOOKAROUND "(?:(?![^#]*+#).){0,300}(?:(?![^#]*+#).){0,300}z@"
/* A rule a person writes: the example policy's kernel command line, one per kernel version. */
#define REALISTIC "grub_cmd: linux /boot/vmlinuz-[0-9.]+-rc@[0-9]+\\\\+(\\\\.signed)? root=UUID=[0-9a-f-]{36} ro quiet splash ima-policy=tcb( vt\\\\.handoff=[0-9]+)?"

static double cpu_seconds(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* n rules of PCR 8 with pattern fmt (its @ the rule's index), described "hostile rule N". */
static char *policy_of(const char *fmt, int n)
{
	size_t cap = (size_t) n * (strlen(fmt) + 128) + 128, len = 0;
	const char *at = strchr(fmt, '@');
	char *text = malloc(cap);
	int i;

	assert_non_null(text);
	assert_non_null(at);
	len += (size_t) snprintf(text + len, cap - len, "{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [\n");
	for (i = 0; i < n; i++) {
		len += (size_t) snprintf(text + len, cap - len, "  {\"type\": \"EV_IPL\", \"description\": \"hostile rule %d\", "
					 "\"text\": \"", i);
		len += (size_t) snprintf(text + len, cap - len, "%.*s%d%s", (int) (at - fmt), fmt, i, at + 1);
		len += (size_t) snprintf(text + len, cap - len, "\"}%s\n", i + 1 < n ? "," : "");
		assert_true(len < cap);
	}
	len += (size_t) snprintf(text + len, cap - len, "]}}}\n");
	assert_true(len < cap);
	return text;
}

/* Parse text; the rc, the message in msg, the thread's CPU seconds spent. */
static int parse(const char *text, char msg[512], double *spent)
{
	mb_policy *p = NULL;
	mb_error err = { 0 };
	double t0 = cpu_seconds();
	int rc = mb_policy_parse(text, strlen(text), &p, &err);

	*spent = cpu_seconds() - t0;
	memcpy(msg, err.message, sizeof(err.message));
	mb_policy_free(p);
	return rc;
}

static void test_quadratic_rules_refused_quickly(void **state)
{
	char msg[512];
	char *one = policy_of(QUADRATIC, 1), *many = policy_of(QUADRATIC, 150);
	double spent;
	int rc;

	(void) state;
	/* One such rule is no catastrophe: it loads. */
	assert_int_equal(parse(one, msg, &spent), 0);
	/* 150 of them, 25 KB: before the budget each loaded in ~0.19 s (28 s together, all
	 * accepted); now the budget runs out at the second, and the message names it. */
	assert_true(strlen(many) < 28 * 1024);
	rc = parse(many, msg, &spent);
	fprintf(stderr, "150 quadratic rules: rc %d in %.3f s CPU: %s\n", rc, spent, msg);
	assert_int_equal(rc, -EBADMSG);
	assert_non_null(strstr(msg, "pcrs.8.rules[1]: rule \"hostile rule 1\": regular expression cannot be judged "
				    "within the load budget"));
	assert_true(spent < 2.0);
	free(one);
	free(many);
}

static void test_lookaround_rules_refused_quickly(void **state)
{
	char msg[512];
	char *many = policy_of(LOOKAROUND, 20);
	double spent;
	int rc;

	(void) state;
	/* Each rule spends ~1.5 s of CPU within a fraction of the steps (30 s for the 20): the
	 * CPU cap ends it. */
	rc = parse(many, msg, &spent);
	fprintf(stderr, "20 lookaround rules: rc %d in %.3f s CPU: %s\n", rc, spent, msg);
	assert_int_equal(rc, -EBADMSG);
	assert_non_null(strstr(msg, ": rule \"hostile rule "));
	assert_non_null(strstr(msg, "cannot be judged within the load budget"));
	assert_true(spent < 2.0);
	free(many);
}

static void test_large_realistic_policy_loads(void **state)
{
	char msg[512];
	char *text = policy_of(REALISTIC, 4000);
	const char *sanitize;
	double spent;
	int rc;

	(void) state;
	/* 4,000 patterns as a person writes them (a real policy has tens): ~4,000 steps each. */
	rc = parse(text, msg, &spent);
	fprintf(stderr, "4000 realistic rules: rc %d in %.3f s CPU: %s\n", rc, spent, msg);
	assert_int_equal(rc, 0);
	/* Far from the CPU cap, so a slow or busy machine loads it too: each pattern must begin
	 * with 'g', and the probes of other characters are charged without being run (0.05 s;
	 * 0.43 s when each ran, over the cap under ASan on a busy CI machine). Sanitizers
	 * multiply the time: measured without them. */
	sanitize = getenv("MB_SANITIZE");
	if (!sanitize || strcmp(sanitize, "none") == 0)
		assert_true(spent < 0.25);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quadratic_rules_refused_quickly),
		cmocka_unit_test(test_lookaround_rules_refused_quickly),
		cmocka_unit_test(test_large_realistic_policy_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
