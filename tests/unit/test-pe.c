/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PE/COFF Authenticode digest on images built here byte by byte. The expected
 * digest is computed with OpenSSL over the byte ranges the Authenticode document
 * ("Calculating the PE Image Hash") and EDK2's measurement name, listed by hand
 * per case, not by mboot's parser. Real binaries are compared with pesign,
 * osslsigncode and sbverify in tests/cli/test-hash.sh.
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

#include <openssl/evp.h>

#include <mboot/pe.h>

#define IMG_MAX 0x1000
#define E_LFANEW 0x80
#define OPT 0x98            /* E_LFANEW + 4 + 20 */
#define SIZE_OF_HEADERS 0x200

typedef struct sec {
	const char *name;
	uint32_t off, size;
} sec;

typedef struct img {
	uint8_t b[IMG_MAX];
	size_t size;
	uint32_t checksum_at, secdir_at, sections_at;
} img;

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

/* A PE image: MS-DOS header, PE signature at 0x80, COFF header, optional header with
 * nrva data directories, the section table, 0x200 bytes of headers, then a body of
 * patterned bytes up to size. */
static void build(img *m, bool plus, uint32_t nrva, const sec *s, size_t n, size_t size)
{
	uint32_t dd = plus ? 112 : 96, opt_size = dd + 8 * nrva;

	assert_true(size <= IMG_MAX);
	memset(m, 0, sizeof(*m));
	for (size_t i = SIZE_OF_HEADERS; i < size; i++)
		m->b[i] = (uint8_t) (i * 7 + 3);
	m->size = size;
	m->b[0] = 'M';
	m->b[1] = 'Z';
	put32(m->b + 0x3c, E_LFANEW);
	memcpy(m->b + E_LFANEW, "PE\0\0", 4);
	put16(m->b + E_LFANEW + 4, plus ? 0x8664 : 0x014c);
	put16(m->b + E_LFANEW + 6, (uint16_t) n);
	put16(m->b + E_LFANEW + 20, (uint16_t) opt_size);
	put16(m->b + OPT, plus ? 0x20b : 0x10b);
	put32(m->b + OPT + 60, SIZE_OF_HEADERS);
	put32(m->b + OPT + 64, 0x12345678); /* CheckSum */
	put16(m->b + OPT + 68, 10);         /* EFI application */
	put32(m->b + OPT + dd - 4, nrva);
	for (uint32_t i = 0; i < nrva; i++)
		put32(m->b + OPT + dd + 8 * i, 0x1000 * (i + 1)); /* RVAs, sizes 0 */
	m->checksum_at = OPT + 64;
	m->secdir_at = OPT + dd + 32;
	m->sections_at = OPT + opt_size;
	for (size_t i = 0; i < n; i++) {
		uint8_t *h = m->b + m->sections_at + 40 * i;

		strncpy((char *) h, s[i].name, 8);
		put32(h + 8, s[i].size);
		put32(h + 12, 0x1000 * (uint32_t) (i + 1));
		put32(h + 16, s[i].size);
		put32(h + 20, s[i].off);
	}
}

static void set_cert(img *m, uint32_t off, uint32_t size)
{
	put32(m->b + m->secdir_at, off);
	put32(m->b + m->secdir_at + 4, size);
}

/* mb_pe_parse into *pe, freeing what *pe held: a test may parse many times into one pointer. */
static int reparse(const void *data, size_t size, unsigned flags, mb_pe_info **pe, mb_error *err)
{
	mb_pe_info_free(*pe);
	*pe = NULL;
	return mb_pe_parse(data, size, flags, pe, err);
}

static mb_pe_summary summary(const mb_pe_info *pe)
{
	mb_pe_summary s;

	mb_pe_info_summary(pe, &s);
	return s;
}

/* Expected digest over explicit [off, off+len) ranges; len (size_t)-n means n zero bytes. */
typedef struct rng {
	size_t off, len;
} rng;

