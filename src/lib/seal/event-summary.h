/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event summary of a sealed secret (mboot/seal.h, docs/luks.md): what the event log of
 * sealing said about the sealed PCRs, small enough for a LUKS2 header, so that a refused
 * unseal can still name the events of today that changed. Internal to the library.
 *
 * Layout (little-endian): a u32 of the PCRs summarised (bit n: PCR n), then one
 * MB_EVENT_SUMMARY_RECORD-byte record per event that extends one of them, in log order:
 * u8 PCR, u32 event type, the first MB_EVENT_SUMMARY_PREFIX bytes of the event's digest in
 * the sealed bank. A sealed PCR missing from the u32 had more events than the cap left room
 * for: none of its events are kept.
 */
#ifndef MB_LIB_SEAL_EVENT_SUMMARY_H
#define MB_LIB_SEAL_EVENT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/diff.h>
#include <mboot/eventlog.h>
#include <mboot/seal.h>

#define EVENT_SUMMARY_HEADER 4

/*
 * The summary of log's events in the PCRs of mask, with their digests of values' bank; the
 * log must replay to values in each of those PCRs (-EINVAL naming the first that does
 * not: a summary of another boot would name the wrong events), and carry that bank.
 * PCRs are taken in index order while their events fit under MB_EVENT_SUMMARY_MAX_EVENTS.
 */
int event_summary_make(const mb_event_log *log, const mb_pcr_bank *values, uint32_t mask, uint8_t **ret,
		       size_t *ret_size, mb_error *err);

/*
 * Check a summary (untrusted) for a secret sealed to the PCRs of sealed_mask: the length,
 * the cap, the summarised PCRs among the sealed ones, every record's PCR among the
 * summarised ones. -EBADMSG saying what is wrong.
 */
int event_summary_check(const uint8_t *p, size_t n, uint32_t sealed_mask, mb_error *err);

/* Of a checked summary: the PCRs summarised, and the number of events kept. */
uint32_t event_summary_pcrs(const uint8_t *p, size_t n);
size_t event_summary_count(size_t n);

/* One difference between the events of sealing (the summary) and today's, in one PCR. */
typedef struct summary_change {
	mb_diff_kind kind;                          /* MB_DIFF_CHANGED, _ADDED or _REMOVED */
	size_t then_pos;                            /* CHANGED, REMOVED: which of the PCR's events at sealing, from 0 */
	uint32_t then_type;
	uint8_t then_prefix[MB_EVENT_SUMMARY_PREFIX];
	const mb_event *now;                        /* CHANGED, ADDED: today's event (today's log's) */
} summary_change;

/*
 * The events of PCR pcr (summarised in the checked summary p) that differ today: today's
 * events of that PCR aligned against the summary's by (type, digest prefix in bank alg) —
 * a longest common subsequence, same-typed neighbours of a gap paired as changes — in
 * order. *ret (malloc'd; NULL when *ret_n is 0). -ENOMEM only.
 */
int event_summary_compare(const uint8_t *p, size_t n, uint16_t alg, const mb_event_log *today, uint32_t pcr,
			  summary_change **ret, size_t *ret_n);

#endif
