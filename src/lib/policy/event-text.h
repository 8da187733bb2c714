/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The text a policy's text rules see (internal): shared by the checker and the generators. */
#ifndef MB_POLICY_EVENT_TEXT_H
#define MB_POLICY_EVENT_TEXT_H

#include <mboot/eventlog.h>
#include "lib/grub/grub.h"

/*
 * The text a rule judges, or NULL (errno ENOMEM when out of memory, else 0): the event's text
 * (mb_event_text), except that a GRUB string carries the upstream label of the kind GRUB measured it as (derived, grub_string_walk_next),
 * not the label written in the log, whichever form (upstream, Fedora's 2.02) that is.
 */
char *policy_judged_text(const mb_event *ev, grub_string_kind derived);

#endif
