/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log's document (`mboot log show --json`, mb_event_log_write_json), written as the log is
 * read: no event array, and a 100,000-event log never becomes one JSON tree or one text. Two threads share the work. The worker replays the log (the
 * summary's PCRs) while the main thread checks the log and starts the document; then the worker
 * writes blocks of events ahead of the main thread (every other one, more when the main thread
 * falls behind) into buffers that the main thread copies out in their place. Whoever writes an
 * event checks its digest.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/replay.h>
#include "shared/fail.h"
#include "shared/jsonout.h"
#include "shared/log-show.h"
#include "lib/events/event-json.h"

/*
 * --json: the same as the document's last member, "summary": {"events", "events_shown",
 * "digest_mismatches", "mismatched_events" (the first 32 numbers), "banks" (the PCR-values shape)}.
 */
static void write_summary_json(jsonout *o, const log_summary *sum, const mb_pcr_values *v)
{
	size_t i;

	jsonout_key(o, "summary");
	jsonout_open(o, '{');
	jsonout_key(o, "events");
	jsonout_u64(o, sum->events);
	jsonout_key(o, "events_shown");
	jsonout_u64(o, sum->shown);
	jsonout_key(o, "digest_mismatches");
	jsonout_u64(o, sum->mismatches);
	jsonout_key(o, "mismatched_events");
	jsonout_open(o, '[');
	for (i = 0; i < sum->mismatches && i < MB_LOG_JSON_MISMATCHES_LISTED; i++) {
		jsonout_next(o);
		jsonout_u64(o, sum->listed[i]);
	}
	jsonout_close(o, ']');
	jsonout_key(o, "banks");
	jsonout_pcr_banks(o, v);
	jsonout_close(o, '}');
}

/*
 * Events are shared out in blocks of SHOW_BLOCK. Until the worker has replayed the log the main
 * thread writes every block; from then on the worker takes the odd blocks at least SHOW_AHEAD
 * ahead of the main thread (so that it has written a block by the time the main thread gets
 * there), waiting for a free buffer if need be, and an even block too when it is SHOW_AHEAD_EVEN
 * or more ahead and a buffer is free: when the main thread falls behind, the worker does more.
 * Buffers: SHOW_SLOTS, the block's number modulo SHOW_SLOTS (so the worker is never more than
 * SHOW_SLOTS - 1 blocks ahead). Never two of the worker's blocks in a row close ahead: the main
 * thread writes one of its own between them instead of waiting for the second.
 */
#define SHOW_BLOCK 256u
#define SHOW_AHEAD 2u
#define SHOW_AHEAD_EVEN 4u
#define SHOW_SLOTS 8u
#define SHOW_FREE SIZE_MAX

typedef struct show_slot {
	jsonout out;
	size_t block;                 /* SHOW_FREE, or the block it holds */
	bool done;                    /* written whole */
	int8_t status[SHOW_BLOCK];    /* each event's digest check (-1: none), for the summary */
} show_slot;

typedef struct show_work {
	const uint8_t *data;
	size_t size, n_events;
	mb_pcr_values *v;
	int replay_rc;
	mb_error err;
	pthread_mutex_t lock;
	pthread_cond_t more;  /* a slot written: for the main thread */
	pthread_cond_t moved; /* the main thread went on, a slot freed, stop: for the worker */
	/* Writing blocks: only in a thread of its own (help). */
	bool help, stop, pretty;
	size_t depth;         /* the events' in the document */
	size_t main_block;    /* where the main thread is (SHOW_FREE: not started) */
	bool *taken;          /* by block: the worker's */
	size_t n_blocks;
	show_slot slots[SHOW_SLOTS];
	show_slot *writing;   /* the worker's slot of the block it is in, or NULL */
	mb_event_decoded *dec;
} show_work;

/* The worker's slot is written whole: the main thread may copy it out. */
static void work_block_done(show_work *w)
{
	if (!w->writing)
		return;
	pthread_mutex_lock(&w->lock);
	w->writing->done = true;
	pthread_cond_broadcast(&w->more);
	pthread_mutex_unlock(&w->lock);
	w->writing = NULL;
}

/* At the start of block k: take it when it is far enough ahead of the main thread (an even one
 * farther) and its slot is free; for an odd block, wait while it is too far ahead or its slot is
 * taken. Returns false when told to stop. */
static bool work_take(show_work *w, size_t k)
{
	show_slot *slot = &w->slots[k % SHOW_SLOTS];
	bool odd = k % 2 == 1, go = true;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->stop) {
			go = false;
			break;
		}
		/* Not yet started, or too close: the main thread's. */
		if (w->main_block == SHOW_FREE || k < w->main_block + (odd ? SHOW_AHEAD : SHOW_AHEAD_EVEN))
			break;
		if (k < w->main_block + SHOW_SLOTS && slot->block == SHOW_FREE) {
			w->taken[k] = true;
			slot->block = k;
			slot->done = false;
			slot->out.n = 0;
			slot->out.depth = w->depth;
			slot->out.opened = false;
			slot->out.pretty = w->pretty;
			w->writing = slot;
			break;
		}
		if (!odd)
			break; /* an even block only when it costs no wait */
		pthread_cond_wait(&w->moved, &w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return go;
}

static int work_write_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	show_work *w = ctx;

	if (ev->number % SHOW_BLOCK == 0) {
		work_block_done(w);
		if (!work_take(w, ev->number / SHOW_BLOCK))
			return set_error(err, -ECANCELED, "stopped");
	}
	if (w->writing) {
		jsonout_next(&w->writing->out);
		w->writing->status[ev->number % SHOW_BLOCK] =
			(int8_t) event_json_write(&w->writing->out, log, ev, w->dec, NULL);
	}
	return 0;
}