static void expect(const img *m, const char *alg, const rng *r, size_t n, uint8_t *out, unsigned *out_len)
{
	static const uint8_t zeros[8];
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	assert_non_null(c);
	assert_true(EVP_DigestInit_ex(c, EVP_get_digestbyname(alg), NULL));
	for (size_t i = 0; i < n; i++) {
		if (r[i].off == SIZE_MAX)
			assert_true(EVP_DigestUpdate(c, zeros, r[i].len));
		else
			assert_true(EVP_DigestUpdate(c, m->b + r[i].off, r[i].len));
	}
	assert_true(EVP_DigestFinal_ex(c, out, out_len));
	EVP_MD_CTX_free(c);
}

static void check(const img *m, unsigned flags, const rng *r, size_t n)
{
	static const struct {
		const char *name;
		uint16_t alg;
	} algs[] = { { "sha1", MB_ALG_SHA1 }, { "sha256", MB_ALG_SHA256 }, { "sha384", MB_ALG_SHA384 },
		     { "sha512", MB_ALG_SHA512 } };
	mb_pe_info *pe = NULL;
	mb_error err = { 0 };
	uint64_t want_bytes = 0, got_bytes = 0;

	assert_int_equal(reparse(m->b, m->size, flags, &pe, &err), 0);
	/* The ranges the library lists cover as many bytes as the expected ones. */
	for (size_t i = 0; i < n; i++)
		want_bytes += r[i].len;
	for (size_t i = 0; i < mb_pe_info_n_ranges(pe); i++)
		got_bytes += mb_pe_info_range(pe, i)->size;
	assert_int_equal(got_bytes, want_bytes);
	assert_null(mb_pe_info_range(pe, mb_pe_info_n_ranges(pe)));
	for (size_t a = 0; a < 4; a++) {
		uint8_t want[EVP_MAX_MD_SIZE], got[MB_DIGEST_MAX];
		unsigned len;

		expect(m, algs[a].name, r, n, want, &len);
		assert_int_equal(mb_pe_hash(pe, m->b, m->size, algs[a].alg, got), 0);
		assert_memory_equal(got, want, len);
	}
	mb_pe_info_free(pe);
}

/* Headers without CheckSum and the Certificate Table entry. */
#define HDRS(m) { 0, (m).checksum_at }, { (m).checksum_at + 4, (m).secdir_at - (m).checksum_at - 4 }, \
	{ (m).secdir_at + 8, SIZE_OF_HEADERS - (m).secdir_at - 8 }

static void test_pe32plus_sorted_sections_and_extra(void **state)
{
	static const sec s[] = { { ".data", 0x600, 0x200 }, { ".text", 0x400, 0x200 } };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;

	build(m, true, 16, s, 2, 0x900);
	{
		/* sections in file order (.text first though listed second), then the extra
		 * data from SUM_OF_BYTES_HASHED = 0x200 + 0x200 + 0x200 = 0x600 to the end:
		 * the gap [0x200, 0x400) is never hashed and [0x600, 0x800) twice. That is
		 * EDK2's arithmetic, and osslsigncode's (pesign refuses such an image). */
		rng r[] = { HDRS(*m), { 0x400, 0x200 }, { 0x600, 0x200 }, { 0x600, 0x300 } };

		check(m, 0, r, 6);
		/* CheckSum and the Certificate Table entry (size 0: no table) are not hashed */
		put32(m->b + m->checksum_at, 0xcafef00d);
		set_cert(m, 0x4242, 0);
		check(m, 0, r, 6);
	}
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_true(summary(pe).pe32_plus);
	assert_int_equal(summary(pe).machine, MB_PE_MACHINE_X64);
	assert_int_equal(summary(pe).subsystem, MB_PE_SUBSYSTEM_EFI_APPLICATION);
	assert_int_equal(mb_pe_info_n_sections(pe), 2);
	assert_string_equal(mb_pe_info_section(pe, 1)->name, ".text");
	assert_false(summary(pe).has_cert_table);
	assert_int_equal(summary(pe).extra_offset, 0x600);
	assert_int_equal(summary(pe).extra_size, 0x300);
	assert_false(summary(pe).sections_overlap);
	assert_string_equal(mb_pe_machine_name(summary(pe).machine), "x64");
	mb_pe_info_free(pe);
	free(m);
}

