/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deterministic cpio "newc" writer (format: Linux Documentation/driver-api/early-userspace/
 * buffer-format.rst; rules chosen here: docs/initramfs.md).
 *
 * 1. Walk the tree without following symlinks: every directory is reopened from the root one
 *    component at a time with O_NOFOLLOW, so nothing outside DIR is ever reached, and only
 *    one directory is open at a time whatever the depth.
 * 2. Sort all paths bytewise (strcmp compares as unsigned char): a directory's path is a
 *    prefix of its contents' paths, so it always comes first. DIR itself, ".", goes first.
 * 3. Normalise: uid/gid 0, one mtime, inode numbers from 0 in archive order (hard links
 *    share the number of their first name), nlink = 2 + subdirectories for directories and
 *    the number of names in the archive for regular files, 1 otherwise; dev 0; rdev kept for
 *    device nodes only. A hard-linked file's data goes on its last name (as GNU cpio and
 *    libarchive write it; the kernel's init/initramfs.c accepts data on any of them).
 * 4. Read each file through a fresh no-follow open, check it is still the inode the walk saw
 *    (dev, ino, size, ctime) before and after reading: a file that changes is an error, not
 *    a silently different archive.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <mboot/digest.h>
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/options.h"
#include "lib/initramfs/initramfs-internal.h"
#include <zlib.h>
#include "lib/initramfs/zstd-dl.h"

typedef struct pentry {
	char *path; /* relative to DIR, no leading "./" */
	size_t len;
	struct stat st;
	uint32_t out_ino;
	uint32_t out_nlink;
	uint32_t subdirs;
	bool has_data;
	size_t leader; /* index of the first name of a hard-link group (itself otherwise) */
} pentry;

typedef struct packer {
	int rootfd;
	pentry *e;
	size_t n, cap;
	/* parent directory cache for the output phase */
	int pfd;
	char *ppath;
	size_t plen;
	/* output */
	uint8_t *out;
	size_t olen, ocap;
	mb_error *err;
	follow_state *progress; /* readers of out, when there are */
	size_t published;
	uint32_t root_subdirs;
} packer;

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

