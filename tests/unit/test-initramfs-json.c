/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The initramfs documents (mb_initramfs_write_json, mb_initramfs_pack_to_json,
 * mb_initramfs_verify_to_json) against values from outside mboot: an archive built here byte
 * by byte from the kernel's buffer-format.rst, whose document (offsets, digests, escapes,
 * layout) Python wrote with json.dumps and hashlib (tests/unit/initramfs-json-expected.py,
 * whose output is pasted below), and the FIPS 180 digests of "abc".
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

#include "shared/json.h"

#include <mboot/mboot.h>
#include "shared/hex.h"

typedef struct buf {
	char *p;
	size_t n, cap;
	unsigned pieces;
	int fail_with; /* the sink's answer */
} buf;

static void put(buf *b, const void *d, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = 0;
}

static int sink(void *ctx, const char *text, size_t len)
{
	buf *b = ctx;

	b->pieces++;
	if (b->fail_with)
		return b->fail_with;
	put(b, text, len);
	return 0;
}

static void pad4(buf *b)
{
	while (b->n % 4)
		put(b, "", 1);
}

/* One newc entry (buffer-format.rst): c_ino, c_mode, c_uid, c_gid, c_nlink, c_mtime,
 * c_filesize, c_maj, c_min, c_rmaj, c_rmin, c_namesize, c_chksum in hex. */
static void entry(buf *b, const char *name, size_t name_len, uint32_t mode, uint32_t ino, uint32_t uid,
		  uint32_t gid, uint32_t nlink, uint32_t mtime, uint32_t rmaj, uint32_t rmin, const char *data,
		  uint32_t size)
{
	char hdr[111];

	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino, mode, uid,
		 gid, nlink, mtime, size, 0u, 0u, rmaj, rmin, (unsigned) name_len + 1, 0u);
	put(b, hdr, 110);
	put(b, name, name_len);
	put(b, "", 1);
	pad4(b);
	put(b, data, size);
	pad4(b);
}

/* The archive tests/unit/initramfs-json-expected.py builds too, which printed the texts below. */
static void small_archive(buf *b)
{
	entry(b, ".", 1, 040755, 0, 0, 0, 2, 1650000000, 0, 0, NULL, 0);
	entry(b, "bin/sh", 6, 0100755, 1, 0, 0, 1, 1650000000, 0, 0, "hello\n", 6);
	entry(b, "caf\xe9", 4, 0100644, 2, 0, 0, 1, 1650000000, 0, 0, NULL, 0);
	entry(b, "dev/null", 8, 020666, 3, 0, 0, 1, 1650000000, 1, 3, NULL, 0);
	entry(b, "lnk", 3, 0120777, 4, 0, 0, 1, 1650000000, 0, 0, "bin/sh", 6);
	entry(b, "a\\b", 3, 0100600, 5, 1000, 100, 1, 7, 0, 0, "x", 1);
	entry(b, "TRAILER!!!", 10, 0, 0, 0, 0, 1, 0, 0, 0, NULL, 0);
}

/* From Python 3 (json.dumps(doc, separators=(",", ":")) and json.dumps(doc, indent=2), the
 * digests by hashlib) for the same bytes, built there by the same rules. */
