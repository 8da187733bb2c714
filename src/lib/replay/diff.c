/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/diff.h>
#include <mboot/events.h>
#include "lib/events/digest-check.h"
#include "lib/replay/pcr-values.h"
#include "shared/fail.h"
#include "shared/seq-align.h"

/* Above this many cells the middle of a PCR's two event lists is not aligned
 * (every event there counts as removed and added): no real boot gets near it. */
#define DIFF_MAX_CELLS (16u << 20)

/* Bank by bank where both carry one: MB_DIFF_DIGESTS when any differs or none is shared. */
static uint32_t digests_differ(const mb_event *x, const mb_event *y)
{
	uint32_t i;
	bool common = false;

	for (i = 0; i < x->n_digests; i++) {
		const mb_event_digest *d = mb_event_digest_for(y, x->digests[i].alg);

		if (!d)
			continue;
		common = true;
		if (d->size != x->digests[i].size || memcmp(d->bytes, x->digests[i].bytes, d->size) != 0)
			return MB_DIFF_DIGESTS;
	}
	return common ? 0 : MB_DIFF_DIGESTS;
}

static bool data_equal(const mb_event *x, const mb_event *y)
{
	return x->data_size == y->data_size && (!x->data_size || memcmp(x->data, y->data, x->data_size) == 0);
}

/*
 * Does a change of this event's data, its digests being equal, say something? For EV_NO_ACTION
 * the data is all there is; data that does not hash to its digest is not what was measured,
 * so two such events are the same only byte for byte. Otherwise equal digests are equal
 * measurements: what the data holds beyond the digest's input is not measured.
 */
static bool data_decides(mb_digest_status s)
{
	return s == MB_DIGEST_NOT_EXTENDED || s == MB_DIGEST_MISMATCH;
}

/* What differs between x and y (MB_DIFF_*), 0 when they are the same event (see diff.h). */
static uint32_t event_differs(const mb_event *x, mb_digest_status sx, const mb_event *y, mb_digest_status sy)
{
	uint32_t what;

	if (x->type != y->type)
		return MB_DIFF_DIGESTS | MB_DIFF_DATA;
	what = digests_differ(x, y);
	if (!data_equal(x, y) && (what || data_decides(sx) || data_decides(sy)))
		what |= MB_DIFF_DATA;
	return what;
}

/* One PCR's events of one log, with their digest checks' status. */
typedef struct seq {
	const mb_event **ev;
	mb_digest_status *st;
	size_t n;
} seq;

static bool same_at(const seq *a, size_t i, const seq *b, size_t j)
{
	return event_differs(a->ev[i], a->st[i], b->ev[j], b->st[j]) == 0;
}

static int collect(const mb_event_log *log, uint32_t pcr, seq *s)
{
	size_t i, n = mb_event_log_count(log);
	/* Computed once per log and kept with it (verify and policy use them too). */
	const mb_digest_check *checks = event_log_digest_checks(log);

	s->n = 0;
	s->ev = malloc((n ? n : 1) * sizeof(*s->ev));
	s->st = malloc((n ? n : 1) * sizeof(*s->st));
	if (!s->ev || !s->st)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		/* The crypto-agile header describes the log, not the boot. */
		if (i == 0 && ev->sha1_format && mb_event_log_format(log) == MB_LOG_FORMAT_CRYPTO_AGILE)
			continue;
		if (ev->pcr != pcr)
			continue;
		if (checks) {
			s->st[s->n] = checks[i].status;
		} else {
			mb_digest_check c;

			s->st[s->n] = mb_event_check_digest(ev, &c) == 0 ? c.status : MB_DIGEST_UNCHECKABLE;
		}
		s->ev[s->n++] = ev;
	}
	return 0;
}

