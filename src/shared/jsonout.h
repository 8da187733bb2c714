/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSONOUT_H
#define MB_SHARED_JSONOUT_H

/*
 * JSON written straight into a buffer, for output too big to build as one json-c tree first
 * (`mboot log show --json` of a 100,000-event log). An allocation failure sets oom and makes
 * every later call a no-op: check it once at the end.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

typedef struct mb_jsonout {
	char *p;
	size_t n, cap;
	bool oom;
} mb_jsonout;

/* Flush to the file once the buffer holds this much. */
#define MB_JSONOUT_FLUSH (256u << 10)

/* Room for n more bytes at p + n (the caller advances n), or NULL. */
char *mb_jsonout_grow(mb_jsonout *b, size_t n);
/* Inline: an event's JSON is dozens of short pieces, and a call per piece showed in profiles. */
static inline char *mb_jsonout_room(mb_jsonout *b, size_t n)
{
	return b->cap - b->n >= n && !b->oom ? b->p + b->n : mb_jsonout_grow(b, n);
}

static inline void mb_jsonout_put(mb_jsonout *b, const char *s, size_t n)
{
	char *d = mb_jsonout_room(b, n);

	if (d) {
		memcpy(d, s, n);
		b->n += n;
	}
}

#define mb_jsonout_lit(b, s) mb_jsonout_put((b), (s), sizeof(s) - 1)
/* s as it is: the caller knows it needs no escaping. */
void mb_jsonout_raw(mb_jsonout *b, const char *s);
void mb_jsonout_u64(mb_jsonout *b, uint64_t v);
/* Lowercase hex of n bytes (no quotes). */
void mb_jsonout_hex(mb_jsonout *b, const uint8_t *p, size_t n);
/* A JSON string (quotes included) escaped as json-c escapes it. */
void mb_jsonout_string(mb_jsonout *b, const char *s, size_t n);
/* A json-c value (NULL prints null), byte for byte as json_object_to_json_string_ext() prints it
 * with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE. */
void mb_jsonout_json(mb_jsonout *b, json_object *o);
/* A decoded event's tree (include/mboot/events.h) as `log show --json` prints it: the bytes
 * json-c printed for the same values (members in order, no blanks, its escaping). */
struct mb_decoded_node;
void mb_jsonout_decoded(mb_jsonout *b, const struct mb_decoded_node *n);
/* Write out what the buffer holds and empty it; -EIO on a write error. */
int mb_jsonout_flush(mb_jsonout *b, FILE *f);

#endif
