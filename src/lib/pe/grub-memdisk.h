/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files of a GRUB memdisk (the module grub-mkimage's -m puts in a core image, mb_grub_image's
 * memdisk): a FAT12 or FAT16 image (what Debian's signed GRUB carries: grub.cfg and fonts/) or
 * a tar archive (what grub-mkstandalone makes). Untrusted bytes: every offset and cluster
 * chain is bounded (internal to libmboot).
 */
#ifndef MB_LIB_PE_GRUB_MEMDISK_H
#define MB_LIB_PE_GRUB_MEMDISK_H

#include <stddef.h>
#include <stdint.h>

#include <mboot/error.h>

#define GRUB_MEMDISK_MAX_DIR_ENTRIES 65536 /* entries one FAT directory may have */

/*
 * The file at path ("/grub.cfg", "/fonts/unicode.pf2"; "(memdisk)" in front is skipped) in
 * the memdisk image: FAT short (8.3) names compared as GRUB's fat driver does, without case;
 * tar names as written ("./" and "/" in front ignored). 0 with *data (malloc()ed, size bytes,
 * one NUL after them) and *size; -ENOENT when there is no such file, -EFBIG over max bytes,
 * -EBADMSG (err with the offset) for an image that is neither or is malformed, -ENOMEM.
 */
int grub_memdisk_read(const void *img, size_t img_size, const char *path, size_t max, uint8_t **data,
		      size_t *size, mb_error *err);

#endif
