/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The initramfs reader's caps and segment handling, on archives built here byte by byte from
 * buffer-format.rst: name size 4096 accepted and 4097 refused, 1,000,000 entries accepted and
 * one more refused (with the memory cap on kept entries raised; at the default cap they are
 * refused for memory), decompression caps (total and expansion ratio, gzip and zstd bombs),
 * NUL padding capped, concatenated plain + gzip + zstd segments with NUL padding between
 * them, a chain of tiny segments, offsets of errors inside compressed data. Digests are
 * known answers from sha256sum.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "lib/initramfs/initramfs-internal.h"

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void pad4(buf *b)
{
	while (b->n % 4)
		put(b, "", 1);
}

/* One newc entry; name is name_len bytes and namesize name_len + 1. */
static void entry(buf *b, const char *name, size_t name_len, uint32_t mode, const void *data, uint32_t size)
{
	char hdr[111];

	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 1u, mode, 0u, 0u,
		 1u, 0u, size, 0u, 0u, 0u, 0u, (unsigned) name_len + 1, 0u);
	put(b, hdr, 110);
	put(b, name, name_len);
	put(b, "", 1);
	pad4(b);
	put(b, data, size);
	pad4(b);
}

static void trailer(buf *b)
{
	entry(b, "TRAILER!!!", 10, 0, NULL, 0);
}

static void test_name_size_cap(void **state)
{
	char *name = malloc(4097);
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	buf b = { 0 };

	memset(name, 'n', 4097);
	entry(&b, name, 4095, 0100644, "x", 1); /* namesize 4096: the cap */
	trailer(&b);
	assert_int_equal(mb_initramfs_parse(b.p, b.n, &a, &err), 0);
	assert_int_equal(mb_initramfs_entry_count(a), 1);
	assert_int_equal(mb_initramfs_entry_at(a, 0)->name_len, 4095);
	mb_initramfs_free(a);
	b.n = 0;
	entry(&b, name, 4096, 0100644, "x", 1); /* namesize 4097 */
	trailer(&b);
	assert_int_equal(mb_initramfs_parse(b.p, b.n, &a, &err), -E2BIG);
	assert_true(err.has_offset);
	assert_int_equal(err.offset, 94); /* the namesize field: 6 + 11 * 8 */
	free(name);
	free(b.p);
}

