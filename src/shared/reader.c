/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "shared/reader.h"

void mb_reader_init(mb_reader *r, const void *data, size_t size, uint64_t base)
{
	r->data = data;
	r->size = data ? size : 0;
	r->pos = 0;
	r->base = base;
}

int mb_read_bytes(mb_reader *r, size_t n, const uint8_t **ret)
{
	if (n > mb_reader_left(r))
		return -EBADMSG;
	if (ret)
		*ret = r->data + r->pos;
	r->pos += n;
	return 0;
}

int mb_read_skip(mb_reader *r, size_t n)
{
	return mb_read_bytes(r, n, NULL);
}

int mb_read_copy(mb_reader *r, void *dst, size_t n)
{
	const uint8_t *p;
	int rc = mb_read_bytes(r, n, &p);

	if (rc < 0)
		return rc;
	if (n)
		memcpy(dst, p, n);
	return 0;
}

int mb_read_sub(mb_reader *r, size_t n, mb_reader *child)
{
	uint64_t at = mb_reader_offset(r);
	const uint8_t *p;
	int rc = mb_read_bytes(r, n, &p);

	if (rc < 0)
		return rc;
	mb_reader_init(child, p, n, at);
	return 0;
}

int mb_read_u8(mb_reader *r, uint8_t *ret)
{
	const uint8_t *p;

	if (mb_read_bytes(r, 1, &p) < 0)
		return -EBADMSG;
	*ret = p[0];
	return 0;
}

int mb_read_u16le(mb_reader *r, uint16_t *ret)
{
	const uint8_t *p;

	if (mb_read_bytes(r, 2, &p) < 0)
		return -EBADMSG;
	*ret = (uint16_t) (p[0] | (p[1] << 8));
	return 0;
}

int mb_read_u32le(mb_reader *r, uint32_t *ret)
{
	const uint8_t *p;

	if (mb_read_bytes(r, 4, &p) < 0)
		return -EBADMSG;
	*ret = (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
	return 0;
}

int mb_read_u64le(mb_reader *r, uint64_t *ret)
{
	uint32_t lo, hi;

	if (mb_reader_left(r) < 8)
		return -EBADMSG;
	if (mb_read_u32le(r, &lo) < 0 || mb_read_u32le(r, &hi) < 0)
		return -EBADMSG;
	*ret = (uint64_t) hi << 32 | lo;
	return 0;
}

int mb_read_u16be(mb_reader *r, uint16_t *ret)
{
	const uint8_t *p;

	if (mb_read_bytes(r, 2, &p) < 0)
		return -EBADMSG;
	*ret = (uint16_t) (p[0] << 8 | p[1]);
	return 0;
}

int mb_read_u32be(mb_reader *r, uint32_t *ret)
{
	const uint8_t *p;

	if (mb_read_bytes(r, 4, &p) < 0)
		return -EBADMSG;
	*ret = (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
	return 0;
}

int mb_peek_u32le(const mb_reader *r, size_t at, uint32_t *ret)
{
	mb_reader copy = *r;

	if (mb_read_skip(&copy, at) < 0)
		return -EBADMSG;
	return mb_read_u32le(&copy, ret);
}

bool mb_reader_rest_is(const mb_reader *r, uint8_t b)
{
	size_t i;

	if (mb_reader_left(r) == 0)
		return false;
	for (i = r->pos; i < r->size; i++)
		if (r->data[i] != b)
			return false;
	return true;
}
