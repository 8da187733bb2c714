/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event summaries (event-summary.h): made from the log of sealing, checked when read back
 * (untrusted: whoever writes a LUKS2 header writes the summary), and compared with today's
 * log to name the events that changed a PCR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/replay.h>
#include "lib/seal/event-summary.h"
#include "lib/seal/sealed-internal.h"
#include "shared/fail.h"
#include "shared/reader.h"
#include "shared/seq-align.h"

/* Above this many cells today's events are compared position by position, not aligned. */
#define ALIGN_MAX_CELLS (1u << 20)

/* An event's key: (type, digest prefix); no digest in the bank: matches nothing. */
typedef struct key {
	uint32_t type;
	bool has_digest;
	uint8_t prefix[MB_EVENT_SUMMARY_PREFIX];
} key;

static void event_key(const mb_event *ev, uint16_t alg, key *k)
{
	const mb_event_digest *d = mb_event_digest_for(ev, alg);

	memset(k, 0, sizeof(*k));
	k->type = ev->type;
	if (d && d->size >= MB_EVENT_SUMMARY_PREFIX) {
		k->has_digest = true;
		memcpy(k->prefix, d->bytes, MB_EVENT_SUMMARY_PREFIX);
	}
}

static bool key_equal(const key *a, const key *b)
{
	return a->has_digest && b->has_digest && a->type == b->type &&
	       memcmp(a->prefix, b->prefix, MB_EVENT_SUMMARY_PREFIX) == 0;
}

static void put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

/* Does log replay to values in every PCR of mask? -EINVAL naming the first that it does not. */
static int check_replay(const mb_event_log *log, const mb_pcr_bank *values, uint32_t mask, mb_error *err)
{
	const mb_digest_info *d = mb_digest_by_alg(values->alg);
	mb_pcr_values *v = mb_pcr_values_new();
	mb_replay_info info = { 0 };
	int r;

	if (!v)
		return set_error(err, -ENOMEM, "out of memory");
	r = mb_replay_log(log, SIZE_MAX, v, &info, err);
	for (unsigned p = 0; r == 0 && p < MB_PCR_COUNT; p++) {
		uint8_t initial[MB_DIGEST_MAX];
		const uint8_t *got = mb_pcr_values_get(v, values->alg, p);

		if (!(mask & (1u << p)))
			continue;
		if (!got) {
			mb_pcr_initial(values->alg, p, info.startup_locality, info.hcrtm, initial);
			got = initial;
		}
		if (memcmp(got, values->value[p], values->size) != 0)
			r = set_error(err, -EINVAL, "the event log does not replay to the %s value of PCR %u sealed to "
				      "(a log of another boot?)", d ? d->name : "?", p);
	}
	mb_pcr_values_free(v);
	return r;
}

int event_summary_make(const mb_event_log *log, const mb_pcr_bank *values, uint32_t mask, uint8_t **ret,
		       size_t *ret_size, mb_error *err)
{
	const mb_digest_info *d = mb_digest_by_alg(values->alg);
	size_t count[MB_PCR_COUNT] = { 0 }, n_log = mb_event_log_count(log), kept = 0, i;
	uint32_t summarised = 0;
	uint8_t *out, *w;
	int r;

	*ret = NULL;
	*ret_size = 0;
	if (!d)
		return set_error(err, -EINVAL, "no known PCR bank 0x%04x", values->alg);
	if (mask >> MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR mask 0x%08x selects PCRs over %u", mask, MB_PCR_COUNT - 1);
	r = check_replay(log, values, mask, err);
	if (r < 0)
		return r;
	for (i = 0; i < n_log; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (!mb_event_extends(ev) || !(mask & (1u << ev->pcr)))
			continue;
		if (!mb_event_digest_for(ev, values->alg))
			return set_error(err, -EINVAL, "event %u of the event log has no %s digest", ev->number, d->name);
		count[ev->pcr]++;
	}
	/* PCR by PCR while they fit: a PCR is summarised whole or not at all */
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) && count[p] <= MB_EVENT_SUMMARY_MAX_EVENTS - kept) {
			summarised |= 1u << p;
			kept += count[p];
		}
	out = malloc(EVENT_SUMMARY_HEADER + kept * MB_EVENT_SUMMARY_RECORD);
	if (!out)
		return set_error(err, -ENOMEM, "out of memory");
	put_u32le(out, summarised);
	w = out + EVENT_SUMMARY_HEADER;
	for (i = 0; i < n_log; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (!mb_event_extends(ev) || !(summarised & (1u << ev->pcr)))
			continue;
		w[0] = (uint8_t) ev->pcr;
		put_u32le(w + 1, ev->type);
		memcpy(w + 5, mb_event_digest_for(ev, values->alg)->bytes, MB_EVENT_SUMMARY_PREFIX);
		w += MB_EVENT_SUMMARY_RECORD;
	}
	*ret = out;
	*ret_size = EVENT_SUMMARY_HEADER + kept * MB_EVENT_SUMMARY_RECORD;
	return 0;
}