static void test_pe32(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x300 }, { ".reloc", 0x500, 0x100 } };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;

	build(m, false, 16, s, 2, 0x600);
	{
		rng r[] = { HDRS(*m), { 0x200, 0x300 }, { 0x500, 0x100 } };

		/* PE32: CheckSum at the same place, data directories 16 bytes earlier */
		assert_int_equal(m->secdir_at, OPT + 96 + 32);
		check(m, 0, r, 5);
	}
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_false(summary(pe).pe32_plus);
	assert_int_equal(summary(pe).machine, MB_PE_MACHINE_I386);
	assert_int_equal(summary(pe).extra_size, 0);
	mb_pe_info_free(pe);
	free(m);
}

static void test_no_certificate_directory(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x200 } };
	img *m = malloc(sizeof(*m));

	/* NumberOfRvaAndSizes 4: no entry 4; everything after CheckSum is hashed */
	build(m, true, 4, s, 1, 0x400);
	{
		rng r[] = { { 0, m->checksum_at }, { m->checksum_at + 4, SIZE_OF_HEADERS - m->checksum_at - 4 },
			    { 0x200, 0x200 } };

		check(m, 0, r, 3);
	}
	free(m);
}

static void test_certificate_table(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x400 } };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;

	/* two WIN_CERTIFICATE entries (0x7c bytes, padded to 0x80, and 0x80) at the end */
	build(m, true, 16, s, 1, 0x700);
	set_cert(m, 0x600, 0x100);
	put32(m->b + 0x600, 0x7c);
	put16(m->b + 0x604, 0x0200);
	put16(m->b + 0x606, 0x0002);
	put32(m->b + 0x680, 0x80);
	put16(m->b + 0x684, 0x0200);
	put16(m->b + 0x686, 0x0002);
	{
		rng r[] = { HDRS(*m), { 0x200, 0x400 } };

		check(m, 0, r, 4);
		check(m, MB_PE_PAD_TO_8, r, 4); /* a signed image is never padded */
	}
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_true(summary(pe).has_cert_table);
	assert_true(summary(pe).cert_at_end);
	assert_int_equal(mb_pe_info_n_certs(pe), 2);
	assert_int_equal(mb_pe_info_cert(pe, 1)->offset, 0x680);
	assert_int_equal(mb_pe_info_cert(pe, 1)->type, 2);

	/* Data after the table: firmware (EDK2) hashes from SUM_OF_BYTES_HASHED up to
	 * file size minus the table's size, whatever the table's offset. */
	build(m, true, 16, s, 1, 0x700);
	set_cert(m, 0x600, 0x80);
	{
		rng r[] = { HDRS(*m), { 0x200, 0x400 }, { 0x600, 0x80 } };

		check(m, 0, r, 5);
	}
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_false(summary(pe).cert_at_end);
	mb_pe_info_free(pe);
	free(m);
}

static void test_padding(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x200 } };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;

	build(m, true, 16, s, 1, 0x403);
	{
		rng plain[] = { HDRS(*m), { 0x200, 0x200 }, { 0x400, 3 } };
		rng padded[] = { HDRS(*m), { 0x200, 0x200 }, { 0x400, 3 }, { SIZE_MAX, 5 } };

		check(m, 0, plain, 5);
		check(m, MB_PE_PAD_TO_8, padded, 6);
	}
	assert_int_equal(reparse(m->b, m->size, MB_PE_PAD_TO_8, &pe, NULL), 0);
	assert_int_equal(summary(pe).pad_bytes, 5);
	mb_pe_info_free(pe);
	free(m);
}

