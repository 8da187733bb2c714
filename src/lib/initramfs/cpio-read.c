/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of untrusted initramfs files: one or more concatenated segments, each a plain cpio
 * "newc" archive or a gzip member / zstd frame holding cpio archives, as the kernel's
 * init/initramfs.c unpack_to_rootfs accepts them (NUL bytes between segments are skipped).
 *
 * newc entry (Documentation/driver-api/early-userspace/buffer-format.rst):
 *   "070701", 13 fields of 8 hex digits (ino mode uid gid nlink mtime filesize devmajor
 *   devminor rdevmajor rdevminor namesize check), the name with its NUL, padding to a multiple
 *   of 4, the data, padding to 4. The archive ends with an entry named "TRAILER!!!".
 * Everything the input declares is checked against what is left and against our caps before
 * it is used; all reads go through the bounds-checked reader.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/fail.h"
#include "shared/reader.h"
#include "lib/initramfs/initramfs-internal.h"

struct mb_initramfs {
	mb_cpio_entry *e;
	size_t n, cap;
	mb_cpio_segment *seg;
	size_t nseg;
	uint8_t **bufs; /* decompressed data, one per compressed segment */
	size_t nbufs;
};

enum { F_INO, F_MODE, F_UID, F_GID, F_NLINK, F_MTIME, F_FILESIZE, F_DEVMAJOR, F_DEVMINOR, F_RDEVMAJOR,
       F_RDEVMINOR, F_NAMESIZE, F_CHECK, F_COUNT };

static const char *const field_names[F_COUNT] = {
	"ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor", "devminor", "rdevmajor",
	"rdevminor", "namesize", "check",
};

typedef struct ctx {
	mb_initramfs *a;
	unsigned segment;
	const char *where; /* "" or " (in the gzip data of segment 2 at byte 123)" */
	mb_error *err;
} ctx;