/* The summary's PCRs, then (help) blocks of events. */
static void *work_run(void *ctx)
{
	show_work *w = ctx;
	mb_error ignored = { 0 };

	w->replay_rc = mb_replay_log_data(w->data, w->size, w->v, NULL, &w->err);
	if (w->help) {
		/* It ends when the main thread says stop: any block it took is written by then. */
		(void) !mb_event_log_visit(w->data, w->size, work_write_event, w, &ignored);
		work_block_done(w);
	}
	return NULL;
}

typedef struct show_json {
	jsonout out;
	mb_text_sink sink;
	void *sink_ctx;
	mb_event_decoded *dec;
	uint32_t pcr_mask;
	log_summary sum;
	show_work *work;
	show_slot *theirs; /* the slot of the worker's block the main thread is in, or NULL */
} show_json;

/* What b holds, to the sink. */
static int flush_to(show_json *s, jsonout *b, mb_error *err)
{
	int rc;

	if (b->n == 0)
		return 0;
	rc = s->sink(s->sink_ctx, b->p, b->n);
	b->n = 0;
	if (rc < 0)
		return set_error(err, rc, "the output failed: %s", mb_strerror(rc));
	return 0;
}

/* Block k's output, which the worker wrote, after what the main thread wrote. */
static int put_block(show_json *s, show_slot *slot, mb_error *err)
{
	show_work *w = s->work;
	int rc;

	pthread_mutex_lock(&w->lock);
	while (!slot->done)
		pthread_cond_wait(&w->more, &w->lock);
	pthread_mutex_unlock(&w->lock);
	if (slot->out.oom)
		return set_error(err, -ENOMEM, "out of memory");
	rc = flush_to(s, &s->out, err);
	return rc < 0 ? rc : flush_to(s, &slot->out, err);
}

/* The main thread leaves the worker's block it was in: its slot is free again. */
static void free_slot(show_json *s)
{
	show_work *w = s->work;

	if (!s->theirs)
		return;
	pthread_mutex_lock(&w->lock);
	s->theirs->block = SHOW_FREE;
	pthread_cond_broadcast(&w->moved);
	pthread_mutex_unlock(&w->lock);
	s->theirs = NULL;
}

/* At the start of block k: the main thread's own, or the worker's to copy out. */
static int enter_block(show_json *s, size_t k, mb_error *err)
{
	show_work *w = s->work;

	free_slot(s);
	pthread_mutex_lock(&w->lock);
	w->main_block = k;
	w->depth = s->out.depth;
	if (k < w->n_blocks && w->taken[k])
		s->theirs = &w->slots[k % SHOW_SLOTS];
	pthread_cond_broadcast(&w->moved);
	pthread_mutex_unlock(&w->lock);
	return s->theirs ? put_block(s, s->theirs, err) : 0;
}

static int count_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	(void) log;
	(void) ev;
	(void) err;
	(*(size_t *) ctx)++;
	return 0;
}

/* mb_event_log_visit() callback: the document's head at event 0 (the log's format is known
 * from there), then every selected event. */