static const char list_compact[] =
	"{\"file\":\"in\\\"it.img\",\"size\":844,\"digests\":{\"sha1\":\"f6d58480653bb3830c2e2a8cf34c97207298f630\",\"sha256\":\"fe47e6c5df7a7310869121d52c14e30201ec40ff3791248c75b4c4558f39e824\"},\"segments\":[{\"compress\":\"none\",\"offset\":0,\"size\":844,\"cpio_size\":844}],\"entries\":[{\"name\":\".\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"nlink\":2,\"mtime\":1650000000,\"ino\":0,\"size\":0,\"segment\":0,\"offset\":0},{\"name\":\"bin/sh\",\"type\":\"file\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"nlink\":1,\"mtime\":1650000000,\"ino\":1,\"size\":6,\"segment\":0,\"offset\":112,\"sha256\":\"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\"},{\"name\":\"caf\\\\xe9\",\"name_hex\":\"636166e9\",\"type\":\"file\",\"mode\":\"0644\",\"uid\":0,\"gid\":0,\"nlink\":1,\"mtime\":1650000000,\"ino\":2,\"size\":0,\"segment\":0,\"offset\":240},{\"name\":\"dev/null\",\"type\":\"char\",\"mode\":\"0666\",\"uid\":0,\"gid\":0,\"nlink\":1,\"mtime\":1650000000,\"ino\":3,\"size\":0,\"segment\":0,\"offset\":356,\"rdev\":\"1:3\"},{\"name\":\"lnk\",\"type\":\"symlink\",\"mode\":\"0777\",\"uid\":0,\"gid\":0,\"nlink\":1,\"mtime\":1650000000,\"ino\":4,\"size\":6,\"segment\":0,\"offset\":476,\"target\":\"bin/sh\"},{\"name\":\"a\\\\x5cb\",\"name_hex\":\"615c62\",\"type\":\"file\",\"mode\":\"0600\",\"uid\":1000,\"gid\":100,\"nlink\":1,\"mtime\":7,\"ino\":5,\"size\":1,\"segment\":0,\"offset\":600,\"sha256\":\"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\"}]}\n";
static const char list_pretty[] =
	"{\n"
	"  \"file\": \"in\\\"it.img\",\n"
	"  \"size\": 844,\n"
	"  \"digests\": {\n"
	"    \"sha1\": \"f6d58480653bb3830c2e2a8cf34c97207298f630\",\n"
	"    \"sha256\": \"fe47e6c5df7a7310869121d52c14e30201ec40ff3791248c75b4c4558f39e824\"\n"
	"  },\n"
	"  \"segments\": [\n"
	"    {\n"
	"      \"compress\": \"none\",\n"
	"      \"offset\": 0,\n"
	"      \"size\": 844,\n"
	"      \"cpio_size\": 844\n"
	"    }\n"
	"  ],\n"
	"  \"entries\": [\n"
	"    {\n"
	"      \"name\": \".\",\n"
	"      \"type\": \"dir\",\n"
	"      \"mode\": \"0755\",\n"
	"      \"uid\": 0,\n"
	"      \"gid\": 0,\n"
	"      \"nlink\": 2,\n"
	"      \"mtime\": 1650000000,\n"
	"      \"ino\": 0,\n"
	"      \"size\": 0,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 0\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"bin/sh\",\n"
	"      \"type\": \"file\",\n"
	"      \"mode\": \"0755\",\n"
	"      \"uid\": 0,\n"
	"      \"gid\": 0,\n"
	"      \"nlink\": 1,\n"
	"      \"mtime\": 1650000000,\n"
	"      \"ino\": 1,\n"
	"      \"size\": 6,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 112,\n"
	"      \"sha256\": \"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\"\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"caf\\\\xe9\",\n"
	"      \"name_hex\": \"636166e9\",\n"
	"      \"type\": \"file\",\n"
	"      \"mode\": \"0644\",\n"
	"      \"uid\": 0,\n"
	"      \"gid\": 0,\n"
	"      \"nlink\": 1,\n"
	"      \"mtime\": 1650000000,\n"
	"      \"ino\": 2,\n"
	"      \"size\": 0,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 240\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"dev/null\",\n"
	"      \"type\": \"char\",\n"
	"      \"mode\": \"0666\",\n"
	"      \"uid\": 0,\n"
	"      \"gid\": 0,\n"
	"      \"nlink\": 1,\n"
	"      \"mtime\": 1650000000,\n"
	"      \"ino\": 3,\n"
	"      \"size\": 0,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 356,\n"
	"      \"rdev\": \"1:3\"\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"lnk\",\n"
	"      \"type\": \"symlink\",\n"
	"      \"mode\": \"0777\",\n"
	"      \"uid\": 0,\n"
	"      \"gid\": 0,\n"
	"      \"nlink\": 1,\n"
	"      \"mtime\": 1650000000,\n"
	"      \"ino\": 4,\n"
	"      \"size\": 6,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 476,\n"
	"      \"target\": \"bin/sh\"\n"
	"    },\n"
	"    {\n"
	"      \"name\": \"a\\\\x5cb\",\n"
	"      \"name_hex\": \"615c62\",\n"
	"      \"type\": \"file\",\n"
	"      \"mode\": \"0600\",\n"
	"      \"uid\": 1000,\n"
	"      \"gid\": 100,\n"
	"      \"nlink\": 1,\n"
	"      \"mtime\": 7,\n"
	"      \"ino\": 5,\n"
	"      \"size\": 1,\n"
	"      \"segment\": 0,\n"
	"      \"offset\": 600,\n"
	"      \"sha256\": \"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\"\n"
	"    }\n"
	"  ]\n"
	"}\n";
