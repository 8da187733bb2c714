/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-attest EVIDENCE MACHINE NONCE_HEX POLICY [SECONDS] [once]: mb_attest_verify in a loop,
 * one core; prints "verifications/s N" (every one must be trusted). With "once", as the fleet
 * verifier judges a boot's later evidence: the machine record parsed once (machine_parsed) and
 * the first verdict handed back by judged_lookup, so each later one checks the quote in full and
 * takes the logs' judgment (every one must have taken it). $MB_BENCH_IMA_STATE: an IMA state
 * file the evidence's IMA list is judged on top of (attest verify --ima-state). The allocator set
 * as mboot-verifierd sets it (fleet_keep_memory): freed memory kept for the next evidence. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mboot/mboot.h>

#include "shared/fileio.h"
#include "shared/hex.h"

typedef struct judged {
	const mb_attest_verdict *v;
	size_t asked, found;
} judged;

static const mb_attest_verdict *lookup(const uint8_t key[32], void *ctx)
{
	judged *j = ctx;
	uint8_t k[32];

	j->asked++;
	if (j->v && mb_attest_verdict_boot_key(j->v, k) && memcmp(k, key, 32) == 0) {
		j->found++;
		return j->v;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint8_t *ev, *m, *pol, nonce[32];
	size_t ev_size, m_size, pol_size, n = 0, nonce_size;
	mb_policy *policy = NULL;
	mb_error err = { 0 };
	double secs = argc > 5 ? atof(argv[5]) : 3.0, t0, t;
	bool once = argc > 6 && strcmp(argv[6], "once") == 0;
	judged j = { 0 };
	mb_attest_verdict *first = NULL;
	mb_attest_machine *parsed = NULL;
	uint8_t *state = NULL;
	size_t state_size = 0;

	if (argc < 5 || file_read(argv[1], MB_ATTEST_FILE_MAX, &ev, &ev_size, &err) < 0 ||
	    file_read(argv[2], MB_ATTEST_FILE_MAX, &m, &m_size, &err) < 0 ||
	    file_read(argv[4], MB_POLICY_MAX_SIZE, &pol, &pol_size, &err) < 0 ||
	    mb_policy_parse((const char *) pol, pol_size, &policy, &err) < 0) {
		fprintf(stderr, "usage: bench-attest EVIDENCE MACHINE NONCE POLICY [SECONDS] (%s)\n", err.message);
		return 2;
	}
	nonce_size = strlen(argv[3]) / 2;
	if (nonce_size > sizeof(nonce) || hex_parse(argv[3], 2 * nonce_size, nonce, nonce_size) < 0)
		return 2;
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	if (getenv("MB_BENCH_IMA_STATE") &&
	    file_read(getenv("MB_BENCH_IMA_STATE"), 1u << 20, &state, &state_size, &err) < 0) {
		fprintf(stderr, "IMA state: %s\n", err.message);
		return 2;
	}
	if (once && mb_attest_machine_parse((const char *) m, m_size, &parsed, &err) < 0) {
		fprintf(stderr, "machine record: %s\n", err.message);
		return 2;
	}
	t0 = now();
	do {
		mb_attest_verify_options o = { .size = sizeof(mb_attest_verify_options), .nonce = nonce, .nonce_size = nonce_size, .policy = policy,
					       .ima_state = (const char *) state, .ima_state_size = state_size };
		mb_attest_verdict *v;

		if (once) {
			o.judged_lookup = lookup;
			o.judged_ctx = &j;
			o.machine_parsed = parsed;
		}
		if (mb_attest_verify((const char *) ev, ev_size, (const char *) m, m_size, &o, &v, &err) < 0 ||
		    !mb_attest_verdict_trusted(v)) {
			fprintf(stderr, "not trusted: %s\n", err.message);
			return 1;
		}
		if (once && !first)
			j.v = first = v;
		else
			mb_attest_verdict_free(v);
		n++;
		t = now();
	} while (t - t0 < secs);
	if (once && (j.asked != n || j.found != n - 1)) {
		fprintf(stderr, "the logs' judgment taken %zu times of %zu\n", j.found, n - 1);
		return 1;
	}
	printf("verifications/s %.0f\n", n / (t - t0));
	mb_attest_verdict_free(first);
	mb_attest_machine_free(parsed);
	mb_policy_free(policy);
	free(ev);
	free(m);
	free(pol);
	free(state);
	return 0;
}
