/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_EVENTS_H
#define MBOOT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Decoded event data: a small tree of typed values (objects of named members, arrays,
 * strings, numbers, bytes, GUIDs, addresses) owned by an mb_event_decoded. The root is an
 * object that always has "kind" (e.g. "efi_variable", "efi_image_load", "grub_command", "raw")
 * and "description" (one short line for people). Data that does not parse as its type says is
 * never fatal: the result gets "kind": "raw", "error": "<why>", and the data as "hex" bytes.
 * The type is untrusted: callers that act on decoded data must first check
 * mb_event_check_digest().
 *
 * Nodes are read-only for callers and live until the next mb_event_decode() into the same
 * mb_event_decoded, or its free. Presentation is the caller's: mb_event_decoded_json() gives
 * the JSON text `mboot log show --json` prints for it.
 */
typedef enum mb_decoded_type {
	MB_DECODED_OBJECT = 1, /* named members, in order */
	MB_DECODED_ARRAY,      /* items, in order */
	MB_DECODED_STRING,     /* UTF-8 text (JSON: a string) */
	MB_DECODED_UINT,       /* unsigned integer (JSON: a number) */
	MB_DECODED_BOOL,
	MB_DECODED_BYTES,      /* binary data (JSON: lowercase hex) */
	MB_DECODED_GUID,       /* an EFI_GUID's 16 bytes as logged (JSON: "8be4df61-93ca-...") */
	MB_DECODED_ADDRESS,    /* a physical address (JSON: "0x..." hex) */
} mb_decoded_type;

typedef struct mb_event_decoded mb_event_decoded;
typedef struct mb_decoded_node mb_decoded_node;

struct mb_decoded_node {
	mb_decoded_type type;
	const char *key;             /* member name inside an object; NULL for array items and the root */
	const mb_decoded_node *next; /* next member or item; NULL after the last */
	union {
		struct {
			const char *text; /* NUL-terminated after len bytes */
			size_t len;
		} string;
		uint64_t uint; /* UINT, ADDRESS */
		bool boolean;
		struct {
			const uint8_t *data; /* GUID: 16 bytes */
			size_t len;
		} bytes;
		struct {
			const mb_decoded_node *first, *last;
			size_t count;
		} list; /* OBJECT, ARRAY */
	} v;
	mb_event_decoded *owner; /* the result holding this node */
};

/* A holder for decoded events; one can be reused for event after event (NULL on out-of-memory). */
MB_EXPORT mb_event_decoded *mb_event_decoded_new(void);
MB_EXPORT void mb_event_decoded_free(mb_event_decoded *d);
/*
 * Decode an event's data into d, replacing what d held. 0, or -ENOMEM / -EINVAL (no event):
 * then d holds nothing (its root is NULL).
 */
MB_EXPORT int mb_event_decode(const mb_event_log *log, const mb_event *ev, mb_event_decoded *d) MB_WUR;
MB_EXPORT const mb_decoded_node *mb_event_decoded_root(const mb_event_decoded *d);
MB_EXPORT const char *mb_event_decoded_kind(const mb_event_decoded *d);        /* "" when empty */
MB_EXPORT const char *mb_event_decoded_description(const mb_event_decoded *d); /* "" when empty */
/* The result as one JSON object (malloc'd, NUL-terminated; NULL on out-of-memory or when empty). */
MB_EXPORT char *mb_event_decoded_json(const mb_event_decoded *d);

/*
 * The event as one JSON object, as `mboot log show --json` writes each event (docs/json.md:
 * index, offset, record_size, pcr, type, type_value, digests, data, decoded, digest_check,
 * digest_rule), pretty (two spaces a level) or compact, without a newline. Malloc'd; NULL on
 * out-of-memory.
 */
MB_EXPORT char *mb_event_to_json(const mb_event_log *log, const mb_event *ev, bool pretty);

/* Just the description of an event's data (malloc'd; NULL on out-of-memory). */
MB_EXPORT char *mb_event_description(const mb_event_log *log, const mb_event *ev);

/* The member of an object with this key, or NULL (also when obj is NULL or not an object). */
MB_EXPORT const mb_decoded_node *mb_decoded_get(const mb_decoded_node *obj, const char *key);
/* The text of a STRING node, or NULL for any other node. */
MB_EXPORT const char *mb_decoded_string(const mb_decoded_node *n);

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
