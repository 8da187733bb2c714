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
 *
 * The file is read as a stream: a window over the raw bytes, and for a compressed segment a
 * window over its decompressed bytes, each refilled as the parser moves on. File data is
 * hashed on the way and dropped, so memory does not grow with what the input declares or
 * expands to; the caps in cpio_caps bound the time (docs/initramfs.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <mboot/digest.h>

#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/reader.h"
#include "lib/initramfs/initramfs-internal.h"

#define WINDOW_SIZE (256u * 1024) /* > header + the largest name + padding */

const cpio_caps cpio_caps_default = {
	.total = MB_CPIO_TOTAL_MAX,
	.ratio = MB_CPIO_RATIO_MAX,
	.slack = MB_CPIO_RATIO_SLACK,
	.pad = MB_CPIO_PAD_MAX,
	.kept = MB_CPIO_KEPT_MAX,
	.segments = MB_CPIO_SEGMENTS_MAX,
};

/* Names and symlink targets, in blocks that never move (entries point into them). */
#define ARENA_BLOCK (64u * 1024)

struct mb_initramfs {
	mb_cpio_entry *e;
	size_t n, cap;
	mb_cpio_segment *seg;
	size_t nseg;
	uint8_t **blocks;
	size_t nblocks, block_used;
	size_t kept; /* bytes held for entries: records, blocks, block list */
};

/* buf[pos..len) are the bytes not consumed yet; off is the stream offset of buf[pos]. */
typedef struct window {
	uint8_t *buf;
	size_t pos, len, cap;
	uint64_t off;
	bool end; /* nothing comes after buf[len] */
} window;

static size_t win_left(const window *w)
{
	return w->len - w->pos;
}

static void win_skip(window *w, size_t n)
{
	w->pos += n;
	w->off += n;
}

/* Room for n bytes from pos on (owned buffers only). */
static void win_room(window *w, size_t n)
{
	if (w->cap - w->pos >= n && w->len < w->cap)
		return;
	memmove(w->buf, w->buf + w->pos, w->len - w->pos);
	w->len -= w->pos;
	w->pos = 0;
}

enum { F_INO, F_MODE, F_UID, F_GID, F_NLINK, F_MTIME, F_FILESIZE, F_DEVMAJOR, F_DEVMINOR, F_RDEVMAJOR,
       F_RDEVMINOR, F_NAMESIZE, F_CHECK, F_COUNT };

static const char *const field_names[F_COUNT] = {
	"ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor", "devminor", "rdevmajor",
	"rdevminor", "namesize", "check",
};

typedef struct ctx {
	mb_initramfs *a;
	const cpio_caps *caps;
	/* the file */
	window raw;
	int fd; /* -1: raw holds the whole input */
	mb_initramfs_tap tap;
	void *tap_data;
	/* the segment being parsed: w is &raw (plain) or &dec (compressed, through z) */
	window *w;
	window dec;
	inflater *z;
	mb_compress compress;
	uint64_t in_total, out_total; /* compressed bytes consumed, decompressed bytes made */
	unsigned segment;
	const char *where; /* "" or " (offset in the gzip-decompressed data of the archive at byte 123)" */
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
	return set_error_at(c->err, code, off, "%s%s", msg, c->where);
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

static int read_hex8(ctx *c, byte_reader *r, int field, uint32_t *ret)
{
	const uint8_t *p;
	uint32_t v = 0;
	int i;

	if (read_bytes(r, 8, &p) < 0)
		return bad(c, -EBADMSG, reader_offset(r), "truncated header (field %s)", field_names[field]);
	for (i = 0; i < 8; i++) {
		uint8_t ch = p[i], d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return bad(c, -EBADMSG, reader_offset(r) - 8 + i,
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

/* More raw bytes: 0 (w->end set at the end of the file) or negative. */
static int raw_fill(ctx *c)
{
	window *w = &c->raw;
	ssize_t n;
	int rc;

	if (w->end)
		return 0;
	win_room(w, w->cap);
	n = fd_read_some(c->fd, w->buf + w->len, w->cap - w->len);
	if (n < 0)
		return set_error(c->err, (int) n, "read error at byte %llu: %s",
			       (unsigned long long) (w->off + win_left(w)), strerror((int) -n));
	if (n == 0) {
		w->end = true;
		return 0;
	}
	if (c->tap) {
		rc = c->tap(w->buf + w->len, (size_t) n, c->tap_data, c->err);
		if (rc)
			return rc < 0 ? rc : -ECANCELED;
	}
	w->len += (size_t) n;
	return 0;
}

/* More decompressed bytes, within the caps: 0 (c->dec.end set after the frame) or negative. */
static int dec_fill(ctx *c)
{
	window *w = &c->dec;
	size_t used, made;
	bool end;
	int rc;

	if (w->end)
		return 0;
	win_room(w, w->cap);
	for (;;) {
		if (!win_left(&c->raw)) {
			rc = raw_fill(c);
			if (rc < 0)
				return rc;
		}
		rc = inflater_step(c->z, c->raw.buf + c->raw.pos, win_left(&c->raw), &used, w->buf + w->len,
				      w->cap - w->len, &made, &end, c->err);
		if (rc < 0) {
			if (c->err && c->err->has_offset)
				c->err->offset += c->raw.off;
			return rc;
		}
		win_skip(&c->raw, used);
		w->len += made;
		c->in_total += used;
		c->out_total += made;
		if (c->out_total > c->caps->total)
			return set_error_at(c->err, -E2BIG, c->raw.off, "decompressed data over %llu bytes",
					  (unsigned long long) c->caps->total);
		/* Real archives compress a few times; zeros by the thousand. */
		if (c->out_total > c->caps->ratio * c->in_total + c->caps->slack)
			return set_error_at(c->err, -E2BIG, c->raw.off,
					  "decompressed data over %llu times its compressed size plus %llu MiB "
					  "(a decompression bomb?)", (unsigned long long) c->caps->ratio,
					  (unsigned long long) (c->caps->slack >> 20));
		if (end) {
			w->end = true;
			return 0;
		}
		if (made)
			return 0;
		if (!used && win_left(&c->raw))
			return set_error_at(c->err, -EIO, c->raw.off, "%s decompressor made no progress",
					  mb_compress_name(c->compress));
		if (!used && c->raw.end)
			return set_error_at(c->err, -EBADMSG, c->raw.off, "%s data truncated",
					  mb_compress_name(c->compress));
	}
}

/* At least n bytes in c->w from pos (fewer only at its end): 0 or negative. */
static int need(ctx *c, size_t n)
{
	window *w = c->w;
	int rc;

	while (win_left(w) < n && !w->end) {
		rc = w == &c->raw ? raw_fill(c) : dec_fill(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Copy n bytes (a name, a target) into the arena, NUL-terminated. */
static int keep(ctx *c, const void *p, size_t n, const char **ret)
{
	mb_initramfs *a = c->a;
	uint8_t *dst;

	if (!a->nblocks || ARENA_BLOCK - a->block_used < n + 1) {
		uint8_t **nb;

		if (a->kept + ARENA_BLOCK + sizeof(*nb) > c->caps->kept)
			return bad(c, -E2BIG, c->w->off, "entries over the memory cap of %zu MiB (%zu entries)",
				   c->caps->kept >> 20, a->n);
		nb = realloc(a->blocks, (a->nblocks + 1) * sizeof(*nb));
		if (!nb)
			return set_error(c->err, -ENOMEM, "out of memory");
		a->blocks = nb;
		nb[a->nblocks] = malloc(ARENA_BLOCK);
		if (!nb[a->nblocks])
			return set_error(c->err, -ENOMEM, "out of memory");
		a->nblocks++;
		a->block_used = 0;
		a->kept += ARENA_BLOCK + sizeof(*nb);
	}
	dst = a->blocks[a->nblocks - 1] + a->block_used;
	memcpy(dst, p, n);
	dst[n] = 0;
	a->block_used += n + 1;
	*ret = (const char *) dst;
	return 0;
}

static int add(ctx *c, const mb_cpio_entry *e)
{
	mb_initramfs *a = c->a;

	if (a->n >= MB_CPIO_ENTRIES_MAX)
		return bad(c, -E2BIG, e->offset, "more than %u entries", MB_CPIO_ENTRIES_MAX);
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 64, room = (c->caps->kept - a->kept) / sizeof(*a->e) + a->cap;
		mb_cpio_entry *ne;

		if (ncap > room)
			ncap = room;
		if (ncap <= a->cap)
			return bad(c, -E2BIG, e->offset, "entries over the memory cap of %zu MiB (%zu entries)",
				   c->caps->kept >> 20, a->n);
		ne = realloc(a->e, ncap * sizeof(*ne));
		if (!ne)
			return set_error(c->err, -ENOMEM, "out of memory");
		a->kept += (ncap - a->cap) * sizeof(*ne);
		a->e = ne;
		a->cap = ncap;
	}
	a->e[a->n++] = *e;
	return 0;
}

/* The data of a regular file: hashed as it streams by. off is where it starts. */
static int hash_data(ctx *c, uint32_t size, uint64_t off, const char *name, size_t name_len, uint8_t out[32])
{
	mb_digest_ctx *h = NULL;
	uint32_t left = size;
	char sn[128];
	int rc;

	rc = mb_digest_ctx_new(MB_ALG_SHA256, &h);
	if (rc < 0)
		return set_error(c->err, rc, "cannot hash file data");
	while (left) {
		size_t n;

		rc = need(c, 1);
		if (rc < 0)
			goto out;
		if (!win_left(c->w)) {
			rc = bad(c, -EBADMSG, off, "truncated data of '%s' (declares %u bytes)",
				 safe(name, name_len, sn), size);
			goto out;
		}
		n = win_left(c->w) < left ? win_left(c->w) : left;
		rc = mb_digest_ctx_update(h, c->w->buf + c->w->pos, n);
		if (rc < 0) {
			rc = set_error(c->err, rc, "cannot hash file data");
			goto out;
		}
		win_skip(c->w, n);
		left -= (uint32_t) n;
	}
	rc = mb_digest_ctx_final(h, out);
	if (rc < 0)
		rc = set_error(c->err, rc, "cannot hash file data");
out:
	mb_digest_ctx_free(h);
	return rc;
}

/* One archive: entries up to and including the trailer. */
static int parse_archive(ctx *c)
{
	for (;;) {
		uint64_t hoff = c->w->off, noff;
		uint32_t f[F_COUNT];
		mb_cpio_entry e = { 0 };
		char sn[128];
		const uint8_t *magic, *name;
		byte_reader r;
		size_t pad;
		int i, rc;

		rc = need(c, 110);
		if (rc < 0)
			return rc;
		/* The header, or what is left of it: the reader says where it is cut. */
		reader_init(&r, c->w->buf + c->w->pos, win_left(c->w) < 110 ? win_left(c->w) : 110, hoff);
		if (reader_left(&r) == 0)
			return bad(c, -EBADMSG, hoff, "truncated: no 'TRAILER!!!' entry");
		if (reader_left(&r) < 6 && memcmp(reader_cur(&r), "070701", reader_left(&r)) == 0)
			return bad(c, -EBADMSG, hoff, "truncated header (magic)");
		if (read_bytes(&r, 6, &magic) < 0)
			return bad(c, -EBADMSG, hoff, "bad magic (want 070701, the newc format)");
		if (memcmp(magic, "070701", 6) != 0)
			return bad(c, memcmp(magic, "070702", 6) == 0 ? -EOPNOTSUPP : -EBADMSG, hoff, "%s",
				   memcmp(magic, "070702", 6) == 0 ? "cpio 'crc' format (070702) is not handled"
								    : "bad magic (want 070701, the newc format)");
		for (i = 0; i < F_COUNT; i++) {
			rc = read_hex8(c, &r, i, &f[i]);
			if (rc < 0)
				return rc;
		}
		win_skip(c->w, 110);
		noff = c->w->off;
		if (f[F_NAMESIZE] == 0)
			return bad(c, -EBADMSG, hoff + 94, "name size 0 (the NUL must be counted)");
		if (f[F_NAMESIZE] > MB_CPIO_NAME_MAX)
			return bad(c, -E2BIG, hoff + 94, "name size %u over the cap of 4096", f[F_NAMESIZE]);
		/* Header and name are padded together to a multiple of 4 from the header. */
		pad = (4 - (110 + f[F_NAMESIZE]) % 4) % 4;
		rc = need(c, f[F_NAMESIZE] + pad);
		if (rc < 0)
			return rc;
		reader_init(&r, c->w->buf + c->w->pos, win_left(c->w), noff);
		if (read_bytes(&r, f[F_NAMESIZE], &name) < 0)
			return bad(c, -EBADMSG, noff, "truncated name (declares %u bytes)", f[F_NAMESIZE]);
		if (name[f[F_NAMESIZE] - 1] != 0 || memchr(name, 0, f[F_NAMESIZE] - 1))
			return bad(c, -EBADMSG, noff, "name is not one NUL-terminated string");
		e.name = (const char *) name;
		e.name_len = f[F_NAMESIZE] - 1;
		if (strcmp(e.name, "TRAILER!!!") == 0) {
			/* Tolerate an archive cut right after the trailer's name, as the kernel does. */
			win_skip(c->w, f[F_NAMESIZE] + (pad < reader_left(&r) ? pad : reader_left(&r)));
			return 0;
		}
		if (read_skip(&r, pad) < 0)
			return bad(c, -EBADMSG, reader_offset(&r), "truncated padding after '%s'",
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
		/* The name lives in the window, which moves on: keep a copy. */
		rc = keep(c, name, e.name_len, &e.name);
		if (rc < 0)
			return rc;
		win_skip(c->w, f[F_NAMESIZE] + pad);
		if ((f[F_MODE] & S_IFMT) == S_IFLNK) {
			const uint8_t *target;
			const char *kept;

			rc = need(c, f[F_FILESIZE]);
			if (rc < 0)
				return rc;
			reader_init(&r, c->w->buf + c->w->pos, win_left(c->w), c->w->off);
			if (read_bytes(&r, f[F_FILESIZE], &target) < 0)
				return bad(c, -EBADMSG, c->w->off, "truncated data of '%s' (declares %u bytes)",
					   safe(e.name, e.name_len, sn), f[F_FILESIZE]);
			rc = keep(c, target, f[F_FILESIZE], &kept);
			if (rc < 0)
				return rc;
			e.data = (const uint8_t *) kept;
			rc = mb_digest(MB_ALG_SHA256, target, f[F_FILESIZE], e.sha256);
			if (rc < 0)
				return set_error(c->err, rc, "cannot hash file data");
			win_skip(c->w, f[F_FILESIZE]);
		} else {
			rc = hash_data(c, f[F_FILESIZE], c->w->off, e.name, e.name_len, e.sha256);
			if (rc < 0)
				return rc;
		}
		pad = (4 - f[F_FILESIZE] % 4) % 4;
		rc = need(c, pad);
		if (rc < 0)
			return rc;
		if (win_left(c->w) < pad)
			return bad(c, -EBADMSG, c->w->off + win_left(c->w), "truncated padding after the data of '%s'",
				   safe(e.name, e.name_len, sn));
		win_skip(c->w, pad);
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
		e.size = f[F_FILESIZE];
		rc = add(c, &e);
		if (rc < 0)
			return rc;
	}
}

/*
 * NUL padding, as the kernel skips it between archives: any amount costs it nothing but
 * time, and that is what a bomb of zeros spends, so a run is capped (docs/initramfs.md).
 * 0 with c->w at the next non-NUL byte or at its end.
 */
static int skip_zeros(ctx *c)
{
	uint64_t start = c->w->off;
	int rc;

	for (;;) {
		size_t n = 0;

		rc = need(c, 1);
		if (rc < 0)
			return rc;
		while (n < win_left(c->w) && c->w->buf[c->w->pos + n] == 0)
			n++;
		win_skip(c->w, n);
		if (c->w->off - start > c->caps->pad)
			return bad(c, -E2BIG, start, "more than %llu NUL bytes of padding",
				   (unsigned long long) c->caps->pad);
		if (win_left(c->w) || c->w->end)
			return 0;
	}
}

static int add_segment(ctx *c, const mb_cpio_segment *s)
{
	mb_initramfs *a = c->a;
	mb_cpio_segment *ns = realloc(a->seg, (a->nseg + 1) * sizeof(*ns));

	if (!ns)
		return set_error(c->err, -ENOMEM, "out of memory");
	a->seg = ns;
	a->seg[a->nseg++] = *s;
	return 0;
}

/* One compressed segment: a sequence of archives with NUL padding, up to the frame's end. */
static int parse_compressed(ctx *c, mb_cpio_segment *s)
{
	char where[128];
	int rc;

	rc = inflater_new(c->compress, &c->z, c->err);
	if (rc < 0)
		return rc;
	c->dec.pos = c->dec.len = 0;
	c->dec.off = 0;
	c->dec.end = false;
	c->w = &c->dec;
	snprintf(where, sizeof(where), " (offset in the %s-decompressed data of the archive at byte %llu)",
		 mb_compress_name(c->compress), (unsigned long long) s->file_offset);
	c->where = where;
	rc = skip_zeros(c);
	if (rc < 0)
		goto out;
	if (!win_left(c->w)) {
		rc = set_error_at(c->err, -EBADMSG, 0, "compressed data holds no archive%s", where);
		goto out;
	}
	while (win_left(c->w)) {
		rc = parse_archive(c);
		if (rc < 0)
			goto out;
		rc = skip_zeros(c);
		if (rc < 0)
			goto out;
	}
	s->file_size = c->raw.off - s->file_offset;
	s->cpio_size = (size_t) c->dec.off;
	rc = 0;
out:
	c->z = inflater_free(c->z);
	c->w = &c->raw;
	c->where = "";
	return rc;
}

static int parse_all(ctx *c)
{
	int rc;

	c->w = &c->raw;
	c->where = "";
	for (;;) {
		mb_cpio_segment s = { 0 };

		rc = skip_zeros(c);
		if (rc < 0)
			return rc;
		if (!win_left(&c->raw))
			break;
		if (c->a->nseg >= c->caps->segments)
			return set_error_at(c->err, -E2BIG, c->raw.off, "more than %u concatenated archives",
					  c->caps->segments);
		c->segment = (unsigned) c->a->nseg;
		s.file_offset = c->raw.off;
		rc = need(c, 4);
		if (rc < 0)
			return rc;
		c->compress = compress_detect(c->raw.buf + c->raw.pos, win_left(&c->raw));
		s.compress = c->compress;
		if (c->compress == MB_COMPRESS_NONE) {
			rc = parse_archive(c);
			if (rc < 0)
				return rc;
			s.file_size = c->raw.off - s.file_offset;
			s.cpio_size = (size_t) s.file_size;
		} else {
			rc = parse_compressed(c, &s);
			if (rc < 0)
				return rc;
		}
		rc = add_segment(c, &s);
		if (rc < 0)
			return rc;
	}
	if (c->a->nseg == 0)
		return set_error_at(c->err, -EBADMSG, 0, "no archive: the file is empty or only NUL bytes");
	return 0;
}

static int parse(ctx *c, mb_initramfs **ret)
{
	int rc;

	c->a = calloc(1, sizeof(*c->a));
	if (!c->a)
		return set_error(c->err, -ENOMEM, "out of memory");
	c->dec.cap = WINDOW_SIZE;
	c->dec.buf = malloc(c->dec.cap);
	if (!c->dec.buf) {
		rc = set_error(c->err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = parse_all(c);
out:
	free(c->dec.buf);
	if (rc < 0) {
		mb_initramfs_free(c->a);
		return rc;
	}
	*ret = c->a;
	return 0;
}

MB_EXPORT int mb_initramfs_parse(const void *data, size_t size, mb_initramfs **ret, mb_error *err)
{
	return initramfs_parse_capped(data, size, &cpio_caps_default, ret, err);
}

int initramfs_parse_capped(const void *data, size_t size, const cpio_caps *caps, mb_initramfs **ret,
			      mb_error *err)
{
	/* The whole input is there: a window that never refills (and is never written). */
	ctx c = { .caps = caps, .fd = -1, .err = err };

	c.raw.buf = (uint8_t *) data;
	c.raw.len = c.raw.cap = size;
	c.raw.end = true;
	return parse(&c, ret);
}

MB_EXPORT int mb_initramfs_parse_fd(int fd, mb_initramfs_tap tap, void *userdata, mb_initramfs **ret,
				    mb_error *err)
{
	ctx c = { .caps = &cpio_caps_default, .fd = fd, .tap = tap, .tap_data = userdata, .err = err };
	int rc;

	c.raw.cap = WINDOW_SIZE;
	c.raw.buf = malloc(c.raw.cap);
	if (!c.raw.buf)
		return set_error(err, -ENOMEM, "out of memory");
	/* A parse that succeeds has read to the end of the file, so the tap saw every byte. */
	rc = parse(&c, ret);
	free(c.raw.buf);
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
	for (i = 0; i < a->nblocks; i++)
		free(a->blocks[i]);
	free(a->blocks);
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
		else if (memcmp(x->sha256, y->sha256, sizeof(x->sha256)) != 0)
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
