/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_EVENTS_EVENT_JSON_H
#define MB_EVENTS_EVENT_JSON_H

#include <mboot/events.h>
#include "shared/jsonout.h"

/*
 * One event as JSON (index, offset, record_size, pcr, type, digests, data, decoded, digest
 * check), written into b at its depth and in its layout: the one writer of the event shape
 * (docs/json.md), for mb_event_to_json, the log's document (log-json.c) and log diff's sides.
 * dec: a holder reused from event to event; checked: the event's mb_event_check_digest()
 * result when the caller has it, else NULL. Out of memory sets b->oom. Returns the event's
 * mb_digest_status (-1: not checked).
 */
int event_json_write(jsonout *b, const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec,
		     const mb_digest_check *checked);

#endif