static bool unchanged(const struct stat *a, const struct stat *b)
{
	return same_inode(a, b) && a->st_mode == b->st_mode && a->st_size == b->st_size &&
	       a->st_rdev == b->st_rdev && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Open the directory at path (len bytes, relative; "" is DIR) one component at a time. */
static int open_dir_beneath(packer *p, const char *path, size_t len, int *ret)
{
	char comp[MB_CPIO_NAME_MAX];
	/* A new open file description, so readdir positions are never shared. */
	int fd = openat(p->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t i = 0;

	if (fd < 0)
		return set_error(p->err, -errno, "cannot open the directory: %s", strerror(errno));
	while (i < len) {
		size_t j = i;
		int nfd;

		while (j < len && path[j] != '/')
			j++;
		if (j - i >= sizeof(comp)) {
			close(fd);
			return set_error(p->err, -ENAMETOOLONG, "%.*s: name too long", (int) len, path);
		}
		memcpy(comp, path + i, j - i);
		comp[j - i] = 0;
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0) {
			int e = errno;

			return set_error(p->err, -e, "%.*s: cannot open directory (%s)%s", (int) len, path,
				       strerror(e), e == ELOOP || e == ENOTDIR ? "; it changed while packing" : "");
		}
		fd = nfd;
		i = j + 1;
	}
	*ret = fd;
	return 0;
}

static int add_entry(packer *p, const char *dir, size_t dlen, const char *name, const struct stat *st)
{
	size_t nlen = strlen(name), len = dlen ? dlen + 1 + nlen : nlen;
	pentry *e;

	if (len + 1 > MB_CPIO_NAME_MAX)
		return set_error(p->err, -ENAMETOOLONG, "path longer than %u bytes: '%.80s...' (%zu bytes)",
			       MB_CPIO_NAME_MAX - 1, dir, len);
	if (p->n >= MB_CPIO_ENTRIES_MAX)
		return set_error(p->err, -E2BIG, "more than %u entries", MB_CPIO_ENTRIES_MAX);
	if (S_ISSOCK(st->st_mode))
		return set_error(p->err, -EINVAL, "%.*s%s%s: a socket cannot be stored in an archive", (int) dlen, dir,
			       dlen ? "/" : "", name);
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode) && !S_ISCHR(st->st_mode) &&
	    !S_ISBLK(st->st_mode) && !S_ISFIFO(st->st_mode))
		return set_error(p->err, -EINVAL, "%.*s%s%s: unknown file type 0%o", (int) dlen, dir, dlen ? "/" : "",
			       name, (unsigned) (st->st_mode & S_IFMT));
	if (S_ISREG(st->st_mode) && (uint64_t) st->st_size > MB_CPIO_FILE_MAX)
		return set_error(p->err, -E2BIG, "%.*s%s%s: larger than %u bytes", (int) dlen, dir, dlen ? "/" : "",
			       name, MB_CPIO_FILE_MAX);
	if (S_ISLNK(st->st_mode) && st->st_size >= MB_CPIO_NAME_MAX)
		return set_error(p->err, -ENAMETOOLONG, "%.*s%s%s: symlink target longer than %u bytes", (int) dlen,
			       dir, dlen ? "/" : "", name, MB_CPIO_NAME_MAX - 1);
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		pentry *ne = realloc(p->e, ncap * sizeof(*ne));

		if (!ne)
			return set_error(p->err, -ENOMEM, "out of memory");
		p->e = ne;
		p->cap = ncap;
	}
	e = &p->e[p->n];
	memset(e, 0, sizeof(*e));
	e->path = malloc(len + 1);
	if (!e->path)
		return set_error(p->err, -ENOMEM, "out of memory");
	if (dlen) {
		memcpy(e->path, dir, dlen);
		e->path[dlen] = '/';
		memcpy(e->path + dlen + 1, name, nlen + 1);
	} else
		memcpy(e->path, name, nlen + 1);
	e->len = len;
	e->st = *st;
	p->n++;
	return 0;
}

/* List one directory (entry index di, or SIZE_MAX for DIR itself) into p->e. */
static int list_dir(packer *p, size_t di, const struct stat *want)
{
	const char *dpath = di == SIZE_MAX ? "" : p->e[di].path;
	size_t dlen = di == SIZE_MAX ? 0 : p->e[di].len;
	char *dcopy = NULL;
	struct stat st;
	struct dirent *de;
	uint32_t subdirs = 0;
	DIR *d;
	int fd, rc;

	rc = open_dir_beneath(p, dpath, dlen, &fd);
	if (rc < 0)
		return rc;
	if (fstat(fd, &st) < 0 || !same_inode(&st, want)) {
		close(fd);
		return set_error(p->err, -ESTALE, "%s: directory changed while packing", dlen ? dpath : ".");
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return set_error(p->err, -errno, "%s: cannot read directory: %s", dlen ? dpath : ".", strerror(errno));
	}
	/* p->e may move while we append: keep our own copy of the directory's path. */
	dcopy = strndup(dpath, dlen);
	if (!dcopy) {
		rc = set_error(p->err, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				rc = set_error(p->err, -errno, "%s: cannot read directory: %s", dlen ? dcopy : ".",
					     strerror(errno));
				goto out;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = set_error(p->err, -errno, "%s%s%s: cannot stat: %s", dcopy, dlen ? "/" : "", de->d_name,
				     strerror(errno));
			goto out;
		}
		rc = add_entry(p, dcopy, dlen, de->d_name, &st);
		if (rc < 0)
			goto out;
		if (S_ISDIR(st.st_mode))
			subdirs++;
	}
	if (di != SIZE_MAX)
		p->e[di].subdirs = subdirs;
	else
		p->root_subdirs = subdirs;
	rc = 0;
out:
	free(dcopy);
	closedir(d);
	return rc;
}

