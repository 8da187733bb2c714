/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSONOUT_H
#define MB_SHARED_JSONOUT_H

/*
 * JSON written straight into a buffer, for output too big to build as one tree first
 * (`mboot log show --json` of a 100,000-event log). An allocation failure sets oom and makes
 * every later call a no-op: check it once at the end.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shared/json.h"

/*
 * The structure (brackets, commas, colons) goes through jsonout_open/close/next/colon/key,
 * which lay it out: compact, or pretty as `jq .` prints it: one member or element a line, two
 * spaces a level, "key": value, an empty container as [] or {}. The writer knows its nesting,
 * so nothing re-reads the text to indent it.
 */
typedef struct jsonout {
	char *p;
	size_t n, cap;
	bool oom;
	bool pretty;
	bool opened;            /* just after '[' or '{': the next member takes no comma */
	size_t depth;           /* containers open */
} jsonout;

/* Flush to the file once the buffer holds this much. */
#define MB_JSONOUT_FLUSH (256u << 10)

/* Room for n more bytes at p + n (the caller advances n), or NULL. */
char *jsonout_grow(jsonout *b, size_t n);
/* Inline: an event's JSON is dozens of short pieces, and a call per piece showed in profiles. */
static inline char *jsonout_room(jsonout *b, size_t n)
{
	return b->cap - b->n >= n && !b->oom ? b->p + b->n : jsonout_grow(b, n);
}

static inline void jsonout_put(jsonout *b, const char *s, size_t n)
{
	char *d = jsonout_room(b, n);

	if (d) {
		memcpy(d, s, n);
		b->n += n;
	}
}

#define jsonout_lit(b, s) jsonout_put((b), (s), sizeof(s) - 1)

/*
 * A newline and the blanks of JSONOUT_FAST_DEPTH levels: a new line is one copy of constant
 * size, of which the buffer keeps 1 + 2 * depth bytes (the rest is written over next).
 */
#define JSONOUT_FAST_DEPTH 15u
#define JSONOUT_LINE_MAX (1u + 2u * JSONOUT_FAST_DEPTH)
extern const char jsonout_blanks[JSONOUT_LINE_MAX + 1];

/* Deeper than JSONOUT_FAST_DEPTH: a new line and the indentation of depth into d. */
void jsonout_line_at(char *d, size_t depth);

/* Pretty: a new line indented to the depth. */
static inline void jsonout_line(jsonout *b)
{
	size_t line = 1 + 2 * b->depth;
	char *d = jsonout_room(b, line > JSONOUT_LINE_MAX ? line : JSONOUT_LINE_MAX);

	if (!d)
		return;
	if (b->depth <= JSONOUT_FAST_DEPTH)
		memcpy(d, jsonout_blanks, JSONOUT_LINE_MAX);
	else
		jsonout_line_at(d, b->depth);
	b->n += line;
}

/* '{' or '['. */
static inline void jsonout_open(jsonout *b, char bracket)
{
	jsonout_put(b, &bracket, 1);
	b->depth++;
	b->opened = true;
}

/* '}' or ']'. */
static inline void jsonout_close(jsonout *b, char bracket)
{
	b->depth--;
	if (b->pretty && !b->opened)
		jsonout_line(b);
	b->opened = false;
	jsonout_put(b, &bracket, 1);
}

/* Before each element of an array and each member of an object: the comma but the first. */
static inline void jsonout_next(jsonout *b)
{
	if (!b->opened)
		jsonout_lit(b, ",");
	b->opened = false;
	if (b->pretty)
		jsonout_line(b);
}

/* Between a member's key and its value. */
static inline void jsonout_colon(jsonout *b)
{
	if (b->pretty)
		jsonout_lit(b, ": ");
	else
		jsonout_lit(b, ":");
}

/* A member's key, k a string literal that needs no escaping: the comma (jsonout_next), the
 * quoted key and the colon, in one piece when compact (as ",\"k\":"). */
