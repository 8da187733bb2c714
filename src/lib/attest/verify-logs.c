/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The logs replayed against the quoted values and judged by the policy: exactly what `mboot verify
 * --pcrs VALUES --policy P` does, with the values a signed quote vouches for. The only place the
 * evidence check touches mb_verify_result and mb_policy_result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/policy.h>
#include <mboot/verify.h>

#include "lib/attest/attest-verify-internal.h"

static const char *bank_name(uint16_t alg)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);

	return d ? d->name : "?";
}

/* One line on why a PCR failed, naming the events the verifier could pin it on. */
static int add_pcr_reason(mb_attest_verdict *v, const mb_verify_pcr *p)
{
	char why[160] = "";

	if (p->verdict == MB_PCR_MISMATCH || p->verdict == MB_PCR_DATA_MISMATCH) {
		if (p->n_bad_digest)
			snprintf(why, sizeof(why), ": event %u's data does not hash to its digest", p->bad_digest_events[0]);
		else if (p->extra_event >= 0)
			snprintf(why, sizeof(why), ": the quoted value matches without event %lld (added to the log)",
				 (long long) p->extra_event);
		else if (p->swapped_event >= 0)
			snprintf(why, sizeof(why), ": the quoted value matches with events %lld and %lld swapped",
				 (long long) p->swapped_event, (long long) p->swapped_next);
		else if (p->prefix_match && !p->last_good_userspace)
			snprintf(why, sizeof(why), ": the quoted value is the log up to event %lld (later events added)",
				 (long long) p->last_good_event);
		else if (p->prefix_match)
			snprintf(why, sizeof(why), ": the quoted value is the logs up to userspace record %lld",
				 (long long) p->last_good_event);
		else if (p->n_events)
			snprintf(why, sizeof(why), ": no prefix of its %u events gives the quoted value", p->n_events);
		else
			snprintf(why, sizeof(why), ": the log has no event for it, the quoted value is not its reset value");
	}
	return verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "PCR %u %s: %s%s", p->pcr, bank_name(p->alg),
			   mb_pcr_verdict_name(p->verdict), why);
}

static int judge_policy(mb_attest_verdict *v, const mb_policy *policy, const mb_event_log *log, const mb_cel_log *us,
			const mb_verify_result *res, mb_error *err)
{
	mb_policy_result pr;
	size_t i;
	uint32_t p;
	int r;

	v->policy_bank = mb_verify_result_policy_bank(res);
	if (!v->policy_bank)
		return verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "no bank verified every PCR: the policy cannot judge");
	r = mb_policy_check(policy, log, us, res, v->policy_bank, &pr, err);
	if (r < 0)
		return r;
	v->policy_checked = true;
	v->policy_ok = mb_policy_result_ok(&pr); /* the rules for the PCRs; the IMA list is judged apart */
	v->policy_has_sets = mb_policy_n_firmware_sets(policy) > 0;
	if (pr.firmware_set && !(v->firmware_set = strdup(pr.firmware_set)))
		r = -ENOMEM;
	for (p = 0; p < MB_PCR_COUNT; p++) {
		if (pr.pcr[p] == MB_POLICY_PCR_OK)
			v->policy_ok_pcrs |= 1u << p;
		else if (pr.pcr[p] == MB_POLICY_PCR_VIOLATED)
			v->policy_violated_pcrs |= 1u << p;
	}
	if (pr.n_violations && !(v->violations = calloc(pr.n_violations, sizeof(*v->violations))))
		r = -ENOMEM;
	for (i = 0; r >= 0 && i < pr.n_violations; i++) {
		const mb_policy_violation *pv = &pr.violations[i];
		verdict_violation *o = &v->violations[v->n_violations++];

		o->pcr = pv->pcr;
		o->event = pv->event ? (int64_t) pv->event->number : -1;
		o->record = pv->record ? (int64_t) pv->record_index : -1;
		o->type = pv->event ? pv->event->type : 0;
		o->text = pv->event ? mb_event_text(pv->event) :
			  pv->record && pv->record->text ? strndup(pv->record->text, pv->record->text_len) : NULL;
		o->reason = strdup(pv->reason ? pv->reason : "");
		if (pv->n_closest_rules && (o->closest_rules = calloc(pv->n_closest_rules, sizeof(char *))))
			for (; o->n_closest_rules < pv->n_closest_rules; o->n_closest_rules++)
				if (!(o->closest_rules[o->n_closest_rules] = strdup(pv->closest_rules[o->n_closest_rules])))
					break;
		if (!o->reason || o->n_closest_rules != pv->n_closest_rules)
			r = -ENOMEM;
		else if (o->event >= 0)
			r = verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "PCR %u event %lld \"%.400s\": %s", o->pcr,
					(long long) o->event, o->text ? o->text : "", o->reason);
		else if (o->record >= 0)
			r = verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "PCR %u userspace record %lld \"%.400s\": %s", o->pcr,
					(long long) o->record, o->text ? o->text : "", o->reason);
		else
			r = verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "PCR %u: %s", o->pcr, o->reason);
	}
	if (r >= 0 && !v->policy_ok && !pr.n_violations)
		r = verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "the policy refuses the boot");
	mb_policy_result_done(&pr);
	return r;
}

/* A bank's strength: its digest size (sha512 > sha384 > sha256 = sm3_256 > sha1); 0 unknown. */
static unsigned bank_strength(uint16_t alg)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);

	return d ? d->size : 0;
}

