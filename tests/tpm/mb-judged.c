/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb-judged MACHINE POLICY SAME1 NONCE1 SAME2 NONCE2 OTHER NONCE3: mb_attest_verify's
 * judged_lookup (each boot judged once) on real quotes. SAME1 and SAME2 quote one boot under two
 * nonces, OTHER another boot of the same machine. SAME2 judged with SAME1's verdict handed back
 * takes its logs' judgment and writes exactly what it writes judged in full; OTHER, handed the
 * same verdict (a caller's mistake), is judged in full; a quote that fails (SAME2 under the
 * wrong nonce) takes nothing. The machine record parsed once (mb_attest_machine_parse) judges
 * as the record text does. Prints what failed; exit 0 when all held.
 * With NAMED LOG_SHA256 after them (SAME2 with its log named by its SHA-256, as openssl prints
 * it): the first's verdict gives that SHA-256; NAMED takes SAME1's judgment as SAME2 does (the
 * same key, the same document); without a kept judgment it is log-not-verified and leaves no key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

#include "shared/fileio.h"
#include "shared/hex.h"

typedef struct lookup_ctx {
	const mb_attest_verdict *give;
	size_t asked;
	uint8_t key[32];
} lookup_ctx;

static const mb_attest_verdict *lookup(const uint8_t key[32], void *p)
{
	lookup_ctx *c = p;

	c->asked++;
	memcpy(c->key, key, 32);
	return c->give;
}

static int failures;

static void expect(bool ok, const char *what)
{
	if (!ok) {
		printf("FAILED: %s\n", what);
		failures++;
	}
}

typedef struct input {
	uint8_t *text;
	size_t size;
	uint8_t nonce[64];
	size_t nonce_size;
} input;

static mb_attest_verdict *judge(const input *m, const mb_policy *policy, const input *e, const input *nonce,
				lookup_ctx *c)
{
	mb_attest_verify_options o = MB_OPTIONS_INIT(mb_attest_verify_options);
	mb_attest_verdict *v = NULL;
	mb_error err = { 0 };

	o.nonce = nonce->nonce;
	o.nonce_size = nonce->nonce_size;
	o.policy = policy;
	if (c) {
		o.judged_lookup = lookup;
		o.judged_ctx = c;
	}
	if (mb_attest_verify((const char *) e->text, e->size, (const char *) m->text, m->size, &o, &v, &err) < 0) {
		printf("FAILED: mb_attest_verify: %s\n", err.message);
		exit(1);
	}
	return v;
}

static bool same_json(const mb_attest_verdict *a, const mb_attest_verdict *b)
{
	char *x = mb_attest_verdict_to_json(a, true), *y = mb_attest_verdict_to_json(b, true);
	bool same = x && y && strcmp(x, y) == 0;

	if (!same)
		printf("--- judged in full:\n%s\n--- with the lookup:\n%s\n", y ? y : "", x ? x : "");
	free(x);
	free(y);
	return same;
}