static int push(mb_diff *d, size_t *cap, mb_diff_entry e)
{
	if (d->n_entries == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		mb_diff_entry *n = realloc(d->entries, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->entries = n;
		*cap = ncap;
	}
	d->entries[d->n_entries++] = e;
	return 0;
}

static bool data_is_measured(mb_digest_status s)
{
	return s != MB_DIGEST_UNCHECKABLE;
}

/* One PCR's alignment: where its steps go. */
typedef struct diff_ctx {
	mb_diff *d;
	size_t *cap;
	uint32_t pcr;
	const seq *a, *b;
} diff_ctx;

static bool diff_same(void *ctx, size_t i, size_t j)
{
	const diff_ctx *c = ctx;

	return same_at(c->a, i, c->b, j);
}

static bool diff_pairable(void *ctx, size_t i, size_t j)
{
	const diff_ctx *c = ctx;

	return c->a->ev[i]->type == c->b->ev[j]->type;
}

static int diff_emit(void *ctx, seq_step step, size_t x, size_t y)
{
	const diff_ctx *c = ctx;
	const seq *a = c->a, *b = c->b;

	switch (step) {
	case SEQ_CHANGED:
		return push(c->d, c->cap, (mb_diff_entry) {
			.kind = MB_DIFF_CHANGED, .pcr = c->pcr, .a = a->ev[x], .b = b->ev[y],
			.differs = event_differs(a->ev[x], a->st[x], b->ev[y], b->st[y]),
			.data_measured = data_is_measured(a->st[x]) || data_is_measured(b->st[y]) });
	case SEQ_REMOVED:
		return push(c->d, c->cap, (mb_diff_entry) { .kind = MB_DIFF_REMOVED, .pcr = c->pcr, .a = a->ev[x] });
	case SEQ_ADDED:
		return push(c->d, c->cap, (mb_diff_entry) { .kind = MB_DIFF_ADDED, .pcr = c->pcr, .b = b->ev[y] });
	}
	return -EINVAL;
}

static int diff_pcr(mb_diff *d, size_t *cap, uint32_t pcr, const seq *a, const seq *b)
{
	static const seq_align_ops ops = { diff_same, diff_pairable, diff_emit };
	diff_ctx c = { d, cap, pcr, a, b };

	return seq_align(a->n, b->n, DIFF_MAX_CELLS, &ops, &c);
}

static void pcrs_used(const mb_event_log *log, uint32_t **list, size_t *n, size_t *cap)
{
	size_t i, k, count = mb_event_log_count(log);

	for (i = 0; i < count; i++) {
		uint32_t pcr = mb_event_log_event(log, i)->pcr;

		for (k = 0; k < *n; k++)
			if ((*list)[k] == pcr)
				break;
		if (k < *n)
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 32;
			uint32_t *nl = realloc(*list, ncap * sizeof(**list));

			if (!nl)
				return;
			*list = nl;
			*cap = ncap;
		}
		(*list)[(*n)++] = pcr;
	}
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;

	return a < b ? -1 : a > b;
}

MB_EXPORT int mb_log_diff(const mb_event_log *a, const mb_event_log *b, mb_diff *ret, mb_error *err)
{
	uint32_t *pcrs = NULL;
	size_t n_pcrs = 0, cap_pcrs = 0, cap = 0, k, bi;
	seq sa = { 0 }, sb = { 0 };
	int rc;

	memset(ret, 0, sizeof(*ret));
	pcrs_used(a, &pcrs, &n_pcrs, &cap_pcrs);
	pcrs_used(b, &pcrs, &n_pcrs, &cap_pcrs);
	if (n_pcrs)
		qsort(pcrs, n_pcrs, sizeof(*pcrs), cmp_u32);
	for (k = 0; k < n_pcrs; k++) {
		rc = collect(a, pcrs[k], &sa);
		if (rc == 0)
			rc = collect(b, pcrs[k], &sb);
		if (rc == 0)
			rc = diff_pcr(ret, &cap, pcrs[k], &sa, &sb);
		free(sa.ev);
		free(sb.ev);
		free(sa.st);
		free(sb.st);
		sa = sb = (seq) { 0 };
		if (rc < 0) {
			free(pcrs);
			mb_diff_done(ret);
			return set_error(err, rc, "out of memory comparing logs");
		}
	}
	free(pcrs);

	ret->a_values = mb_pcr_values_new();
	ret->b_values = mb_pcr_values_new();
	if (!ret->a_values || !ret->b_values)
		rc = set_error(err, -ENOMEM, "out of memory comparing logs");
	else
		rc = mb_replay_log(a, SIZE_MAX, ret->a_values, NULL, err);
	if (rc == 0)
		rc = mb_replay_log(b, SIZE_MAX, ret->b_values, NULL, err);
	if (rc < 0) {
		mb_diff_done(ret);
		return rc;
	}
	for (bi = 0; bi < ret->a_values->n_banks; bi++) {
		const mb_pcr_bank *x = &ret->a_values->banks[bi];
		const mb_pcr_bank *y = pcrv_bank_const(ret->b_values, x->alg);
		uint32_t p;

		if (!y)
			continue;
		for (p = 0; p < MB_PCR_COUNT; p++) {
			bool px = x->present & (1u << p), py = y->present & (1u << p);

			if (px != py || (px && memcmp(x->value[p], y->value[p], x->size) != 0))
				ret->pcrs_moved |= 1u << p;
		}
	}
	return 0;
}

MB_EXPORT void mb_diff_done(mb_diff *d)
{
	free(d->entries);
	d->entries = NULL;
	mb_pcr_values_free(d->a_values);
	mb_pcr_values_free(d->b_values);
	d->a_values = d->b_values = NULL;
	d->n_entries = 0;
}
