/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_FILEIO_H
#define MB_SHARED_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>

/*
 * Read a whole file (or "-" for stdin) into memory, reading until EOF in chunks
 * and never trusting st_size: securityfs reports no useful size and may return
 * short reads. More than max bytes is -E2BIG. The buffer is NUL-terminated
 * (one byte past *ret_size) so text parsers may use it as a string.
 */
int mb_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_size, mb_error *err)
	__attribute__((warn_unused_result));

/* Write all bytes to path (0644 unless mode given), replacing it atomically. */
int mb_write_file(const char *path, const void *data, size_t size, unsigned mode, mb_error *err)
	__attribute__((warn_unused_result));

#endif
