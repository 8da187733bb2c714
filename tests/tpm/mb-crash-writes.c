/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Crash injection for tests (LD_PRELOAD): counts the writes and syncs a process makes to one
 * file and kills the process with SIGKILL at the Nth, as a power cut would stop it there.
 *
 *   MB_CRASH_FILE=PATH  the file watched (compared by device and inode, whatever name or fd)
 *   MB_CRASH_AT=N       die at the Nth write/pwrite/writev/pwritev/fsync/fdatasync on it
 *   MB_CRASH_TORN=1     a write that is killed is first done in part: its first half (a
 *                       torn sector run, as a cut in the middle of a header copy leaves it)
 *
 * Without MB_CRASH_AT nothing is changed: the calls go straight to libc.
 */
#undef _FILE_OFFSET_BITS /* our pwrite and pwrite64 are both defined, each under its own name */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long crash_at = -1, seen;
static bool torn, ready;
static dev_t watch_dev;
static ino_t watch_ino;

static void setup(void)
{
	const char *path = getenv("MB_CRASH_FILE"), *at = getenv("MB_CRASH_AT"), *t = getenv("MB_CRASH_TORN");
	struct stat st;

	ready = true;
	if (!path || !at || stat(path, &st) != 0)
		return;
	watch_dev = st.st_dev;
	watch_ino = st.st_ino;
	crash_at = strtol(at, NULL, 10);
	torn = t && *t == '1';
}

/* Is fd the watched file, and is this the call to die at? (Counts the call.) */
static bool is_fatal(int fd)
{
	struct stat st;

	if (!ready)
		setup();
	if (crash_at <= 0 || fstat(fd, &st) != 0 || st.st_dev != watch_dev || st.st_ino != watch_ino)
		return false;
	return ++seen == crash_at;
}

static void die(void)
{
	raise(SIGKILL);
	_exit(137); /* not reached */
}

#define NEXT(name) ((__typeof__(&name)) dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t n)
{
	if (is_fatal(fd)) {
		if (torn && n > 1)
			(void) NEXT(write)(fd, buf, n / 2);
		die();
	}
	return NEXT(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (is_fatal(fd)) {
		if (torn && n > 1)
			(void) NEXT(pwrite)(fd, buf, n / 2, off);
		die();
	}
	return NEXT(pwrite)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	if (is_fatal(fd)) {
		if (torn && n > 1)
			(void) NEXT(pwrite64)(fd, buf, n / 2, off);
		die();
	}
	return NEXT(pwrite64)(fd, buf, n, off);
}

/* vectored writes die whole (no torn half): libcryptsetup writes headers with write(2) */
ssize_t writev(int fd, const struct iovec *iov, int n)
{
	if (is_fatal(fd))
		die();
	return NEXT(writev)(fd, iov, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	if (is_fatal(fd))
		die();
	return NEXT(pwritev)(fd, iov, n, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
	if (is_fatal(fd))
		die();
	return NEXT(pwritev64)(fd, iov, n, off);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	if (is_fatal(fd))
		die();
	return NEXT(pwritev2)(fd, iov, n, off, flags);
}

int fsync(int fd)
{
	if (is_fatal(fd))
		die();
	return NEXT(fsync)(fd);
}

int fdatasync(int fd)
{
	if (is_fatal(fd))
		die();
	return NEXT(fdatasync)(fd);
}
