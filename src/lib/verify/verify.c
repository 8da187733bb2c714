/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event log against PCR values: verdicts and, for a mismatch, what may explain it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include <mboot/cel.h>
#include <mboot/verify.h>
#include "lib/events/digest-check.h"
#include "lib/replay/pcr-values.h"
#include "shared/fail.h"
#include "shared/options.h"

/* Events with data that does not hash to their digest listed by number, a PCR of a bank. */
#define BAD_EVENTS_LISTED 16

/* Opaque in the public header: only this file fills or reads it. */
struct mb_verify_result {
	bool ok;
	uint32_t log_pcrs;              /* bit n: the logs extend PCR n (in some bank) */
	uint32_t userspace_pcrs;        /* bit n: the userspace log extends PCR n */
	uint32_t userspace_not_allowed; /* bit n: ...though userspace may not measure into PCR n */
	uint32_t n_verified, n_failed;
	size_t n;
	mb_verify_pcr pcrs[MB_MAX_BANKS * MB_PCR_COUNT];
	uint32_t bad_events[MB_MAX_BANKS * MB_PCR_COUNT][BAD_EVENTS_LISTED]; /* pcrs[i] lists bad_events[i] */
	mb_pcr_values replay;           /* the firmware log's, which info's lists point into */
	mb_replay_info info;
};

/* PFP §10.4.4 / §3.3.4.5: the EV_EFI_ACTION strings measured into PCR 5 at ExitBootServices. */
static const char ebs_invocation[] = "Exit Boot Services Invocation";
static const char ebs_success[] = "Exit Boot Services Returned with Success";

MB_EXPORT const char *mb_pcr_verdict_name(mb_pcr_verdict v)
{
	switch (v) {
	case MB_PCR_VERIFIED: return "verified";
	case MB_PCR_MISMATCH: return "mismatch";
	case MB_PCR_NOT_COVERED: return "not-covered";
	case MB_PCR_BANK_NOT_IN_LOG: return "bank-not-in-log";
	case MB_PCR_UNVERIFIED: return "unverified";
	case MB_PCR_NO_VALUE: return "no-value";
	case MB_PCR_DATA_MISMATCH: return "data-mismatch";
	case MB_PCR_USERSPACE_NOT_ALLOWED: return "userspace-not-allowed";
	default: return "invalid";
	}
}

static bool in_list(uint16_t alg, const uint16_t *algs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (algs[i] == alg)
			return true;
	return false;
}

static bool is_action(const mb_event *ev, const char *s)
{
	size_t n = strlen(s);

	return ev->type == MB_EV_EFI_ACTION && ev->data_size == n && memcmp(ev->data, s, n) == 0;
}

/* Replay every event of one PCR of one bank onto value (a start value). 0 or -EIO. */
static int replay_one(const mb_event_log *log, uint16_t alg, uint32_t pcr, uint8_t *value)
{
	size_t i, n = mb_event_log_count(log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const mb_event_digest *d;

		if (!mb_event_extends(ev) || ev->pcr != pcr)
			continue;
		d = mb_event_digest_for(ev, alg);
		if (d && mb_digest_extend(alg, value, d->bytes) < 0)
			return -EIO;
	}
	return 0;
}

/* Firmware in the corpus measures these differently from the spec: data untrusted, PCR not failed. */
static bool known_deviant(uint32_t type)
{
	return type == MB_EV_EFI_VARIABLE_AUTHORITY || type == MB_EV_S_CRTM_VERSION;
}

static void check_data(const mb_event_log *log, mb_verify_pcr *r, uint32_t list[BAD_EVENTS_LISTED])
{
	const mb_digest_check *checks = event_log_digest_checks(log);
	size_t i, n = mb_event_log_count(log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		mb_digest_check check;

		if (!mb_event_extends(ev) || ev->pcr != r->pcr)
			continue;
		if (checks)
			check = checks[i];
		else if (mb_event_check_digest(ev, &check) < 0)
			continue;
		if (check.status != MB_DIGEST_MISMATCH)
			continue;
		if (known_deviant(ev->type)) {
			r->n_untrusted_data++;
			continue;
		}
		if (r->n_bad_listed < BAD_EVENTS_LISTED)
			list[r->n_bad_listed++] = ev->number;
		r->n_bad_digest++;
	}
}

