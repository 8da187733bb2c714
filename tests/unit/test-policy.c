/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policies against a real GRUB boot (ima-evm-utils' sample machine): the hand-written example
 * of docs/policy.md holds; tampered copies of the log break exactly the rules they should;
 * hostile policy files are refused with the line and field.
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
#include "shared/fileio.h"
#include "lib/policy/policy-internal.h"

#define SAMPLE "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9"

static mb_event_log *load(const char *rel)
{
	size_t size;
	uint8_t *b = corpus_load(rel, &size);
	mb_event_log *log = NULL;
	mb_error err = { 0 };

	assert_non_null(b);
	assert_int_equal(mb_event_log_parse(b, size, &log, &err), 0);
	free(b);
	return log;
}

static mb_policy *example_policy(void)
{
	char path[4096];
	const char *root = getenv("MB_SOURCE_ROOT");
	uint8_t *text;
	size_t size;
	mb_policy *p = NULL;
	mb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/docs/policy-example.json", root ? root : ".");
	assert_int_equal(file_read(path, 1 << 20, &text, &size, &err), 0);
	if (mb_policy_parse((char *) text, size, &p, &err) < 0)
		fprintf(stderr, "%s\n", err.message);
	assert_non_null(p);
	free(text);
	return p;
}

/* Judge log as a TPM holding its own replayed values would have it verified (as mboot verify does). */
static void check(const mb_policy *p, const mb_event_log *log, uint16_t bank, mb_policy_result *res)
{
	mb_pcr_values v;
	mb_verify_result *vr = NULL;
	mb_verify_options opts = { .size = sizeof(opts), .only_banks = &bank, .n_only = 1,
				   .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT };
	mb_error err = { 0 };

	assert_int_equal(mb_replay_log(log, SIZE_MAX, &v, NULL, &err), 0);
	assert_int_equal(mb_verify_log(log, NULL, &v, &opts, &vr, &err), 0);
	assert_int_equal(mb_policy_check(p, log, NULL, vr, bank, res, &err), 0);
	mb_verify_result_free(vr);
}

static void test_example_holds_on_real_boot(void **state)
{
	mb_event_log *log = load(SAMPLE);
	mb_policy *p = example_policy();
	mb_policy_result res;
	size_t i;

	check(p, log, MB_ALG_SHA256, &res);
	for (i = 0; i < res.n_violations; i++)
		fprintf(stderr, "PCR %u #%d: %s\n", res.violations[i].pcr,
			res.violations[i].event ? (int) res.violations[i].event->number : -1, res.violations[i].reason);
	assert_true(mb_policy_result_ok(&res));
	assert_int_equal(res.pcr[4], MB_POLICY_PCR_OK);
	assert_int_equal(res.pcr[8], MB_POLICY_PCR_OK);
	assert_int_equal(res.pcr[9], MB_POLICY_PCR_NOT_GOVERNED);
	assert_true(res.events_matched > 50);
	mb_policy_result_done(&res);

	/* The example's PCR 4 binaries are given in SHA-256 only: judged in the SHA-1 bank, none matches. */
	check(p, log, MB_ALG_SHA1, &res);
	assert_false(mb_policy_result_ok(&res));
	assert_int_equal(res.pcr[4], MB_POLICY_PCR_VIOLATED);
	mb_policy_result_done(&res);
	mb_policy_free(p);
	mb_event_log_free(log);
}

/* A copy of the log with event `victim`'s data replaced; digests recomputed when rehash. */
static mb_event_log *tamper(const mb_event_log *log, size_t victim, const char *new_data, bool rehash)
{
	mb_log_writer *w;
	mb_event_log *out = NULL;
	mb_error err = { 0 };
	const uint8_t *bytes;
	size_t size, i;

	assert_int_equal(mb_log_writer_new(&w), 0);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (i != victim) {
			assert_int_equal(mb_log_writer_add_event(w, ev), 0);
		} else if (!rehash) {
			mb_event copy = *ev;
			copy.data = (const uint8_t *) new_data;
			copy.data_size = (uint32_t) strlen(new_data) + 1;
			assert_int_equal(mb_log_writer_add_event(w, &copy), 0);
		} else {
			const char *text = strchr(new_data, ' ') + 1; /* GRUB hashes the text after "prefix: " */
			assert_int_equal(mb_log_writer_add_hashed(w, ev->pcr, ev->type, text, strlen(text),
								  new_data, strlen(new_data) + 1), 0);
		}
	}
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &out, &err), 0);
	mb_log_writer_free(w);
	return out;
}

static size_t find_event(const mb_event_log *log, const char *prefix)
{
	size_t i;

	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		if (ev->data_size > strlen(prefix) && memcmp(ev->data, prefix, strlen(prefix)) == 0)
			return i;
	}
	fail();
	return 0;
}

