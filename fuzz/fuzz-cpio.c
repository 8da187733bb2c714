/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as an initramfs file (plain, gzip or zstd cpio "newc", possibly
 * concatenated). Parses it with a 64 MiB cap on decompressed data (the library's cap is
 * 2 GiB, more time than a fuzzer should spend on one input) and touches every entry's name
 * and symlink target.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "lib/initramfs/initramfs-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_initramfs *a = NULL;
	mb_error err = { 0 };
	volatile uint8_t sink = 0;
	size_t i, idx;
	cpio_caps caps = cpio_caps_default;

	if (size > (1u << 20))
		return 0;
	caps.total = 64u << 20;
	if (initramfs_parse_capped(data, size, &caps, &a, &err) < 0)
		return 0;
	for (i = 0; i < mb_initramfs_entry_count(a); i++) {
		const mb_cpio_entry *e = mb_initramfs_entry_at(a, i);

		sink ^= (uint8_t) strlen(e->name);
		sink ^= e->sha256[0];
		if (e->data)
			sink ^= e->data[0] ^ e->data[e->size - 1] ^ e->data[e->size];
	}
	for (i = 0; i < mb_initramfs_segment_count(a); i++)
		sink ^= (uint8_t) mb_initramfs_segment_at(a, i)->compress;
	(void) mb_initramfs_compare(a, a, &idx, NULL, 0);
	mb_initramfs_free(a);
	(void) sink;
	return 0;
}