/* One extend of the PCR being explained: a firmware event or a userspace record. */
typedef struct step {
	const uint8_t *digest;
	int64_t number;
} step;

static int replay_steps(const mb_verify_pcr *r, const uint8_t *start, const step *steps, size_t n, size_t skip,
			size_t swap, uint8_t *out)
{
	size_t i;

	memcpy(out, start, r->size);
	for (i = 0; i < n; i++) {
		size_t j = i;

		if (i == skip)
			continue;
		if (swap != SIZE_MAX && i == swap)
			j = swap + 1;
		else if (swap != SIZE_MAX && i == swap + 1)
			j = swap;
		if (mb_digest_extend(r->alg, out, steps[j].digest) < 0)
			return -EIO;
	}
	return 0;
}

/* Take one try's m extends from the search's budget; false (and said in r) when it is spent. */
static bool spend(size_t *budget, size_t m, mb_verify_pcr *r)
{
	if (*budget < m) {
		r->edit_search_capped = true;
		return false;
	}
	*budget -= m;
	return true;
}

/* Would dropping one event, or exchanging two neighbours, give the TPM's value? Each try replays
 * the PCR's m events again, so the search costs m^2 extends: *budget caps it over a verify. */
static int try_single_edits(const mb_event_log *log, const mb_cel_log *userspace, const mb_replay_info *info,
			    mb_verify_pcr *r, size_t *budget)
{
	size_t n = mb_event_log_count(log), n_us = userspace ? mb_cel_log_count(userspace) : 0, m = 0, i;
	uint8_t start[MB_DIGEST_MAX], v[MB_DIGEST_MAX];
	step *steps;
	int rc = 0;

	steps = calloc(MB_VERIFY_MAX_EDIT_EVENTS, sizeof(*steps));
	if (!steps)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const mb_event_digest *d;

		if (!mb_event_extends(ev) || ev->pcr != r->pcr || !(d = mb_event_digest_for(ev, r->alg)))
			continue;
		if (m == MB_VERIFY_MAX_EDIT_EVENTS)
			goto out;
		steps[m].digest = d->bytes;
		steps[m++].number = ev->number;
	}
	for (i = 0; i < n_us; i++) {
		const mb_cel_record *rec = mb_cel_log_record(userspace, i);
		const mb_event_digest *d;

		if (rec->pcr != r->pcr || !(d = mb_cel_record_digest(rec, r->alg)))
			continue;
		if (m == MB_VERIFY_MAX_EDIT_EVENTS)
			goto out;
		steps[m].digest = d->bytes;
		steps[m++].number = -2 - (int64_t) i; /* userspace records: not reported as events */
	}

	mb_pcr_initial(r->alg, r->pcr, info->startup_locality, info->hcrtm, start);
	for (i = 0; i < m && r->extra_event < 0; i++) {
		if (!spend(budget, m, r))
			goto out;
		rc = replay_steps(r, start, steps, m, i, SIZE_MAX, v);
		if (rc < 0)
			goto out;
		if (memcmp(v, r->actual, r->size) == 0 && steps[i].number >= 0)
			r->extra_event = steps[i].number;
	}
	for (i = 0; i + 1 < m && r->swapped_event < 0; i++) {
		if (!spend(budget, m, r))
			goto out;
		rc = replay_steps(r, start, steps, m, SIZE_MAX, i, v);
		if (rc < 0)
			goto out;
		if (memcmp(v, r->actual, r->size) == 0 && steps[i].number >= 0 && steps[i + 1].number >= 0) {
			r->swapped_event = steps[i].number;
			r->swapped_next = steps[i + 1].number;
		}
	}