/*
 * Was the quote judged in a bank strong enough? Required: the strongest bank the firmware log's
 * header lists (the banks active at boot: a TPM 1.2-format log is sha1 alone), the caller's
 * min_bank and the policy's, whichever is strongest. A quoted bank at least that strong must have
 * verified: some PCR of it VERIFIED and none failed. (A bank that failed is LOG_NOT_VERIFIED
 * already; it is named here only when no strong bank was quoted at all.)
 */
static int check_bank_strength(mb_attest_verdict *v, const mb_event_log *log, const mb_pcr_values *quoted,
			       const mb_attest_verify_options *opts)
{
	const mb_spec_id_alg *algs;
	size_t i, k, n_algs = mb_event_log_banks(log, &algs), n = mb_pcr_values_n_banks(quoted);
	unsigned need = 0, s;
	uint16_t need_alg = 0, policy_min = opts->policy ? mb_policy_min_bank(opts->policy) : 0;
	const char *why = "";
	char list[8 * MB_MAX_BANKS + 16] = "", logged[8 * MB_MAX_BANKS + 16] = "", buf[8];
	bool strong_quoted = false, strong_ok = false;

	for (i = 0; i < n_algs; i++) {
		/* an algorithm mboot does not compute still counts by the size the header gives it */
		s = bank_strength(algs[i].alg) ? bank_strength(algs[i].alg) : algs[i].size;
		snprintf(logged + strlen(logged), sizeof(logged) - strlen(logged), "%s%s", i ? ", " : "",
			 mb_digest_alg_name(algs[i].alg, buf));
		if (s > need) {
			need = s;
			need_alg = algs[i].alg;
			why = "the strongest bank the firmware log lists";
		}
	}
	if (bank_strength(opts->min_bank) > need) {
		need = bank_strength(opts->min_bank);
		need_alg = opts->min_bank;
		why = "the verifier's minimum";
	}
	if (bank_strength(policy_min) > need) {
		need = bank_strength(policy_min);
		need_alg = policy_min;
		why = "the policy's min_bank";
	}
	for (i = 0; i < n; i++) {
		uint16_t alg = mb_pcr_values_bank_alg(quoted, i);
		bool seen = false, bad = false;

		if (!mb_pcr_values_present(quoted, alg))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", *list ? ", " : "",
			 mb_digest_alg_name(alg, buf));
		if (bank_strength(alg) < need)
			continue;
		strong_quoted = true;
		for (k = 0; k < v->n_pcrs; k++) {
			if (v->pcrs[k].alg != alg)
				continue;
			if (v->pcrs[k].verdict == MB_PCR_VERIFIED)
				seen = true;
			else if (v->pcrs[k].verdict != MB_PCR_NOT_COVERED)
				bad = true;
		}
		if (seen && !bad)
			strong_ok = true;
	}
	if (strong_ok || (strong_quoted && !v->logs_ok))
		return 0;
	if (strong_quoted)
		return verdict_add(v, MB_ATTEST_BANK_TOO_WEAK, "no PCR of the quoted banks at least as strong as %s (%s) "
				   "verified against the logs; quoted: %s", mb_digest_alg_name(need_alg, buf), why, list);
	return verdict_add(v, MB_ATTEST_BANK_TOO_WEAK, "the quote covers %s, but %s is %s (the firmware log lists %s)",
			   *list ? list : "no bank", why, mb_digest_alg_name(need_alg, buf), *logged ? logged : "no bank");
}

int attest_judge_logs(mb_attest_verdict *v, const mb_event_log *log, const mb_cel_log *us,
		      const mb_pcr_values *quoted, const mb_attest_verify_options *opts, mb_error *err)
{
	uint16_t banks[MB_MAX_BANKS];
	mb_verify_options vo = { .size = sizeof(mb_verify_options), .userspace_pcrs = opts->userspace_pcrs ? opts->userspace_pcrs :
							     MB_USERSPACE_PCRS_DEFAULT };
	mb_verify_result *res;
	size_t i, n = mb_pcr_values_n_banks(quoted);
	int r;

	/* Fail closed on every quoted bank, and only those: the values are exactly the quote's. */
	for (i = 0; i < n && i < MB_MAX_BANKS; i++)
		banks[i] = mb_pcr_values_bank_alg(quoted, i);
	vo.only_banks = banks;
	vo.n_only = i;
	r = mb_verify_log(log, us, quoted, &vo, &res, err);
	if (r < 0)
		return r;
	v->logs_checked = true;
	v->logs_ok = mb_verify_result_ok(res);
	v->n_verified = mb_verify_result_n_verified(res);
	v->n_failed = mb_verify_result_n_failed(res);
	n = mb_verify_result_count(res);
	v->pcrs = calloc(n ? n : 1, sizeof(*v->pcrs));
	if (!v->pcrs) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const mb_verify_pcr *p = mb_verify_result_entry(res, i);

		v->pcrs[v->n_pcrs++] = (verdict_pcr) { .alg = p->alg, .pcr = p->pcr, .verdict = p->verdict,
						       .n_events = p->n_events, .n_userspace = p->n_userspace };
		if (!mb_verify_pcr_trusted(p) && p->verdict != MB_PCR_NOT_COVERED && p->verdict != MB_PCR_UNVERIFIED &&
		    (r = add_pcr_reason(v, p)) < 0)
			goto out;
	}
	r = check_bank_strength(v, log, quoted, opts);
	if (r < 0)
		goto out;
	if (!v->logs_ok) {
		if (!v->n_failed)
			r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "nothing in the logs verified against the quote");
		goto out;
	}
	if (opts->policy)
		r = judge_policy(v, opts->policy, log, us, res, err);
out:
	mb_verify_result_free(res);
	return r;
}
