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

#define MB_SPEC_ID_SIGNATURE_03 "Spec ID Event03"

#endif
