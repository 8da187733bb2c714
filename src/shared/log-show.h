/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_LOG_SHOW_H
#define MB_SHARED_LOG_SHOW_H

/*
 * What `log show` and `log diff` decide about events, the same for the library's JSON documents
 * (src/lib/replay/log-json.c, diff-json.c) and the tool's text (verb-log.c, verb-log-diff.c):
 * which events a PCR selection shows, the summary's counts, when two events' digests agree.
 * Public API only, so both sides include it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mboot/events.h>
#include <mboot/replay.h>

/* The summary: the log's events, those shown, the data that does not hash to its digest (the
 * first ones by number). */
typedef struct log_summary {
	size_t events, shown, mismatches;
	uint32_t listed[MB_LOG_JSON_MISMATCHES_LISTED];
} log_summary;

/* status: the event's digest check (-1: none). */
static inline void log_summary_add(log_summary *sum, const mb_event *ev, bool shown, int status)
{
	sum->events++;
	sum->shown += shown;
	if (status != MB_DIGEST_MISMATCH)
		return;
	if (sum->mismatches < MB_LOG_JSON_MISMATCHES_LISTED)
		sum->listed[sum->mismatches] = ev->number;
	sum->mismatches++;
}

/* The digest check's status of an event (-1: none). */
static inline int log_check_status(const mb_event *ev)
{
	mb_digest_check check;

	return mb_event_check_digest(ev, &check) == 0 ? (int) check.status : -1;
}

/* Shown by a PCR selection (UINT32_MAX: all); an event of no PCR (an index over 23) only then. */
static inline bool log_pcr_selected(const mb_event *ev, uint32_t mask)
{
	return ev->pcr < MB_PCR_COUNT ? (mask & (1u << ev->pcr)) != 0 : mask == UINT32_MAX;
}

/* Both events carry a digest of alg, and the same. */
static inline bool log_digest_same(const mb_event *a, const mb_event *b, uint16_t alg)
{
	const mb_event_digest *x = mb_event_digest_for(a, alg), *y = mb_event_digest_for(b, alg);

	return x && y && x->size == y->size && memcmp(x->bytes, y->bytes, x->size) == 0;
}

#endif
