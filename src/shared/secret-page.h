/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_SECRET_PAGE_H
#define MB_SHARED_SECRET_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Memory for a secret in clear (a disk key, a sealed secret, an SSH host key): whole pages,
 * locked when the system lets us (never swapped out), left out of core dumps, wiped when freed.
 * size is the caller's: how much of the cap it holds.
 */
typedef struct secret_page {
	uint8_t *p;
	size_t size, cap;
	bool locked;
} secret_page;

/* At least min_size bytes (one page for 0); 0, or -ENOMEM. */
int secret_page_alloc(secret_page *s, size_t min_size);
/* Wipe and free; s may be zeroed or already freed. */
void secret_page_free(secret_page *s);

#endif