/*
 * DIR itself is the first entry, named ".", as `find . | sort | cpio` stores it: without it
 * the kernel leaves the root of rootfs at its own default (1777), with it the root gets DIR's
 * permission bits. It sorts first whatever the other names start with ("." is a prefix of
 * every "./name" find prints), so it goes in after the sort.
 */
static int add_root(packer *p, const struct stat *root)
{
	pentry *ne = realloc(p->e, (p->n + 1) * sizeof(*ne));

	if (!ne)
		return set_error(p->err, -ENOMEM, "out of memory");
	p->e = ne;
	p->cap = p->n + 1;
	memmove(&p->e[1], &p->e[0], p->n * sizeof(*ne));
	p->n++;
	memset(&p->e[0], 0, sizeof(*ne));
	p->e[0].path = strdup(".");
	if (!p->e[0].path)
		return set_error(p->err, -ENOMEM, "out of memory");
	p->e[0].len = 1;
	p->e[0].st = *root;
	p->e[0].subdirs = p->root_subdirs;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const pentry *) a)->path, ((const pentry *) b)->path);
}

static int cmp_link(const void *a, const void *b, void *base)
{
	const pentry *x = &((const pentry *) base)[*(const size_t *) a];
	const pentry *y = &((const pentry *) base)[*(const size_t *) b];

	if (x->st.st_dev != y->st.st_dev)
		return x->st.st_dev < y->st.st_dev ? -1 : 1;
	if (x->st.st_ino != y->st.st_ino)
		return x->st.st_ino < y->st.st_ino ? -1 : 1;
	return *(const size_t *) a < *(const size_t *) b ? -1 : 1;
}

/* Hard-link groups (regular files only), then inode numbers and link counts. */
static int number_entries(packer *p)
{
	size_t *idx = NULL, k = 0, i, j;
	uint32_t next = 0;

	for (i = 0; i < p->n; i++) {
		pentry *e = &p->e[i];

		e->leader = i;
		e->has_data = S_ISREG(e->st.st_mode) || S_ISLNK(e->st.st_mode);
		e->out_nlink = S_ISDIR(e->st.st_mode) ? 2 + e->subdirs : 1;
		if (S_ISREG(e->st.st_mode) && e->st.st_nlink > 1)
			k++;
	}
	if (k) {
		idx = malloc(k * sizeof(*idx));
		if (!idx)
			return set_error(p->err, -ENOMEM, "out of memory");
		for (i = 0, j = 0; i < p->n; i++)
			if (S_ISREG(p->e[i].st.st_mode) && p->e[i].st.st_nlink > 1)
				idx[j++] = i;
		qsort_r(idx, k, sizeof(*idx), cmp_link, p->e);
		for (i = 0; i < k; i = j) {
			size_t g;

			for (j = i + 1; j < k && p->e[idx[j]].st.st_dev == p->e[idx[i]].st.st_dev &&
					p->e[idx[j]].st.st_ino == p->e[idx[i]].st.st_ino; j++)
				;
			for (g = i; g < j; g++) {
				pentry *e = &p->e[idx[g]];

				e->leader = idx[i];
				e->out_nlink = (uint32_t) (j - i);
				e->has_data = g == j - 1;
			}
		}
		free(idx);
	}
	for (i = 0; i < p->n; i++) {
		pentry *e = &p->e[i];

		e->out_ino = e->leader == i ? next++ : p->e[e->leader].out_ino;
	}
	return 0;
}

/*
 * The buffer is allocated once, at the exact size the walk predicts, because other threads
 * read it while it fills: needing more means a file or link changed since the walk.
 */
static int out_reserve(packer *p, size_t n)
{
	if (p->ocap - p->olen < n)
		return set_error(p->err, -ESTALE, "the tree changed while packing (archive outgrew its size)");
	return 0;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t) 3;
}

