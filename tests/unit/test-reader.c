/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shared/reader.h"

static void test_little_endian(void **state)
{
	static const uint8_t b[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
	byte_reader r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	reader_init(&r, b, sizeof(b), 100);
	assert_int_equal(read_u8(&r, &u8), 0);
	assert_int_equal(u8, 0x01);
	assert_int_equal(read_u16le(&r, &u16), 0);
	assert_int_equal(u16, 0x0302);
	assert_int_equal(read_u32le(&r, &u32), 0);
	assert_int_equal(u32, 0x07060504);
	assert_int_equal(read_u64le(&r, &u64), 0);
	assert_true(u64 == 0x0f0e0d0c0b0a0908ull);
	assert_int_equal(reader_offset(&r), 115);
	assert_int_equal(reader_left(&r), 0);
}

static void test_no_read_past_end(void **state)
{
	static const uint8_t b[] = { 1, 2, 3 };
	byte_reader r, child;
	uint32_t u32;
	const uint8_t *p;

	reader_init(&r, b, sizeof(b), 0);
	assert_int_equal(read_u32le(&r, &u32), -EBADMSG);
	/* A failed read does not move. */
	assert_int_equal(reader_left(&r), 3);
	assert_int_equal(read_bytes(&r, SIZE_MAX, &p), -EBADMSG);
	assert_int_equal(read_skip(&r, 4), -EBADMSG);
	assert_int_equal(read_sub(&r, 2, &child), 0);
	assert_int_equal(reader_left(&child), 2);
	assert_int_equal(reader_offset(&child), 0);
	/* The child cannot see past its field. */
	assert_int_equal(read_u32le(&child, &u32), -EBADMSG);
	assert_int_equal(reader_offset(&r), 2);
	assert_true(reader_rest_is(&r, 3));
	assert_false(reader_rest_is(&r, 0));
}

static void test_big_endian(void **state)
{
	static const uint8_t b[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc };
	byte_reader r;
	uint16_t u16;
	uint32_t u32;

	reader_init(&r, b, sizeof(b), 0);
	assert_int_equal(read_u16be(&r, &u16), 0);
	assert_int_equal(u16, 0x1234);
	assert_int_equal(read_u32be(&r, &u32), 0);
	assert_int_equal(u32, 0x56789abc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_little_endian),
		cmocka_unit_test(test_no_read_past_end),
		cmocka_unit_test(test_big_endian),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