static int bad(ctx *c, int code, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int bad(ctx *c, int code, uint64_t off, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mb_fail_at(c->err, code, off, "%s%s", msg, c->where);
}

/* Names from the input go into messages printed on terminals: only printable ASCII. */
static const char *safe(const char *in, size_t n, char out[128])
{
	size_t i, j = 0;

	for (i = 0; i < n && j < 124; i++)
		out[j++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	if (i < n) {
		out[j++] = '.';
		out[j++] = '.';
		out[j++] = '.';
	}
	out[j] = 0;
	return out;
}

static int read_hex8(ctx *c, mb_reader *r, int field, uint32_t *ret)
{
	const uint8_t *p;
	uint32_t v = 0;
	int i;

	if (mb_read_bytes(r, 8, &p) < 0)
		return bad(c, -EBADMSG, mb_reader_offset(r), "truncated header (field %s)", field_names[field]);
	for (i = 0; i < 8; i++) {
		uint8_t ch = p[i], d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return bad(c, -EBADMSG, mb_reader_offset(r) - 8 + i,
				   "header field %s: not a hex digit (0x%02x)", field_names[field], ch);
		v = v << 4 | d;
	}
	*ret = v;
	return 0;
}

/* Absolute names and ".." components could put files outside the target of an extractor. */
static int check_name(ctx *c, const char *name, size_t len, uint64_t off)
{
	char sn[128];
	size_t i = 0;

	if (len == 0)
		return bad(c, -EBADMSG, off, "empty name");
	if (name[0] == '/')
		return bad(c, -EBADMSG, off, "absolute name '%s'", safe(name, len, sn));
	while (i < len) {
		size_t j = i;

		while (j < len && name[j] != '/')
			j++;
		if (j - i == 2 && name[i] == '.' && name[i + 1] == '.')
			return bad(c, -EBADMSG, off, "name '%s' has a '..' component", safe(name, len, sn));
		i = j + 1;
	}
	return 0;
}

static int add(ctx *c, const mb_cpio_entry *e)
{
	mb_initramfs *a = c->a;

	if (a->n >= MB_CPIO_ENTRIES_MAX)
		return bad(c, -E2BIG, e->offset, "more than %u entries", MB_CPIO_ENTRIES_MAX);
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 64;
		mb_cpio_entry *ne = realloc(a->e, ncap * sizeof(*ne));

		if (!ne)
			return mb_fail(c->err, -ENOMEM, "out of memory");
		a->e = ne;
		a->cap = ncap;
	}
	a->e[a->n++] = *e;
	return 0;
}

/* One archive: entries up to and including the trailer. */
static int parse_archive(ctx *c, mb_reader *r)
{
	for (;;) {
		uint64_t hoff = mb_reader_offset(r), noff;
		uint32_t f[F_COUNT];
		mb_cpio_entry e = { 0 };
		char sn[128];
		const uint8_t *magic, *name, *data;
		size_t pad;
		int i, rc;

		if (mb_reader_left(r) == 0)
			return bad(c, -EBADMSG, hoff, "truncated: no 'TRAILER!!!' entry");
		if (mb_reader_left(r) < 6 && memcmp(mb_reader_cur(r), "070701", mb_reader_left(r)) == 0)
			return bad(c, -EBADMSG, hoff, "truncated header (magic)");
		if (mb_read_bytes(r, 6, &magic) < 0)
			return bad(c, -EBADMSG, hoff, "bad magic (want 070701, the newc format)");
		if (memcmp(magic, "070701", 6) != 0)
			return bad(c, memcmp(magic, "070702", 6) == 0 ? -EOPNOTSUPP : -EBADMSG, hoff, "%s",
				   memcmp(magic, "070702", 6) == 0 ? "cpio 'crc' format (070702) is not handled"
								    : "bad magic (want 070701, the newc format)");
		for (i = 0; i < F_COUNT; i++) {
			rc = read_hex8(c, r, i, &f[i]);
			if (rc < 0)
				return rc;
		}
		noff = mb_reader_offset(r);
		if (f[F_NAMESIZE] == 0)
			return bad(c, -EBADMSG, hoff + 94, "name size 0 (the NUL must be counted)");
		if (f[F_NAMESIZE] > MB_CPIO_NAME_MAX)
			return bad(c, -E2BIG, hoff + 94, "name size %u over the cap of 4096", f[F_NAMESIZE]);
		if (mb_read_bytes(r, f[F_NAMESIZE], &name) < 0)
			return bad(c, -EBADMSG, noff, "truncated name (declares %u bytes)", f[F_NAMESIZE]);
		if (name[f[F_NAMESIZE] - 1] != 0 || memchr(name, 0, f[F_NAMESIZE] - 1))
			return bad(c, -EBADMSG, noff, "name is not one NUL-terminated string");
		/* Header and name are padded together to a multiple of 4 from the header. */
		pad = (4 - (110 + f[F_NAMESIZE]) % 4) % 4;
		e.name = (const char *) name;
		e.name_len = f[F_NAMESIZE] - 1;
		if (strcmp(e.name, "TRAILER!!!") == 0) {
			/* Tolerate an archive cut right after the trailer's name, as the kernel does. */
			if (mb_read_skip(r, pad < mb_reader_left(r) ? pad : mb_reader_left(r)) < 0)
				return -EBADMSG;
			return 0;
		}
		if (mb_read_skip(r, pad) < 0)
			return bad(c, -EBADMSG, mb_reader_offset(r), "truncated padding after '%s'",
				   safe(e.name, e.name_len, sn));
		if (f[F_FILESIZE] > MB_CPIO_FILE_MAX)
			return bad(c, -E2BIG, hoff + 54, "file size %u over the cap of 2 GiB", f[F_FILESIZE]);
		rc = check_name(c, e.name, e.name_len, noff);
		if (rc < 0)
			return rc;
		switch (f[F_MODE] & S_IFMT) {
		case S_IFREG:
			break;
		case S_IFLNK:
			if (f[F_FILESIZE] == 0 || f[F_FILESIZE] >= MB_CPIO_NAME_MAX)
				return bad(c, -EBADMSG, hoff + 54, "symlink '%s' with a target of %u bytes",
					   safe(e.name, e.name_len, sn), f[F_FILESIZE]);
			break;
		case S_IFDIR:
		case S_IFCHR:
		case S_IFBLK:
		case S_IFIFO:
		case S_IFSOCK:
			if (f[F_FILESIZE] != 0)
				return bad(c, -EBADMSG, hoff + 54, "'%s' is not a file but has %u bytes of data",
					   safe(e.name, e.name_len, sn), f[F_FILESIZE]);
			break;
		default:
			return bad(c, -EBADMSG, hoff + 14, "'%s': unknown file type 0%o", safe(e.name, e.name_len, sn),
				   f[F_MODE] & S_IFMT);
		}
		if (mb_read_bytes(r, f[F_FILESIZE], &data) < 0)
			return bad(c, -EBADMSG, mb_reader_offset(r), "truncated data of '%s' (declares %u bytes)",
				   safe(e.name, e.name_len, sn), f[F_FILESIZE]);
		pad = (4 - f[F_FILESIZE] % 4) % 4;
		if (mb_read_skip(r, pad) < 0)
			return bad(c, -EBADMSG, mb_reader_offset(r), "truncated padding after the data of '%s'",
				   safe(e.name, e.name_len, sn));
		e.offset = hoff;
		e.segment = c->segment;
		e.ino = f[F_INO];
		e.mode = f[F_MODE];
		e.uid = f[F_UID];
		e.gid = f[F_GID];
		e.nlink = f[F_NLINK];
		e.mtime = f[F_MTIME];
		e.devmajor = f[F_DEVMAJOR];
		e.devminor = f[F_DEVMINOR];
		e.rdevmajor = f[F_RDEVMAJOR];
		e.rdevminor = f[F_RDEVMINOR];
		e.data = data;
		e.size = f[F_FILESIZE];
		rc = add(c, &e);
		if (rc < 0)
			return rc;
	}
}

static void skip_zeros(mb_reader *r)
{
	while (mb_reader_left(r) && *mb_reader_cur(r) == 0)
		r->pos++;
}

static int add_segment(mb_initramfs *a, const mb_cpio_segment *s, mb_error *err)
{
	mb_cpio_segment *ns = realloc(a->seg, (a->nseg + 1) * sizeof(*ns));

	if (!ns)
		return mb_fail(err, -ENOMEM, "out of memory");
	a->seg = ns;
	a->seg[a->nseg++] = *s;
	return 0;
}

MB_EXPORT int mb_initramfs_parse(const void *data, size_t size, mb_initramfs **ret, mb_error *err)
{
	return mb_initramfs_parse_capped(data, size, MB_CPIO_TOTAL_MAX, ret, err);
}

int mb_initramfs_parse_capped(const void *data, size_t size, size_t max_total, mb_initramfs **ret, mb_error *err)
{
	mb_initramfs *a = calloc(1, sizeof(*a));
	size_t total = 0;
	mb_reader r;
	char where[128];
	ctx c = { .a = a, .where = "", .err = err };
	int rc;

	if (!a)
		return mb_fail(err, -ENOMEM, "out of memory");
	mb_reader_init(&r, data, size, 0);
	for (;;) {
		mb_cpio_segment s = { 0 };
		mb_compress comp;

		skip_zeros(&r);
		if (!mb_reader_left(&r))
			break;
		if (a->nseg >= 64) {
			rc = mb_fail_at(err, -E2BIG, mb_reader_offset(&r), "more than 64 concatenated archives");
			goto fail;
		}
		c.segment = (unsigned) a->nseg;
		s.file_offset = mb_reader_offset(&r);
		comp = mb_compress_detect(mb_reader_cur(&r), mb_reader_left(&r));
		s.compress = comp;
		if (comp == MB_COMPRESS_NONE) {
			c.where = "";
			rc = parse_archive(&c, &r);
			if (rc < 0)
				goto fail;
			s.file_size = mb_reader_offset(&r) - s.file_offset;
			s.cpio_size = (size_t) s.file_size;
		} else {
			uint8_t *buf = NULL, **nb;
			size_t blen = 0, used = 0;
			mb_reader dr;

			rc = mb_decompress_one(comp, mb_reader_cur(&r), mb_reader_left(&r), max_total - total,
					       &buf, &blen, &used, err);
			if (rc < 0) {
				if (err && err->has_offset)
					err->offset += s.file_offset;
				goto fail;
			}
			nb = realloc(a->bufs, (a->nbufs + 1) * sizeof(*nb));
			if (!nb) {
				free(buf);
				rc = mb_fail(err, -ENOMEM, "out of memory");
				goto fail;
			}
			a->bufs = nb;
			a->bufs[a->nbufs++] = buf;
			total += blen;
			snprintf(where, sizeof(where), " (offset in the %s-decompressed data of the archive at byte %llu)",
				 mb_compress_name(comp), (unsigned long long) s.file_offset);
			c.where = where;
			/* The decompressed data is itself a sequence of archives, padded with NULs. */
			mb_reader_init(&dr, buf, blen, 0);
			skip_zeros(&dr);
			if (!mb_reader_left(&dr)) {
				rc = mb_fail_at(err, -EBADMSG, 0, "compressed data holds no archive%s", where);
				goto fail;
			}
			while (mb_reader_left(&dr)) {
				rc = parse_archive(&c, &dr);
				if (rc < 0)
					goto fail;
				skip_zeros(&dr);
			}
			if (mb_read_skip(&r, used) < 0) {
				rc = mb_fail(err, -EBADMSG, "decompressor overran its input");
				goto fail;
			}
			s.file_size = used;
			s.cpio_size = blen;
		}
		rc = add_segment(a, &s, err);
		if (rc < 0)
			goto fail;
	}
	if (a->nseg == 0) {
		rc = mb_fail_at(err, -EBADMSG, 0, "no archive: the file is empty or only NUL bytes");
		goto fail;
	}
	*ret = a;
	return 0;
fail:
	mb_initramfs_free(a);
	return rc;
}

MB_EXPORT size_t mb_initramfs_entry_count(const mb_initramfs *a)
{
	return a ? a->n : 0;
}

MB_EXPORT const mb_cpio_entry *mb_initramfs_entry_at(const mb_initramfs *a, size_t i)
{
	return a && i < a->n ? &a->e[i] : NULL;
}

MB_EXPORT size_t mb_initramfs_segment_count(const mb_initramfs *a)
{
	return a ? a->nseg : 0;
}

MB_EXPORT const mb_cpio_segment *mb_initramfs_segment_at(const mb_initramfs *a, size_t i)
{
	return a && i < a->nseg ? &a->seg[i] : NULL;
}

MB_EXPORT mb_initramfs *mb_initramfs_free(mb_initramfs *a)
{
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < a->nbufs; i++)
		free(a->bufs[i]);
	free(a->bufs);
	free(a->e);
	free(a->seg);
	free(a);
	return NULL;
}

