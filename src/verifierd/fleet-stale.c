/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stale sweep (issue 31): a machine with nothing judged within twice its interval is shown
 * stale whenever asked (fleet_status_shown); this makes turning stale an event. A thread marks,
 * every --stale-sweep seconds, the machines whose deadline passed since they were last told of,
 * writes each an audit line, and queues the webhook once that is committed. The mark is in the
 * database (schema version 6), set by a conditional UPDATE: of several verifiers sharing it, and
 * of a verifier started again, the machine is announced once. Its next attestation clears it,
 * and that attestation's webhook says it came from stale.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/fail.h"
#include "verifierd/fleet-internal.h"

/* Who the audit trail names for the sweep: not a token's name (those have no space). */
#define STALE_OPERATOR "mboot-verifierd (stale sweep)"

typedef struct sweep_ctx {
	int64_t now_us, max_interval;
	store_stale *marked;
	size_t n;
} sweep_ctx;

/* A machine's audit detail: what it was, since when it is silent, its interval. */
static void stale_detail(const store_stale *s, char *out, size_t size)
{
	time_t t = (time_t) s->last_seen;
	char at[32] = "?";
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(out, size, "was %s; nothing judged since %s (interval %lld s)", s->status, at,
		 (long long) s->interval);
}

static int sweep_tx(db *d, void *p, mb_error *err)
{
	sweep_ctx *c = p;
	char detail[160];
	size_t i;
	int r;

	/* A try that rolled back (a lock conflict) marked nothing: only the committed one counts. */
	store_stale_free(c->marked, c->n);
	c->marked = NULL;
	c->n = 0;
	r = store_stale_mark_tx(d, c->now_us / 1000000, c->max_interval, &c->marked, &c->n, err);
	for (i = 0; r >= 0 && i < c->n; i++) {
		stale_detail(&c->marked[i], detail, sizeof(detail));
		r = store_audit_add(d, c->now_us, STALE_OPERATOR, "stale", c->marked[i].id, detail, err);
	}
	return r;
}

int fleet_stale_sweep(fleet *f, int64_t now_us, mb_error *err)
{
	sweep_ctx c = { .now_us = now_us, .max_interval = f->max_interval };
	int total = 0, r;

	if (!f->stale_db && (r = db_open(f->db_url, &f->stale_db, err)) < 0) {
		f->stale_db = NULL;
		return r;
	}
	/* In batches, each its own transaction: a fleet that all turned stale at once (its
	 * verifiers were down) is not one long transaction. */
	do {
		r = fleet_transaction(f->stale_db, sweep_tx, &c, err);
		if (r < 0) {
			store_stale_free(c.marked, c.n);
			return r;
		}
		for (size_t i = 0; i < c.n; i++)
			notify_change_send(f->notify, &(notify_change){ .machine_id = c.marked[i].id,
				.old_status = c.marked[i].status, .new_status = "stale", .cause = "stale",
				.at = now_us / 1000000 });
		atomic_fetch_add(&f->stale_announced, c.n);
		total += (int) c.n;
		store_stale_free(c.marked, c.n);
		c.marked = NULL;
	} while (c.n == STORE_STALE_BATCH);
	return total;
}

/* Wait s seconds unless stopped first; false when stopped. */
static bool sweep_wait(fleet *f, int64_t s)
{
	struct timespec until;
	bool going;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t) s;
	pthread_mutex_lock(&f->stale_lock);
	while (!f->stale_stopping && pthread_cond_timedwait(&f->stale_cond, &f->stale_lock, &until) != ETIMEDOUT)
		;
	going = !f->stale_stopping;
	pthread_mutex_unlock(&f->stale_lock);
	return going;
}

static void *sweep_main(void *p)
{
	fleet *f = p;

	while (sweep_wait(f, f->stale_sweep)) {
		mb_error err = { 0 };
		int r = fleet_stale_sweep(f, fleet_now_us(), &err);

		/* Told once when it fails, once when it works again, not every sweep. */
		if (r < 0) {
			fleet_metrics_db_error();
			if (!f->stale_failing)
				fprintf(stderr, "mboot-verifierd: stale sweep: %s (tried again every %lld s)\n",
					err.message[0] ? err.message : mb_strerror(r), (long long) f->stale_sweep);
			f->stale_failing = true;
			/* A broken connection is opened again on the next sweep. */
			if (r == -ENOTCONN) {
				db_close(f->stale_db);
				f->stale_db = NULL;
			}
		} else if (f->stale_failing) {
			fprintf(stderr, "mboot-verifierd: stale sweep: works again\n");
			f->stale_failing = false;
		}
	}
	return NULL;
}

void fleet_stale_init(fleet *f)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&f->stale_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&f->stale_cond, &attr);
	pthread_condattr_destroy(&attr);
}

int fleet_stale_start(fleet *f, mb_error *err)
{
	sigset_t all, old;
	int r;

	if (f->stale_sweep <= 0)
		return 0;
	/* The thread takes no signal: the service's main thread waits for the stop signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&f->stale_thread, NULL, sweep_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return set_error(err, r, "the stale sweep: no thread: %s", strerror(-r));
	f->stale_started = true;
	return 0;
}

void fleet_stale_stop(fleet *f)
{
	pthread_mutex_lock(&f->stale_lock);
	f->stale_stopping = true;
	pthread_cond_broadcast(&f->stale_cond);
	pthread_mutex_unlock(&f->stale_lock);
	if (f->stale_started)
		pthread_join(f->stale_thread, NULL);
	f->stale_started = false;
	pthread_cond_destroy(&f->stale_cond);
	pthread_mutex_destroy(&f->stale_lock);
	db_close(f->stale_db);
	f->stale_db = NULL;
}