static void test_tampered_command_line(void **state)
{
	mb_event_log *log = load(SAMPLE), *bad;
	mb_policy *p = example_policy();
	mb_policy_result res;
	size_t victim = find_event(log, "kernel_cmdline: ");
	static const char evil[] = "kernel_cmdline: /boot/vmlinuz-5.7.0-rc2+.signed root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh";

	/* Text edited, digest left: the PCR's data does not verify (data-mismatch), so none of its
	 * events is judged: the PCR is violated as a whole. */
	bad = tamper(log, victim, evil, false);
	check(p, bad, MB_ALG_SHA256, &res);
	assert_int_equal(res.pcr[8], MB_POLICY_PCR_VIOLATED);
	assert_int_equal(res.pcr[4], MB_POLICY_PCR_OK);
	assert_int_equal(res.n_violations, 1);
	assert_null(res.violations[0].event);
	assert_non_null(strstr(res.violations[0].reason, "did not verify (data-mismatch)"));
	mb_policy_result_done(&res);
	mb_event_log_free(bad);

	/* Text and digest both changed (a different boot): the regular expression refuses init=. */
	bad = tamper(log, victim, evil, true);
	check(p, bad, MB_ALG_SHA256, &res);
	assert_int_equal(res.pcr[8], MB_POLICY_PCR_VIOLATED);
	assert_ptr_equal(res.violations[0].event, mb_event_log_event(bad, victim));
	assert_non_null(strstr(res.violations[0].reason, "no rule"));
	/* The PCR's three EV_IPL rules it came closest to, one string each, in the policy's order. */
	assert_int_equal(res.violations[0].n_closest_rules, 3);
	assert_non_null(strstr(res.violations[0].closest_rules[0], "(text ~ /kernel_cmdline: /boot/vmlinuz-"));
	assert_non_null(strstr(res.violations[0].closest_rules[1], "(text ~ /grub_cmd: linux /boot/vmlinuz-"));
	assert_non_null(strstr(res.violations[0].closest_rules[2], "(text ~ /(?s)grub_cmd: (?!linux ).*/)"));
	/* The required kernel_cmdline rule is then missing too. */
	assert_non_null(strstr(res.violations[res.n_violations - 1].reason, "required"));
	mb_policy_result_done(&res);
	mb_event_log_free(bad);
	mb_policy_free(p);
	mb_event_log_free(log);
}

static mb_policy *parse_text(const char *text, int expect_rc, const char *words)
{
	mb_policy *p = NULL;
	mb_error err = { 0 };
	int rc = mb_policy_parse(text, strlen(text), &p, &err);

	if (rc != expect_rc || (words && !strstr(err.message, words))) {
		fprintf(stderr, "policy %.60s...: rc %d, message \"%s\" (wanted \"%s\")\n", text, rc, err.message,
			words ? words : "");
		fail();
	}
	return p;
}

static void test_values_and_counts(void **state)
{
	mb_event_log *log = load(SAMPLE);
	mb_policy *p;
	mb_policy_result res;
	mb_pcr_values truth;
	char text[1024], hex[41];
	const mb_pcr_bank *b;
	size_t i, over = 0, required = 0, unknown = 0;

	/* PCR 0's true SHA-1 value, from the machine's own PCR dump (sample-tpm-2.0-pcrs-8-9). */
	assert_true(truth_load("ima-evm-utils/sample-tpm-2.0-pcrs-8-9", "tss", &truth));
	b = pcrv_bank_const(&truth, MB_ALG_SHA1);
	assert_non_null(b);
	for (i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", b->value[0][i]);
	snprintf(text, sizeof(text), "{\"version\": 1, \"pcrs\": {\"0\": {\"values\": {\"sha1\": \"%s\"}},"
		 " \"5\": {\"values\": {\"sha1\": \"%040d\"}}}}", hex, 0);
	p = parse_text(text, 0, NULL);
	check(p, log, MB_ALG_SHA1, &res);
	assert_int_equal(res.pcr[0], MB_POLICY_PCR_OK);       /* equals the real TPM's PCR 0 */
	assert_int_equal(res.pcr[5], MB_POLICY_PCR_VIOLATED); /* zero is not PCR 5 */
	mb_policy_result_done(&res);
	/* No value for the bank being judged: fail closed. */
	check(p, log, MB_ALG_SHA256, &res);
	assert_int_equal(res.pcr[0], MB_POLICY_PCR_VIOLATED);
	mb_policy_result_done(&res);
	mb_policy_free(p);

	p = parse_text("{\"version\": 1, \"pcrs\": {"
		       " \"4\": {\"rules\": [{\"type\": \"EV_SEPARATOR\", \"max\": 1, \"digests\": [{\"sha256\": "
		       "\"df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119\"}]},"
		       " {\"type\": \"EV_EFI_BOOT_SERVICES_APPLICATION\", \"max\": 1, \"digests\": [{\"sha256\": "
		       "\"bc9b04bca6179f985f13e6c8e62221d3b98e94001af72715e8546c48104242fb\"}]},"
		       " {\"type\": \"EV_POST_CODE\", \"required\": true, \"digests\": [{\"sha1\": "
		       "\"0000000000000000000000000000000000000000\"}]}]}}}", 0, NULL);
	check(p, log, MB_ALG_SHA256, &res);
	assert_int_equal(res.pcr[4], MB_POLICY_PCR_VIOLATED);
	for (i = 0; i < res.n_violations; i++) {
		over += !!strstr(res.violations[i].reason, "maximum");
		required += !!strstr(res.violations[i].reason, "required");
		unknown += !!strstr(res.violations[i].reason, "no rule");
	}
	assert_int_equal(over, 1);     /* that application appears twice, max 1 */
	assert_int_equal(required, 1); /* no EV_POST_CODE in PCR 4 */
	assert_int_equal(unknown, 4);  /* the four other applications */
	mb_policy_result_done(&res);
	mb_policy_free(p);
	mb_event_log_free(log);
}

/* "min_bank": a bank name, read as its TCG Algorithm Registry id (sha256 0x000B, sha384 0x000C,
 * sm3_256 0x0012); none is 0; anything else refused, naming the key. */
static void test_min_bank(void **state)
{
	static const struct { const char *value; uint16_t id; } good[] = {
		{ "\"sha1\"", 0x0004 }, { "\"sha256\"", 0x000b }, { "\"sha384\"", 0x000c },
		{ "\"sha512\"", 0x000d }, { "\"sm3_256\"", 0x0012 },
	};
	static const char *const bad[] = { "\"sha3_256\"", "\"sha-256\"", "\"\"", "11", "null", "[\"sha256\"]" };
	char text[256];
	mb_policy *p;
	size_t i;

	(void) state;
	p = parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": []}}}", 0, NULL);
	assert_int_equal(mb_policy_min_bank(p), 0);
	mb_policy_free(p);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "{\"version\": %zu, \"min_bank\": %s, \"pcrs\": {\"8\": {\"rules\": []}}}",
			 1 + i % 2, good[i].value);
		p = parse_text(text, 0, NULL);
		assert_int_equal(mb_policy_min_bank(p), good[i].id);
		mb_policy_free(p);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"version\": 1,\n\"min_bank\": %s, \"pcrs\": {\"8\": {\"rules\": []}}}", bad[i]);
		parse_text(text, -EBADMSG, "line 2: min_bank: expected a bank name");
	}
}

