/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_EVENTS_DIGEST_CHECK_H
#define MB_LIB_EVENTS_DIGEST_CHECK_H
#include <mboot/eventlog.h>
#include <mboot/events.h>

/*
 * mb_event_check_digest() of every event of a parsed log, index for index, computed on the
 * first call and kept with the log (safe from several threads). NULL when out of memory
 * or for a log without events: callers then check event by event.
 */
const mb_digest_check *event_log_digest_checks(const mb_event_log *log);

#endif
