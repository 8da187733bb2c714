/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_FILEIO_H
#define MB_SHARED_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>

/*
 * Read a whole file (or "-" for stdin) into memory, reading until EOF in chunks
 * and never trusting st_size: securityfs reports no useful size and may return
 * short reads. More than max bytes is -E2BIG. The buffer is NUL-terminated
 * (one byte past *ret_size) so text parsers may use it as a string.
 */
int file_read(const char *path, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
	__attribute__((warn_unused_result));

/* file_read from an open descriptor (read from where it stands to EOF; not closed). */
int file_read_fd(int fd, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
	__attribute__((warn_unused_result));

/*
 * A regular file mapped read-only with its pages populated: a big file is read from the page
 * cache where it is, without a copy into fresh memory (which costs more than hashing it); other
 * files ("-", pipes, empty files) are read with file_read. *ret_mapped says which, for
 * file_unmap. A file that shrinks while mapped raises SIGBUS where the lost pages are read:
 * a caller mapping a file that others may truncate handles it (the tool reports and exits).
 */
int file_map(const char *path, size_t max, uint8_t **ret, size_t *ret_size, bool *ret_mapped, mb_error *err)
	__attribute__((warn_unused_result));
void file_unmap(uint8_t *p, size_t size, bool mapped);

/*
 * Write all bytes to path ("-": stdout) with mode (0644 when 0), atomically: a temp file
 * beside it (O_EXCL, 0600 until complete), fsync, rename. Readers see the old file or the
 * new one, never part of one; on any error the temp file is removed and path is untouched.
 * Unless replace, an existing path (even a dangling symlink) is -EEXIST and kept, also when
 * it appears while writing.
 */
int file_write(const char *path, const void *data, size_t size, unsigned mode, bool replace, mb_error *err)
	__attribute__((warn_unused_result));
/* read(2) retried on EINTR: the bytes read (0 at the end), or -errno. */
ssize_t fd_read_some(int fd, void *buf, size_t size) __attribute__((warn_unused_result));
/* All of data to fd, across short writes and EINTR: 0, or -errno (-EIO when no progress). */
int fd_write_all(int fd, const void *data, size_t size) __attribute__((warn_unused_result));

/*
 * Open path (flags: O_RDONLY, or O_WRONLY|O_APPEND|O_CREAT... with mode) and flock it (lock:
 * LOCK_SH or LOCK_EX), for a log other processes append to, without ever hanging: opened
 * O_NONBLOCK (a FIFO would block open(2) and read(2)), refused (-EINVAL) unless a regular
 * file, and the lock retried without blocking for timeout_ms, then -ETIMEDOUT. A missing
 * file is -ENOENT. *ret_fd is the locked descriptor, blocking again, or -1.
 */
int file_open_locked(const char *path, int flags, unsigned mode, int lock, unsigned timeout_ms, int *ret_fd,
		   mb_error *err) __attribute__((warn_unused_result));

#endif
