/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Digests of files: the Authenticode digest of a PE image on disk, and the plain
 * streamed digest a boot loader logs for a file it reads (GRUB, PCR 9). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mboot/pe.h>

#include "shared/fail.h"
#include "shared/fileio.h"

MB_EXPORT int mb_pe_read_file(const char *path, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	struct stat st;

	/* file_read would read up to the cap before it knows; a regular file says its size. */
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t) st.st_size > MB_PE_MAX_FILE)
		return set_error(err, -E2BIG, "image of %llu bytes is over the %u MiB limit",
			       (unsigned long long) st.st_size, MB_PE_MAX_FILE >> 20);
	return file_read(path, MB_PE_MAX_FILE, ret, ret_size, err);
}

MB_EXPORT int mb_pe_authenticode_file(const char *path, unsigned flags, const uint16_t *algs, size_t n_algs,
				      uint8_t (*out)[MB_DIGEST_MAX], mb_error *err)
{
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc;

	rc = mb_pe_read_file(path, &buf, &size, err);
	if (rc < 0)
		return rc;
	rc = mb_pe_parse(buf, size, flags, &pe, err);
	for (size_t i = 0; rc >= 0 && i < n_algs; i++) {
		rc = mb_pe_hash(pe, buf, size, algs[i], out[i]);
		if (rc < 0)
			set_error(err, rc, "cannot compute algorithm 0x%04x", algs[i]);
	}
	mb_pe_info_free(pe);
	free(buf);
	return rc;
}
