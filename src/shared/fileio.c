/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int mb_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	int fd, rc;
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return mb_fail(err, -errno, "cannot open: %s", strerror(errno));

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
				rc = mb_fail(err, -E2BIG, "file is larger than %zu bytes", max);
				goto out;
			}
			nbuf = cap ? realloc(buf, ncap) : alloc_buffer(ncap);
			if (!nbuf) {
				rc = mb_fail(err, -ENOMEM, "out of memory reading file");
				goto out;
			}
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + size, cap - size - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = mb_fail(err, -errno, "read error: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		size += (size_t) n;
		if (size > max) {
			rc = mb_fail(err, -E2BIG, "file is larger than %zu bytes", max);
			goto out;
		}
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf) {
			rc = mb_fail(err, -ENOMEM, "out of memory reading file");
			goto out;
		}
	}
	buf[size] = 0;
	*ret = buf;
	*ret_size = size;
	buf = NULL;
	rc = 0;
out:
	if (fd != STDIN_FILENO)
		close(fd);
	free(buf);
	return rc;
}

int mb_write_file(const char *path, const void *data, size_t size, unsigned mode, mb_error *err)
{
	char *tmp = NULL;
	const uint8_t *p = data;
	int fd = -1, rc;

	if (strcmp(path, "-") == 0) {
		while (size > 0) {
			ssize_t n = write(STDOUT_FILENO, p, size);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return mb_fail(err, -errno, "write error: %s", strerror(errno));
			}
			p += n;
			size -= (size_t) n;
		}
		return 0;
	}
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
		return mb_fail(err, -ENOMEM, "out of memory");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = mb_fail(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, mode ? mode : 0644) < 0) {
		rc = mb_fail(err, -errno, "chmod: %s", strerror(errno));
		goto out;
	}
	while (size > 0) {
		ssize_t n = write(fd, p, size);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = mb_fail(err, -errno, "write error: %s", strerror(errno));
			goto out;
		}
		p += n;
		size -= (size_t) n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		rc = mb_fail(err, -errno, "write error: %s", strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		rc = mb_fail(err, -errno, "cannot rename to %s: %s", path, strerror(errno));
		goto out;
	}
	free(tmp);
	return 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return rc;
}
