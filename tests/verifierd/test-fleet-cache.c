/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-cache.c's tables as the machines' rows use them: a value put in place of another is the
 * one found, a dropped one is found in neither table, and a value still held by a reader lives
 * until that reader lets go (ASan finds it otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verifierd/fleet-internal.h"

static int freed;

static void free_value(void *p)
{
	freed++;
	free(p);
}

static int *value(int v)
{
	int *p = malloc(sizeof(*p));

	assert_non_null(p);
	*p = v;
	return p;
}

static void key_of(int k, uint8_t key[32])
{
	memset(key, 0, 32);
	memcpy(key, &k, sizeof(k)); /* its first bytes pick the slot */
	key[31] = 1;
}

/* The value kept under k, -1 when none. */
static int found(fleet_cache *c, int k)
{
	uint8_t key[32];
	fleet_cache_entry *e;
	int v;

	key_of(k, key);
	if (!(e = fleet_cache_get(c, key)))
		return -1;
	v = *(const int *) fleet_cache_value(e);
	fleet_cache_release(e);
	return v;
}

static void put(fleet_cache *c, int k, int v)
{
	uint8_t key[32];

	key_of(k, key);
	fleet_cache_put(c, key, value(v), free_value);
}

static void drop(fleet_cache *c, int k)
{
	uint8_t key[32];

	key_of(k, key);
	fleet_cache_drop(c, key);
}

static void test_put_replaces(void **state)
{
	fleet_cache *c;
	uint8_t key[32];

	(void) state;
	freed = 0;
	assert_int_equal(fleet_cache_new(4, &c), 0);
	put(c, 1, 10);
	assert_int_equal(found(c, 1), 10);
	put(c, 1, 11);
	assert_int_equal(found(c, 1), 11);
	assert_int_equal(freed, 1);
	/* add keeps the first; put does not */
	key_of(1, key);
	fleet_cache_add(c, key, value(12), free_value);
	assert_int_equal(found(c, 1), 11);
	assert_int_equal(fleet_cache_count(c), 1);
	fleet_cache_free(c);
	assert_int_equal(freed, 3);
}

static void test_drop_in_both_tables(void **state)
{
	fleet_cache *c;

	(void) state;
	freed = 0;
	assert_int_equal(fleet_cache_new(2, &c), 0);
	put(c, 1, 10);
	put(c, 2, 20);
	put(c, 3, 30); /* the table was full: 1 and 2 are in the old one now */
	assert_int_equal(found(c, 3), 30);
	put(c, 1, 11); /* into the current table; the old one's 1 is gone */
	drop(c, 2);
	assert_int_equal(found(c, 2), -1);
	assert_int_equal(found(c, 1), 11);
	put(c, 4, 40); /* full again: the old table (with the old 1 and 2) is freed */
	assert_int_equal(found(c, 1), 11);
	assert_int_equal(found(c, 2), -1);
	drop(c, 1);
	assert_int_equal(found(c, 1), -1);
	put(c, 1, 12); /* kept again after a drop */
	assert_int_equal(found(c, 1), 12);
	assert_int_equal(found(c, 3), 30);
	fleet_cache_free(c);
	assert_int_equal(freed, 6);
}

static void test_reader_outlives_replace_and_drop(void **state)
{
	fleet_cache *c;
	fleet_cache_entry *e;
	uint8_t key[32];

	(void) state;
	freed = 0;
	assert_int_equal(fleet_cache_new(4, &c), 0);
	put(c, 1, 10);
	key_of(1, key);
	e = fleet_cache_get(c, key);
	assert_non_null(e);
	put(c, 1, 11);
	drop(c, 1);
	assert_int_equal(freed, 0); /* the reader still holds 10 */
	assert_int_equal(*(const int *) fleet_cache_value(e), 10);
	fleet_cache_release(e);
	assert_int_equal(freed, 1);
	assert_int_equal(found(c, 1), -1);
	fleet_cache_free(c);
	assert_int_equal(freed, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_replaces),
		cmocka_unit_test(test_drop_in_both_tables),
		cmocka_unit_test(test_reader_outlives_replace_and_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