out:
	free(steps);
	return rc;
}

static int explain(const mb_event_log *log, const mb_cel_log *userspace, const mb_replay_info *info,
		   mb_verify_pcr *r, size_t *budget)
{
	size_t i, n = mb_event_log_count(log);
	uint8_t v[MB_DIGEST_MAX];
	bool have_inv = false, have_ok = false;

	/* Events whose data does not hash to their digest, and the longest agreeing prefix. */
	mb_pcr_initial(r->alg, r->pcr, info->startup_locality, info->hcrtm, v);
	if (memcmp(v, r->actual, r->size) == 0) {
		r->prefix_match = true;
		r->last_good_event = -1;
	}
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const mb_event_digest *d;

		if (!mb_event_extends(ev) || ev->pcr != r->pcr)
			continue;
		if (is_action(ev, ebs_invocation))
			have_inv = true;
		if (is_action(ev, ebs_success))
			have_ok = true;
		d = mb_event_digest_for(ev, r->alg);
		if (!d)
			continue;
		if (mb_digest_extend(r->alg, v, d->bytes) < 0)
			return -EIO;
		/* Not the full log (that is the mismatch itself): a strict prefix that matches. */
		if (memcmp(v, r->actual, r->size) == 0 && memcmp(v, r->expected, r->size) != 0) {
			r->prefix_match = true;
			r->last_good_event = ev->number;
		}
	}

	/* The prefix goes on through the userspace records of this PCR. */
	for (i = 0; userspace && i < mb_cel_log_count(userspace); i++) {
		const mb_cel_record *rec = mb_cel_log_record(userspace, i);
		const mb_event_digest *d;

		if (rec->pcr != r->pcr || !(d = mb_cel_record_digest(rec, r->alg)))
			continue;
		if (mb_digest_extend(r->alg, v, d->bytes) < 0)
			return -EIO;
		if (memcmp(v, r->actual, r->size) == 0 && memcmp(v, r->expected, r->size) != 0) {
			r->prefix_match = true;
			r->last_good_event = (int64_t) i;
			r->last_good_userspace = true;
		}
	}

	r->extra_event = r->swapped_event = r->swapped_next = -1;
	{
		int rc = try_single_edits(log, userspace, info, r, budget);

		if (rc < 0)
			return rc;
	}

	/* Firmware that extended the ExitBootServices actions but did not log them. */
	if (r->pcr == 5 && (!have_inv || !have_ok)) {
		uint8_t w[MB_DIGEST_MAX], d[MB_DIGEST_MAX];

		memcpy(w, r->expected, r->size);
		if (!have_inv) {
			if (mb_digest(r->alg, ebs_invocation, strlen(ebs_invocation), d) < 0 ||
			    mb_digest_extend(r->alg, w, d) < 0)
				return -EIO;
			r->quirk_events |= 1;
		}
		if (!have_ok) {
			if (mb_digest(r->alg, ebs_success, strlen(ebs_success), d) < 0 ||
			    mb_digest_extend(r->alg, w, d) < 0)
				return -EIO;
			r->quirk_events |= 2;
		}
		if (memcmp(w, r->actual, r->size) == 0)
			r->quirk = MB_QUIRK_EXIT_BOOT_SERVICES;
		else
			r->quirk_events = 0;
	}

	/* PCR 0 from another start value: locality 0-4 (4 also being the H-CRTM start). */
	if (r->pcr == 0 && r->quirk == MB_QUIRK_NONE) {
		uint8_t loc;

		for (loc = 0; loc <= 4; loc++) {
			uint8_t w[MB_DIGEST_MAX];
			int k;

			mb_pcr_initial(r->alg, 0, loc, false, w);
			k = replay_one(log, r->alg, 0, w);
			if (k < 0)
				return k;
			if (memcmp(w, r->actual, r->size) == 0 && memcmp(w, r->expected, r->size) != 0) {
				r->quirk = MB_QUIRK_STARTUP_LOCALITY;
				r->quirk_locality = loc;
				break;
			}
		}
	}
	return 0;
}

