/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * paired RUNS CMD_A... -- CMD_B...: runs A then B, RUNS times (pairs, so that a burst of load
 * from elsewhere hits both sides alike), output to /dev/null, and prints one line:
 *   cpu_a_ms cpu_b_ms wall_a_ms wall_b_ms cpu_ratio
 * medians over the runs; CPU is user + system time of the whole process from wait4() (the
 * kernel's scheduler clock, not bash's millisecond 'time'); cpu_ratio = median over the pairs
 * of cpu_b / cpu_a (> 1: A is cheaper). A run that exits non-zero stops the bench (exit 2);
 * with -a, B's exit status is not checked (osslsigncode verify fails an unverifiable chain
 * after computing the digest, which is what is measured).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* one run of argv: its CPU and wall time in ms; -1 if it could not run or failed (any_exit:
 * if it could not run) */
static int run(char **argv, bool any_exit, double *cpu, double *wall)
{
	struct rusage ru;
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*wall = now_ms() - t0;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && !any_exit) || WEXITSTATUS(status) == 127) {
		fprintf(stderr, "paired: %s failed (status %d)\n", argv[0], status);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	double *ca, *cb, *wa, *wb, *ratio;
	char **a, **b;
	int runs, i, sep = 0;
	bool any_exit = false;

	if (argc > 1 && strcmp(argv[1], "-a") == 0) {
		any_exit = true;
		argv++;
		argc--;
	}
	if (argc < 5 || (runs = (int) strtol(argv[1], NULL, 10)) < 1)
		goto usage;
	for (i = 2; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			sep = i;
	if (sep <= 2 || sep == argc - 1)
		goto usage;
	argv[sep] = NULL;
	a = argv + 2;
	b = argv + sep + 1;
	ca = calloc((size_t) runs * 5, sizeof(double));
	if (!ca)
		return 2;
	cb = ca + runs;
	wa = cb + runs;
	wb = wa + runs;
	ratio = wb + runs;
	/* one run of each unmeasured first: page cache and dynamic loader caches warm for both */
	if (run(a, false, &ca[0], &wa[0]) < 0 || run(b, any_exit, &cb[0], &wb[0]) < 0)
		return 2;
	for (i = 0; i < runs; i++) {
		if (run(a, false, &ca[i], &wa[i]) < 0 || run(b, any_exit, &cb[i], &wb[i]) < 0)
			return 2;
		ratio[i] = cb[i] / (ca[i] > 0.001 ? ca[i] : 0.001);
	}
	printf("%.3f %.3f %.3f %.3f %.2f\n", median(ca, runs), median(cb, runs), median(wa, runs),
	       median(wb, runs), median(ratio, runs));
	free(ca);
	return 0;
usage:
	fprintf(stderr, "usage: paired [-a] RUNS CMD_A... -- CMD_B...\n");
	return 2;
}