/* Exact archive size from the walk: headers, names, data, trailer, 512-byte end padding. */
static int predict_size(packer *p, size_t *ret)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < p->n; i++) {
		const pentry *e = &p->e[i];

		total += align4(110 + e->len + 1);
		if (e->has_data)
			total += align4((size_t) e->st.st_size);
	}
	total += align4(110 + sizeof("TRAILER!!!"));
	total = (total + 511) / 512 * 512;
	if (total > MB_CPIO_TOTAL_MAX)
		return set_error(p->err, -E2BIG, "archive larger than %zu bytes", MB_CPIO_TOTAL_MAX);
	*ret = (size_t) total;
	return 0;
}

static void put_hex8(uint8_t *d, uint32_t v)
{
	static const char digits[] = "0123456789ABCDEF";
	int i;

	for (i = 7; i >= 0; i--) {
		d[i] = (uint8_t) digits[v & 15];
		v >>= 4;
	}
}

static void put_pad(packer *p)
{
	while (p->olen & 3)
		p->out[p->olen++] = 0;
}

/* Header (110 bytes: "070701" and 13 fields of 8 uppercase hex digits), name, NUL, padding. */
static int put_header(packer *p, const uint32_t f[13], const char *name, size_t name_len)
{
	uint8_t *d;
	int rc, i;

	rc = out_reserve(p, 110 + name_len + 1 + 3);
	if (rc < 0)
		return rc;
	d = p->out + p->olen;
	memcpy(d, "070701", 6);
	for (i = 0; i < 13; i++)
		put_hex8(d + 6 + 8 * i, f[i]);
	memcpy(d + 110, name, name_len);
	d[110 + name_len] = 0;
	p->olen += 110 + name_len + 1;
	put_pad(p);
	return 0;
}

static int parent_fd(packer *p, const pentry *e, const char **ret_base)
{
	const char *slash = memrchr(e->path, '/', e->len);
	size_t plen = slash ? (size_t) (slash - e->path) : 0;
	int rc;

	*ret_base = slash ? slash + 1 : e->path;
	if (p->pfd >= 0 && p->plen == plen && memcmp(p->ppath, e->path, plen) == 0)
		return p->pfd;
	if (p->pfd >= 0)
		close(p->pfd);
	p->pfd = -1;
	rc = open_dir_beneath(p, e->path, plen, &p->pfd);
	if (rc < 0)
		return rc;
	memcpy(p->ppath, e->path, plen);
	p->plen = plen;
	return p->pfd;
}

static int changed(packer *p, const pentry *e)
{
	return set_error(p->err, -ESTALE, "%s: changed while packing", e->path);
}

static int put_file_data(packer *p, const pentry *e, int pfd, const char *base)
{
	size_t size = (size_t) e->st.st_size, got = 0;
	struct stat st;
	uint8_t extra;
	ssize_t n;
	int fd, rc;

	fd = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return set_error(p->err, -errno, "%s: cannot open: %s", e->path, strerror(errno));
	if (fstat(fd, &st) < 0 || !unchanged(&st, &e->st)) {
		rc = changed(p, e);
		goto out;
	}
	rc = out_reserve(p, size + 3);
	if (rc < 0)
		goto out;
	while (got < size) {
		n = fd_read_some(fd, p->out + p->olen + got, size - got);
		if (n < 0) {
			rc = set_error(p->err, (int) n, "%s: read error: %s", e->path, strerror((int) -n));
			goto out;
		}
		if (n == 0) { /* shrank */
			rc = changed(p, e);
			goto out;
		}
		got += (size_t) n;
	}
	n = fd_read_some(fd, &extra, 1);
	if (n != 0 || fstat(fd, &st) < 0 || !unchanged(&st, &e->st)) { /* grew, or written meanwhile */
		rc = changed(p, e);
		goto out;
	}
	p->olen += size;
	put_pad(p);
	rc = 0;
out:
	close(fd);
	return rc;
}

