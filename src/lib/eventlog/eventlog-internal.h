/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_EVENTLOG_INTERNAL_H
#define MB_EVENTLOG_INTERNAL_H

#include <mboot/eventlog.h>

struct mb_event_log {
	uint8_t *bytes;
	size_t size;
	mb_log_format format;
	bool has_spec_id;
	mb_spec_id spec_id;
	mb_spec_id_alg banks[MB_MAX_BANKS];
	size_t n_banks;
	mb_event *events;
	size_t n_events;
	size_t cap_events;
	mb_trailer_kind trailer;
	uint64_t trailer_offset;
	uint64_t trailer_size;
};

/*
 * Called for every event of a scanned log, in order; ev (and log) are valid only during the
 * call, but ev's digests and data point into the scanned bytes. A negative return stops the scan.
 */
typedef int (*mb_event_sink)(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err);

/*
 * Check every record of a log held in memory exactly as mb_event_log_parse() does (same
 * errors, same offsets), without copying the bytes or keeping the events: each goes to
 * sink as it is read. For one-pass consumers of big logs (replay).
 */
int mb_event_log_scan(const void *data, size_t size, mb_event_sink sink, void *ctx, mb_error *err);

#define MB_SPEC_ID_SIGNATURE_03 "Spec ID Event03"

#endif