static int show_json_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	show_json *s = ctx;
	bool shown = log_pcr_selected(ev, s->pcr_mask);
	int rc;

	if (ev->number == 0) {
		const mb_spec_id *spec = mb_event_log_spec_id(log);

		jsonout_open(&s->out, '{');
		jsonout_key(&s->out, "format");
		if (mb_event_log_format(log) == MB_LOG_FORMAT_CRYPTO_AGILE)
			jsonout_lit(&s->out, "\"crypto-agile\"");
		else
			jsonout_lit(&s->out, "\"sha1\"");
		/* Only a log whose header holds exactly "Spec ID Event03" has one: nothing to escape. */
		if (spec) {
			jsonout_key(&s->out, "spec_id");
			jsonout_lit(&s->out, "\"");
			jsonout_raw(&s->out, spec->signature);
			jsonout_lit(&s->out, "\"");
		}
		jsonout_key(&s->out, "events");
		jsonout_open(&s->out, '[');
	}
	if (ev->number % SHOW_BLOCK == 0 && s->work->help) {
		rc = enter_block(s, ev->number / SHOW_BLOCK, err);
		if (rc < 0)
			return rc;
	}
	if (s->theirs)
		log_summary_add(&s->sum, ev, true, s->theirs->status[ev->number % SHOW_BLOCK]);
	else if (shown) {
		jsonout_next(&s->out);
		log_summary_add(&s->sum, ev, true, event_json_write(&s->out, log, ev, s->dec, NULL));
	} else {
		log_summary_add(&s->sum, ev, false, log_check_status(ev));
	}
	if (s->out.oom)
		return set_error(err, -ENOMEM, "out of memory");
	return s->out.n >= MB_JSONOUT_FLUSH ? flush_to(s, &s->out, err) : 0;
}

/*
 * The log is checked first (a malformed log writes nothing: the error only, as when it was
 * parsed whole), then read a second time, each event written as it comes.
 */
MB_EXPORT int mb_event_log_write_json(const uint8_t *data, size_t size, uint32_t pcr_mask, bool pretty,
				      mb_text_sink sink, void *ctx, mb_error *err)
{
	show_json s = { .out.pretty = pretty, .pcr_mask = pcr_mask, .sink = sink, .sink_ctx = ctx };
	show_work w = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER,
			.moved = PTHREAD_COND_INITIALIZER, .main_block = SHOW_FREE, .pretty = pretty };
	pthread_t worker;
	bool threaded = false;
	size_t i;
	int rc;

	if ((!data && size) || !sink)
		return set_error(err, -EINVAL, "no log or no output");
	w.data = data;
	w.size = size;
	w.v = mb_pcr_values_new();
	w.dec = mb_event_decoded_new();
	s.dec = mb_event_decoded_new();
	s.work = &w;
	for (i = 0; i < SHOW_SLOTS; i++)
		w.slots[i].block = SHOW_FREE;
	if (!w.v || !w.dec || !s.dec) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* Every event written: the first of a block after the first is no array's first (a
	 * selection of PCRs may leave out every event before it: the main thread writes it all). */
	w.help = pcr_mask == UINT32_MAX;
	/*
	 * The worker replays while this thread checks the log (its replay checks every record the
	 * same way); it touches no block before this thread starts writing. Without a thread the
	 * replay is done first, here, and this thread writes everything.
	 */
	threaded = pthread_create(&worker, NULL, work_run, &w) == 0;
	if (!threaded) {
		w.help = false;
		work_run(&w);
	}
	rc = mb_event_log_visit(data, size, count_event, &w.n_events, err);
	if (rc == 0) {
		w.n_blocks = w.n_events / SHOW_BLOCK + 1;
		w.taken = calloc(w.n_blocks, sizeof(*w.taken));
		if (!w.taken)
			rc = set_error(err, -ENOMEM, "out of memory");
	}
	if (rc == 0)
		rc = mb_event_log_visit(data, size, show_json_event, &s, err);
	if (threaded) {
		pthread_mutex_lock(&w.lock);
		w.stop = true;
		pthread_cond_broadcast(&w.moved);
		pthread_mutex_unlock(&w.lock);
		pthread_join(worker, NULL);
	}
	if (rc == 0 && w.replay_rc < 0) {
		rc = w.replay_rc;
		if (err)
			*err = w.err;
	}
	if (rc == 0) {
		jsonout_close(&s.out, ']');
		write_summary_json(&s.out, &s.sum, w.v);
		jsonout_close(&s.out, '}');
		jsonout_lit(&s.out, "\n");
		if (s.out.oom)
			rc = set_error(err, -ENOMEM, "out of memory");
	}
	if (rc == 0)
		rc = flush_to(&s, &s.out, err);
out:
	free(s.out.p);
	for (i = 0; i < SHOW_SLOTS; i++)
		free(w.slots[i].out.p);
	mb_event_decoded_free(s.dec);
	mb_event_decoded_free(w.dec);
	mb_pcr_values_free(w.v);
	free(w.taken);
	return rc;
}
