/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Allocation-failure injection for the 'oom' suite (tests/oom/oom-run.py).
 *
 * The oom build of each unit test links a copy of the static core whose calls to malloc,
 * calloc, realloc, strdup, asprintf, ... were renamed to oom_malloc, oom_calloc, ... (objcopy
 * --redefine-syms=oom.syms, tests/oom/meson.build). So only allocations made by libmboot's
 * own code (src/lib, src/shared) come here and are counted; the test's setup, cmocka, json-c's
 * and OpenSSL's insides allocate as usual. No LD_PRELOAD: the sanitizers keep their malloc.
 *
 * MB_FAIL_ALLOC=0: count only; at exit "oom: N allocations" goes to stderr.
 * MB_FAIL_ALLOC=K: the K-th allocation (1-based) fails with ENOMEM, once; the others succeed.
 * The stack of the failed call is printed (in an ASan build) so that the runner can tell which
 * call of the test it happened under.
 * MB_FAIL_ALLOC=0 with MB_OOM_PATHS=1: also "oom: path K" for each allocation K that is the
 * first one made from its call path (the innermost frames of the library's stack, hashed), so
 * that the runner can fail the first allocation of every path before sampling the rest.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *oom_malloc(size_t n);
void *oom_calloc(size_t n, size_t size);
void *oom_realloc(void *p, size_t n);
void *oom_reallocarray(void *p, size_t n, size_t size);
char *oom_strdup(const char *s);
char *oom_strndup(const char *s, size_t n);
int oom_vasprintf(char **out, const char *fmt, va_list ap);
int oom_asprintf(char **out, const char *fmt, ...);
void *oom_aligned_alloc(size_t align, size_t n);
int oom_posix_memalign(void **out, size_t align, size_t n);

/* In an ASan/UBSan build; absent (NULL) otherwise. */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

static unsigned long long count, fail_at;
static int ready, paths;

/* The call paths seen (MB_OOM_PATHS=1): a set of hashes of their innermost frames. */
#define PATH_FRAMES 4
#define PATH_SLOTS (1u << 16)
static uint64_t path_seen[PATH_SLOTS];
static unsigned path_count;

__attribute__((noinline)) static void note_path(void)
{
	void *fr[PATH_FRAMES + 3];
	int n = backtrace(fr, PATH_FRAMES + 3);
	uint64_t h = 1469598103934665603ull;

	/* fr[0] note_path, fr[1] must_fail, fr[2] the oom_* wrapper: the library's frames follow. */
	for (int i = 3; i < n; i++) {
		h ^= (uint64_t)(uintptr_t)fr[i];
		h *= 1099511628211ull;
	}
	h |= 1; /* 0 marks an empty slot */
	if (path_count >= PATH_SLOTS / 2)
		return; /* full: no more paths reported, the rest is sampled */
	for (uint32_t i = (uint32_t)(h ^ (h >> 32)) & (PATH_SLOTS - 1);; i = (i + 1) & (PATH_SLOTS - 1)) {
		if (path_seen[i] == h)
			return;
		if (path_seen[i] == 0) {
			path_seen[i] = h;
			path_count++;
			fprintf(stderr, "oom: path %llu\n", count);
			return;
		}
	}
}

static void report(void)
{
	if (fail_at == 0)
		fprintf(stderr, "oom: %llu allocations\n", count);
	else if (count < fail_at)
		fprintf(stderr, "oom: only %llu allocations, %llu never happened\n", count, fail_at);
}

static void setup(void)
{
	const char *s = getenv("MB_FAIL_ALLOC");
	char *end;

	ready = 1;
	if (!s)
		return;
	errno = 0;
	fail_at = strtoull(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "oom: MB_FAIL_ALLOC=%s is not a number\n", s);
		abort();
	}
	s = getenv("MB_OOM_PATHS");
	paths = fail_at == 0 && s && strcmp(s, "1") == 0;
	atexit(report);
}

__attribute__((constructor)) static void oom_start(void)
{
	if (!ready)
		setup();
}

/* Counts one allocation; true when it is the one to fail. */
__attribute__((noinline)) static int must_fail(void)
{
	if (!ready)
		setup();
	++count;
	if (paths)
		note_path();
	if (count != fail_at || fail_at == 0)
		return 0;
	fprintf(stderr, "oom: allocation %llu fails here\n", count);
	if (__sanitizer_print_stack_trace)
		__sanitizer_print_stack_trace();
	fprintf(stderr, "oom: end of stack\n");
	errno = ENOMEM;
	return 1;
}

void *oom_malloc(size_t n)
{
	return must_fail() ? NULL : malloc(n);
}

void *oom_calloc(size_t n, size_t size)
{
	return must_fail() ? NULL : calloc(n, size);
}

void *oom_realloc(void *p, size_t n)
{
	return must_fail() ? NULL : realloc(p, n);
}

void *oom_reallocarray(void *p, size_t n, size_t size)
{
	return must_fail() ? NULL : reallocarray(p, n, size);
}

char *oom_strdup(const char *s)
{
	return must_fail() ? NULL : strdup(s);
}

char *oom_strndup(const char *s, size_t n)
{
	return must_fail() ? NULL : strndup(s, n);
}

int oom_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (must_fail())
		return -1; /* *out is undefined after a failure, as glibc documents */
	return vasprintf(out, fmt, ap);
}

int oom_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = oom_vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}

void *oom_aligned_alloc(size_t align, size_t n)
{
	return must_fail() ? NULL : aligned_alloc(align, n);
}

int oom_posix_memalign(void **out, size_t align, size_t n)
{
	return must_fail() ? ENOMEM : posix_memalign(out, align, n);
}

/* glibc's fortified forms (-D_FORTIFY_SOURCE), should a build use them. */
int oom_vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);
int oom_asprintf_chk(char **out, int flag, const char *fmt, ...);

int oom_vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	return oom_vasprintf(out, fmt, ap);
}

int oom_asprintf_chk(char **out, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	(void)flag;
	va_start(ap, fmt);
	r = oom_vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}
