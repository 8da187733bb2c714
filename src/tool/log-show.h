/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_LOG_SHOW_H
#define MB_TOOL_LOG_SHOW_H

/* What `log show` prints as text (verb-log.c) and as JSON (log-show-json.c) both. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/mboot.h>
#include "tool/tool.h"

/* The footer: the log's events, the data that does not hash to its digest. */
#define SHOW_MISMATCHES_LISTED 32u

typedef struct show_summary {
	size_t events, shown, mismatches;
	uint32_t listed[SHOW_MISMATCHES_LISTED]; /* the first mismatching events' numbers */
} show_summary;

/* status: the event's digest check (-1: none). */
void show_summary_add(show_summary *sum, const mb_event *ev, bool shown, int status);
/* The digest check's status of an event not written out (-1: none). */
int show_check_status(const mb_event *ev);
bool show_pcr_selected(const mb_event *ev, uint32_t mask);

/* `log show --json`: an exit code. */
int log_show_json(const char *path, uint32_t pcr_mask, tool_json style);

#endif
