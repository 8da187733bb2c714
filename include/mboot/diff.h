/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_DIFF_H
#define MBOOT_DIFF_H

#include <stdbool.h>
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
	MB_DIFF_CHANGED,     /* same place, same PCR and type, other digests or measured data */
} mb_diff_kind;

/* What differs between the two events of a MB_DIFF_CHANGED entry (bits of mb_diff_entry.differs). */
enum {
	MB_DIFF_DIGESTS = 1u << 0, /* a bank both events carry holds other digests, or they share no bank */
	MB_DIFF_DATA = 1u << 1,    /* the event data (bytes) differ */
};

typedef struct mb_diff_entry {
	mb_diff_kind kind;
	uint32_t pcr;
	const mb_event *a; /* NULL for ADDED */
	const mb_event *b; /* NULL for REMOVED */
	uint32_t differs;  /* CHANGED: MB_DIFF_DIGESTS and/or MB_DIFF_DATA; 0 otherwise */
	/*
	 * CHANGED: the data of a or b is what its digest covers (mb_event_check_digest() can
	 * check it, or EV_NO_ACTION: the data is all there is). Otherwise the digest covers
	 * something not in the log (an image, a file) and the data only says where it was.
	 */
	bool data_measured;
} mb_diff_entry;

typedef struct mb_diff {
	size_t n_entries;
	mb_diff_entry *entries;
	uint32_t pcrs_moved;   /* PCRs whose replayed value differs in some common bank */
	mb_pcr_values *a_values, *b_values; /* the logs replayed; freed by mb_diff_done */
} mb_diff;

/*
 * Align the two logs PCR by PCR and list what was added, removed or changed, plus which PCRs
 * that moves. Two events are the same when their type and the digests of every bank both
 * carry agree, and so does their data where a difference means something: EV_NO_ACTION events
 * (not extended: the data is all there is) and events whose data does not hash to their
 * digest are compared byte for byte. Otherwise equal digests mean equal measurements, and data
 * the digest does not cover (an image's load address, GRUB's label) is not a difference.
 */
MB_EXPORT int mb_log_diff(const mb_event_log *a, const mb_event_log *b, mb_diff *ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_diff_done(mb_diff *d);

/* "added", "removed", "changed". */
MB_EXPORT const char *mb_diff_kind_name(mb_diff_kind k);

/*
 * The diff as `mboot log diff --json` writes it (docs/json.md): {"entries": [{"change", "pcr",
 * "a", "b" (each side's event as mb_event_to_json writes it, or null), "differs" (a changed
 * entry's: {"digests": [banks whose digests differ], "data", "data_measured"})}], "pcrs_moved":
 * [PCRs], "identical"}, pretty or compact, without a newline. a and b: the logs d was made
 * from. Malloc'd; NULL on out-of-memory.
 */
MB_EXPORT char *mb_diff_to_json(const mb_diff *d, const mb_event_log *a, const mb_event_log *b, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
