/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_DIFF_H
#define MBOOT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mb_diff_kind {
	MB_DIFF_REMOVED = 1, /* in A only */
	MB_DIFF_ADDED,       /* in B only */
	MB_DIFF_CHANGED,     /* same place, same PCR and type, other digests or data */
} mb_diff_kind;

typedef struct mb_diff_entry {
	mb_diff_kind kind;
	uint32_t pcr;
	const mb_event *a; /* NULL for ADDED */
	const mb_event *b; /* NULL for REMOVED */
} mb_diff_entry;

typedef struct mb_diff {
	size_t n_entries;
	mb_diff_entry *entries;
	uint32_t pcrs_moved;   /* PCRs whose replayed value differs in some common bank */
	mb_pcr_values *a_values, *b_values; /* the logs replayed; freed by mb_diff_done */
} mb_diff;

/*
 * Align the two logs PCR by PCR (events are compared by type, digests and data)
 * and list what was added, removed or changed, plus which PCRs that moves.
 */
MB_EXPORT int mb_log_diff(const mb_event_log *a, const mb_event_log *b, mb_diff *ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_diff_done(mb_diff *d);

#ifdef __cplusplus
}
#endif
#endif
