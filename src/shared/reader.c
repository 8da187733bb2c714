/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "shared/reader.h"

void reader_init(byte_reader *r, const void *data, size_t size, uint64_t base)
{
	r->data = data;
	r->size = data ? size : 0;
	r->pos = 0;
	r->base = base;
}

int read_skip(byte_reader *r, size_t n)
{
	return read_bytes(r, n, NULL);
}

int read_copy(byte_reader *r, void *dst, size_t n)
{
	const uint8_t *p;
	int rc = read_bytes(r, n, &p);

	if (rc < 0)
		return rc;
	if (n)
		memcpy(dst, p, n);
	return 0;
}

int read_sub(byte_reader *r, size_t n, byte_reader *child)
{
	uint64_t at = reader_offset(r);
	const uint8_t *p;
	int rc = read_bytes(r, n, &p);

	if (rc < 0)
		return rc;
	reader_init(child, p, n, at);
	return 0;
}

int read_u8(byte_reader *r, uint8_t *ret)
{
	const uint8_t *p;

	if (read_bytes(r, 1, &p) < 0)
		return -EBADMSG;
	*ret = p[0];
	return 0;
}

int read_u64le(byte_reader *r, uint64_t *ret)
{
	uint32_t lo, hi;

	if (reader_left(r) < 8)
		return -EBADMSG;
	if (read_u32le(r, &lo) < 0 || read_u32le(r, &hi) < 0)
		return -EBADMSG;
	*ret = (uint64_t) hi << 32 | lo;
	return 0;
}

int read_u16be(byte_reader *r, uint16_t *ret)
{
	const uint8_t *p;

	if (read_bytes(r, 2, &p) < 0)
		return -EBADMSG;
	*ret = (uint16_t) (p[0] << 8 | p[1]);
	return 0;
}

int read_u32be(byte_reader *r, uint32_t *ret)
{
	const uint8_t *p;

	if (read_bytes(r, 4, &p) < 0)
		return -EBADMSG;
	*ret = (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
	return 0;
}

int peek_u32le(const byte_reader *r, size_t at, uint32_t *ret)
{
	byte_reader copy = *r;

	if (read_skip(&copy, at) < 0)
		return -EBADMSG;
	return read_u32le(&copy, ret);
}

bool reader_rest_is(const byte_reader *r, uint8_t b)
{
	size_t i;

	if (reader_left(r) == 0)
		return false;
	for (i = r->pos; i < r->size; i++)
		if (r->data[i] != b)
			return false;
	return true;
}