/* One bank of the combined replay: values, and the PCRs every extend of which had a digest here. */
typedef struct combined_bank {
	uint16_t alg;
	uint16_t size;
	uint32_t complete;
	uint8_t value[MB_PCR_COUNT][MB_DIGEST_MAX];
} combined_bank;

static combined_bank *find_bank(combined_bank *banks, size_t n, uint16_t alg)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (banks[i].alg == alg)
			return &banks[i];
	return NULL;
}

static int verify_into(const mb_event_log *log, const mb_cel_log *userspace, const mb_pcr_values *actual,
		       const mb_verify_options *opts, mb_verify_result *ret, mb_error *err)
{
	static const mb_verify_options defaults = { .size = sizeof(mb_verify_options),
						    .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT };
	const mb_pcr_values *replay = &ret->replay;
	combined_bank banks[2 * MB_MAX_BANKS];
	size_t n_banks = 0, b, i, n = mb_event_log_count(log), n_us = userspace ? mb_cel_log_count(userspace) : 0;
	size_t budget = MB_VERIFY_EDIT_BUDGET;
	uint32_t fw_pcrs = 0;
	int r;

	if (!opts)
		opts = &defaults;
	memset(ret, 0, sizeof(*ret));
	r = mb_replay_log(log, SIZE_MAX, &ret->replay, &ret->info, err);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (mb_event_extends(ev))
			fw_pcrs |= 1u << ev->pcr;
	}

	/*
	 * The firmware log's banks, then banks only `actual` has (the log cannot have covered them).
	 * A PCR is complete in a bank only if every event that extended it carried that bank's
	 * digest: the replay skips an event without one, so its value is not what the TPM holds.
	 */
	for (b = 0; b < replay->n_banks; b++) {
		banks[n_banks].alg = replay->banks[b].alg;
		banks[n_banks].size = replay->banks[b].size;
		banks[n_banks].complete = ((1u << MB_PCR_COUNT) - 1) & ~ret->info.incomplete[b];
		memcpy(banks[n_banks].value, replay->banks[b].value, sizeof(banks[n_banks].value));
		n_banks++;
	}
	for (b = 0; b < actual->n_banks; b++) {
		uint32_t p;

		if (find_bank(banks, n_banks, actual->banks[b].alg) || n_banks >= sizeof(banks) / sizeof(banks[0]))
			continue;
		banks[n_banks].alg = actual->banks[b].alg;
		banks[n_banks].size = actual->banks[b].size;
		banks[n_banks].complete = ~fw_pcrs & ((1u << MB_PCR_COUNT) - 1);
		for (p = 0; p < MB_PCR_COUNT; p++)
			mb_pcr_initial(actual->banks[b].alg, p, ret->info.startup_locality, ret->info.hcrtm,
				       banks[n_banks].value[p]);
		n_banks++;
	}
	ret->log_pcrs = fw_pcrs;

	/* Userspace measurements come after every firmware event: extend them on top. */
	for (i = 0; i < n_us; i++) {
		const mb_cel_record *rec = mb_cel_log_record(userspace, i);

		ret->log_pcrs |= 1u << rec->pcr;
		ret->userspace_pcrs |= 1u << rec->pcr;
		for (b = 0; b < n_banks; b++) {
			const mb_event_digest *d = mb_cel_record_digest(rec, banks[b].alg);

			if (!d) {
				banks[b].complete &= ~(1u << rec->pcr);
				continue;
			}
			if (mb_digest_extend(banks[b].alg, banks[b].value[rec->pcr], d->bytes) < 0)
				return set_error(err, -EIO, "hashing failed");
		}
	}
	/*
	 * Userspace records only where userspace measures, and never on top of the firmware's
	 * events: else the tail of a boot PCR (an EFI binary, a command line) could be moved out of
	 * the firmware log, where the policy judges it, into the userspace log.
	 */
	ret->userspace_not_allowed = ret->userspace_pcrs & (~opts->userspace_pcrs | fw_pcrs);

	for (b = 0; b < actual->n_banks; b++) {
		const mb_pcr_bank *a = &actual->banks[b];
		const combined_bank *e = find_bank(banks, n_banks, a->alg);
		bool limited_out = opts->n_only > 0 && !in_list(a->alg, opts->only_banks, opts->n_only);
		uint32_t p;

		for (p = 0; p < MB_PCR_COUNT; p++) {
			mb_verify_pcr *v;
			bool covered = ret->log_pcrs & (1u << p), have = a->present & (1u << p);

			if (!covered && !have)
				continue;
			if (ret->n >= sizeof(ret->pcrs) / sizeof(ret->pcrs[0]))
				return set_error(err, -E2BIG, "too many PCR values");
			v = &ret->pcrs[ret->n];
			v->bad_digest_events = ret->bad_events[ret->n++];
			/* Explanations only exist for a mismatch: "none found" until one is. */
			v->extra_event = v->swapped_event = v->swapped_next = v->last_good_event = -1;
			v->alg = a->alg;
			v->size = a->size;
			v->pcr = p;
			if (have)
				memcpy(v->actual, a->value[p], a->size);
			for (i = 0; i < n; i++) {
				const mb_event *ev = mb_event_log_event(log, i);

				if (mb_event_extends(ev) && ev->pcr == p)
					v->n_events++;
			}
			for (i = 0; i < n_us; i++)
				if (mb_cel_log_record(userspace, i)->pcr == p)
					v->n_userspace++;

			if (limited_out) {
				v->verdict = MB_PCR_UNVERIFIED;
				continue;
			}
			if (ret->userspace_not_allowed & (1u << p)) {
				v->verdict = MB_PCR_USERSPACE_NOT_ALLOWED;
				if (e && (e->complete & (1u << p)))
					memcpy(v->expected, e->value[p], a->size);
				continue;
			}
			if (!covered) {
				uint8_t reset[MB_DIGEST_MAX];

				/*
				 * Only firmware measures PCRs 0-7 (PFP §3.3.4): a value there that the
				 * log does not account for means measurements missing from the log.
				 */
				mb_pcr_initial(a->alg, p, ret->info.startup_locality, ret->info.hcrtm, reset);
				memcpy(v->expected, reset, a->size);
				if (p <= 7 && memcmp(reset, a->value[p], a->size) != 0) {
					check_data(log, v, ret->bad_events[v - ret->pcrs]);
					v->verdict = MB_PCR_MISMATCH;
					r = explain(log, userspace, &ret->info, v, &budget);
					if (r < 0)
						return set_error(err, r, "hashing failed");
				} else
					v->verdict = MB_PCR_NOT_COVERED;
				continue;
			}
			if (!e || !(e->complete & (1u << p))) {
				v->verdict = MB_PCR_BANK_NOT_IN_LOG;
				continue;
			}
			memcpy(v->expected, e->value[p], a->size);
			if (!have) {
				v->verdict = MB_PCR_NO_VALUE;
				continue;
			}
			check_data(log, v, ret->bad_events[v - ret->pcrs]);
			if (memcmp(e->value[p], a->value[p], a->size) == 0) {
				v->verdict = v->n_bad_digest ? MB_PCR_DATA_MISMATCH : MB_PCR_VERIFIED;
				continue;
			}
			v->verdict = MB_PCR_MISMATCH;
			r = explain(log, userspace, &ret->info, v, &budget);
			if (r < 0)
				return set_error(err, r, "hashing failed");
		}
	}

	for (i = 0; i < ret->n; i++) {
		switch (ret->pcrs[i].verdict) {
		case MB_PCR_VERIFIED:
			ret->n_verified++;
			break;
		case MB_PCR_NOT_COVERED:
		case MB_PCR_UNVERIFIED:
			break;
		default:
			/* Mismatch, a bank or a value missing, edited data, userspace out of place. */
			ret->n_failed++;
		}
	}
	ret->ok = ret->n_failed == 0 && ret->n_verified > 0;
	return 0;
}