MB_EXPORT int mb_initramfs_compare(const mb_initramfs *a, const mb_initramfs *b, size_t *ret_index, char *what,
				   size_t what_size)
{
	char dummy[1];
	size_t i;

	if (!what) {
		what = dummy;
		what_size = sizeof(dummy);
	}
	for (i = 0; i < a->n && i < b->n; i++) {
		const mb_cpio_entry *x = &a->e[i], *y = &b->e[i];

		*ret_index = i;
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0)
			snprintf(what, what_size, "name");
#define FIELD(f, fmt) \
		else if (x->f != y->f) \
			snprintf(what, what_size, #f " " fmt " vs " fmt, x->f, y->f)
		FIELD(mode, "0%o");
		FIELD(uid, "%u");
		FIELD(gid, "%u");
		FIELD(nlink, "%u");
		FIELD(mtime, "%u");
		FIELD(ino, "%u");
		FIELD(devmajor, "%u");
		FIELD(devminor, "%u");
		FIELD(rdevmajor, "%u");
		FIELD(rdevminor, "%u");
		FIELD(size, "%u");
#undef FIELD
		else if (x->size && memcmp(x->data, y->data, x->size) != 0)
			snprintf(what, what_size, "data");
		else
			continue;
		return 1;
	}
	*ret_index = i;
	if (a->n == b->n) {
		snprintf(what, what_size, "%s", "");
		return 0;
	}
	snprintf(what, what_size, "%s", a->n < b->n ? "missing" : "extra");
	return 1;
}