static void test_overlap_and_empty_sections(void **state)
{
	static const sec s[] = { { ".linux", 0x600, 0x200 }, { ".bss", 0x0, 0 }, { ".text", 0x400, 0x300 },
				 { ".sbat", 0x100, 0x40 } };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;

	/* .text [0x400,0x700) and .linux [0x600,0x800) overlap; .sbat lies inside the
	 * headers; .bss has no raw data. Each is hashed as declared (bytes shared are
	 * hashed twice), as EDK2 and shim do; extra data starts at SUM_OF_BYTES_HASHED
	 * = 0x200 + 0x40 + 0x300 + 0x200 = 0x740, not at the end of the last section. */
	build(m, true, 6, s, 4, 0x900);
	{
		rng r[] = { HDRS(*m), { 0x100, 0x40 }, { 0x400, 0x300 }, { 0x600, 0x200 }, { 0x740, 0x1c0 } };

		check(m, 0, r, 7);
	}
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_true(summary(pe).sections_overlap);
	assert_true(summary(pe).uki);
	assert_true(summary(pe).has_sbat);
	assert_false(summary(pe).has_initrd);
	mb_pe_info_free(pe);
	free(m);
}

/* mutate at offset, expect rc and the error offset */
static void hostile(const img *base, size_t off, const void *bytes, size_t n, size_t size, int want_rc,
		    uint64_t want_off)
{
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;
	mb_error err = { 0 };

	*m = *base;
	memcpy(m->b + off, bytes, n);
	assert_int_equal(reparse(m->b, size, 0, &pe, &err), want_rc);
	assert_int_equal(err.code, want_rc);
	assert_true(err.has_offset);
	assert_int_equal(err.offset, want_off);
	assert_true(err.message[0] != '\0');
	mb_pe_info_free(pe);
	free(m);
}

static void test_hostile(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x200 }, { ".data", 0x400, 0x200 } };
	static const uint8_t ff[4] = { 0xff, 0xff, 0xff, 0xff }, past[4] = { 0xf0, 0xff, 0xff, 0x7f };
	uint8_t v[8];
	img *m = malloc(sizeof(*m));
	size_t sec0 = OPT + 112 + 16 * 8;

	build(m, true, 16, s, 2, 0x700);
	hostile(m, 0, "ZM", 2, m->size, -EBADMSG, 0);
	hostile(m, E_LFANEW, "PX\0\0", 4, m->size, -EBADMSG, E_LFANEW);
	hostile(m, 0x3c, past, 4, m->size, -EBADMSG, 0x3c);
	hostile(m, E_LFANEW + 6, ff, 2, m->size, -E2BIG, E_LFANEW + 6);
	put16(v, 0x10c);
	hostile(m, OPT, v, 2, m->size, -EBADMSG, OPT);
	put16(v, 0x40);
	hostile(m, E_LFANEW + 20, v, 2, m->size, -EBADMSG, E_LFANEW + 20);
	hostile(m, OPT + 108, ff, 4, m->size, -EBADMSG, OPT + 108);
	hostile(m, OPT + 60, ff, 4, m->size, -EBADMSG, OPT + 60);
	put32(v, 0x100);
	hostile(m, OPT + 60, v, 4, m->size, -EBADMSG, OPT + 60);
	/* PointerToRawData + SizeOfRawData past 2^32 */
	put32(v, 0x2000);
	put32(v + 4, 0xfffff000);
	hostile(m, sec0 + 16, v, 8, m->size, -EBADMSG, sec0 + 16);
	/* second section's raw data past the end */
	put32(v, 0x301);
	hostile(m, sec0 + 40 + 16, v, 4, m->size, -EBADMSG, sec0 + 40 + 16);
	/* certificate table outside the file, and with offset + size past 2^32 */
	put32(v, 0x6f8);
	put32(v + 4, 0x10);
	hostile(m, m->secdir_at, v, 8, m->size, -EBADMSG, m->secdir_at);
	put32(v, 0xfffffff8);
	put32(v + 4, 0x10);
	hostile(m, m->secdir_at, v, 8, m->size, -EBADMSG, m->secdir_at);
	/* a table larger than the data after the sections */
	put32(v, 0x100);
	put32(v + 4, 0x600);
	hostile(m, m->secdir_at, v, 8, m->size, -EBADMSG, m->secdir_at);
	/* the file ends inside the optional header */
	hostile(m, 0, "MZ", 2, 0x100, -EBADMSG, OPT);
	free(m);
}

