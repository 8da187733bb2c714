/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fail.h"
#include "shared/fileio.h"

/*
 * A big file's buffer (a 100,000-event log is 11 MiB) in 2 MiB pages where the kernel offers
 * them: a few page faults instead of one per 4 KiB, and fewer TLB misses while parsing.
 * The buffer is an ordinary heap block either way (free()/realloc() work on it).
 */
static void *alloc_buffer(size_t size)
{
#ifdef MADV_HUGEPAGE
	const size_t huge = 2u << 20;
	void *p;

	if (size >= 2 * huge) {
		if (posix_memalign(&p, huge, size) != 0)
			return NULL;
		(void) madvise(p, size & ~(huge - 1), MADV_HUGEPAGE);
		return p;
	}
#endif
	return malloc(size);
}

int file_read_fd(int fd, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	int rc;
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (cap - size < 4096 + 1) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct stat st;

			/* st_size is only a hint for the first buffer (sysfs says 0); reads go to EOF. */
			if (!cap && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
			    (uint64_t) st.st_size < max)
				ncap = (size_t) st.st_size + 4096 + 2;
			uint8_t *nbuf;

			if (ncap > max + 4096 + 1)
				ncap = max + 4096 + 1;
			if (ncap <= cap) {
				rc = set_error(err, -E2BIG, "file is larger than %zu bytes", max);
				goto out;
			}
			nbuf = cap ? realloc(buf, ncap) : alloc_buffer(ncap);
			if (!nbuf) {
				rc = set_error(err, -ENOMEM, "out of memory reading file");
				goto out;
			}
			buf = nbuf;
			cap = ncap;
		}
		n = fd_read_some(fd, buf + size, cap - size - 1);
		if (n < 0) {
			rc = set_error(err, (int) n, "read error: %s", strerror((int) -n));
			goto out;
		}
		if (n == 0)
			break;
		size += (size_t) n;
		if (size > max) {
			rc = set_error(err, -E2BIG, "file is larger than %zu bytes", max);
			goto out;
		}
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf) {
			rc = set_error(err, -ENOMEM, "out of memory reading file");
			goto out;
		}
	}
	buf[size] = 0;
	*ret = buf;
	*ret_size = size;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	return rc;
}

int file_read(const char *path, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	int fd, rc;

	if (strcmp(path, "-") == 0)
		return file_read_fd(STDIN_FILENO, max, ret, ret_size, err);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return set_error(err, -errno, "cannot open: %s", strerror(errno));
	rc = file_read_fd(fd, max, ret, ret_size, err);
	close(fd);
	return rc;
}

int file_map(const char *path, size_t max, uint8_t **ret, size_t *ret_size, bool *ret_mapped, mb_error *err)
{
	struct stat st;
	void *p;
	int fd;

	*ret_mapped = false;
	if (strcmp(path, "-") == 0)
		return file_read(path, max, ret, ret_size, err);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return set_error(err, -errno, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		int rc = file_read_fd(fd, max, ret, ret_size, err);

		close(fd);
		return rc;
	}
	if ((uint64_t) st.st_size > max) {
		close(fd);
		return set_error(err, -E2BIG, "file of %llu bytes is over the %zu MiB limit",
				 (unsigned long long) st.st_size, max >> 20);
	}
	p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return set_error(err, -errno, "cannot map: %s", strerror(errno));
	*ret = p;
	*ret_size = (size_t) st.st_size;
	*ret_mapped = true;
	return 0;
}

void file_unmap(uint8_t *p, size_t size, bool mapped)
{
	if (mapped)
		munmap(p, size);
	else
		free(p);
}

/* Where path's directory entry lives: its directory ("." for a bare name), opened for fsync. */
static int open_parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (!slash)
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
	if (!dir)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd;
}

/*
 * rename(2) that fails with EEXIST instead of replacing: RENAME_NOREPLACE, or where the file
 * system lacks it, link(2) (which never replaces either) and unlink of the old name.
 */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -1;
	if (link(from, to) < 0)
		return -1;
	(void) unlink(from);
	return 0;
}