int event_summary_check(const uint8_t *p, size_t n, uint32_t sealed_mask, mb_error *err)
{
	byte_reader r;
	uint32_t summarised;
	size_t i, count;

	reader_init(&r, p, n, 0);
	if (read_u32le(&r, &summarised) < 0)
		return set_error(err, -EBADMSG, "%zu bytes: shorter than its %d-byte header", n, EVENT_SUMMARY_HEADER);
	if (reader_left(&r) % MB_EVENT_SUMMARY_RECORD)
		return set_error(err, -EBADMSG, "%zu bytes: not a %d-byte header and %d-byte records", n,
				 EVENT_SUMMARY_HEADER, MB_EVENT_SUMMARY_RECORD);
	count = reader_left(&r) / MB_EVENT_SUMMARY_RECORD;
	if (count > MB_EVENT_SUMMARY_MAX_EVENTS)
		return set_error(err, -EBADMSG, "%zu events, more than %d", count, MB_EVENT_SUMMARY_MAX_EVENTS);
	for (unsigned q = 0; q < 32; q++)
		if ((summarised & (1u << q)) && !(sealed_mask & (1u << q)))
			return set_error(err, -EBADMSG, "PCR %u is summarised but not sealed to", q);
	for (i = 0; i < count; i++) {
		uint8_t pcr;

		if (read_u8(&r, &pcr) < 0 || read_skip(&r, MB_EVENT_SUMMARY_RECORD - 1) < 0)
			return set_error(err, -EBADMSG, "event %zu is truncated", i); /* not reached: length checked */
		if (pcr >= MB_PCR_COUNT || !(summarised & (1u << pcr)))
			return set_error(err, -EBADMSG, "event %zu is of PCR %u, which is not summarised", i, pcr);
	}
	return 0;
}

uint32_t event_summary_pcrs(const uint8_t *p, size_t n)
{
	byte_reader r;
	uint32_t v = 0;

	reader_init(&r, p, n, 0);
	return read_u32le(&r, &v) == 0 ? v : 0;
}

size_t event_summary_count(size_t n)
{
	return n > EVENT_SUMMARY_HEADER ? (n - EVENT_SUMMARY_HEADER) / MB_EVENT_SUMMARY_RECORD : 0;
}

/* The differences found so far, growing. */
typedef struct changes {
	summary_change *c;
	size_t n, cap;
} changes;