MB_EXPORT int mb_verify_log(const mb_event_log *log, const mb_cel_log *userspace, const mb_pcr_values *actual,
			    const mb_verify_options *opts_in, mb_verify_result **ret, mb_error *err)
{
	mb_verify_result *res;
	mb_verify_options o;
	int r;

	*ret = NULL;
	/* NULL: the defaults (MB_USERSPACE_PCRS_DEFAULT) */
	if (opts_in) {
		r = OPTIONS_TAKE(o, opts_in, err);
		if (r < 0)
			return r;
	}
	res = calloc(1, sizeof(*res));
	if (!res)
		return set_error(err, -ENOMEM, "out of memory");
	r = verify_into(log, userspace, actual, opts_in ? &o : NULL, res, err);
	if (r < 0) {
		free(res);
		return r;
	}
	*ret = res;
	return 0;
}

MB_EXPORT void mb_verify_result_free(mb_verify_result *r)
{
	free(r);
}

MB_EXPORT bool mb_verify_result_ok(const mb_verify_result *r)
{
	return r->ok;
}

MB_EXPORT uint16_t mb_verify_result_policy_bank(const mb_verify_result *r)
{
	static const uint16_t prefer[] = { MB_ALG_SHA256, MB_ALG_SHA384, MB_ALG_SHA512, MB_ALG_SHA1, MB_ALG_SM3_256 };
	size_t i, k;

	for (i = 0; i < sizeof(prefer) / sizeof(prefer[0]); i++) {
		bool seen = false, bad = false;

		for (k = 0; k < r->n; k++) {
			if (r->pcrs[k].alg != prefer[i])
				continue;
			if (r->pcrs[k].verdict == MB_PCR_VERIFIED)
				seen = true;
			else if (r->pcrs[k].verdict != MB_PCR_NOT_COVERED)
				bad = true;
		}
		if (seen && !bad)
			return prefer[i];
	}
	return 0;
}