int main(int argc, char **argv)
{
	input m, pol, e[3], n[3];
	mb_policy *policy = NULL;
	mb_error err = { 0 };
	mb_attest_verdict *v1, *v, *full;
	lookup_ctx c = { 0 };
	uint8_t k1[32], k[32];
	int i;

	if (argc != 9 && argc != 11)
		return 2;
	if (file_read(argv[1], MB_ATTEST_FILE_MAX, &m.text, &m.size, &err) < 0 ||
	    file_read(argv[2], MB_POLICY_MAX_SIZE, &pol.text, &pol.size, &err) < 0 ||
	    mb_policy_parse((const char *) pol.text, pol.size, &policy, &err) < 0) {
		printf("FAILED: %s\n", err.message);
		return 1;
	}
	for (i = 0; i < 3; i++) {
		const char *hex = argv[4 + 2 * i];

		if (file_read(argv[3 + 2 * i], MB_ATTEST_FILE_MAX, &e[i].text, &e[i].size, &err) < 0)
			return printf("FAILED: %s\n", err.message), 1;
		n[i].nonce_size = strlen(hex) / 2;
		if (n[i].nonce_size > sizeof(n[i].nonce) || hex_parse(hex, strlen(hex), n[i].nonce, n[i].nonce_size) < 0)
			return 2;
	}

	/* The first of the boot: judged in full, its key given back. */
	v1 = judge(&m, policy, &e[0], &n[0], &c);
	expect(c.asked == 1 && mb_attest_verdict_boot_key(v1, k1) && memcmp(k1, c.key, 32) == 0,
	       "the first evidence: asked once, its verdict carries the key it was asked with");
	expect(mb_attest_verdict_trusted(v1), "the first evidence: trusted");
	v = judge(&m, policy, &e[0], &n[0], NULL);
	expect(!mb_attest_verdict_boot_key(v, k), "without judged_lookup: no boot key");
	mb_attest_verdict_free(v);

	/* The same boot under another nonce: the judgment taken, the document the same. */
	c = (lookup_ctx) { .give = v1 };
	v = judge(&m, policy, &e[1], &n[1], &c);
	full = judge(&m, policy, &e[1], &n[1], NULL);
	expect(c.asked == 1 && memcmp(c.key, k1, 32) == 0, "the same boot: the same key");
	expect(mb_attest_verdict_boot_key(v, k) && memcmp(k, k1, 32) == 0, "the same boot: its verdict has the key");
	expect(mb_attest_verdict_trusted(v) && same_json(v, full), "the same boot: what it writes judged in full");
	mb_attest_verdict_free(v);
	mb_attest_verdict_free(full);

	/* Another boot, handed the first boot's verdict anyway: judged in full. */
	c = (lookup_ctx) { .give = v1 };
	v = judge(&m, policy, &e[2], &n[2], &c);
	full = judge(&m, policy, &e[2], &n[2], NULL);
	expect(c.asked == 1 && memcmp(c.key, k1, 32) != 0, "another boot: another key");
	expect(mb_attest_verdict_boot_key(v, k) && memcmp(k, c.key, 32) == 0, "another boot: its own key");
	expect(!mb_attest_verdict_trusted(v) && same_json(v, full),
	       "another boot, handed a verdict of the first: judged in full (untrusted)");
	mb_attest_verdict_free(v);
	mb_attest_verdict_free(full);

	/* The same boot's evidence under the wrong nonce: the quote fails, nothing is taken. */
	c = (lookup_ctx) { .give = v1 };
	v = judge(&m, policy, &e[1], &n[0], &c);
	full = judge(&m, policy, &e[1], &n[0], NULL);
	expect(!mb_attest_verdict_trusted(v) && !mb_attest_verdict_boot_key(v, k) && same_json(v, full),
	       "a quote that fails: no judgment taken, no key");
	mb_attest_verdict_free(v);
	mb_attest_verdict_free(full);

	/* The record parsed once, the text not given: the same documents. */
	{
		mb_attest_verify_options o = MB_OPTIONS_INIT(mb_attest_verify_options);
		mb_attest_machine *parsed = NULL;

		expect(mb_attest_machine_parse((const char *) m.text, m.size, &parsed, &err) == 0, "the record parses");
		o.policy = policy;
		o.machine_parsed = parsed;
		for (i = 0; parsed && i < 3; i++) {
			full = judge(&m, policy, &e[i], &n[i], NULL);
			o.nonce = n[i].nonce;
			o.nonce_size = n[i].nonce_size;
			v = NULL;
			expect(mb_attest_verify((const char *) e[i].text, e[i].size, NULL, 0, &o, &v, &err) == 0 &&
				       same_json(v, full),
			       "the record parsed once judges as its text");
			mb_attest_verdict_free(v);
			mb_attest_verdict_free(full);
		}
		mb_attest_machine_free(parsed);
		/* half a record */
		expect(mb_attest_machine_parse((const char *) m.text, m.size / 2, &parsed, &err) == -EBADMSG && !parsed,
		       "a cut record: -EBADMSG");
	}

	if (argc == 11) {
		input named;
		uint8_t sha[32], want[32];
		bool carried = false;
		const char *detail = NULL;

		if (file_read(argv[9], MB_ATTEST_FILE_MAX, &named.text, &named.size, &err) < 0 ||
		    strlen(argv[10]) != 64 || hex_parse(argv[10], 64, want, 32) < 0)
			return printf("FAILED: %s\n", err.message), 2;
		expect(mb_attest_verdict_eventlog_sha256(v1, sha, &carried) && carried && memcmp(sha, want, 32) == 0,
		       "the first evidence: its log carried, its SHA-256 openssl's");
		c = (lookup_ctx) { .give = v1 };
		v = judge(&m, policy, &named, &n[1], &c);
		full = judge(&m, policy, &e[1], &n[1], NULL);
		expect(c.asked == 1 && memcmp(c.key, k1, 32) == 0, "the log named: the key of the log carried");
		expect(mb_attest_verdict_trusted(v) && same_json(v, full), "the log named: the judgment taken, the same document");
		expect(mb_attest_verdict_eventlog_sha256(v, sha, &carried) && !carried && memcmp(sha, want, 32) == 0,
		       "the log named: named, by that SHA-256");
		mb_attest_verdict_free(v);
		mb_attest_verdict_free(full);
		c = (lookup_ctx) { .give = NULL };
		v = judge(&m, policy, &named, &n[1], &c);
		expect(!mb_attest_verdict_trusted(v) && !mb_attest_verdict_boot_key(v, k) &&
			       mb_attest_verdict_reason(v, 0, &detail) == MB_ATTEST_LOG_NOT_VERIFIED && detail &&
			       strstr(detail, "send the log"),
		       "the log named, no judgment kept: log-not-verified asking for it, no key to keep");
		mb_attest_verdict_free(v);
		free(named.text);
	}

	mb_attest_verdict_free(v1);
	mb_policy_free(policy);
	free(m.text);
	free(pol.text);
	for (i = 0; i < 3; i++)
		free(e[i].text);
	return failures ? 1 : 0;
}