#define jsonout_key(b, k) jsonout_key_lit((b), ",\"" k "\":", sizeof(k) + 3)
static inline __attribute__((always_inline)) void jsonout_key_lit(jsonout *b, const char *s, size_t n)
{
	/* Copies of constant size (inlined as a few moves), not ones of a computed size. */
	if (b->pretty) {
		/* newline, indentation, "\"key\": " */
		if (!b->opened)
			jsonout_lit(b, ",");
		b->opened = false;
		jsonout_line(b);
		jsonout_put(b, s + 1, n - 1);
		jsonout_lit(b, " ");
	} else if (b->opened) {
		b->opened = false;
		jsonout_put(b, s + 1, n - 1);
	} else {
		jsonout_put(b, s, n);
	}
}
/*
 * A run of pieces written through a local pointer into room taken once (jsonout_room), the
 * length set once at the end (b->n = d - b->p): through the jsonout, every store through a char
 * pointer may alias b->n, which the compiler then reloads and stores around every piece.
 * The layout is the caller's: where jsonout_next/_key would lay out, it calls these with the
 * depth and whether the member is its container's first.
 */
static inline char *jsonout_at_line(char *d, size_t depth)
{
	if (depth <= JSONOUT_FAST_DEPTH)
		memcpy(d, jsonout_blanks, JSONOUT_LINE_MAX);
	else
		jsonout_line_at(d, depth);
	return d + 1 + 2 * depth;
}

/* Room a jsonout_at_line() needs. */
static inline size_t jsonout_line_room(size_t depth)
{
	return depth <= JSONOUT_FAST_DEPTH ? JSONOUT_LINE_MAX : 1 + 2 * depth;
}

/* A member's key, as jsonout_key lays it out (k a literal needing no escaping). */
#define jsonout_at_key(d, pretty, depth, first, k) \
	jsonout_at_key_lit((d), (pretty), (depth), (first), ",\"" k "\":", sizeof(k) + 3)
static inline __attribute__((always_inline)) char *jsonout_at_key_lit(char *d, bool pretty, size_t depth,
								    bool first, const char *s, size_t n)
{
	if (!pretty && first) {
		memcpy(d, s + 1, n - 1);
		return d + n - 1;
	}
	if (!pretty) {
		memcpy(d, s, n);
		return d + n;
	}
	if (!first)
		*d++ = ',';
	d = jsonout_at_line(d, depth);
	memcpy(d, s + 1, n - 1);
	d[n - 1] = ' ';
	return d + n;
}
/* Room for a jsonout_at_u64(). */
#define JSONOUT_U64_ROOM 20u
char *jsonout_at_u64(char *d, uint64_t v);
/* Lowercase hex of n bytes (no quotes): 2 * n bytes of room. */
char *jsonout_at_hex(char *d, const uint8_t *p, size_t n);

/* s as it is: the caller knows it needs no escaping. */
void jsonout_raw(jsonout *b, const char *s);
void jsonout_u64(jsonout *b, uint64_t v);
/* Lowercase hex of n bytes (no quotes). */
void jsonout_hex(jsonout *b, const uint8_t *p, size_t n);
/* A JSON string (quotes included): \b \n \r \t \f \" \\ and \u00XX (upper case, as jansson) below 0x20 escaped. */
void jsonout_string(jsonout *b, const char *s, size_t n);
/* A tree (NULL prints null) in the writer's layout: json_write() of shared/json.h. */
void jsonout_json(jsonout *b, const json_t *o);
/* A decoded event's tree (include/mboot/events.h) as `log show --json` prints it, in the
 * buffer's layout. */
struct mb_decoded_node;
void jsonout_decoded(jsonout *b, const struct mb_decoded_node *n);
/* The PCR-values shape's "banks" object ({"sha256": {"0": "hex", ...}, ...}, banks in their
 * order, PCRs ascending): what mb_pcr_values_to_json() and log show's summary write. */
struct mb_pcr_values;
void jsonout_pcr_banks(jsonout *b, const struct mb_pcr_values *v);
/* Write out what the buffer holds and empty it; -EIO on a write error. */
int jsonout_flush(jsonout *b, FILE *f);

#endif