static void test_truncation_and_flips(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x200 }, { ".data", 0x400, 0x200 } };
	img *m = malloc(sizeof(*m)), *c = malloc(sizeof(*c));
	mb_pe_info *pe = NULL;
	uint8_t out[MB_DIGEST_MAX];

	build(m, true, 16, s, 2, 0x700);
	set_cert(m, 0x600, 0x100);
	for (size_t len = 0; len <= m->size; len++) {
		/* exactly: the copy is heap-allocated to its length so ASan sees any overread */
		uint8_t *t = malloc(len ? len : 1);
		mb_error err = { 0 };
		int rc;

		memcpy(t, m->b, len);
		rc = reparse(t, len, 0, &pe, &err);
		if (len < m->size)
			assert_int_equal(rc, -EBADMSG);
		else
			assert_int_equal(rc, 0);
		if (rc == 0)
			assert_int_equal(mb_pe_hash(pe, t, len, MB_ALG_SHA256, out), 0);
		free(t);
	}
	for (size_t i = 0; i < SIZE_OF_HEADERS; i++)
		for (unsigned bit = 0; bit < 8; bit++) {
			int rc;

			*c = *m;
			c->b[i] ^= 1u << bit;
			rc = reparse(c->b, c->size, MB_PE_PAD_TO_8, &pe, NULL);
			assert_true(rc == 0 || rc == -EBADMSG || rc == -E2BIG);
			if (rc == 0)
				assert_int_equal(mb_pe_hash(pe, c->b, c->size, MB_ALG_SHA1, out), 0);
		}
	/* a parse result used with other data is refused */
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_int_equal(mb_pe_hash(pe, m->b, m->size - 1, MB_ALG_SHA256, out), -EINVAL);
	assert_int_equal(reparse(m->b, (size_t) MB_PE_MAX_FILE + 1, 0, &pe, NULL), -E2BIG);
	mb_pe_info_free(pe);
	free(c);
	free(m);
}

static void test_files(void **state)
{
	/* FIPS 180-2 appendix vectors for "abc" */
	static const char *want256 = "\xba\x78\x16\xbf\x8f\x01\xcf\xea\x41\x41\x40\xde\x5d\xae\x22\x23"
				     "\xb0\x03\x61\xa3\x96\x17\x7a\x9c\xb4\x10\xff\x61\xf2\x00\x15\xad";
	static const char *want1 = "\xa9\x99\x3e\x36\x47\x06\x81\x6a\xba\x3e\x25\x71\x78\x50\xc2\x6c\x9c\xd0\xd8\x9d";
	static const sec s[] = { { ".text", 0x200, 0x200 } };
	uint16_t algs[2] = { MB_ALG_SHA256, MB_ALG_SHA1 };
	uint8_t out[2][MB_DIGEST_MAX], mem[MB_DIGEST_MAX];
	char path[] = "/tmp/mboot-test-pe-XXXXXX";
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;
	mb_error err = { 0 };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(mb_digest_file(path, algs, 2, out, &err), 0);
	assert_memory_equal(out[0], want256, 32);
	assert_memory_equal(out[1], want1, 20);

	build(m, true, 16, s, 1, 0x400);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, m->b, m->size, 0), (ssize_t) m->size);
	close(fd);
	assert_int_equal(mb_pe_authenticode_file(path, 0, algs, 1, out, &err), 0);
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	assert_int_equal(mb_pe_hash(pe, m->b, m->size, MB_ALG_SHA256, mem), 0);
	assert_memory_equal(out[0], mem, 32);
	unlink(path);
	assert_int_equal(mb_digest_file(path, algs, 1, out, &err), -ENOENT);
	assert_int_equal(mb_pe_authenticode_file(path, 0, algs, 1, out, &err), -ENOENT);
	mb_pe_info_free(pe);
	free(m);
}