static int put_entry(packer *p, const pentry *e, uint32_t mtime)
{
	char target[MB_CPIO_NAME_MAX];
	uint32_t f[13] = { 0 };
	const char *base;
	struct stat st;
	ssize_t tlen = 0;
	int pfd, rc;

	pfd = parent_fd(p, e, &base);
	if (pfd < 0)
		return pfd;
	if (S_ISLNK(e->st.st_mode)) {
		tlen = readlinkat(pfd, base, target, sizeof(target));
		if (tlen < 0)
			return set_error(p->err, -errno, "%s: cannot read link: %s", e->path, strerror(errno));
		if ((size_t) tlen >= sizeof(target))
			return set_error(p->err, -ENAMETOOLONG, "%s: symlink target too long", e->path);
	}
	if (!S_ISREG(e->st.st_mode)) {
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !unchanged(&st, &e->st) ||
		    (S_ISLNK(e->st.st_mode) && st.st_size != tlen))
			return changed(p, e);
	}
	f[0] = e->out_ino;
	f[1] = (uint32_t) (e->st.st_mode & (S_IFMT | 07777));
	f[4] = e->out_nlink;
	f[5] = mtime;
	if (e->has_data)
		f[6] = S_ISLNK(e->st.st_mode) ? (uint32_t) tlen : (uint32_t) e->st.st_size;
	if (S_ISCHR(e->st.st_mode) || S_ISBLK(e->st.st_mode)) {
		f[9] = major(e->st.st_rdev);
		f[10] = minor(e->st.st_rdev);
	}
	f[11] = (uint32_t) e->len + 1;
	rc = put_header(p, f, e->path, e->len);
	if (rc < 0)
		return rc;
	if (!e->has_data)
		return 0;
	if (S_ISLNK(e->st.st_mode)) {
		rc = out_reserve(p, (size_t) tlen + 3);
		if (rc < 0)
			return rc;
		memcpy(p->out + p->olen, target, (size_t) tlen);
		p->olen += (size_t) tlen;
		put_pad(p);
		return 0;
	}
	return put_file_data(p, e, pfd, base);
}

static void publish(packer *p, bool done)
{
	if (p->progress && (done || p->olen - p->published >= (1u << 20))) {
		follow_publish(p->progress, p->olen, done, false);
		p->published = p->olen;
	}
}

static int put_trailer(packer *p)
{
	/* As GNU cpio writes it: everything 0 except nlink 1 and the name size. */
	static const char name[] = "TRAILER!!!";
	uint32_t f[13] = { 0 };
	int rc;

	f[4] = 1;
	f[11] = sizeof(name);
	rc = put_header(p, f, name, sizeof(name) - 1);
	if (rc < 0)
		return rc;
	/* Pad to 512-byte blocks like GNU cpio; the kernel skips the zeros. */
	rc = out_reserve(p, (512 - p->olen % 512) % 512);
	if (rc < 0)
		return rc;
	while (p->olen % 512)
		p->out[p->olen++] = 0;
	return 0;
}

/* Digests computed beside the packing, by a thread following a stream. */
typedef struct hash_job {
	const uint8_t *data;
	follow_state *src;
	const uint16_t *algs;
	size_t n_algs;
	uint8_t (*md)[MB_DIGEST_MAX];
	int rc;
} hash_job;

typedef struct hasher {
	hash_job jobs[2];
	size_t n_jobs;
	int rc;
} hasher;

static int run_hash_job(hash_job *j)
{
	mb_digest_ctx *ctx[3] = { NULL, NULL, NULL };
	size_t have = 0, avail = 0, i;
	bool done = false;
	int rc = 0;

	for (i = 0; i < j->n_algs && rc >= 0; i++)
		rc = mb_digest_ctx_new(j->algs[i], &ctx[i]);
	while (rc >= 0) {
		rc = follow_wait(j->src, have, &avail, &done);
		for (i = 0; rc >= 0 && i < j->n_algs; i++)
			rc = mb_digest_ctx_update(ctx[i], j->data + have, avail - have);
		have = avail;
		if (done)
			break;
	}
	for (i = 0; i < j->n_algs; i++) {
		if (rc >= 0)
			rc = mb_digest_ctx_final(ctx[i], j->md[i]);
		mb_digest_ctx_free(ctx[i]);
	}
	return rc;
}

