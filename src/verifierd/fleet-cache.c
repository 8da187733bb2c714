/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the verifier keeps between attestations, by a 32-byte key (a SHA-256), shared by the
 * worker threads with a reference each: the verdicts of boots judged (each boot judged once:
 * mb_attest_verify's judged_lookup, keyed by boot key and policy; the judgment is a function of
 * the logs, the values they replay to, the policy and the options alone, so one entry may serve
 * any machine with the same boot) and the machine records parsed (their AK imported into
 * OpenSSL once, keyed by the record's SHA-256).
 *
 * Two tables of at most max entries: the current one takes new entries; once full it becomes
 * the old one and the old one is dropped, and an entry found in the old table is copied into
 * the current one. So what is in use stays, and memory is bounded by 2 * max verdicts.
 *
 * The machines' rows (fleet-machine.c) are replaced as the verifier changes them, and dropped
 * when it cannot know how they changed: an entry dropped is marked gone in both tables (no
 * allocation, so a drop never fails) and found no more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifierd/fleet-internal.h"

struct fleet_cache_entry {
	uint8_t key[32];
	void *value;
	void (*free_value)(void *value);
	atomic_uint refs;
	atomic_bool gone; /* dropped: not found any more, freed with its last reference */
};

typedef struct cache_table {
	fleet_cache_entry **slots; /* open addressing, linear probing, capacity a power of two */
	size_t cap, n;
} cache_table;

struct fleet_cache {
	pthread_mutex_t lock;
	size_t max;
	cache_table cur, old;
};

void fleet_cache_release(fleet_cache_entry *e)
{
	if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
		e->free_value(e->value);
		free(e);
	}
}

static void table_drop(cache_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		fleet_cache_release(t->slots[i]);
	free(t->slots);
	*t = (cache_table) { 0 };
}

static int table_init(cache_table *t, size_t max)
{
	size_t cap = 16;

	while (cap < 2 * max)
		cap *= 2;
	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->cap = cap;
	t->n = 0;
	return 0;
}

/* The keys are SHA-256 output: their first bytes are as good a hash as any. */
static size_t slot_of(const cache_table *t, const uint8_t key[32])
{
	uint64_t h;

	memcpy(&h, key, sizeof(h));
	return (size_t) h & (t->cap - 1);
}

