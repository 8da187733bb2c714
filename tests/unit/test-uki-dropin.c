/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * systemd-stub's drop-in archives (mb_uki_dropin_cpio). The truth is a real boot
 * (tests/data/uki-dropins/PROVENANCE): systemd 252's stub built the archives from test.raw and
 * test.cred and measured them into PCR 13 and PCR 12, and the kernel's initrd tag in PCR 9
 * covers .initrd followed by both; the archives built here must hash to those digests in every
 * bank. The picking rules (suffix, order, skipped names) are read back from the archive bytes.
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

static uint8_t *load(const char *name, size_t *size)
{
	char rel[256];
	uint8_t *buf;

	snprintf(rel, sizeof(rel), "uki-dropins/%s", name);
	buf = testdata_load(rel, size);
	assert_non_null(buf);
	return buf;
}

/* The event of pcr whose data is desc as UTF-16LE (with or without its NUL). */
static const mb_event *find_event(const mb_event_log *log, uint32_t pcr, const char *desc)
{
	for (size_t i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		size_t n = strlen(desc);
		bool same = ev->pcr == pcr && (ev->data_size == 2 * n || ev->data_size == 2 * n + 2);

		for (size_t k = 0; same && k < n; k++)
			same = ev->data[2 * k] == (uint8_t) desc[k] && ev->data[2 * k + 1] == 0;
		if (same)
			return ev;
	}
	return NULL;
}

/* Every bank's digest of ev equals the digest of data. */
static void assert_digests(const mb_event *ev, const void *data, size_t size)
{
	assert_true(ev->n_digests >= 4); /* the recorded TPM had sha1, sha256, sha384, sha512 */
	for (uint32_t i = 0; i < ev->n_digests; i++) {
		uint8_t d[MB_DIGEST_MAX];

		assert_int_equal(mb_digest(ev->digests[i].alg, data, size, d), 0);
		assert_memory_equal(d, ev->digests[i].bytes, ev->digests[i].size);
	}
}

static void test_real_boot(void **state)
{
	size_t log_size, raw_size, cred_size, sys_size, creds_size;
	uint8_t *log_bytes = load("log.bin", &log_size);
	uint8_t *raw = load("test.raw", &raw_size), *cred = load("test.cred", &cred_size);
	uint8_t *sys = NULL, *creds = NULL;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	const mb_uki_dropin files[] = {
		{ "test.raw", raw, raw_size },
		{ "test.cred", cred, cred_size },
	};
	(void) state;

	assert_int_equal(mb_event_log_parse(log_bytes, log_size, &log, &err), 0);
	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_SYSEXTS, files, 2, &sys, &sys_size, &err), 0);
	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_CREDENTIALS, files, 2, &creds, &creds_size, &err), 0);

	const mb_event *ev13 = find_event(log, mb_uki_dropin_pcr(MB_UKI_DROPIN_SYSEXTS),
					  mb_uki_dropin_description(MB_UKI_DROPIN_SYSEXTS));
	const mb_event *ev12 = find_event(log, mb_uki_dropin_pcr(MB_UKI_DROPIN_CREDENTIALS),
					  mb_uki_dropin_description(MB_UKI_DROPIN_CREDENTIALS));
	assert_non_null(ev13);
	assert_non_null(ev12);
	assert_digests(ev13, sys, sys_size);
	assert_digests(ev12, creds, creds_size);

	mb_event_log_free(log);
	free(sys);
	free(creds);
	free(raw);
	free(cred);
	free(log_bytes);
}

static size_t count(const uint8_t *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle), hits = 0;

	for (size_t i = 0; i + k <= n; i++)
		hits += memcmp(hay + i, needle, k) == 0;
	return hits;
}

static const uint8_t *find(const uint8_t *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return hay + i;
	return NULL;
}

static void test_picking(void **state)
{
	char long_name[300];
	const uint8_t empty[1] = { 0 };
	mb_error err = { 0 };
	uint8_t *a = NULL;
	size_t n = 0;
	(void) state;

	memset(long_name, 'x', sizeof(long_name));
	memcpy(long_name + 290, ".raw", 5);
	const mb_uki_dropin files[] = {
		{ "b.raw", "BBBB", 4 }, { "A.RAW", "AAAA", 4 }, { ".hidden.raw", "HHHH", 4 },
		{ "x.raw.txt", "TTTT", 4 }, { "caf\xc3\xa9.raw", "NNNN", 4 }, { long_name, "LLLL", 4 },
		{ "e.raw", empty, 0 },
	};

	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_SYSEXTS, files, 7, &a, &n, &err), 0);
	assert_non_null(a);
	assert_int_equal(n % 4, 0);
	/* Picked: A.RAW, b.raw, e.raw in byte order (uppercase first); skipped: the rest. */
	const uint8_t *pa = find(a, n, ".extra/sysext/A.RAW"), *pb = find(a, n, ".extra/sysext/b.raw"),
		      *pe = find(a, n, ".extra/sysext/e.raw");
	assert_non_null(pa);
	assert_non_null(pb);
	assert_non_null(pe);
	assert_true(pa < pb && pb < pe);
	assert_int_equal(count(a, n, "HHHH") + count(a, n, "TTTT") + count(a, n, "NNNN") + count(a, n, "LLLL"), 0);
	/* 2 folders, 3 files, the trailer: 6 headers; the trailer is last. */
	assert_int_equal(count(a, n, "070701"), 6);
	assert_non_null(find(a + n - 16, 16, "TRAILER!!!"));
	free(a);

	/* No file of the kind: no archive, nothing measured. */
	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_CREDENTIALS, files, 7, &a, &n, &err), 0);
	assert_null(a);
	assert_int_equal(n, 0);

	/* A name twice, a path, an empty name: refused. */
	const mb_uki_dropin twice[] = { { "a.raw", "1", 1 }, { "a.raw", "2", 1 } };
	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_SYSEXTS, twice, 2, &a, &n, &err), -EINVAL);
	const mb_uki_dropin path[] = { { "d/a.raw", "1", 1 } };
	assert_int_equal(mb_uki_dropin_cpio(MB_UKI_DROPIN_SYSEXTS, path, 1, &a, &n, &err), -EINVAL);
	assert_int_equal(mb_uki_dropin_kind_of("", &err), -EINVAL);
	assert_int_equal(mb_uki_dropin_kind_of("x.cred", &err), MB_UKI_DROPIN_CREDENTIALS);
	assert_int_equal(mb_uki_dropin_kind_of("x.conf", &err), -ENOENT);
	assert_non_null(strstr(err.message, "*.cred"));
	assert_int_equal(mb_uki_dropin_cpio((mb_uki_dropin_kind) 7, files, 1, &a, &n, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_boot),
		cmocka_unit_test(test_picking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
