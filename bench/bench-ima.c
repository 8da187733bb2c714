/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ima POLICY LIST PCRS [SECONDS [load|judge|pcr]]: the policy's "ima" section at scale, in process, one
 * core (bench/bench-ima.sh). Prints, each the median of rounds run for SECONDS (3) of this
 * thread's CPU:
 *   load_s S          mb_policy_parse of POLICY (the JSON read, the path table built)
 *   judge_eps N       mb_ima_log_parse of LIST + mb_policy_check_ima without PCR values:
 *                     entries judged per second (parse, template-hash check, one lookup each)
 *   judge_pcr_eps N   the same with PCRS (PCR 10 replayed, boot_aggregate checked)
 * With a last word, only that measure runs (for a profiler; the policy is still loaded once).
 * Every judgment must be clean (all allowed, PCR 10 and boot_aggregate matching): a bench of
 * a failing path would measure the wrong thing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mboot/mboot.h>

#include "shared/fileio.h"

#define MAX_ROUNDS 100000

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* One parse + judgment; its CPU seconds, or -1 when it fails or is not clean. */
static double judge_once(const mb_policy *p, const uint8_t *list, size_t size, const mb_pcr_values *pcrs)
{
	mb_ima_policy_result r;
	mb_ima_log *log = NULL;
	mb_error err = { 0 };
	double t0 = cpu_now(), t;
	bool ok;

	if (mb_ima_log_parse(list, size, 0, &log, &err) < 0 || mb_policy_check_ima(p, log, pcrs, &r, &err) < 0) {
		fprintf(stderr, "bench-ima: %s\n", err.message);
		mb_ima_log_free(log);
		return -1;
	}
	t = cpu_now() - t0;
	ok = mb_ima_policy_result_ok(&r) && r.n_allowed + 1 == mb_ima_log_count(log) &&
	     (!pcrs || (r.n_banks > 0 && r.aggregate == MB_IMA_AGGREGATE_MATCH));
	if (!ok)
		fprintf(stderr, "bench-ima: not clean: %zu allowed of %zu, %zu violation(s)%s%s\n", r.n_allowed,
			mb_ima_log_count(log), r.n_violations, r.n_violations ? ": " : "",
			r.n_violations ? r.violations[0].reason : "");
	mb_ima_policy_result_done(&r);
	mb_ima_log_free(log);
	return ok ? t : -1;
}

static double *rounds;

int main(int argc, char **argv)
{
	uint8_t *pol = NULL, *list = NULL, *ptext = NULL;
	size_t pol_size, list_size, ptext_size, n, k;
	double secs = argc > 4 ? atof(argv[4]) : 3.0, spent, med;
	mb_pcr_values *pcrs = mb_pcr_values_new();
	mb_policy *p = NULL;
	mb_error err = { 0 };
	mb_ima_log *log = NULL;
	const char *only = argc > 5 ? argv[5] : NULL;

	rounds = calloc(MAX_ROUNDS, sizeof(*rounds));
	if (argc < 4 || !pcrs || !rounds || file_read(argv[1], MB_POLICY_MAX_SIZE, &pol, &pol_size, &err) < 0 ||
	    file_read(argv[2], MB_IMA_MAX_SIZE, &list, &list_size, &err) < 0 ||
	    file_read(argv[3], 1 << 20, &ptext, &ptext_size, &err) < 0 ||
	    mb_pcr_values_parse((const char *) ptext, ptext_size, pcrs, &err) < 0 ||
	    mb_ima_log_parse(list, list_size, 0, &log, &err) < 0) {
		fprintf(stderr, "usage: bench-ima POLICY LIST PCRS [SECONDS] (%s)\n", err.message);
		return 2;
	}
	n = mb_ima_log_count(log);
	mb_ima_log_free(log);

	for (k = 0, spent = 0; k < MAX_ROUNDS && (k < 3 || spent < secs / 3) && (!only || k < 1 || !strcmp(only, "load"));
	     k++) {
		double t0;

		mb_policy_free(p);
		p = NULL;
		t0 = cpu_now();
		if (mb_policy_parse((const char *) pol, pol_size, &p, &err) < 0) {
			fprintf(stderr, "bench-ima: %s\n", err.message);
			return 2;
		}
		rounds[k] = cpu_now() - t0;
		spent += rounds[k];
	}
	printf("load_s %.4f\n", median(rounds, k));
	for (int with = 0; with < 2; with++) {
		if (only && strcmp(only, with ? "pcr" : "judge") != 0)
			continue;
		for (k = 0, spent = 0; k < MAX_ROUNDS && (k < 3 || spent < secs / 3); k++) {
			rounds[k] = judge_once(p, list, list_size, with ? pcrs : NULL);
			if (rounds[k] < 0)
				return 1;
			spent += rounds[k];
		}
		med = median(rounds, k);
		printf("%s %.0f\n", with ? "judge_pcr_eps" : "judge_eps", (double) n / med);
	}
	mb_policy_free(p);
	mb_pcr_values_free(pcrs);
	free(pol);
	free(list);
	free(ptext);
	free(rounds);
	return 0;
}
