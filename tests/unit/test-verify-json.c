/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_verify_result_to_json, the document of `mboot verify --json`, on a real machine's boot (Joe
 * Richey's Arch Linux desktop, go-tpm-tools' arch-linux-workstation.bin) against answers from
 * outside mboot:
 *  - the PCR values its TPM held (go-tpm-tools' Go test literals, the corpus's .pcrs.json, read
 *    here with jansson, not with mboot's PCR-values reader);
 *  - tpm2-tools' expected `tpm2_eventlog` output of another boot of the same machine
 *    (tpm2-tools/expected/event-raw/event-arch-linux.bin.yaml): its events' numbers, types and
 *    digests, read here line by line and replayed with OpenSSL. That boot's replay equals the
 *    desktop's true values in every PCR but 4, where it booted another kernel (event 23).
 * The document is parsed back with jansson's own parser.
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
#include <jansson.h>
#include <openssl/evp.h>

#include <mboot/mboot.h>
#include "corpus-util.h"

#define LOG "go-tpm-tools/arch-linux-workstation.bin"
#define TRUTH LOG ".pcrs.json"
#define OTHER_BOOT "tpm2-tools/event-arch-linux.bin"
#define OTHER_YAML "tpm2-tools/expected/event-raw/event-arch-linux.bin.yaml"

/* One event of the upstream YAML. */
typedef struct yaml_event {
	int num, pcr;
	char type[48];
	char sha1[41], sha256[65];
} yaml_event;

#define YAML_MAX 64

/* src[0, len) into dst, which must hold it */
static void field(char *dst, size_t cap, const char *src, size_t len)
{
	assert_true(len < cap);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* "- EventNum: N", "  PCRIndex: N", "  EventType: T", "  - AlgorithmId: A", "    Digest: \"HEX\"". */
static size_t yaml_events(yaml_event *ev)
{
	FILE *f = fopen(corpus_path(OTHER_YAML), "r");
	char line[512], alg[16] = "";
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		yaml_event *e = n ? &ev[n - 1] : NULL;
		char *p;

		if (strncmp(line, "- EventNum: ", 12) == 0) {
			assert_true(n < YAML_MAX);
			memset(&ev[n], 0, sizeof(ev[n]));
			ev[n].num = (int) strtol(line + 12, NULL, 10);
			n++;
		} else if (e && strncmp(line, "  PCRIndex: ", 12) == 0) {
			e->pcr = (int) strtol(line + 12, NULL, 10);
		} else if (e && strncmp(line, "  EventType: ", 13) == 0) {
			field(e->type, sizeof(e->type), line + 13, strcspn(line + 13, "\n"));
		} else if (e && strncmp(line, "  - AlgorithmId: ", 17) == 0) {
			field(alg, sizeof(alg), line + 17, strcspn(line + 17, "\n"));
		} else if (e && strncmp(line, "    Digest: \"", 13) == 0 && (p = strchr(line + 13, '"'))) {
			if (strcmp(alg, "sha1") == 0)
				field(e->sha1, sizeof(e->sha1), line + 13, (size_t) (p - (line + 13)));
			else if (strcmp(alg, "sha256") == 0)
				field(e->sha256, sizeof(e->sha256), line + 13, (size_t) (p - (line + 13)));
		} else if (strncmp(line, "pcrs:", 5) == 0) {
			break;
		}
	}
	fclose(f);
	return n;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	fail_msg("not lower-case hex: '%c'", c);
	return 0;
}

static void unhex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	assert_int_equal(strlen(hex), 2 * n);
	for (i = 0; i < n; i++)
		out[i] = (uint8_t) (nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
}

/* OpenSSL's PCR extend: pcr = H(pcr || digest). */
static void extend(const char *md_name, uint8_t *pcr, size_t size, const char *digest_hex)
{
	uint8_t buf[2 * 32], d[32];
	unsigned out = 0;

	unhex(digest_hex, d, size);
	memcpy(buf, pcr, size);
	memcpy(buf + size, d, size);
	assert_int_equal(EVP_Digest(buf, 2 * size, pcr, &out, EVP_get_digestbyname(md_name), NULL), 1);
	assert_int_equal(out, size);
}

static void to_hex(const uint8_t *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* The other boot's PCR `pcr` replayed from the YAML (EV_NO_ACTION is never extended); in
 * sha256, the digest of event `swap_event` replaced by swap_hex when it is not NULL. */
static void yaml_replay(const yaml_event *ev, size_t n, const char *bank, int pcr, int swap_event,
			const char *swap_hex, char *out)
{
	size_t size = strcmp(bank, "sha1") == 0 ? 20 : 32, i;
	uint8_t v[32] = { 0 };

	for (i = 0; i < n; i++) {
		if (ev[i].pcr != pcr || strcmp(ev[i].type, "EV_NO_ACTION") == 0)
			continue;
		extend(bank, v, size, swap_hex && ev[i].num == swap_event ? swap_hex :
				      size == 20 ? ev[i].sha1 : ev[i].sha256);
	}
	to_hex(v, size, out);
}

static json_t *load_truth(void)
{
	json_error_t e;
	json_t *t = json_load_file(corpus_path(TRUTH), 0, &e);

	assert_non_null(t);
	assert_non_null(json_object_get(t, "banks"));
	return t;
}

static const char *truth_hex(const json_t *truth, const char *bank, uint32_t pcr)
{
	char key[4];

	snprintf(key, sizeof(key), "%u", pcr);
	return json_string_value(json_object_get(json_object_get(json_object_get(truth, "banks"), bank), key));
}

static size_t truth_count(const json_t *truth)
{
	const json_t *banks = json_object_get(truth, "banks");

	return json_object_size(json_object_get(banks, "sha1")) + json_object_size(json_object_get(banks, "sha256"));
}

/* The log against the desktop's true values; *ret_log kept for the policy (violations point into it). */
static mb_verify_result *verify(const char *log_rel, mb_event_log **ret_log)
{
	mb_pcr_values actual;
	mb_verify_result *res = NULL;
	mb_error err = { 0 };

	*ret_log = corpus_log(log_rel);
	assert_non_null(*ret_log);
	assert_true(truth_load(TRUTH, "json", &actual));
	assert_int_equal(mb_verify_log(*ret_log, NULL, &actual, NULL, &res, &err), 0);
	return res;
}

/* The document, pretty and compact: both parse (jansson) to the same value, compact on one line. */
static json_t *doc(const mb_verify_result *res, const char *source, const mb_policy *p, const mb_policy_result *pr)
{
	char *pretty = mb_verify_result_to_json(res, source, p, pr, true);
	char *compact = mb_verify_result_to_json(res, source, p, pr, false);
	json_error_t e;
	json_t *a, *b;

	assert_non_null(pretty);
	assert_non_null(compact);
	assert_non_null(strchr(pretty, '\n'));
	assert_null(strchr(compact, '\n'));
	a = json_loads(pretty, JSON_REJECT_DUPLICATES, &e);
	b = json_loads(compact, JSON_REJECT_DUPLICATES, &e);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(json_equal(a, b));
	json_decref(b);
	free(pretty);
	free(compact);
	return a;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	assert_non_null(s);
	return s;
}

static json_int_t num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The PCR entry of the document for (bank, pcr). */
static const json_t *entry(const json_t *d, const char *bank, json_int_t pcr)
{
	size_t i;
	const json_t *e;

	json_array_foreach(json_object_get(d, "pcrs"), i, e)
		if (strcmp(str(e, "bank"), bank) == 0 && num(e, "pcr") == pcr)
			return e;
	fail_msg("no entry %s/%d", bank, (int) pcr);
	return NULL;
}

static void test_verified_log(void **state)
{
	mb_event_log *log;
	mb_verify_result *res = verify(LOG, &log);
	json_t *truth = load_truth(), *d = doc(res, "arch.pcrs.json", NULL, NULL);
	const json_t *e;
	size_t i, n_verified = 0;

	(void) state;
	assert_true(json_is_true(json_object_get(d, "verified")));
	assert_true(json_is_true(json_object_get(d, "log_verified")));
	assert_string_equal(str(d, "source"), "arch.pcrs.json");
	assert_null(json_object_get(d, "policy")); /* none asked for */
	/* every value the TPM held is one verified entry: 9 PCRs in 2 banks */
	assert_int_equal(truth_count(truth), 18);
	assert_int_equal(num(d, "pcrs_verified"), 18);
	assert_int_equal(num(d, "pcrs_failed"), 0);
	json_array_foreach(json_object_get(d, "pcrs"), i, e) {
		const char *want = truth_hex(truth, str(e, "bank"), (uint32_t) num(e, "pcr"));

		if (strcmp(str(e, "verdict"), "verified") != 0)
			continue;
		n_verified++;
		assert_non_null(want);
		assert_string_equal(str(e, "actual"), want);
		assert_string_equal(str(e, "expected"), want);
	}
	assert_int_equal(n_verified, 18);
	/* Joe Richey's machine's PCR 0, sha256, as go-tpm-tools' test has it */
	assert_string_equal(str(entry(d, "sha256", 0), "actual"),
			    "758b773d94feabf52ef5a4c00a7ad2c80d8d6e6d9d58756150be9bc973da9087");
	json_decref(d);
	json_decref(truth);
	mb_verify_result_free(res);
	mb_event_log_free(log);
}

/* The other boot's PCR 4 events as the only allowed ones: a policy this boot's kernel breaks. */
static mb_policy *other_boot_pcr4_policy(const yaml_event *ev, size_t n)
{
	char text[2048];
	size_t o = 0, i;
	mb_policy *p = NULL;
	mb_error err = { 0 };
	bool first = true;

	o += (size_t) snprintf(text + o, sizeof(text) - o, "{\"version\": 1, \"pcrs\": {\"4\": {\"rules\": [");
	for (i = 0; i < n; i++) {
		if (ev[i].pcr != 4)
			continue;
		o += (size_t) snprintf(text + o, sizeof(text) - o, "%s{\"type\": \"%s\", \"digests\": [{\"sha256\": \"%s\", "
				       "\"description\": \"event %d of the other boot\"}]}", first ? "" : ", ", ev[i].type,
				       ev[i].sha256, ev[i].num);
		first = false;
	}
	snprintf(text + o, sizeof(text) - o, "]}}}");
	if (mb_policy_parse(text, strlen(text), &p, &err) < 0)
		fail_msg("%s: %s", text, err.message);
	return p;
}

static void test_policy_forbids_the_kernel(void **state)
{
	yaml_event ev[YAML_MAX];
	size_t n = yaml_events(ev), i, last4 = SIZE_MAX;
	mb_event_log *log;
	mb_verify_result *res = verify(LOG, &log);
	mb_policy *p = other_boot_pcr4_policy(ev, n);
	json_t *truth = load_truth(), *d;
	const json_t *pol, *v, *x;
	mb_policy_result pr;
	mb_error err = { 0 };
	char replay[65];

	(void) state;
	for (i = 0; i < n; i++)
		if (ev[i].pcr == 4 && strcmp(ev[i].type, "EV_EFI_BOOT_SERVICES_APPLICATION") == 0)
			last4 = i;
	assert_true(last4 < n);
	assert_int_equal(ev[last4].num, 23); /* the other boot's kernel */
	assert_int_equal(mb_verify_result_policy_bank(res), MB_ALG_SHA256);
	assert_int_equal(mb_policy_check(p, log, NULL, res, MB_ALG_SHA256, &pr, &err), 0);
	d = doc(res, "arch.pcrs.json", p, &pr);

	assert_true(json_is_false(json_object_get(d, "verified"))); /* the log holds, the policy does not */
	assert_true(json_is_true(json_object_get(d, "log_verified")));
	pol = json_object_get(d, "policy");
	assert_non_null(pol);
	assert_true(json_is_true(json_object_get(pol, "checked")));
	assert_true(json_is_false(json_object_get(pol, "ok")));
	assert_string_equal(str(pol, "bank"), "sha256");
	assert_null(json_object_get(pol, "firmware_set")); /* a policy without firmware sets */
	assert_int_equal(json_object_size(json_object_get(pol, "pcrs")), 1);
	assert_string_equal(str(json_object_get(pol, "pcrs"), "4"), "violated");
	/* the PCRs the TPM holds values for that the policy does not mention: all but 4 */
	assert_int_equal(json_array_size(json_object_get(pol, "not_governed")), 8);
	json_array_foreach(json_object_get(pol, "not_governed"), i, x) {
		assert_int_not_equal(json_integer_value(x), 4);
		assert_non_null(truth_hex(truth, "sha256", (uint32_t) json_integer_value(x)));
	}
	/* one violation: this boot's kernel, event 23, whose digest with the other boot's PCR 4
	 * events before it replays to the PCR 4 this machine's TPM held */
	assert_int_equal(json_array_size(json_object_get(pol, "violations")), 1);
	v = json_array_get(json_object_get(pol, "violations"), 0);
	assert_int_equal(num(v, "pcr"), 4);
	assert_int_equal(num(v, "event"), ev[last4].num);
	assert_string_equal(str(v, "type"), ev[last4].type);
	assert_string_not_equal(str(v, "digest"), ev[last4].sha256);
	yaml_replay(ev, n, "sha256", 4, ev[last4].num, str(v, "digest"), replay);
	assert_string_equal(replay, truth_hex(truth, "sha256", 4));
	assert_true(strlen(str(v, "reason")) > 0);
	/* the rules of its type, the two applications (a hint: fewer when memory runs out, policy-check.c) */
	json_array_foreach(json_object_get(v, "closest_rules"), i, x)
		assert_non_null(strstr(json_string_value(x), "EV_EFI_BOOT_SERVICES_APPLICATION"));
	assert_true(json_array_size(json_object_get(v, "closest_rules")) <= 2);

	json_decref(d);
	json_decref(truth);
	mb_policy_result_done(&pr);
	mb_policy_free(p);
	mb_verify_result_free(res);
	mb_event_log_free(log);
}

/* The other boot's log against this boot's values: PCR 4 fails, the policy is not judged. */
static void test_log_not_verified(void **state)
{
	yaml_event ev[YAML_MAX];
	size_t n = yaml_events(ev), i;
	mb_event_log *log;
	mb_verify_result *res = verify(OTHER_BOOT, &log);
	mb_policy *p = other_boot_pcr4_policy(ev, n);
	json_t *truth = load_truth(), *d = doc(res, "arch.pcrs.json", p, NULL);
	const json_t *pol, *e;
	json_int_t agree = 0, differ = 0;
	char replay[65];

	(void) state;
	/* which values the upstream replay reaches, which not */
	for (i = 0; i < 2; i++) {
		const char *bank = i ? "sha256" : "sha1";
		const char *key;
		json_t *val;

		json_object_foreach(json_object_get(json_object_get(truth, "banks"), bank), key, val) {
			yaml_replay(ev, n, bank, (int) strtol(key, NULL, 10), -1, NULL, replay);
			if (strcmp(replay, json_string_value(val)) == 0)
				agree++;
			else
				differ++;
		}
	}
	assert_int_equal(differ, 2); /* PCR 4, both banks */
	assert_true(json_is_false(json_object_get(d, "verified")));
	assert_true(json_is_false(json_object_get(d, "log_verified")));
	assert_int_equal(num(d, "pcrs_verified"), agree);
	assert_int_equal(num(d, "pcrs_failed"), differ);
	e = entry(d, "sha256", 4);
	assert_string_equal(str(e, "verdict"), "mismatch");
	yaml_replay(ev, n, "sha256", 4, -1, NULL, replay);
	assert_string_equal(str(e, "expected"), replay);
	assert_string_equal(str(e, "actual"), truth_hex(truth, "sha256", 4));
	pol = json_object_get(d, "policy");
	assert_int_equal(json_object_size(pol), 2);
	assert_true(json_is_false(json_object_get(pol, "checked")));
	assert_string_equal(str(pol, "reason"), "the log did not verify");

	json_decref(d);
	json_decref(truth);
	mb_policy_free(p);
	mb_verify_result_free(res);
	mb_event_log_free(log);
}

/* A policy of one firmware set, PCRs 0-7 as the TPM held them: "firmware_set" names it. */
static void test_firmware_set(void **state)
{
	mb_event_log *log;
	mb_verify_result *res = verify(LOG, &log);
	json_t *truth = load_truth(), *d;
	const json_t *pol;
	char text[1200];
	size_t o = 0;
	uint32_t pcr;
	mb_policy *p = NULL;
	mb_policy_result pr;
	mb_error err = { 0 };

	(void) state;
	o += (size_t) snprintf(text + o, sizeof(text) - o, "{\"version\": 2, \"pcrs\": {}, \"firmware\": [{\"name\": "
			       "\"arch-desktop\", \"pcrs\": {");
	for (pcr = 0; pcr < 8; pcr++)
		o += (size_t) snprintf(text + o, sizeof(text) - o, "%s\"%u\": {\"sha256\": \"%s\"}", pcr ? ", " : "", pcr,
				       truth_hex(truth, "sha256", pcr));
	snprintf(text + o, sizeof(text) - o, "}}]}");
	assert_int_equal(mb_policy_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(mb_policy_check(p, log, NULL, res, MB_ALG_SHA256, &pr, &err), 0);
	d = doc(res, "tpm", p, &pr);
	assert_true(json_is_true(json_object_get(d, "verified")));
	pol = json_object_get(d, "policy");
	assert_true(json_is_true(json_object_get(pol, "ok")));
	assert_string_equal(str(pol, "firmware_set"), "arch-desktop");
	assert_int_equal(json_object_size(json_object_get(pol, "pcrs")), 8);
	assert_int_equal(json_array_size(json_object_get(pol, "not_governed")), 1); /* PCR 8 */
	assert_int_equal(json_integer_value(json_array_get(json_object_get(pol, "not_governed"), 0)), 8);
	assert_int_equal(json_array_size(json_object_get(pol, "violations")), 0);
	json_decref(d);
	mb_policy_result_done(&pr);
	mb_policy_free(p);
	json_decref(truth);
	mb_verify_result_free(res);
	mb_event_log_free(log);
}

static void test_bad_arguments(void **state)
{
	mb_event_log *log;
	mb_verify_result *res = verify(LOG, &log);
	mb_policy_result pr = { 0 };

	(void) state;
	errno = 0;
	assert_null(mb_verify_result_to_json(NULL, "tpm", NULL, NULL, true));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(mb_verify_result_to_json(res, NULL, NULL, NULL, true));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(mb_verify_result_to_json(res, "tpm", NULL, &pr, true)); /* a result without its policy */
	assert_int_equal(errno, EINVAL);
	mb_verify_result_free(res);
	mb_event_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verified_log),
		cmocka_unit_test(test_policy_forbids_the_kernel),
		cmocka_unit_test(test_log_not_verified),
		cmocka_unit_test(test_firmware_set),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