static void *hasher_main(void *arg)
{
	hasher *h = arg;
	size_t i;

	h->rc = 0;
	for (i = 0; i < h->n_jobs && h->rc >= 0; i++)
		h->rc = run_hash_job(&h->jobs[i]);
	return NULL;
}

typedef struct gzipper {
	const uint8_t *in;
	follow_state *fin, *fout;
	uint8_t *out;
	size_t out_cap;
	mb_error err;
	int rc;
} gzipper;

static void *gzipper_main(void *arg)
{
	gzipper *g = arg;

	g->rc = gzip_follow(g->in, g->fin, g->out, g->out_cap, g->fout, &g->err);
	return NULL;
}

static const uint16_t file_algs[3] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384 };
static const uint16_t cpio_algs[1] = { MB_ALG_SHA256 };

/*
 * The bytes are produced on this thread, in archive order. Beside it, on other cores: the
 * hasher (the archive's SHA-256, and the three digests of the result) and, for gzip, the
 * compressor, each following the bytes as they are published. zstd compresses in one shot
 * once the archive is complete (its one-shot frame is the documented one).
 */
MB_EXPORT int mb_initramfs_pack(const char *dir, const mb_initramfs_opts *opts_in, uint8_t **ret, size_t *ret_size,
				mb_initramfs_stats *stats, mb_error *err)
{
	mb_initramfs_opts o;
	const mb_initramfs_opts *opts = &o;
	packer p = { .rootfd = -1, .pfd = -1, .err = err };
	follow_state fcpio, fgz;
	uint8_t md_cpio[1][MB_DIGEST_MAX], md_file[3][MB_DIGEST_MAX];
	hasher h = { 0 };
	gzipper g = { 0 };
	pthread_t th_hash, th_gz;
	bool hash_started = false, gz_started = false;
	uint8_t *result = NULL;
	size_t result_size = 0, total = 0;
	struct stat root;
	size_t i;
	int rc;

	if (!dir || !opts_in || !ret || !ret_size)
		return set_error(err, -EINVAL, "invalid arguments");
	if ((rc = OPTIONS_TAKE(o, opts_in, err)) < 0)
		return rc;
	if (!mb_compress_name(opts->compress))
		return set_error(err, -EINVAL, "unknown compression %d", (int) opts->compress);
	/* Before any work: a compressor that cannot be loaded is the error to report. */
	rc = opts->compress == MB_COMPRESS_ZSTD ? dlopen_zstd(err) : 0;
	if (rc < 0)
		return rc;
	follow_init(&fcpio);
	follow_init(&fgz);
	p.rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.rootfd < 0) {
		rc = set_error(err, -errno, "%s: cannot open directory: %s", dir, strerror(errno));
		goto out;
	}
	p.ppath = malloc(MB_CPIO_NAME_MAX);
	if (!p.ppath || fstat(p.rootfd, &root) < 0) {
		rc = set_error(err, p.ppath ? -errno : -ENOMEM, "%s: cannot stat", dir);
		goto out;
	}
	/* Breadth-first: p.e grows behind i, so i visits every directory once. */
	rc = list_dir(&p, SIZE_MAX, &root);
	for (i = 0; rc >= 0 && i < p.n; i++)
		if (S_ISDIR(p.e[i].st.st_mode))
			rc = list_dir(&p, i, &p.e[i].st);
	if (rc < 0)
		goto out;
	qsort(p.e, p.n, sizeof(*p.e), cmp_path);
	rc = add_root(&p, &root);
	if (rc < 0)
		goto out;
	rc = number_entries(&p);
	if (rc >= 0)
		rc = predict_size(&p, &total);
	if (rc < 0)
		goto out;
	p.out = malloc(total);
	if (!p.out) {
		rc = set_error(err, -ENOMEM, "out of memory (%zu bytes)", total);
		goto out;
	}
	p.ocap = total;
	p.progress = &fcpio;

	if (opts->compress == MB_COMPRESS_GZIP) {
		g.in = p.out;
		g.fin = &fcpio;
		g.fout = &fgz;
		g.out_cap = gzip_bound(total);
		g.out = malloc(g.out_cap);
		if (!g.out) {
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
		if (pthread_create(&th_gz, NULL, gzipper_main, &g) != 0) {
			rc = set_error(err, -EAGAIN, "cannot start a thread");
			goto out;
		}
		gz_started = true;
	}
	/* The archive's own digest(s); for none it is the file, so all three. */
	h.jobs[0] = (hash_job) { p.out, &fcpio, opts->compress == MB_COMPRESS_NONE ? file_algs : cpio_algs,
				 opts->compress == MB_COMPRESS_NONE ? 3 : 1,
				 opts->compress == MB_COMPRESS_NONE ? md_file : md_cpio, 0 };
	h.n_jobs = 1;
	if (opts->compress == MB_COMPRESS_GZIP) {
		h.jobs[1] = (hash_job) { g.out, &fgz, file_algs, 3, md_file, 0 };
		h.n_jobs = 2;
	}
	if (pthread_create(&th_hash, NULL, hasher_main, &h) != 0) {
		rc = set_error(err, -EAGAIN, "cannot start a thread");
		goto out;
	}
	hash_started = true;

	for (i = 0; i < p.n && rc >= 0; i++) {
		rc = put_entry(&p, &p.e[i], opts->mtime);
		publish(&p, false);
	}
	if (rc >= 0)
		rc = put_trailer(&p);
	if (rc >= 0 && p.olen != total)
		rc = set_error(err, -ESTALE, "the tree changed while packing (archive size %zu, expected %zu)", p.olen,
			     total);
	if (rc < 0) {
		follow_publish(&fcpio, p.olen, true, true);
		goto out;
	}
	publish(&p, true);

	if (gz_started) {
		pthread_join(th_gz, NULL);
		gz_started = false;
		if (g.rc < 0) {
			if (err)
				*err = g.err;
			rc = g.rc;
			goto out;
		}
		result = g.out;
		g.out = NULL;
		result_size = fgz.avail;
	} else if (opts->compress == MB_COMPRESS_ZSTD) {
		rc = compress_buffer(MB_COMPRESS_ZSTD, p.out, p.olen, &result, &result_size, err);
		if (rc < 0)
			goto out;
		for (i = 0; i < 3 && rc >= 0; i++)
			rc = mb_digest(file_algs[i], result, result_size, md_file[i]);
	} else {
		result = p.out;
		result_size = p.olen;
	}
	pthread_join(th_hash, NULL);
	hash_started = false;
	if (rc >= 0)
		rc = h.rc;
	if (rc < 0) {
		set_error(err, rc, "cannot hash the archive");
		goto out;
	}
	if (stats) {
		stats->entries = p.n; /* "." included */
		stats->cpio_size = p.olen;
		memcpy(stats->cpio_sha256, opts->compress == MB_COMPRESS_NONE ? md_file[1] : md_cpio[0], 32);
		memcpy(stats->sha1, md_file[0], sizeof(stats->sha1));
		memcpy(stats->sha256, md_file[1], sizeof(stats->sha256));
		memcpy(stats->sha384, md_file[2], sizeof(stats->sha384));
	}
	if (result == p.out)
		p.out = NULL;
	*ret = result;
	*ret_size = result_size;
	result = NULL;
	rc = 0;
out:
	if (gz_started || hash_started)
		follow_publish(&fcpio, p.olen, true, true);
	if (gz_started)
		pthread_join(th_gz, NULL);
	if (hash_started) {
		/* a hasher of gzip output waits on fgz: the gzipper has published its end (failed) */
		pthread_join(th_hash, NULL);
	}
	for (i = 0; i < p.n; i++)
		free(p.e[i].path);
	free(p.e);
	free(p.out);
	free(g.out);
	free(result);
	free(p.ppath);
	if (p.pfd >= 0)
		close(p.pfd);
	if (p.rootfd >= 0)
		close(p.rootfd);
	follow_destroy(&fcpio);
	follow_destroy(&fgz);
	return rc;
}