/* sha256 over one buffer, with OpenSSL. */
static void sha256_of(const void *p, size_t n, uint8_t *out)
{
	unsigned len;

	assert_true(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL));
}

/* pcr = sha256(pcr || H(data)) */
static void extend_with(uint8_t *pcr, const void *data, size_t n)
{
	uint8_t buf[64];

	memcpy(buf, pcr, 32);
	sha256_of(data, n, buf + 32);
	sha256_of(buf, 64, pcr);
}

/*
 * PCR 11 of a UKI as systemd-stub 252 measures it: its sections in the stub's order (.linux,
 * .osrel, .cmdline, .initrd, ...), not the table's; a later entry of a name wins; VirtualSize
 * 0 is absent; .pcrsig is not measured. Expected value extended here with OpenSSL.
 */
static void test_uki(void **state)
{
	static const sec s[] = { { ".initrd", 0x500, 0x80 }, { ".linux", 0x200, 0x100 }, { ".cmdline", 0x300, 0x20 },
				 { ".linux", 0x400, 0x100 }, { ".pcrsig", 0x600, 0x10 }, { ".dtb", 0x700, 0x10 } };
	const uint16_t alg = MB_ALG_SHA256;
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	uint8_t want[32] = { 0 }, got[1][MB_DIGEST_MAX];
	img *m = malloc(sizeof(*m)), *h = malloc(sizeof(*h));
	mb_pe_info *pe = NULL;
	mb_error err = { 0 };
	size_t n;

	(void) state;
	build(m, true, 0, s, 6, 0x800); /* no data directories: room for six section headers */
	put32(m->b + m->sections_at + 40 * 5 + 8, 0); /* .dtb: VirtualSize 0, the stub skips it */
	extend_with(want, ".linux", 7);
	extend_with(want, m->b + 0x400, 0x100);
	extend_with(want, ".cmdline", 9);
	extend_with(want, m->b + 0x300, 0x20);
	extend_with(want, ".initrd", 8);
	extend_with(want, m->b + 0x500, 0x80);
	if (reparse(m->b, m->size, 0, &pe, &err) < 0)
		fail_msg("%s", err.message);
	if (mb_uki_sections(pe, secs, &n, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(n, 3);
	assert_string_equal(secs[0].name, ".linux");
	assert_int_equal(secs[0].table_index, 3);
	assert_string_equal(secs[2].name, ".initrd");
	assert_int_equal(mb_uki_pcr11(pe, m->b, m->size, &alg, 1, got, &err), 0);
	assert_memory_equal(got[0], want, 32);

	/* VirtualSize over the raw size: the zero fill is not computed */
	*h = *m;
	put32(h->b + h->sections_at + 40 * 2 + 8, 0x21);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_uki_pcr11(pe, h->b, h->size, &alg, 1, got, &err), -EBADMSG);
	assert_int_equal(err.offset, h->sections_at + 40 * 2 + 8);
	/* .cmdline loaded over .linux: named at .linux's entry, the first measured */
	*h = *m;
	put32(h->b + h->sections_at + 40 * 2 + 12, 0x4000 + 0x80);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_uki_sections(pe, secs, &n, &err), -EBADMSG);
	assert_int_equal(err.offset, h->sections_at + 40 * 3 + 12);
	/* no .linux (both renamed): not a UKI */
	*h = *m;
	memcpy(h->b + h->sections_at + 40 * 1, ".linu", 6);
	memcpy(h->b + h->sections_at + 40 * 3, ".linu", 6);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_uki_sections(pe, secs, &n, &err), -EBADMSG);
	assert_int_equal(n, 0);
	assert_int_equal(err.offset, h->sections_at);
	mb_pe_info_free(pe);
	free(h);
	free(m);
}

