/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/replay.h>
#include "lib/events/event-data.h"
#include "lib/replay/pcr-values.h"
#include "shared/fail.h"

mb_pcr_bank *pcrv_bank(mb_pcr_values *v, uint16_t alg)
{
	size_t i;

	for (i = 0; i < v->n_banks; i++)
		if (v->banks[i].alg == alg)
			return &v->banks[i];
	return NULL;
}

const mb_pcr_bank *pcrv_bank_const(const mb_pcr_values *v, uint16_t alg)
{
	return pcrv_bank((mb_pcr_values *) v, alg);
}

MB_EXPORT int mb_pcr_values_remove_bank(mb_pcr_values *v, uint16_t alg)
{
	mb_pcr_bank *b = pcrv_bank(v, alg);
	size_t i;

	if (!b)
		return -ENOENT;
	i = (size_t) (b - v->banks);
	memmove(b, b + 1, (v->n_banks - i - 1) * sizeof(*b));
	/* A replay's incomplete PCRs stay with their bank. */
	memmove(&v->incomplete[i], &v->incomplete[i + 1], (v->n_banks - i - 1) * sizeof(v->incomplete[0]));
	v->n_banks--;
	v->incomplete[v->n_banks] = 0;
	return 0;
}

MB_EXPORT int mb_pcr_values_get_bank(const mb_pcr_values *v, uint16_t alg, mb_pcr_bank *ret)
{
	const mb_pcr_bank *b = pcrv_bank_const(v, alg);

	if (!b) {
		memset(ret, 0, sizeof(*ret));
		return -ENOENT;
	}
	*ret = *b;
	return 0;
}

MB_EXPORT mb_pcr_values *mb_pcr_values_new(void)
{
	return calloc(1, sizeof(mb_pcr_values));
}

MB_EXPORT void mb_pcr_values_free(mb_pcr_values *v)
{
	free(v);
}

MB_EXPORT size_t mb_pcr_values_n_banks(const mb_pcr_values *v)
{
	return v->n_banks;
}

MB_EXPORT uint16_t mb_pcr_values_bank_alg(const mb_pcr_values *v, size_t i)
{
	return i < v->n_banks ? v->banks[i].alg : 0;
}

MB_EXPORT uint32_t mb_pcr_values_present(const mb_pcr_values *v, uint16_t alg)
{
	const mb_pcr_bank *b = pcrv_bank_const(v, alg);

	return b ? b->present : 0;
}

MB_EXPORT const uint8_t *mb_pcr_values_get(const mb_pcr_values *v, uint16_t alg, uint32_t pcr)
{
	const mb_pcr_bank *b = pcrv_bank_const(v, alg);

	if (!b || pcr >= MB_PCR_COUNT || !(b->present & (1u << pcr)))
		return NULL;
	return b->value[pcr];
}

MB_EXPORT int mb_pcr_values_set(mb_pcr_values *v, uint16_t alg, uint32_t pcr, const uint8_t *digest,
				size_t size, mb_error *err)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);
	mb_pcr_bank *b;

	if (!d)
		return set_error(err, -EOPNOTSUPP, "unknown PCR bank algorithm 0x%04x", alg);
	if (pcr >= MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR %u: there are only %u PCRs", pcr, MB_PCR_COUNT);
	if (size != d->size)
		return set_error(err, -EINVAL, "%s PCR %u: %zu bytes, not %u", d->name, pcr, size, d->size);
	b = pcrv_bank(v, alg);
	if (!b) {
		if (v->n_banks >= MB_MAX_BANKS)
			return set_error(err, -E2BIG, "too many banks");
		b = &v->banks[v->n_banks++];
		memset(b, 0, sizeof(*b));
		b->alg = alg;
		b->size = d->size;
	}
	if (b->present & (1u << pcr))
		return set_error(err, -EEXIST, "%s PCR %u given twice", d->name, pcr);
	memcpy(b->value[pcr], digest, size);
	b->present |= 1u << pcr;
	return 0;
}

