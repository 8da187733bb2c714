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
	/* The digests of every kept event, in event order: each event's digests point in here. One
	 * array for the log, not one allocation per event (the parser is benchmarked). */
	mb_event_digest *digests;
	size_t n_digests;
	size_t cap_digests;
	mb_trailer_kind trailer;
	uint64_t trailer_offset;
	uint64_t trailer_size;
	/* Each event's data check, computed once on first use (event_log_digest_checks()) and
	 * published atomically: verifying a log checks every PCR of every bank, and a policy
	 * then judges the same events; hashing each event's data again each time cost half of
	 * judging attestation evidence. */
	struct mb_digest_check *digest_checks;
};

#define MB_SPEC_ID_SIGNATURE_03 "Spec ID Event03"

#endif