static void test_hostile_policies(void **state)
{
	mb_policy *p;
	char *big;
	size_t i, n;

	parse_text("{\"version\": 1,\n\"pcrs\": {\n\"8\": [}", -EBADMSG, "line 3");
	parse_text("{\"version\": 3, \"pcrs\": {}}", -EBADMSG, "versions 1 and 2");
	parse_text("{\"version\": 1, \"pcrs\": {}, \"polcy\": 1}", -EBADMSG, "unknown key \"polcy\"");
	parse_text("{\"version\": 1, \"pcrs\": {\"24\": {\"values\": {}}}}", -EBADMSG, "0 to 23");
	parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"(a\"}]}}}",
		   -EBADMSG, "pcrs.8.rules[0]: regular expression does not compile");
	parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"(a+)+$\"}]}}}",
		   -EBADMSG, "catastrophically");
	parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"(x|x)*y\"}]}}}",
		   -EBADMSG, "catastrophically");
	parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [{\"type\": \"EV_BOGUS\", \"text\": \"a\"}]}}}",
		   -EBADMSG, "unknown event type");
	parse_text("{\"version\": 1, \"pcrs\": {\"4\": {\"rules\": [{\"type\": \"EV_IPL\", \"digests\": [{\"sha256\": \"abcd\"}]}]}}}",
		   -EBADMSG, "not 32 bytes of hex");
	parse_text("{\"version\": 1, \"pcrs\": {\"4\": {\"rules\": [{\"type\": \"EV_IPL\", \"digests\": [], \"text\": \"a\"}]}}}",
		   -EBADMSG, "exactly one of");
	parse_text("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", -EBADMSG,
		   "line 1, column 17: nested deeper than 16 arrays and objects");

	/* Strict JSON: what json-c alone lets through, or reports as its parser state. */
	parse_text("{\"version\": 1,\n \"pcrs\": {},\n}", -EBADMSG, "line 3, column 1: string or '}' expected near '}'");
	parse_text("{\"version\": 1,\n \"pcrs\": {\"8\": {\"rules\": [\n", -EBADMSG,
		   "line 3, column 1: ']' expected near end of file");
	parse_text("{\"version\": 1, \"pcrs\": {}}\n}", -EBADMSG, "line 2, column 1: end of file expected near '}'");
	parse_text("{\"version\": 1, 'pcrs': {}}", -EBADMSG, "line 1, column 16: string or '}' expected near '''");
	/* A key twice: json-c keeps the last, so a lax rule could hide behind a strict one. */
	parse_text("{\"version\": 1, \"pcrs\": {\n"
		   "  \"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"grub_cmd: linux /vmlinuz ro\"}]},\n"
		   "  \"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \".*\"}]}}}",
		   -EBADMSG, "line 3, column 3: duplicate object key near '\"8\"'");
	parse_text("{\"version\": 1, \"pcrs\": {\n"
		   "  \"8\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"grub_cmd: linux /vmlinuz ro\"}]},\n"
		   "  \"\\u0038\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \".*\"}]}}}",
		   -EBADMSG, "line 3, column 3: duplicate object key near '\"\\u0038\"'");
	parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [\n"
		   "  {\"type\": \"EV_IPL\", \"text\": \"grub_cmd: linux /vmlinuz ro\",\n"
		   "   \"text\": \".*\"}]}}}",
		   -EBADMSG, "line 3, column 4: duplicate object key near '\"text\"'");
	parse_text("{\"version\": 1, \"version\": 1, \"pcrs\": {}}", -EBADMSG,
		   "line 1, column 16: duplicate object key near '\"version\"'");
	/* the same key in two objects is no duplicate */
	p = parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [\n"
		       "  {\"type\": \"EV_IPL\", \"text\": \"grub_cmd: linux /vmlinuz ro\"},\n"
		       "  {\"type\": \"EV_IPL\", \"text\": \"kernel_cmdline: /vmlinuz ro\"}]},\n"
		       " \"9\": {\"rules\": [{\"type\": \"EV_IPL\", \"text\": \"grub_cmd: .*\"}]}}}",
		       0, NULL);
	assert_non_null(p);
	mb_policy_free(p);

	/* 5,000 rules in one PCR: over the cap. */
	n = 5000;
	big = malloc(n * 48 + 100);
	assert_non_null(big);
	strcpy(big, "{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": [");
	for (i = 0; i < n; i++)
		strcat(big, i ? ",{\"type\": \"EV_IPL\", \"text\": \"a\"}" : "{\"type\": \"EV_IPL\", \"text\": \"a\"}");
	strcat(big, "]}}}");
	parse_text(big, -EBADMSG, "more than 4096 rules");
	free(big);
}

/*
 * Plain-text patterns are compared as text instead of matched by PCRE2: for every pattern the
 * shortcut takes, PCRE2 itself (compiled as rules are) must agree on every subject.
 */
static void test_literal_patterns_agree_with_pcre2(void **state)
{
	static const char *const patterns[] = {
		"grub_cmd: set prefix=\\(hd0,gpt2\\)/boot/grub", "grub_cmd: \\[ -s \\(hd0\\)/grubenv \\]",
		"kernel_cmdline: /vmlinuz root=UUID=1-2 ro quiet", "a#b c", "", "\xc3\xa9t\xc3\xa9", "x\\.y", "x\\-y",
		/* not plain text: PCRE2 decides */
		"a.b", "a|b", "ab*", "a\\d", "a\\Qb\\E", "(a)\\1", "a$", "^a", "a{2}", "a\\ b", "(ab)", "[a]",
	};
	static const char *const subjects[] = {
		"grub_cmd: set prefix=(hd0,gpt2)/boot/grub", "grub_cmd: set prefix=(hd0,gpt2)/boot/grub\n",
		"grub_cmd: [ -s (hd0)/grubenv ]", "kernel_cmdline: /vmlinuz root=UUID=1-2 ro quiet",
		"kernel_cmdline: /vmlinuz root=UUID=1-2 ro quiet ", "a#b c", "", "\n", "\xc3\xa9t\xc3\xa9", "x.y", "xzy",
		"x-y", "a.b", "axb", "a", "b", "ab", "abb", "a5", "a b", "aa", "a\xff",
	};
	size_t i, k, literals = 0;

	(void) state;
	/* sym_pcre2_compile here is the library's pointer, loaded at the first policy parse */
	assert_int_equal(dlopen_pcre2(NULL), 0);
	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		size_t len = 0;
		char *lit = policy_pattern_literal(patterns[i], &len);
		int errcode;
		PCRE2_SIZE erroff;
		pcre2_code *re = sym_pcre2_compile((PCRE2_SPTR) patterns[i], PCRE2_ZERO_TERMINATED,
					       PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
					       PCRE2_NEVER_BACKSLASH_C, &errcode, &erroff, NULL);
		pcre2_match_data *md = sym_pcre2_match_data_create(1, NULL);

		assert_non_null(re);
		/* the first 8 are plain text, the rest are not */
		assert_int_equal(lit != NULL, i < 8);
		for (k = 0; lit && k < sizeof(subjects) / sizeof(subjects[0]); k++) {
			size_t n = strlen(subjects[k]);
			bool by_pcre2 = sym_pcre2_match(re, (PCRE2_SPTR) subjects[k], n, 0, 0, md, NULL) >= 0;

			assert_int_equal(by_pcre2, n == len && memcmp(subjects[k], lit, n) == 0);
			literals += by_pcre2;
		}
		free(lit);
		sym_pcre2_match_data_free(md);
		sym_pcre2_code_free(re);
	}
	/* the subjects do exercise matches, not only refusals */
	assert_true(literals >= 6);
}

/*
 * Fedora 31's GRUB 2.02 (its TPM patches) labels its PCR 8 strings "grub_cmd " and
 * "grub_kernel_cmdline " (no colon) and hashes the text with its NUL. Text rules judge them as
 * GRUB's strings, under the upstream labels: the kernel command line as "kernel_cmdline: ".
 */
#define FEDORA "fwupd/binary_bios_measurements-v1"
#define FC31_KERNEL "\\\\(hd2,gpt2\\\\)/vmlinuz-5\\\\.3\\\\.12-300\\\\.fc31\\\\.x86_64"
#define FC31_ARGS "root=UUID=f6af2f01-aeda-4a22-92db-f899fea6df51 ro resume=UUID=2a16ee05-78c0-46a7-b7f5-30add9ad6c44 rhgb quiet"

static void test_fedora_grub_strings(void **state)
{
	mb_event_log *log = load(FEDORA);
	mb_policy *p;
	mb_policy_result res;
	mb_error err = { 0 };
	char *json = NULL;
	size_t i;

	(void) state;
	p = parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": ["
		       " {\"type\": \"EV_IPL\", \"required\": true, \"max\": 1, \"text\": \"kernel_cmdline: " FC31_KERNEL " " FC31_ARGS "\"},"
		       " {\"type\": \"EV_IPL\", \"required\": true, \"max\": 1, \"text\": \"grub_cmd: linux " FC31_KERNEL " " FC31_ARGS "\"},"
		       " {\"type\": \"EV_IPL\", \"required\": true, \"max\": 1,"
		       "  \"text\": \"grub_cmd: initrd \\\\(hd2,gpt2\\\\)/initramfs-5\\\\.3\\\\.12-300\\\\.fc31\\\\.x86_64\\\\.img\"},"
		       " {\"type\": \"EV_IPL\", \"text\": \"(?s)grub_cmd: (?!linux |initrd ).*\"}]}}}", 0, NULL);
	check(p, log, MB_ALG_SHA1, &res);
	for (i = 0; i < res.n_violations; i++)
		fprintf(stderr, "PCR %u #%d: %s\n", res.violations[i].pcr,
			res.violations[i].event ? (int) res.violations[i].event->number : -1, res.violations[i].reason);
	assert_true(mb_policy_result_ok(&res));
	assert_int_equal(res.pcr[8], MB_POLICY_PCR_OK);
	assert_int_equal(res.events_matched, 58); /* every PCR 8 event of the log */
	mb_policy_result_done(&res);
	mb_policy_free(p);

	/* The label as written is not what a rule sees. */
	p = parse_text("{\"version\": 1, \"pcrs\": {\"8\": {\"rules\": ["
		       " {\"type\": \"EV_IPL\", \"text\": \"grub_kernel_cmdline .*\"},"
		       " {\"type\": \"EV_IPL\", \"text\": \"(?s)grub_cmd: .*\"}]}}}", 0, NULL);
	check(p, log, MB_ALG_SHA1, &res);
	assert_int_equal(res.pcr[8], MB_POLICY_PCR_VIOLATED);
	assert_int_equal(res.n_violations, 1);
	assert_int_equal(res.violations[0].event->number, 105);
	assert_non_null(strstr(res.violations[0].reason, "no rule"));
	mb_policy_result_done(&res);
	mb_policy_free(p);

	/* A policy generated from the log holds on it, with text rules under the upstream labels. */
	assert_int_equal(mb_policy_generate_from_log(log, 1u << 8, 0, &json, &err), 0);
	assert_non_null(strstr(json, "\"kernel_cmdline: \\\\(hd2,gpt2\\\\)/vmlinuz"));
	assert_null(strstr(json, "grub_kernel_cmdline"));
	p = parse_text(json, 0, NULL);
	check(p, log, MB_ALG_SHA1, &res);
	assert_true(mb_policy_result_ok(&res));
	assert_int_equal(res.events_matched, 58);
	mb_policy_result_done(&res);
	mb_policy_free(p);
	free(json);
	mb_event_log_free(log);
}

