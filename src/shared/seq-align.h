/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_SEQ_ALIGN_H
#define MB_SHARED_SEQ_ALIGN_H

/*
 * Two event sequences lined up as diff(1) lines up text: the common prefix and suffix are
 * skipped, the middles aligned by their longest common subsequence (when (na+1)(nb+1) cells
 * fit in max_cells; else the whole middle is one gap). In each gap between matched elements,
 * a's removed and b's added elements are paired in order when pairable() says so (the same
 * event type: one event changed), the rest reported as removed or added. Used by `log diff`
 * and by the explanation of a refused unseal against an event summary.
 */

#include <stdbool.h>
#include <stddef.h>

typedef enum seq_step { SEQ_CHANGED, SEQ_REMOVED, SEQ_ADDED } seq_step;

typedef struct seq_align_ops {
	bool (*same)(void *ctx, size_t i, size_t j);     /* a[i] and b[j] are the same element */
	bool (*pairable)(void *ctx, size_t i, size_t j); /* a[i] became b[j] */
	/* One step, in order: CHANGED (i, j), REMOVED (i, -), ADDED (-, j); negative stops. */
	int (*emit)(void *ctx, seq_step step, size_t i, size_t j);
} seq_align_ops;

/* 0, -ENOMEM, or what emit() returned. */
int seq_align(size_t na, size_t nb, size_t max_cells, const seq_align_ops *ops, void *ctx);

#endif