MB_EXPORT uint32_t mb_verify_result_n_verified(const mb_verify_result *r)
{
	return r->n_verified;
}

MB_EXPORT uint32_t mb_verify_result_n_failed(const mb_verify_result *r)
{
	return r->n_failed;
}

MB_EXPORT uint32_t mb_verify_result_log_pcrs(const mb_verify_result *r)
{
	return r->log_pcrs;
}

MB_EXPORT const mb_replay_info *mb_verify_result_replay_info(const mb_verify_result *r)
{
	return &r->info;
}

MB_EXPORT size_t mb_verify_result_count(const mb_verify_result *r)
{
	return r->n;
}

MB_EXPORT const mb_verify_pcr *mb_verify_result_entry(const mb_verify_result *r, size_t i)
{
	return i < r->n ? &r->pcrs[i] : NULL;
}

MB_EXPORT const mb_verify_pcr *mb_verify_result_pcr(const mb_verify_result *ret, uint16_t alg, uint32_t pcr)
{
	size_t i;

	for (i = 0; i < ret->n; i++)
		if (ret->pcrs[i].alg == alg && ret->pcrs[i].pcr == pcr)
			return &ret->pcrs[i];
	return NULL;
}

MB_EXPORT bool mb_verify_pcr_trusted(const mb_verify_pcr *r)
{
	if (!r)
		return false;
	if (r->verdict == MB_PCR_VERIFIED)
		return true;
	/* Nothing logged and nothing extended: the empty replay is the value. */
	return r->verdict == MB_PCR_NOT_COVERED && r->n_events == 0 && r->n_userspace == 0 &&
	       memcmp(r->expected, r->actual, r->size) == 0;
}