/*
 * Firmware sets (version 2) on two real machines' logs, with the values their TPMs held (the
 * corpus's pcrs.json, not mboot's replay): each log meets its own set and is named by it; a
 * policy whose sets each hold one of the log's PCRs but never both is refused for the PCR
 * that differs from the closest set.
 */
#define FW_A "go-tpm-tools/arch-linux-workstation.bin"
#define FW_B "go-tpm-tools/cos-85-amd-sev.bin"

static void hex_of(const mb_pcr_values *v, uint16_t alg, uint32_t pcr, char *out)
{
	const mb_pcr_bank *b = pcrv_bank_const(v, alg);
	size_t i;

	assert_non_null(b);
	assert_true(b->present & (1u << pcr));
	for (i = 0; i < b->size; i++)
		sprintf(out + 2 * i, "%02x", b->value[pcr][i]);
}

/* {"0": {"sha256": "<hex>"}, ...} of PCRs 0-7 of v; pcr_from_other (or -1) from other. */
static void set_pcrs_json(char *out, size_t n, const mb_pcr_values *v, const mb_pcr_values *other, int pcr_from_other)
{
	char hex[65];
	size_t o = 0;
	uint32_t pcr;

	o += (size_t) snprintf(out + o, n - o, "{");
	for (pcr = 0; pcr < 8; pcr++) {
		hex_of((int) pcr == pcr_from_other ? other : v, MB_ALG_SHA256, pcr, hex);
		o += (size_t) snprintf(out + o, n - o, "%s\"%u\": {\"sha256\": \"%s\"}", pcr ? ", " : "", pcr, hex);
	}
	snprintf(out + o, n - o, "}");
}

