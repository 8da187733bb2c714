/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_EVENTS_H
#define MBOOT_EVENTS_H

#include <stdint.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_object;

/*
 * Decode an event's data into a new json-c object the caller owns (NULL only on
 * out-of-memory). Always has "kind" (e.g. "efi_variable", "efi_image_load",
 * "grub_command", "raw") and "description" (one short line for people). Data that
 * does not parse as its type says is never fatal: the object gets "kind": "raw",
 * "error": "<why>", and the data in hex. The type is untrusted: callers that act on
 * decoded data must first check mb_event_check_digest().
 */
MB_EXPORT struct json_object *mb_event_decode(const mb_event_log *log, const mb_event *ev);

typedef enum mb_digest_status {
	MB_DIGEST_UNCHECKABLE = 0, /* the digest covers something not in the log (a file, a firmware volume) */
	MB_DIGEST_MATCH,           /* every known bank equals H(data) as the spec defines it for this event */
	MB_DIGEST_MATCH_ALTERNATE, /* matches a known firmware variant of the preimage (rule says which) */
	MB_DIGEST_MISMATCH,        /* the data does not hash to the digest: the data must not be trusted */
	MB_DIGEST_NOT_EXTENDED,    /* EV_NO_ACTION: never extended, nothing to check */
} mb_digest_status;

typedef struct mb_digest_check {
	mb_digest_status status;
	const char *rule;            /* static text, e.g. "H(event data)"; NULL when uncheckable */
	uint32_t mismatched_digests; /* bit i: ev->digests[i] did not match */
} mb_digest_check;

/*
 * Recompute the digest of an event whose digest input is in the log
 * (MEASUREMENTS.md §0 strict list; GRUB's PCR 8 strings without prefix and NUL).
 */
MB_EXPORT int mb_event_check_digest(const mb_event *ev, mb_digest_check *ret) MB_WUR;
MB_EXPORT const char *mb_digest_status_name(mb_digest_status s); /* "match", "mismatch", ... */

#ifdef __cplusplus
}
#endif
#endif