/* A GRUB core image's mods area (grub-mkimage's layout; tests/cli/test-predict-grub-image.sh
 * reads real images made by grub-mkimage), then hostile variants: each refused with its offset. */
static void put_module(uint8_t *p, uint32_t type, const char *text, uint32_t size)
{
	put32(p, type);
	put32(p + 4, size);
	memcpy(p + 8, text, strlen(text) + 1);
}

static void test_grub_image(void **state)
{
	static const sec s[] = { { "mods", 0x200, 0x100 } };
	img *m = malloc(sizeof(*m)), *h = malloc(sizeof(*h));
	mb_grub_image g, g2;
	mb_pe_info *pe = NULL;
	mb_error err = { 0 };
	uint8_t *a;

	(void) state;
	build(m, true, 0, s, 1, 0x400);
	a = m->b + 0x200;
	memset(a, 0, 0x100);
	memcpy(a, "mimg", 4);
	put32(a + 8, 24);
	put32(a + 16, 24 + 24 + 24 + 16);
	put_module(a + 24, 3, "/EFI/debian", 24);          /* prefix, NUL-padded to 8 */
	put_module(a + 48, 2, "configfile /g", 24);        /* built-in config */
	put_module(a + 72, 0, "", 16);                     /* an ELF module: ignored */
	if (reparse(m->b, m->size, 0, &pe, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(mb_grub_image_parse(pe, m->b, m->size, &g, &err), 0);
	assert_int_equal(g.n_modules, 3);
	assert_int_equal(g.prefix_size, 11);
	assert_memory_equal(g.prefix, "/EFI/debian", 11);
	assert_int_equal(g.config_size, 13);
	assert_null(g.memdisk);
	assert_null(mb_grub_image_difference(&g, &g));

	/* another prefix: named */
	*h = *m;
	memcpy(h->b + 0x200 + 24 + 8, "/boot/grub", 11);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), 0);
	assert_string_equal(mb_grub_image_difference(&g, &g2), "prefix");
	assert_int_equal(mb_grub_image_parse(pe, m->b, m->size, &g, &err), 0);

	/* bad magic; area past the section; a module past the area; a module shorter than its header;
	 * two configs */
	*h = *m;
	h->b[0x200] = 'M';
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	assert_int_equal(err.offset, 0x200);
	*h = *m;
	put32(h->b + 0x200 + 16, 0x101);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	*h = *m;
	put32(h->b + 0x200 + 72 + 4, 0x100);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	assert_int_equal(err.offset, 0x200 + 72 + 4);
	*h = *m;
	put32(h->b + 0x200 + 48 + 4, 4);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	*h = *m;
	put32(h->b + 0x200 + 72, 2);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	assert_int_equal(err.offset, 0x200 + 72);
	/* a truncated header: the area smaller than it */
	*h = *m;
	put32(h->b + 0x200 + 8, 8);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -EBADMSG);
	/* no mods section: not GRUB */
	*h = *m;
	memcpy(h->b + h->sections_at, "modz", 4);
	assert_int_equal(reparse(h->b, h->size, 0, &pe, &err), 0);
	assert_int_equal(mb_grub_image_parse(pe, h->b, h->size, &g2, &err), -ENOENT);
	mb_pe_info_free(pe);
	free(h);
	free(m);
}

/* `mboot hash --json`'s document: the layout of an image built here (its fields as written
 * above, not as mboot's parser reads them) and the FIPS 180 digests of "abc" as given. */