/* Judge log as verified against the TPM values v (the machine's own, from the corpus). */
static void check_against(const mb_policy *p, const mb_event_log *log, const mb_pcr_values *v, mb_policy_result *res)
{
	uint16_t bank = MB_ALG_SHA256;
	mb_verify_options opts = { .size = sizeof(opts), .only_banks = &bank, .n_only = 1,
				   .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT };
	mb_verify_result *vr = NULL;
	mb_error err = { 0 };

	assert_int_equal(mb_verify_log(log, NULL, v, &opts, &vr, &err), 0);
	assert_true(mb_verify_result_ok(vr));
	assert_int_equal(mb_policy_check(p, log, NULL, vr, bank, res, &err), 0);
	mb_verify_result_free(vr);
}

static void test_firmware_sets(void **state)
{
	mb_event_log *a = load(FW_A), *b = load(FW_B);
	mb_pcr_values ta, tb;
	char sa[1200], sb[1200], text[3000];
	mb_policy_result res;
	mb_policy *p;
	uint32_t pcr;

	assert_true(truth_load(FW_A ".pcrs.json", "json", &ta));
	assert_true(truth_load(FW_B ".pcrs.json", "json", &tb));
	set_pcrs_json(sa, sizeof(sa), &ta, NULL, -1);
	set_pcrs_json(sb, sizeof(sb), &tb, NULL, -1);
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"arch\", \"pcrs\": %s},"
		 " {\"name\": \"cos-85\", \"pcrs\": %s}]}", sa, sb);
	p = parse_text(text, 0, NULL);
	assert_int_equal(mb_policy_version(p), 2);
	assert_int_equal(mb_policy_n_firmware_sets(p), 2);
	assert_int_equal(mb_policy_firmware_pcrs(p), 0xff);
	assert_int_equal(mb_policy_pcrs(p), 0xff);
	check_against(p, a, &ta, &res);
	assert_true(mb_policy_result_ok(&res));
	assert_string_equal(res.firmware_set, "arch");
	mb_policy_result_done(&res);
	check_against(p, b, &tb, &res);
	assert_true(mb_policy_result_ok(&res));
	assert_string_equal(res.firmware_set, "cos-85");
	mb_policy_result_done(&res);
	mb_policy_free(p);

	/* Each set holds one of A's PCRs 0 and 2 (the machines differ in both), neither set both. */
	set_pcrs_json(sa, sizeof(sa), &ta, &tb, 2); /* A's PCR 0, B's PCR 2 */
	set_pcrs_json(sb, sizeof(sb), &ta, &tb, 0); /* B's PCR 0, A's PCR 2 */
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"x\", \"pcrs\": %s},"
		 " {\"name\": \"y\", \"pcrs\": %s}]}", sa, sb);
	p = parse_text(text, 0, NULL);
	check_against(p, a, &ta, &res);
	assert_false(mb_policy_result_ok(&res));
	assert_null(res.firmware_set);
	for (pcr = 0; pcr < 8; pcr++)
		assert_int_equal(res.pcr[pcr], pcr == 2 ? MB_POLICY_PCR_VIOLATED : MB_POLICY_PCR_OK);
	assert_int_equal(res.n_violations, 1);
	assert_int_equal(res.violations[0].pcr, 2);
	assert_non_null(strstr(res.violations[0].reason, "no firmware set holds all of PCRs 0-7; the closest, \"x\""));
	mb_policy_result_done(&res);
	mb_policy_free(p);
	mb_event_log_free(a);
	mb_event_log_free(b);
}