static int push(changes *ch, summary_change c)
{
	if (ch->n == ch->cap) {
		size_t ncap = ch->cap ? ch->cap * 2 : 8;
		summary_change *nc = realloc(ch->c, ncap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		ch->c = nc;
		ch->cap = ncap;
	}
	ch->c[ch->n++] = c;
	return 0;
}

/* One PCR's events: then (from the summary, with their positions) and today. */
typedef struct side {
	key *k;
	const mb_event **ev; /* today only */
	size_t n;
} side;

static summary_change then_change(mb_diff_kind kind, const side *then, size_t i, const mb_event *now)
{
	summary_change c = { .kind = kind, .then_pos = i, .then_type = then->k[i].type, .now = now };

	memcpy(c.then_prefix, then->k[i].prefix, MB_EVENT_SUMMARY_PREFIX);
	return c;
}

/* The alignment of one PCR's events: then (the summary) against now (today's log). */
typedef struct align_ctx {
	changes *ch;
	const side *then, *now;
} align_ctx;

static bool align_same(void *ctx, size_t i, size_t j)
{
	const align_ctx *c = ctx;

	return key_equal(&c->then->k[i], &c->now->k[j]);
}

static bool align_pairable(void *ctx, size_t i, size_t j)
{
	const align_ctx *c = ctx;

	return c->then->k[i].type == c->now->k[j].type;
}

static int align_emit(void *ctx, seq_step step, size_t i, size_t j)
{
	const align_ctx *c = ctx;

	switch (step) {
	case SEQ_CHANGED:
		return push(c->ch, then_change(MB_DIFF_CHANGED, c->then, i, c->now->ev[j]));
	case SEQ_REMOVED:
		return push(c->ch, then_change(MB_DIFF_REMOVED, c->then, i, NULL));
	case SEQ_ADDED:
		return push(c->ch, (summary_change) { .kind = MB_DIFF_ADDED, .now = c->now->ev[j] });
	}
	return -EINVAL;
}

static int align(changes *ch, const side *then, const side *now)
{
	static const seq_align_ops ops = { align_same, align_pairable, align_emit };
	align_ctx c = { ch, then, now };

	return seq_align(then->n, now->n, ALIGN_MAX_CELLS, &ops, &c);
}

int event_summary_compare(const uint8_t *p, size_t n, uint16_t alg, const mb_event_log *today, uint32_t pcr,
			  summary_change **ret, size_t *ret_n)
{
	size_t count = event_summary_count(n), n_log = mb_event_log_count(today), i;
	side then = { 0 }, now = { 0 };
	changes ch = { 0 };
	int r = -ENOMEM;

	*ret = NULL;
	*ret_n = 0;
	then.k = calloc(count ? count : 1, sizeof(*then.k));
	now.k = calloc(n_log ? n_log : 1, sizeof(*now.k));
	now.ev = calloc(n_log ? n_log : 1, sizeof(*now.ev));
	if (!then.k || !now.k || !now.ev)
		goto out;
	for (i = 0; i < count; i++) {
		const uint8_t *rec = p + EVENT_SUMMARY_HEADER + i * MB_EVENT_SUMMARY_RECORD;
		key *k = &then.k[then.n];

		if (rec[0] != pcr)
			continue;
		k->type = (uint32_t) rec[1] | (uint32_t) rec[2] << 8 | (uint32_t) rec[3] << 16 | (uint32_t) rec[4] << 24;
		k->has_digest = true;
		memcpy(k->prefix, rec + 5, MB_EVENT_SUMMARY_PREFIX);
		then.n++;
	}
	for (i = 0; i < n_log; i++) {
		const mb_event *ev = mb_event_log_event(today, i);

		if (!mb_event_extends(ev) || ev->pcr != pcr)
			continue;
		event_key(ev, alg, &now.k[now.n]);
		now.ev[now.n++] = ev;
	}
	r = align(&ch, &then, &now);
out:
	free(then.k);
	free(now.k);
	free(now.ev);
	if (r < 0) {
		free(ch.c);
		return r;
	}
	*ret = ch.c;
	*ret_n = ch.n;
	return 0;
}

MB_EXPORT int mb_sealed_keep_event_summary(mb_sealed *s, const uint8_t *log, size_t log_size, mb_error *err)
{
	mb_event_log *parsed = NULL;
	uint8_t *summary = NULL;
	size_t size = 0;
	int r;

	if (s->authorized)
		return set_error(err, -EINVAL, "a secret sealed to signed policies has no PCRs to summarise the events of");
	r = mb_event_log_parse(log, log_size, &parsed, err);
	if (r < 0)
		return prefix_error(err, r == -ENOMEM ? r : -EINVAL, "the event log");
	r = event_summary_make(parsed, &s->pcrs, s->mask, &summary, &size, err);
	mb_event_log_free(parsed);
	if (r < 0)
		return r;
	free(s->summary);
	s->summary = summary;
	s->summary_size = size;
	return 0;
}

MB_EXPORT int mb_sealed_set_event_summary(mb_sealed *s, const uint8_t *summary, size_t size, mb_error *err)
{
	uint8_t *copy;
	int r;

	if (s->authorized)
		return set_error(err, -EBADMSG, "a secret sealed to signed policies has no PCRs to summarise the events of");
	r = event_summary_check(summary, size, s->mask, err);
	if (r < 0)
		return r;
	copy = malloc(size);
	if (!copy)
		return set_error(err, -ENOMEM, "out of memory");
	memcpy(copy, summary, size);
	free(s->summary);
	s->summary = copy;
	s->summary_size = size;
	return 0;
}

MB_EXPORT const uint8_t *mb_sealed_event_summary(const mb_sealed *s, size_t *ret_size)
{
	if (ret_size)
		*ret_size = s->summary ? s->summary_size : 0;
	return s->summary;
}

MB_EXPORT size_t mb_sealed_event_summary_count(const mb_sealed *s, uint32_t *ret_pcrs)
{
	if (ret_pcrs)
		*ret_pcrs = s->summary ? event_summary_pcrs(s->summary, s->summary_size) : 0;
	return s->summary ? event_summary_count(s->summary_size) : 0;
}
