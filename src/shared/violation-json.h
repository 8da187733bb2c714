/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_VIOLATION_JSON_H
#define MB_SHARED_VIOLATION_JSON_H

/*
 * One policy violation as JSON, written once for the attest verdict (src/lib/attest) and
 * `mboot verify --json` (src/lib/verify/verify-json.c): the two must agree key for key. Each
 * caller fills the view from what it keeps (the verdict its copies, verify the policy result and
 * the log).
 */
#include <stddef.h>
#include <stdint.h>

#include "shared/json.h"

typedef struct violation_view {
	uint32_t pcr;
	int64_t event;                 /* firmware event number, or -1 */
	const char *type;              /* the event's type name, with an event */
	int64_t record;                /* userspace record index, or -1 (never with an event) */
	const char *text;              /* NULL: none */
	size_t text_len;
	const uint8_t *digest;         /* the judged bank's digest of the event, NULL: not written */
	size_t digest_size;
	const char *reason;
	char *const *closest_rules;
	size_t n_closest_rules;
} violation_view;

/* {"pcr", ["event", "type" | "userspace_record"], ["text"], ["digest"], "reason", ["closest_rules"]} */
json_t *violation_json_new(const violation_view *v);

#endif