/* A firmware set's text with n sets named name0, name1... (or all "same"), each of PCR 4. */
static char *sets_text(size_t n, bool same_name)
{
	size_t cap = 120 + n * 140, o, i;
	char *t = malloc(cap);

	assert_non_null(t);
	o = (size_t) snprintf(t, cap, "{\"version\": 2, \"pcrs\": {}, \"firmware\": [");
	for (i = 0; i < n; i++)
		o += (size_t) snprintf(t + o, cap - o, "%s{\"name\": \"%s%zu\", \"pcrs\": {\"4\": {\"sha256\": \"%064zx\"}}}",
				       i ? ", " : "", same_name ? "same" : "name", same_name ? (size_t) 0 : i, i);
	snprintf(t + o, cap - o, "]}");
	return t;
}

static void test_hostile_firmware_sets(void **state)
{
	static const char v4[] = "{\"4\": {\"sha256\": \"df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119\"}}";
	char text[1000];
	mb_policy *p;
	char *t;

	snprintf(text, sizeof(text), "{\"version\": 1, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": %s}]}", v4);
	parse_text(text, -EBADMSG, "firmware sets need \"version\": 2");
	parse_text("{\"version\": 2, \"pcrs\": {}, \"firmware\": []}", -EBADMSG, "1 to 256 sets");
	parse_text("{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": {}}]}", -EBADMSG,
		   "firmware[0]: needs \"pcrs\"");
	parse_text("{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\"}]}", -EBADMSG, "firmware[0]: needs \"pcrs\"");
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"pcrs\": %s}]}", v4);
	parse_text(text, -EBADMSG, "needs a \"name\"");
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\\u0007\", \"pcrs\": %s}]}", v4);
	parse_text(text, -EBADMSG, "needs a \"name\"");
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": %s, \"pcr\": 1}]}", v4);
	parse_text(text, -EBADMSG, "firmware[0]: unknown key \"pcr\"");
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": {\"4\": {}}}]}");
	parse_text(text, -EBADMSG, "firmware[0].pcrs.4: expected an object mapping bank names");
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": {\"04\": {\"sha256\": \"00\"}}}]}");
	parse_text(text, -EBADMSG, "no leading zero");
	/* a PCR governed twice: by a set and by "pcrs" */
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {\"4\": {\"rules\": []}}, \"firmware\": [{\"name\": \"a\", \"pcrs\": %s}]}", v4);
	parse_text(text, -EBADMSG, "PCR 4 is governed in \"pcrs\" too");
	/* sets giving other PCRs: the smaller would leave the others open */
	snprintf(text, sizeof(text), "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": \"a\", \"pcrs\": %s},"
		 " {\"name\": \"b\", \"pcrs\": {\"5\": {\"sha256\": \"%064d\"}}}]}", v4, 0);
	parse_text(text, -EBADMSG, "firmware[1]: gives other PCRs than firmware[0]");
	t = sets_text(2, true);
	parse_text(t, -EBADMSG, "firmware[1]: the name \"same0\" is given to firmware[0] too");
	free(t);
	t = sets_text(MB_POLICY_MAX_FIRMWARE_SETS + 1, false);
	parse_text(t, -EBADMSG, "1 to 256 sets");
	free(t);
	t = sets_text(MB_POLICY_MAX_FIRMWARE_SETS, false);
	p = parse_text(t, 0, NULL);
	assert_int_equal(mb_policy_n_firmware_sets(p), MB_POLICY_MAX_FIRMWARE_SETS);
	assert_string_equal(mb_policy_firmware_set_name(p, 255), "name255");
	mb_policy_free(p);
	free(t);
	/* version 1 reads as it always did */
	p = parse_text("{\"version\": 1, \"pcrs\": {\"4\": {\"values\": {\"sha256\": "
		       "\"df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119\"}}}}", 0, NULL);
	assert_int_equal(mb_policy_version(p), 1);
	assert_int_equal(mb_policy_n_firmware_sets(p), 0);
	mb_policy_free(p);
}