/* From hex, for known answers printed by sha256sum. */
static void unhex(const char *hex, uint8_t *out)
{
	size_t i;

	for (i = 0; hex[2 * i]; i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

static void test_entry_count_cap(void **state)
{
	cpio_caps caps = cpio_caps_default;
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	buf b = { 0 };
	char name[16];
	size_t i, before;

	for (i = 0; i < MB_CPIO_ENTRIES_MAX; i++) {
		snprintf(name, sizeof(name), "f%07zu", i);
		entry(&b, name, 8, 0100644, NULL, 0);
	}
	before = b.n;
	trailer(&b);
	/* A million entries do not fit the memory a parse may keep by default ... */
	assert_int_equal(mb_initramfs_parse(b.p, b.n, &a, &err), -E2BIG);
	assert_non_null(strstr(err.message, "memory cap of 32 MiB"));
	/* ... with that cap out of the way, the count cap is exact. */
	caps.kept = SIZE_MAX / 2;
	assert_int_equal(initramfs_parse_capped(b.p, b.n, &caps, &a, &err), 0);
	assert_int_equal(mb_initramfs_entry_count(a), MB_CPIO_ENTRIES_MAX);
	mb_initramfs_free(a);
	b.n = before;
	entry(&b, "one-more", 8, 0100644, NULL, 0);
	trailer(&b);
	assert_int_equal(initramfs_parse_capped(b.p, b.n, &caps, &a, &err), -E2BIG);
	assert_int_equal(err.offset, before);
	free(b.p);
}

static void bomb(mb_compress c)
{
	size_t size = 32u << 20, zsize = 0;
	uint8_t *zeros = calloc(1, size), *z = NULL, md[32];
	cpio_caps caps = cpio_caps_default;
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	buf b = { 0 };

	assert_non_null(zeros);
	/* A valid header declaring a 32 MiB file of zeros, then the zeros. */
	entry(&b, "big", 3, 0100644, zeros, (uint32_t) size);
	trailer(&b);
	assert_int_equal(compress_buffer(c, b.p, b.n, &z, &zsize, &err), 0);
	assert_true(zsize < size / 100);
	/* the total cap */
	caps.total = 1u << 20;
	assert_int_equal(initramfs_parse_capped(z, zsize, &caps, &a, &err), -E2BIG);
	assert_non_null(strstr(err.message, "decompressed data over 1048576 bytes"));
	/* the ratio: 32 MiB from under 330 kB is over 256 times plus 16 MiB */
	assert_int_equal(mb_initramfs_parse(z, zsize, &a, &err), -E2BIG);
	assert_non_null(strstr(err.message, "over 256 times its compressed size plus 16 MiB"));
	/* within both: the whole file streams through, and its digest is right */
	caps.total = 64u << 20;
	caps.ratio = 1u << 20;
	assert_int_equal(initramfs_parse_capped(z, zsize, &caps, &a, &err), 0);
	assert_int_equal(mb_initramfs_entry_at(a, 0)->size, size);
	unhex("83ee47245398adee79bd9c0a8bc57b821e92aba10f5f9ade8a5d1fae4d8c4302", md);
	assert_memory_equal(mb_initramfs_entry_at(a, 0)->sha256, md, 32);
	mb_initramfs_free(a);
	free(z);
	free(zeros);
	free(b.p);
}

static void test_gzip_bomb(void **state)
{
	bomb(MB_COMPRESS_GZIP);
}

static void test_zstd_bomb(void **state)
{
	bomb(MB_COMPRESS_ZSTD);
}

static void test_segments(void **state)
{
	buf one = { 0 }, two = { 0 }, file = { 0 };
	uint8_t *gz = NULL, *zs = NULL;
	size_t gzn = 0, zsn = 0;
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	const mb_cpio_segment *s;
	uint8_t md[32];

	entry(&one, "kernel/x86/microcode/GenuineIntel.bin", 37, 0100644, "ucode", 5);
	trailer(&one);
	entry(&two, "init", 4, 0100755, "#!/bin/sh\n", 10);
	trailer(&two);
	assert_int_equal(compress_buffer(MB_COMPRESS_GZIP, two.p, two.n, &gz, &gzn, &err), 0);
	assert_int_equal(compress_buffer(MB_COMPRESS_ZSTD, two.p, two.n, &zs, &zsn, &err), 0);
	put(&file, one.p, one.n);
	put(&file, "\0\0\0\0\0\0\0\0", 8); /* NUL padding between archives, as the kernel skips */
	put(&file, gz, gzn);
	put(&file, zs, zsn);
	if (mb_initramfs_parse(file.p, file.n, &a, &err) < 0)
		fail_msg("%s at %llu", err.message, (unsigned long long) err.offset);
	assert_int_equal(mb_initramfs_segment_count(a), 3);
	assert_int_equal(mb_initramfs_entry_count(a), 3);
	s = mb_initramfs_segment_at(a, 0);
	assert_int_equal(s->compress, MB_COMPRESS_NONE);
	assert_int_equal(s->file_size, one.n);
	s = mb_initramfs_segment_at(a, 1);
	assert_int_equal(s->compress, MB_COMPRESS_GZIP);
	assert_int_equal(s->file_offset, one.n + 8);
	assert_int_equal(s->file_size, gzn);
	assert_int_equal(s->cpio_size, two.n);
	s = mb_initramfs_segment_at(a, 2);
	assert_int_equal(s->compress, MB_COMPRESS_ZSTD);
	assert_int_equal(s->file_offset, one.n + 8 + gzn);
	assert_string_equal(mb_initramfs_entry_at(a, 2)->name, "init");
	assert_int_equal(mb_initramfs_entry_at(a, 2)->segment, 2);
	unhex("a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf", md);
	assert_memory_equal(mb_initramfs_entry_at(a, 1)->sha256, md, 32);
	assert_null(mb_initramfs_entry_at(a, 1)->data);
	mb_initramfs_free(a);

	/* An error inside compressed data: the offset is in the decompressed cpio, and says so. */
	two.n = 0;
	entry(&two, "ok", 2, 0100644, "x", 1);
	entry(&two, "../escape", 9, 0100644, "x", 1);
	trailer(&two);
	free(gz);
	assert_int_equal(compress_buffer(MB_COMPRESS_GZIP, two.p, two.n, &gz, &gzn, &err), 0);
	assert_int_equal(mb_initramfs_parse(gz, gzn, &a, &err), -EBADMSG);
	/* "ok": header 110 + name 3, padded to 116; data 1, padded to 120: second header at 120 */
	assert_int_equal(err.offset, 120 + 110);
	assert_non_null(strstr(err.message, "gzip-decompressed"));
	free(gz);
	free(zs);
	free(one.p);
	free(two.p);
	free(file.p);
}

/* NUL padding between archives: up to the cap, plain or compressed; one byte more is refused. */
static void test_padding_cap(void **state)
{
	cpio_caps caps = cpio_caps_default;
	mb_compress kinds[] = { MB_COMPRESS_NONE, MB_COMPRESS_GZIP, MB_COMPRESS_ZSTD };
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	size_t k, extra;

	caps.pad = 4096;
	for (k = 0; k < 3; k++)
		for (extra = 0; extra < 2; extra++) {
			buf b = { 0 };
			uint8_t *z = NULL, zeros[4097] = { 0 };
			size_t zn = 0;

			entry(&b, "f", 1, 0100644, "x", 1);
			trailer(&b);
			put(&b, zeros, caps.pad + extra);
			if (kinds[k] != MB_COMPRESS_NONE)
				assert_int_equal(compress_buffer(kinds[k], b.p, b.n, &z, &zn, &err), 0);
			assert_int_equal(initramfs_parse_capped(z ? z : b.p, z ? zn : b.n, &caps, &a, &err),
					 extra ? -E2BIG : 0);
			if (extra)
				assert_non_null(strstr(err.message, "more than 4096 NUL bytes of padding"));
			else
				assert_int_equal(mb_initramfs_entry_count(a), 1);
			a = mb_initramfs_free(a);
			free(z);
			free(b.p);
		}
}

/* Many tiny compressed segments, each a trailer: 64 pass, the 65th is refused, at its offset. */
static void test_segment_chain(void **state)
{
	buf one = { 0 }, file = { 0 };
	uint8_t *z = NULL;
	size_t zn = 0, i;
	mb_initramfs *a = NULL;
	mb_error err = { 0 };

	trailer(&one);
	assert_int_equal(compress_buffer(MB_COMPRESS_ZSTD, one.p, one.n, &z, &zn, &err), 0);
	for (i = 0; i < MB_CPIO_SEGMENTS_MAX; i++)
		put(&file, z, zn);
	assert_int_equal(mb_initramfs_parse(file.p, file.n, &a, &err), 0);
	assert_int_equal(mb_initramfs_segment_count(a), MB_CPIO_SEGMENTS_MAX);
	assert_int_equal(mb_initramfs_entry_count(a), 0);
	a = mb_initramfs_free(a);
	put(&file, z, zn);
	assert_int_equal(mb_initramfs_parse(file.p, file.n, &a, &err), -E2BIG);
	assert_int_equal(err.offset, MB_CPIO_SEGMENTS_MAX * zn);
	assert_non_null(strstr(err.message, "more than 64 concatenated archives"));
	free(z);
	free(one.p);
	free(file.p);
}

static void test_compare(void **state)
{
	buf x = { 0 }, y = { 0 };
	mb_initramfs *a = NULL, *b = NULL;
	mb_error err = { 0 };
	char what[128];
	size_t idx;

	entry(&x, "a", 1, 0100644, "same", 4);
	entry(&x, "b", 1, 0100644, "one", 3);
	trailer(&x);
	entry(&y, "a", 1, 0100644, "same", 4);
	entry(&y, "b", 1, 0100644, "two", 3);
	trailer(&y);
	assert_int_equal(mb_initramfs_parse(x.p, x.n, &a, &err), 0);
	assert_int_equal(mb_initramfs_parse(y.p, y.n, &b, &err), 0);
	assert_int_equal(mb_initramfs_compare(a, a, &idx, what, sizeof(what)), 0);
	assert_int_equal(mb_initramfs_compare(a, b, &idx, what, sizeof(what)), 1);
	assert_int_equal(idx, 1);
	assert_string_equal(what, "data");
	mb_initramfs_free(a);
	mb_initramfs_free(b);
	free(x.p);
	free(y.p);
}

/*
 * pack feeds deflate while it reads files; the docs promise the bytes of compressing the
 * finished archive in one call. Check it on a tree of a few MiB (several 1 MiB publications).
 */
static void test_streamed_gzip_is_one_shot(void **state)
{
	char dir[] = "/tmp/mboot-test-cpio.XXXXXX", path[256];
	mb_initramfs_opts opts = { .size = sizeof(mb_initramfs_opts), .compress = MB_COMPRESS_NONE, .mtime = 1 };
	mb_initramfs_stats st, st2;
	uint8_t *plain = NULL, *gz = NULL, *one = NULL;
	size_t plain_n = 0, gz_n = 0, one_n = 0, i;
	mb_error err = { 0 };
	uint32_t x = 1;

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < 40; i++) {
		FILE *f;
		size_t k;

		snprintf(path, sizeof(path), "%s/f%02zu", dir, i);
		f = fopen(path, "w");
		assert_non_null(f);
		for (k = 0; k < 100000 + i * 977; k++) {
			x = x * 1103515245u + 12345u;
			fputc(i % 2 ? (int) (x >> 24) : 'a' + (int) (x >> 28), f);
		}
		fclose(f);
	}
	assert_int_equal(mb_initramfs_pack(dir, &opts, &plain, &plain_n, &st, &err), 0);
	opts.compress = MB_COMPRESS_GZIP;
	assert_int_equal(mb_initramfs_pack(dir, &opts, &gz, &gz_n, &st2, &err), 0);
	assert_int_equal(compress_buffer(MB_COMPRESS_GZIP, plain, plain_n, &one, &one_n, &err), 0);
	assert_int_equal(gz_n, one_n);
	assert_memory_equal(gz, one, gz_n);
	assert_memory_equal(st.cpio_sha256, st2.cpio_sha256, 32);
	assert_memory_equal(st.sha256, st.cpio_sha256, 32); /* none: the file is the archive */
	assert_true(plain_n > 4u << 20);
	for (i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "%s/f%02zu", dir, i);
		unlink(path);
	}
	rmdir(dir);
	free(plain);
	free(gz);
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_size_cap),
		cmocka_unit_test(test_entry_count_cap),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_zstd_bomb),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_padding_cap),
		cmocka_unit_test(test_segment_chain),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_streamed_gzip_is_one_shot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