MB_EXPORT void mb_pcr_initial(uint16_t alg, uint32_t pcr, uint8_t locality, bool hcrtm, uint8_t *out)
{
	const mb_digest_info *info = mb_digest_by_alg(alg);
	size_t size = info ? info->size : MB_DIGEST_MAX;

	if (pcr >= 17 && pcr <= 22) {
		memset(out, 0xff, size);
		return;
	}
	memset(out, 0, size);
	if (pcr == 0)
		out[size - 1] = hcrtm ? 4 : locality;
}

/* The locality of a StartupLocality event of PCR 0 (a malformed one sets nothing). */
static bool startup_locality(const mb_event *ev, uint8_t *ret)
{
	return ev->type == MB_EV_NO_ACTION && ev->pcr == 0 &&
	       startup_locality_parse(ev->data, ev->data_size, ret, NULL) == 0;
}

/* A PCR 0 extend held back until the log has been read to the end. */
typedef struct deferred {
	const uint8_t *digest;
	uint32_t event;
	uint8_t bank; /* index in ret->banks */
} deferred;

/*
 * One pass over the events. PCR 0's starting value depends on a StartupLocality or H-CRTM
 * event anywhere in the replayed part of the log (not only before its first extend), so PCR 0's
 * extends wait in `pcr0` until the end; every other PCR is extended as its events come.
 */
typedef struct replay_state {
	mb_pcr_values *ret;
	mb_replay_info *info;
	size_t n_banks; /* banks the log declares */
	uint16_t algs[MB_MAX_BANKS];
	int bank_of[MB_MAX_BANKS]; /* declared bank -> ret->banks index, -1 when not replayed */
	deferred *pcr0;
	size_t n_pcr0, cap_pcr0;
} replay_state;

/* Both empty; info's lists point into ret. */
static void replay_info_init(mb_pcr_values *ret, mb_replay_info *info)
{
	memset(info, 0, sizeof(*info));
	memset(ret, 0, sizeof(*ret));
	info->incomplete = ret->incomplete;
	info->unknown_algs = ret->unknown_algs;
}

static void replay_begin(replay_state *st, const mb_event_log *log, mb_pcr_values *ret,
			 mb_replay_info *info)
{
	const mb_spec_id_alg *banks;
	size_t b;

	replay_info_init(ret, info);
	memset(st, 0, sizeof(*st));
	st->ret = ret;
	st->info = info;
	st->n_banks = mb_event_log_banks(log, &banks);
	for (b = 0; b < st->n_banks; b++) {
		const mb_digest_info *d = mb_digest_by_alg(banks[b].alg);
		uint32_t p;

		st->algs[b] = banks[b].alg;
		st->bank_of[b] = -1;
		if (!d) {
			ret->unknown_algs[info->n_unknown_algs++] = banks[b].alg;
			continue;
		}
		st->bank_of[b] = (int) ret->n_banks;
		ret->banks[ret->n_banks].alg = d->alg;
		ret->banks[ret->n_banks].size = d->size;
		/* PCR 0 is set in replay_end(), once the locality is known. */
		for (p = 1; p < MB_PCR_COUNT; p++)
			mb_pcr_initial(d->alg, p, 0, false, ret->banks[ret->n_banks].value[p]);
		ret->n_banks++;
	}
}

static int defer_pcr0(replay_state *st, const mb_event *ev, const uint8_t *digest, size_t bank, mb_error *err)
{
	if (st->n_pcr0 == st->cap_pcr0) {
		size_t ncap = st->cap_pcr0 ? st->cap_pcr0 * 2 : 64;
		deferred *n = realloc(st->pcr0, ncap * sizeof(*n));

		if (!n)
			return set_error(err, -ENOMEM, "out of memory");
		st->pcr0 = n;
		st->cap_pcr0 = ncap;
	}
	st->pcr0[st->n_pcr0++] = (deferred) { .digest = digest, .event = ev->number, .bank = (uint8_t) bank };
	return 0;
}