/* mb_policy_add_firmware: B's values next to A's, by the corpus's true values. */
static void test_add_firmware(void **state)
{
	static const char sig[] = "{\"kind\": \"mboot-policy-signature\", \"version\": 1}";
	static const char unknown[] = "{\"version\": 1, \"pcrs\": {}, \"signature\": \"AA\"}";
	mb_event_log *a = load(FW_A), *b = load(FW_B), *sample = load(SAMPLE);
	mb_pcr_values ta, tb;
	mb_error err = { 0 };
	char *gen = NULL, *two = NULL, *again = NULL, hex[65];
	mb_policy *p = NULL;
	mb_policy_result res;
	uint32_t pcr;

	assert_true(truth_load(FW_A ".pcrs.json", "json", &ta));
	assert_true(truth_load(FW_B ".pcrs.json", "json", &tb));
	assert_int_equal(mb_policy_generate_from_log(a, 0xff, 0xff, &gen, &err), 0);
	assert_int_equal(mb_policy_add_firmware(gen, strlen(gen), b, 0, "cos-85", &two, &err), 0);
	p = parse_text(two, 0, NULL);
	assert_int_equal(mb_policy_version(p), 2);
	assert_int_equal(mb_policy_n_firmware_sets(p), 2);
	assert_string_equal(mb_policy_firmware_set_name(p, 0), "firmware-1");
	assert_string_equal(mb_policy_firmware_set_name(p, 1), "cos-85");
	/* the new set holds B's true values */
	for (pcr = 0; pcr < 8; pcr++) {
		char needle[100];

		hex_of(&tb, MB_ALG_SHA256, pcr, hex);
		snprintf(needle, sizeof(needle), "\"sha256\": \"%s\"", hex);
		assert_non_null(strstr(strstr(two, "\"cos-85\""), needle));
	}
	check_against(p, b, &tb, &res);
	assert_true(mb_policy_result_ok(&res));
	assert_string_equal(res.firmware_set, "cos-85");
	mb_policy_result_done(&res);
	check_against(p, a, &ta, &res);
	assert_string_equal(res.firmware_set, "firmware-1");
	mb_policy_result_done(&res);
	mb_policy_free(p);

	/* the same values again, under any name, and a name again: refused */
	assert_int_equal(mb_policy_add_firmware(two, strlen(two), b, 0, "other", &again, &err), -EEXIST);
	assert_non_null(strstr(err.message, "set \"cos-85\" already"));
	assert_int_equal(mb_policy_add_firmware(gen, strlen(gen), a, 0, NULL, &again, &err), -EEXIST);
	assert_int_equal(mb_policy_add_firmware(two, strlen(two), sample, 0, "cos-85", &again, &err), -EEXIST);
	/* fewer PCRs than the sets give */
	assert_int_equal(mb_policy_add_firmware(two, strlen(two), b, 0x3, "x", &again, &err), -EINVAL);
	/* a signature file, and a policy with an unknown key */
	assert_int_equal(mb_policy_add_firmware(sig, strlen(sig), b, 0, NULL, &again, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "signed policy"));
	assert_int_equal(mb_policy_add_firmware(unknown, strlen(unknown), b, 0, NULL, &again, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "unknown key \"signature\""));
	assert_null(again);
	free(gen);
	free(two);
	mb_event_log_free(sample);
	mb_event_log_free(a);
	mb_event_log_free(b);
}

/* The initrd policy of `initramfs pack --policy-rule`: digests of "abc" (FIPS 180 examples),
 * both rules, and a policy that loads; a digest of the wrong size refused. */
