/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_IMA_INTERNAL_H
#define MB_LIB_IMA_INTERNAL_H

#include <mboot/ima.h>

/* What the template hash covers, kept per entry: for every template but legacy "ima" the
 * template data (each field as u32 length and bytes), for "ima" the SHA-1 digest and the name
 * padded with zeros to 256 bytes. Replay hashes it again with each bank's algorithm. */
typedef struct ima_entry_store {
	uint8_t *mem;    /* one block an entry (in the log's chunks): fields, strings, rebuilt bytes */
	const uint8_t *hashed;
	size_t hashed_size;
	char *algo, *modsig_algo; /* d-ng's and d-modsig's algorithm without the colon, 33 bytes each in mem */
} ima_entry_store;

/* Entries' blocks are carved from chunks: one allocation per entry cost more than parsing it. */
typedef struct ima_chunk {
	struct ima_chunk *next;
	size_t size, used;
	_Alignas(16) uint8_t data[];
} ima_chunk;

struct mb_ima_log {
	size_t n, cap, n_bad;
	size_t hint;     /* the entries' array's first size */
	ima_chunk *chunks; /* the newest first */
	mb_ima_entry *entries;
	ima_entry_store *store;
	uint8_t *data; /* a binary list's copy: fields point into it */
	bool ascii, has_tail;
	uint64_t tail_offset;
	size_t tail_size;
};

/* mem of n bytes for an entry, zeroed, and after them its two algorithm names; NULL on ENOMEM.
 * It lives as long as the log. */
uint8_t *ima_entry_mem(mb_ima_log *log, ima_entry_store *s, size_t n);
/* The template hash of e's fields with alg into out (alg's size). */
int ima_template_hash(const mb_ima_log *log, size_t i, uint16_t alg, uint8_t *out);
/* Decode e's fields by its template (d-ng, n-ng, ...) and check its template hash. */
int ima_entry_finish(mb_ima_log *log, size_t i, mb_error *err);
/* mb_ima_replay of only the banks algs names (NULL: every bank mboot computes); the other
 * banks are left out of the sets. Its errors are the full replay's. */
int ima_replay_banks(const mb_ima_log *log, const uint16_t *algs, size_t n_algs, mb_pcr_values *recomputed,
		     mb_pcr_values *padded, mb_error *err);
/* The algorithm of a template hash of size bytes (0 when none). */
uint16_t ima_alg_of_size(size_t size);

#endif