ssize_t fd_read_some(int fd, void *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int fd_write_all(int fd, const void *data, size_t size)
{
	const uint8_t *p = data;

	while (size > 0) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO; /* 0: no progress, as a full pipe never gives */
		p += n;
		size -= (size_t) n;
	}
	return 0;
}

int file_write(const char *path, const void *data, size_t size, unsigned mode, bool replace, mb_error *err)
{
	char *tmp = NULL;
	const uint8_t *p = data;
	int fd = -1, dir_fd, rc;

	if (strcmp(path, "-") == 0) {
		rc = fd_write_all(STDOUT_FILENO, p, size);
		return rc < 0 ? set_error(err, rc, "write error: %s", strerror(-rc)) : 0;
	}
	/* In path's directory, so that rename(2) is atomic; mkostemp creates it O_EXCL, 0600. */
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		tmp = NULL;
		return set_error(err, -ENOMEM, "out of memory");
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = set_error(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	if (fchmod(fd, mode ? mode : 0644) < 0) {
		rc = set_error(err, -errno, "chmod: %s", strerror(errno));
		goto out;
	}
	rc = fd_write_all(fd, p, size);
	if (rc < 0) {
		rc = set_error(err, rc, "write error: %s", strerror(-rc));
		goto out;
	}
	/* The data is on disk before the name points at it: a crash leaves the old file or the new. */
	if (fsync(fd) < 0) {
		rc = set_error(err, -errno, "write error: %s", strerror(errno));
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		rc = set_error(err, -errno, "write error: %s", strerror(errno));
		goto out;
	}
	if ((replace ? rename(tmp, path) : rename_noreplace(tmp, path)) < 0) {
		if (errno == EEXIST)
			rc = set_error(err, -EEXIST, "already exists; not replaced");
		else
			rc = set_error(err, -errno, "cannot rename %s to it: %s", tmp, strerror(errno));
		goto out;
	}
	free(tmp);
	/* The new name on disk too. The file is in place already: a failure here is not one to report. */
	dir_fd = open_parent_dir(path);
	if (dir_fd >= 0) {
		(void) fsync(dir_fd);
		close(dir_fd);
	}
	return 0;
out:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

int file_open_locked(const char *path, int flags, unsigned mode, int lock, unsigned timeout_ms, int *ret_fd,
		   mb_error *err)
{
	struct timespec start, now, pause = { 0, 10 * 1000 * 1000 };
	struct stat st;
	int fd, fl;

	*ret_fd = -1;
	fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0) {
		int e = errno;

		/* Write-only and non-blocking, a FIFO without a reader (or a socket) is ENXIO. */
		if (e == ENXIO)
			return set_error(err, -EINVAL, "not a regular file (a FIFO, socket or device); refusing it");
		if (e == ELOOP && (flags & O_NOFOLLOW))
			return set_error(err, -ELOOP, "is a symbolic link; refusing to follow it");
		return set_error(err, -e, "cannot open: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return set_error(err, -e, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return set_error(err, -EINVAL, "%s, not a regular file; refusing it", file_kind(st.st_mode));
	}
	/* Regular file now: O_NONBLOCK means nothing to its reads and writes, but leave no surprise. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		return set_error(err, -e, "fcntl: %s", strerror(e));
	}
	/* Tried without blocking, again and again: a holder that never lets go cannot hang us. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (flock(fd, lock | LOCK_NB) < 0) {
		int64_t waited_ms;
		int e = errno;

		if (e == EINTR)
			continue;
		if (e != EWOULDBLOCK) {
			close(fd);
			return set_error(err, -e, "cannot lock: %s", strerror(e));
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited_ms = ((int64_t) now.tv_sec - start.tv_sec) * 1000 + ((int64_t) now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited_ms >= (int64_t) timeout_ms) {
			close(fd);
			return set_error(err, -ETIMEDOUT, "another process holds a lock on it; gave up after %u.%u s",
				       timeout_ms / 1000, timeout_ms % 1000 / 100);
		}
		nanosleep(&pause, NULL);
	}
	*ret_fd = fd;
	return 0;
}