/* The slot of key in t, or of the empty slot that ends its probe (or t->cap: none). */
static size_t table_slot(const cache_table *t, const uint8_t key[32])
{
	size_t i;

	if (!t->cap)
		return 0;
	for (i = slot_of(t, key); t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (memcmp(t->slots[i]->key, key, 32) == 0)
			break;
	return i;
}

static fleet_cache_entry *table_find(const cache_table *t, const uint8_t key[32])
{
	return t->cap ? t->slots[table_slot(t, key)] : NULL;
}

static void mark_gone(fleet_cache_entry *e)
{
	if (e)
		atomic_store(&e->gone, true);
}

/* Takes a reference of e; the table has room (n < max <= cap / 2). */
static void table_put(cache_table *t, fleet_cache_entry *e)
{
	size_t i;

	for (i = slot_of(t, e->key); t->slots[i]; i = (i + 1) & (t->cap - 1))
		;
	atomic_fetch_add(&e->refs, 1);
	t->slots[i] = e;
	t->n++;
}

int fleet_cache_new(size_t max, fleet_cache **ret)
{
	fleet_cache *c;

	*ret = NULL;
	if (!max)
		return 0;
	if (max > SIZE_MAX / 8 || !(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	c->max = max;
	if (table_init(&c->cur, max) < 0) {
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->lock, NULL);
	*ret = c;
	return 0;
}

void fleet_cache_free(fleet_cache *c)
{
	if (!c)
		return;
	table_drop(&c->cur);
	table_drop(&c->old);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Makes room in cur: a full one becomes old (the old one handed back in *dropped, to be freed
 * outside the lock). Under the lock. */
static int make_room(fleet_cache *c, cache_table *dropped)
{
	cache_table fresh;

	if (c->cur.n < c->max)
		return 0;
	if (table_init(&fresh, c->max) < 0)
		return -ENOMEM;
	*dropped = c->old;
	c->old = c->cur;
	c->cur = fresh;
	return 0;
}

fleet_cache_entry *fleet_cache_get(fleet_cache *c, const uint8_t key[32])
{
	cache_table dropped = { 0 };
	fleet_cache_entry *e;

	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	e = table_find(&c->cur, key);
	if (!e && (e = table_find(&c->old, key)) && !atomic_load(&e->gone) && make_room(c, &dropped) >= 0 &&
	    !table_find(&c->cur, key))
		table_put(&c->cur, e); /* in use: kept when the old table goes */
	if (e && atomic_load(&e->gone))
		e = NULL;
	if (e)
		atomic_fetch_add(&e->refs, 1);
	pthread_mutex_unlock(&c->lock);
	table_drop(&dropped);
	return e;
}

const void *fleet_cache_value(const fleet_cache_entry *e)
{
	return e->value;
}

/* An entry of value under key with the caller's reference; NULL (value freed) without memory. */
static fleet_cache_entry *entry_new(const uint8_t key[32], void *value, void (*free_value)(void *value))
{
	fleet_cache_entry *e = calloc(1, sizeof(*e));

	if (!e) {
		free_value(value);
		return NULL;
	}
	memcpy(e->key, key, 32);
	e->value = value;
	e->free_value = free_value;
	atomic_init(&e->refs, 1);
	return e;
}

void fleet_cache_add(fleet_cache *c, const uint8_t key[32], void *value, void (*free_value)(void *value))
{
	cache_table dropped = { 0 };
	fleet_cache_entry *e;

	if (!c) {
		free_value(value);
		return;
	}
	if (!(e = entry_new(key, value, free_value)))
		return;
	pthread_mutex_lock(&c->lock);
	/* Made twice at once (two attestations of one new boot): the first one stays. */
	if (!table_find(&c->cur, key) && make_room(c, &dropped) >= 0)
		table_put(&c->cur, e);
	pthread_mutex_unlock(&c->lock);
	fleet_cache_release(e);
	table_drop(&dropped);
}

void fleet_cache_put(fleet_cache *c, const uint8_t key[32], void *value, void (*free_value)(void *value))
{
	cache_table dropped = { 0 };
	fleet_cache_entry *e, *replaced = NULL;
	size_t i;

	if (!c) {
		free_value(value);
		return;
	}
	if (!(e = entry_new(key, value, free_value))) {
		fleet_cache_drop(c, key); /* what was kept is older than what the caller knows */
		return;
	}
	pthread_mutex_lock(&c->lock);
	mark_gone(table_find(&c->old, key));
	i = table_slot(&c->cur, key);
	if (c->cur.slots[i]) {
		replaced = c->cur.slots[i];
		mark_gone(replaced);
		atomic_fetch_add(&e->refs, 1);
		c->cur.slots[i] = e;
	} else if (make_room(c, &dropped) >= 0) {
		table_put(&c->cur, e);
	}
	pthread_mutex_unlock(&c->lock);
	fleet_cache_release(replaced);
	fleet_cache_release(e);
	table_drop(&dropped);
}

void fleet_cache_drop(fleet_cache *c, const uint8_t key[32])
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	mark_gone(table_find(&c->cur, key));
	mark_gone(table_find(&c->old, key));
	pthread_mutex_unlock(&c->lock);
}

size_t fleet_cache_count(fleet_cache *c)
{
	size_t n;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = c->cur.n + c->old.n;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int fleet_judged_key(const uint8_t boot_key[32], const char *policy_sha256, uint8_t key[32])
{
	const char *p = policy_sha256 ? policy_sha256 : "";
	uint8_t buf[32 + 64] = { 0 };

	/* The policy by its SHA-256 (the fleet stores each policy under it): a machine given
	 * another policy is judged in full. No policy is 64 zero bytes, never a SHA-256 in hex. */
	memcpy(buf, boot_key, 32);
	memcpy(buf + 32, p, strnlen(p, 64));
	return mb_digest(MB_ALG_SHA256, buf, sizeof(buf), key);
}