static void test_hashes_json(void **state)
{
	static const sec s[] = { { ".text", 0x200, 0x400 } };
	static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
	const char *paths[] = { "a \"b\".efi", "plain" };
	uint8_t d[4][MB_DIGEST_MAX] = { { 0 } };
	const mb_pe_info *pes[2] = { NULL, NULL };
	img *m = malloc(sizeof(*m));
	mb_pe_info *pe = NULL;
	char *text;

	(void) state;
	build(m, true, 16, s, 1, 0x700);
	set_cert(m, 0x600, 0x100);
	put32(m->b + 0x600, 0x7c);
	put16(m->b + 0x604, 0x0200);
	put16(m->b + 0x606, 0x0002);
	put32(m->b + 0x680, 0x80);
	put16(m->b + 0x684, 0x0200);
	put16(m->b + 0x686, 0x0002);
	assert_int_equal(reparse(m->b, m->size, 0, &pe, NULL), 0);
	pes[0] = pe;
	for (size_t i = 0; i < 2; i++) {
		memcpy(d[2 * i], "\xa9\x99\x3e\x36\x47\x06\x81\x6a\xba\x3e\x25\x71\x78\x50\xc2\x6c\x9c\xd0\xd8\x9d", 20);
		memcpy(d[2 * i + 1], "\xba\x78\x16\xbf\x8f\x01\xcf\xea\x41\x41\x40\xde\x5d\xae\x22\x23"
		       "\xb0\x03\x61\xa3\x96\x17\x7a\x9c\xb4\x10\xff\x61\xf2\x00\x15\xad", 32);
	}
	text = mb_file_hashes_to_json(paths, pes, 2, true, algs, 2, (const uint8_t (*)[MB_DIGEST_MAX]) d, false);
	assert_non_null(text);
	assert_string_equal(text,
		"{\"files\":[{\"path\":\"a \\\"b\\\".efi\",\"authenticode\":true,"
		"\"digests\":{\"sha1\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
		"\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"},"
		"\"pe\":{\"format\":\"PE32+\",\"machine\":\"x64\",\"machine_value\":34404,\"subsystem\":10,"
		"\"subsystem_name\":\"efi-application\",\"sections\":[{\"name\":\".text\",\"raw_offset\":512,"
		"\"raw_size\":1024,\"virtual_address\":4096,\"virtual_size\":1024}],\"uki\":false,\"sbat\":false,"
		"\"signed\":true,\"cert_table_offset\":1536,\"cert_table_size\":256,\"cert_table_at_end\":true,"
		"\"certificates\":[{\"offset\":1536,\"length\":124,\"type\":2},{\"offset\":1664,\"length\":128,"
		"\"type\":2}],\"extra_data_size\":0,\"pad_bytes\":0,\"sections_overlap\":false}},"
		"{\"path\":\"plain\",\"authenticode\":true,"
		"\"digests\":{\"sha1\":\"a9993e364706816aba3e25717850c26c9cd0d89d\","
		"\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}]}");
	free(text);
	/* pretty as jq prints it; no files: an empty list */
	text = mb_file_hashes_to_json(NULL, NULL, 0, false, algs, 2, NULL, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"files\": []\n}");
	free(text);
	text = mb_file_hashes_to_json(paths + 1, NULL, 1, false, algs + 1, 1, (const uint8_t (*)[MB_DIGEST_MAX]) d + 1, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"files\": [\n    {\n      \"path\": \"plain\",\n      \"authenticode\": false,\n"
				  "      \"digests\": {\n        \"sha256\": "
				  "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"\n      }\n    }\n  ]\n}");
	free(text);
	mb_pe_info_free(pe);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pe32plus_sorted_sections_and_extra),
		cmocka_unit_test(test_pe32),
		cmocka_unit_test(test_no_certificate_directory),
		cmocka_unit_test(test_certificate_table),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_overlap_and_empty_sections),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_truncation_and_flips),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_uki),
		cmocka_unit_test(test_grub_image),
		cmocka_unit_test(test_hashes_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