static void test_generate_initrd(void **state)
{
	static const char sha1[] = "a9993e364706816aba3e25717850c26c9cd0d89d";
	static const char sha256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	uint8_t d1[20], d256[32];
	mb_event_digest d[2] = { { MB_ALG_SHA1, 20, d1 }, { MB_ALG_SHA256, 32, d256 } };
	mb_error err = { 0 };
	mb_policy *p = NULL;
	char *text = NULL;
	size_t i;

	(void) state;
	for (i = 0; i < 20; i++)
		d1[i] = (uint8_t) strtoul((char[3]) { sha1[2 * i], sha1[2 * i + 1], 0 }, NULL, 16);
	for (i = 0; i < 32; i++)
		d256[i] = (uint8_t) strtoul((char[3]) { sha256[2 * i], sha256[2 * i + 1], 0 }, NULL, 16);
	assert_int_equal(mb_policy_generate_initrd("/boot/initrd.img-6.1", d, 2, &text, &err), 0);
	{
		char *flat = strdup(text), *o = flat;

		for (i = 0; text[i]; i++)
			if (text[i] != ' ' && text[i] != '\n')
				*o++ = text[i];
		*o = 0;
		assert_string_equal(flat, "{\"version\":1,\"description\":\"mbootinitramfspack--policy-rule\","
				    "\"generator\":\"mbootinitramfspack--policy-rule\",\"pcrs\":{\"9\":{\"rules\":["
				    "{\"type\":\"EV_IPL\",\"digests\":[{\"sha1\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
				    "\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\","
				    "\"description\":\"initrdinitrd.img-6.1\"}],\"required\":true,\"max\":1},"
				    "{\"type\":\"EV_EVENT_TAG\",\"digests\":[{\"sha1\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
				    "\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\","
				    "\"description\":\"Linuxinitrd(EFIstubtag)initrd.img-6.1\"}],\"required\":false,\"max\":1}]}}}");
		free(flat);
	}
	assert_int_equal(mb_policy_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(mb_policy_pcrs(p), 1u << 9);
	mb_policy_free(p);
	free(text);
	d[1].size = 20;
	assert_int_equal(mb_policy_generate_initrd("x", d, 2, &text, &err), -EINVAL);
	assert_null(text);
	assert_int_equal(mb_policy_generate_initrd("x", d, 0, &text, &err), -EINVAL);
}

/* A policy generated from the real boot (plain-text rules, the command line's required) judges
 * the boot that only gained init=/bin/sh: the nearest rule by text comes first, saying what
 * differs, although dozens of the PCR's EV_IPL rules come before it; the missing required
 * rule is named with its text. */
static void test_closest_rule_by_text(void **state)
{
	mb_event_log *log = load(SAMPLE), *bad;
	size_t victim = find_event(log, "kernel_cmdline: "), i, first_kernel_rule = 0;
	const mb_event *ev = mb_event_log_event(log, victim);
	char *gen = NULL, evil[512];
	mb_error err = { 0 };
	mb_policy_result res;
	mb_policy *p;
	const mb_policy_violation *v = NULL;
	bool required_named = false;

	(void) state;
	/* the corpus's text, its NUL dropped, and the attacker's words */
	assert_true(ev->data_size > 1 && ev->data_size + 16 < sizeof(evil));
	snprintf(evil, sizeof(evil), "%.*s init=/bin/sh", (int) strnlen((const char *) ev->data, ev->data_size),
		 (const char *) ev->data);
	assert_int_equal(mb_policy_generate_from_log(log, 1u << 8, 0, &gen, &err), 0);
	p = parse_text(gen, 0, NULL);
	/* the rule for the command line is far down the PCR's list: the first rules are GRUB's commands */
	first_kernel_rule = (size_t) (strstr(gen, "\"kernel_cmdline: ") - gen);
	assert_true(first_kernel_rule > 0 && strstr(gen, "\"grub_cmd: ") - gen < (ptrdiff_t) first_kernel_rule);
	bad = tamper(log, victim, evil, true);
	check(p, bad, MB_ALG_SHA256, &res);
	for (i = 0; i < res.n_violations; i++) {
		if (res.violations[i].event == mb_event_log_event(bad, victim))
			v = &res.violations[i];
		if (strstr(res.violations[i].reason, "required: ") &&
		    strstr(res.violations[i].reason, " (text ~ /kernel_cmdline: /boot/vmlinuz-5") &&
		    strstr(res.violations[i].reason, "/) did not appear"))
			required_named = true;
	}
	assert_non_null(v);
	assert_true(v->n_closest_rules >= 1);
	fprintf(stderr, "closest: %s\n", v->closest_rules[0]);
	assert_non_null(strstr(v->closest_rules[0], "(text ~ /kernel_cmdline: /boot/vmlinuz-5"));
	assert_non_null(strstr(v->closest_rules[0], "/): the event adds \" init=/bin/sh\""));
	assert_true(required_named);
	mb_policy_result_done(&res);
	mb_event_log_free(bad);
	mb_policy_free(p);
	free(gen);
	mb_event_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_holds_on_real_boot),
		cmocka_unit_test(test_tampered_command_line),
		cmocka_unit_test(test_values_and_counts),
		cmocka_unit_test(test_hostile_policies),
		cmocka_unit_test(test_generate_initrd),
		cmocka_unit_test(test_min_bank),
		cmocka_unit_test(test_literal_patterns_agree_with_pcre2),
		cmocka_unit_test(test_fedora_grub_strings),
		cmocka_unit_test(test_firmware_sets),
		cmocka_unit_test(test_hostile_firmware_sets),
		cmocka_unit_test(test_add_firmware),
		cmocka_unit_test(test_closest_rule_by_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