static const char archive_sha1[] = "f6d58480653bb3830c2e2a8cf34c97207298f630";
static const char archive_sha256[] = "fe47e6c5df7a7310869121d52c14e30201ec40ff3791248c75b4c4558f39e824";

static void list_doc(bool pretty, const char *expected)
{
	uint8_t d1[20], d256[32];
	const mb_event_digest d[] = { { MB_ALG_SHA1, 20, d1 }, { MB_ALG_SHA256, 32, d256 } };
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	buf ar = { 0 }, out = { 0 };

	small_archive(&ar);
	assert_int_equal(ar.n, 844);
	assert_int_equal(hex_parse(archive_sha1, 40, d1, sizeof(d1)), 0);
	assert_int_equal(hex_parse(archive_sha256, 64, d256, sizeof(d256)), 0);
	assert_int_equal(mb_initramfs_parse(ar.p, ar.n, &a, &err), 0);
	assert_int_equal(mb_initramfs_write_json(a, "in\"it.img", ar.n, d, 2, pretty, sink, &out, &err), 0);
	assert_string_equal(out.p, expected);
	assert_int_equal(out.pieces, 1);
	mb_initramfs_free(a);
	free(ar.p);
	free(out.p);
}

static void test_list_compact(void **state)
{
	(void) state;
	list_doc(false, list_compact);
}

static void test_list_pretty(void **state)
{
	(void) state;
	list_doc(true, list_pretty);
}

/* A big archive (80 names of 4,000 bytes: over the 256 KiB a piece) goes out in pieces, whole;
 * a sink's error stops the writer with that error. */
static void test_list_streamed(void **state)
{
	const unsigned n = 80;
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	buf ar = { 0 }, out = { 0 }, failing = { .fail_with = -EPIPE };
	json_t *doc;
	char name[4008];

	(void) state;
	entry(&ar, ".", 1, 040755, 0, 0, 0, 2, 0, 0, 0, NULL, 0);
	for (unsigned i = 1; i <= n; i++) {
		memset(name, 'x', sizeof(name));
		snprintf(name, 7, "f%05u", i);
		name[6] = 'x';
		name[4000] = 0;
		entry(&ar, name, strlen(name), 0100644, i, 0, 0, 1, 0, 0, 0, "abc", 3);
	}
	entry(&ar, "TRAILER!!!", 10, 0, 0, 0, 0, 1, 0, 0, 0, NULL, 0);
	assert_int_equal(mb_initramfs_parse(ar.p, ar.n, &a, &err), 0);
	assert_int_equal(mb_initramfs_write_json(a, "big", ar.n, NULL, 0, false, sink, &out, &err), 0);
	assert_true(out.pieces > 1);
	doc = json_loads(out.p, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "entries")), n + 1);
	/* sha256sum of "abc" (FIPS 180-2) */
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "entries"), n),
							      "sha256")),
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "entries"), n),
							   "name"))[0], 'f');
	assert_int_equal(strlen(json_string_value(json_object_get(json_array_get(json_object_get(doc, "entries"), n),
								     "name"))), 4000);
	json_decref(doc);
	assert_int_equal(mb_initramfs_write_json(a, "big", ar.n, NULL, 0, false, sink, &failing, &err), -EPIPE);
	assert_int_equal(failing.pieces, 1);
	mb_initramfs_free(a);
	free(ar.p);
	free(out.p);
}

