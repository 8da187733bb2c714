/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_READER_H
#define MB_SHARED_READER_H

/*
 * The bounds-checked little-endian reader. Every parser of untrusted bytes in
 * mboot reads through this and nothing else: each call checks the remaining
 * length before it touches a byte (comparing against "left", so nothing can
 * overflow), advances only on success, and returns 0 or -EBADMSG.
 * A child reader (read_sub) confines a sub-parser to one field.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MB_READER_WUR __attribute__((warn_unused_result))

typedef struct byte_reader {
	const uint8_t *data;
	size_t size;
	size_t pos;
	uint64_t base; /* absolute offset of data[0] in the original input, for messages */
} byte_reader;

void reader_init(byte_reader *r, const void *data, size_t size, uint64_t base);

static inline size_t reader_left(const byte_reader *r) { return r->size - r->pos; }
static inline uint64_t reader_offset(const byte_reader *r) { return r->base + r->pos; }
static inline const uint8_t *reader_cur(const byte_reader *r) { return r->data + r->pos; }

/* *ret points into the input; n bytes are valid there. Inline, as the two getters below: the
 * event log's scanner calls them a few times an event, and a call each showed in profiles. */
static inline MB_READER_WUR int read_bytes(byte_reader *r, size_t n, const uint8_t **ret)
{
	if (n > reader_left(r))
		return -EBADMSG;
	if (ret)
		*ret = r->data + r->pos;
	r->pos += n;
	return 0;
}

static inline MB_READER_WUR int read_u16le(byte_reader *r, uint16_t *ret)
{
	const uint8_t *p;

	if (read_bytes(r, 2, &p) < 0)
		return -EBADMSG;
	*ret = (uint16_t) (p[0] | (p[1] << 8));
	return 0;
}

static inline MB_READER_WUR int read_u32le(byte_reader *r, uint32_t *ret)
{
	const uint8_t *p;

	if (read_bytes(r, 4, &p) < 0)
		return -EBADMSG;
	*ret = (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
	return 0;
}

int read_u8(byte_reader *r, uint8_t *ret) MB_READER_WUR;
int read_u64le(byte_reader *r, uint64_t *ret) MB_READER_WUR;
int read_u16be(byte_reader *r, uint16_t *ret) MB_READER_WUR;
int read_u32be(byte_reader *r, uint32_t *ret) MB_READER_WUR;
int read_copy(byte_reader *r, void *dst, size_t n) MB_READER_WUR;
int read_skip(byte_reader *r, size_t n) MB_READER_WUR;
/* A child reader over the next n bytes; the parent moves past them. */
int read_sub(byte_reader *r, size_t n, byte_reader *child) MB_READER_WUR;
/* Same as the getters, without moving. */
int peek_u32le(const byte_reader *r, size_t at, uint32_t *ret) MB_READER_WUR;
/* True when every remaining byte equals b (and at least one remains). */
bool reader_rest_is(const byte_reader *r, uint8_t b);

#endif
