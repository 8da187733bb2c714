/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_HEX_H
#define MB_SHARED_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Lowercase hex of n bytes into out, which must hold 2n+1 bytes. Returns out. */
char *hex_format(const uint8_t *in, size_t n, char *out);
/* Malloc'd lowercase hex; NULL on OOM. */
char *hex_dup(const uint8_t *in, size_t n);
/* Parse exactly out_size bytes of hex (either case); 0 or -EINVAL. */
int hex_parse(const char *s, size_t len, uint8_t *out, size_t out_size);

/* An EFI_GUID as text, "8be4df61-93ca-11d2-aa0d-00e098032b8c" (36 characters and a NUL). Returns out. */
#define MB_GUID_STR 37
char *guid_format(const uint8_t g[16], char out[MB_GUID_STR]);

#endif