/* FIPS 180 "abc" digests as the packed file's; the policy text embedded as a value. */
static void test_pack(void **state)
{
	mb_initramfs_stats st = { .entries = 3, .cpio_size = 512 };
	mb_initramfs_opts o = MB_OPTIONS_INIT(mb_initramfs_opts);
	char *text;

	(void) state;
	o.compress = MB_COMPRESS_ZSTD;
	o.mtime = 1650000000;
	assert_int_equal(hex_parse("a9993e364706816aba3e25717850c26c9cd0d89d", 40, st.sha1, 20), 0);
	assert_int_equal(hex_parse("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 64, st.sha256, 32), 0);
	assert_int_equal(hex_parse("cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
				   "8086072ba1e7cc2358baeca134c825a7", 96, st.sha384, 48), 0);
	memset(st.cpio_sha256, 0xab, 32);
	text = mb_initramfs_pack_to_json("x.img", 99, &o, &st, "{\"version\": 1, \"pcrs\": {}}", false);
	assert_non_null(text);
	assert_string_equal(text,
		"{\"file\":\"x.img\",\"size\":99,\"compress\":\"zstd\",\"entries\":3,\"mtime\":1650000000,"
		"\"cpio_size\":512,\"cpio_sha256\":\"abababababababababababababababababababababababababababababababab\","
		"\"digests\":{\"sha1\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
		"\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\","
		"\"sha384\":\"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
		"8086072ba1e7cc2358baeca134c825a7\"},\"policy\":{\"version\":1,\"pcrs\":{}}}");
	free(text);
	/* pretty as json.dumps(indent=2) lays it out; no policy, no member */
	text = mb_initramfs_pack_to_json("x.img", 99, &o, &st, NULL, true);
	assert_non_null(text);
	assert_non_null(strstr(text, "{\n  \"file\": \"x.img\",\n  \"size\": 99,\n"));
	assert_non_null(strstr(text, "\n  \"digests\": {\n    \"sha1\": \"a9993e364706816aba3e25717850c26c9cd0d89d\",\n"));
	assert_null(strstr(text, "policy"));
	free(text);
	/* a policy that is not JSON: no document rather than one without it */
	assert_null(mb_initramfs_pack_to_json("x.img", 99, &o, &st, "{", false));
}

static void test_verify(void **state)
{
	uint8_t d256[32];
	const mb_event_digest d[] = { { MB_ALG_SHA256, 32, d256 } };
	mb_initramfs_opts o = MB_OPTIONS_INIT(mb_initramfs_opts);
	mb_cpio_entry e = { .name = "caf\xe9", .name_len = 4 };
	char *text;

	(void) state;
	assert_int_equal(hex_parse("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 64, d256, 32), 0);
	text = mb_initramfs_verify_to_json("f", "d/", &o, d, 1, NULL, SIZE_MAX, NULL, false);
	assert_non_null(text);
	assert_string_equal(text, "{\"file\":\"f\",\"dir\":\"d/\",\"result\":\"identical\",\"compress\":\"none\",\"mtime\":0,"
				  "\"digests\":{\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}");
	free(text);
	text = mb_initramfs_verify_to_json("f", "d/", &o, d, 1, "mode 0100644 vs 0100755", 7, &e, false);
	assert_non_null(text);
	assert_non_null(strstr(text, ",\"result\":\"different\","));
	assert_non_null(strstr(text, ",\"first_difference\":{\"entry\":7,\"name\":\"caf\\\\xe9\","
				     "\"what\":\"mode 0100644 vs 0100755\"}}"));
	free(text);
	text = mb_initramfs_verify_to_json("f", "d/", &o, d, 1, "same entries, different bytes", SIZE_MAX, NULL, true);
	assert_non_null(text);
	assert_non_null(strstr(text, "\n  \"first_difference\": {\n    \"what\": \"same entries, different bytes\"\n  }\n}"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_compact),
		cmocka_unit_test(test_list_pretty),
		cmocka_unit_test(test_list_streamed),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_verify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
