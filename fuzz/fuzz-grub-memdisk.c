/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a GRUB memdisk (FAT12/16 or tar, src/lib/pe/grub-memdisk.c): reads
 * a file at the root, one in a subdirectory and a deeper one. A file read must be within the
 * size cap and NUL-terminated; any failure is an error code, never a crash or a read outside.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pe/grub-memdisk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "(memdisk)/grub.cfg", "/fonts/unicode.pf2", "/a/b/c/d.cfg", "boot/grub/grub.cfg" };

	if (size > (4u << 20))
		return 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		mb_error err = { 0 };
		uint8_t *out = NULL;
		size_t n = 0;
		int rc = grub_memdisk_read(data, size, paths[i], 1u << 20, &out, &n, &err);

		if (rc == 0 && (!out || n > (1u << 20) || out[n] != 0))
			abort();
		if (rc < 0 && (out || (rc != -ENOENT && rc != -EBADMSG && rc != -EFBIG && rc != -ENOMEM)))
			abort();
		free(out);
	}
	return 0;
}