static int replay_event(replay_state *st, const mb_event *ev, mb_error *err)
{
	mb_replay_info *info = st->info;
	mb_pcr_values *ret = st->ret;
	size_t b;
	uint32_t k;
	uint8_t loc;

	if (!info->startup_locality_seen && startup_locality(ev, &loc)) {
		info->startup_locality_seen = true;
		info->startup_locality = loc;
	}
	if (ev->type == MB_EV_EFI_HCRTM_EVENT && ev->pcr == 0)
		info->hcrtm = true;

	if (ev->type == MB_EV_NO_ACTION) {
		info->events_no_action++;
		return 0;
	}
	if (ev->pcr >= MB_PCR_COUNT) {
		info->events_out_of_range++;
		return 0;
	}
	if (ev->n_digests < st->n_banks)
		for (b = 0; b < ret->n_banks; b++)
			if (!mb_event_digest_for(ev, ret->banks[b].alg))
				ret->incomplete[b] |= 1u << ev->pcr;
	for (k = 0; k < ev->n_digests; k++) {
		mb_pcr_bank *bank = NULL;
		int rc;

		/* digests[] follow the Spec ID order in practice, but look it up anyway. */
		for (b = 0; b < st->n_banks; b++)
			if (st->algs[b] == ev->digests[k].alg) {
				if (st->bank_of[b] >= 0)
					bank = &ret->banks[st->bank_of[b]];
				break;
			}
		if (!bank)
			continue;
		if (ev->pcr == 0)
			rc = defer_pcr0(st, ev, ev->digests[k].bytes, (size_t) (bank - ret->banks), err);
		else if (mb_digest_extend(bank->alg, bank->value[ev->pcr], ev->digests[k].bytes) < 0)
			rc = set_error(err, -EIO, "hashing failed while replaying event %u", ev->number);
		else
			rc = 0;
		if (rc < 0)
			return rc;
		bank->present |= 1u << ev->pcr;
	}
	info->events_extended++;
	return 0;
}

static int replay_end(replay_state *st, mb_error *err)
{
	mb_pcr_values *ret = st->ret;
	size_t b, i;

	for (b = 0; b < ret->n_banks; b++)
		mb_pcr_initial(ret->banks[b].alg, 0, st->info->startup_locality, st->info->hcrtm,
			       ret->banks[b].value[0]);
	for (i = 0; i < st->n_pcr0; i++) {
		mb_pcr_bank *bank = &ret->banks[st->pcr0[i].bank];

		if (mb_digest_extend(bank->alg, bank->value[0], st->pcr0[i].digest) < 0)
			return set_error(err, -EIO, "hashing failed while replaying event %u", st->pcr0[i].event);
	}
	return 0;
}

MB_EXPORT int mb_replay_log(const mb_event_log *log, size_t until, mb_pcr_values *ret,
			    mb_replay_info *info, mb_error *err)
{
	size_t n = mb_event_log_count(log), i;
	mb_replay_info local;
	replay_state st;
	int rc = 0;

	if (until > n)
		until = n;
	replay_begin(&st, log, ret, info ? info : &local);
	for (i = 0; i < until && rc == 0; i++)
		rc = replay_event(&st, mb_event_log_event(log, i), err);
	if (rc == 0)
		rc = replay_end(&st, err);
	free(st.pcr0);
	return rc;
}

/* mb_event_log_visit() callback: the Spec ID header comes first, so the banks are known at event 0. */
static int replay_sink(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	replay_state *st = ctx;

	if (ev->number == 0)
		replay_begin(st, log, st->ret, st->info);
	return replay_event(st, ev, err);
}

MB_EXPORT int mb_replay_log_data(const void *data, size_t size, mb_pcr_values *ret, mb_replay_info *info,
				 mb_error *err)
{
	mb_replay_info local;
	replay_state st = { .ret = ret, .info = info ? info : &local };
	int rc;

	/* Set at event 0; before it too, for a log that fails there. */
	replay_info_init(ret, st.info);
	rc = mb_event_log_visit(data, size, replay_sink, &st, err);
	if (rc == 0)
		rc = replay_end(&st, err);
	free(st.pcr0);
	return rc;
}
