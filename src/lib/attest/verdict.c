/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verdict of mb_attest_verify: reasons, what the quote said, the logs' and the policy's verdicts. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include <mboot/diff.h>
#include <mboot/digest.h>

#include "lib/attest/attest-verify-internal.h"
#include "shared/hex.h"
#include "shared/text-escape.h"
#include "shared/violation-json.h"

static const char *const reason_names[_MB_ATTEST_REASON_MAX] = {
	[MB_ATTEST_AK_NOT_ENROLLED] = "ak-not-enrolled",
	[MB_ATTEST_SIGNATURE_INVALID] = "signature-invalid",
	[MB_ATTEST_SIGNATURE_SCHEME] = "signature-scheme",
	[MB_ATTEST_NOT_TPM_GENERATED] = "not-tpm-generated",
	[MB_ATTEST_NOT_QUOTE] = "not-quote",
	[MB_ATTEST_NONCE_MISMATCH] = "nonce-mismatch",
	[MB_ATTEST_SELECTION_MISMATCH] = "selection-mismatch",
	[MB_ATTEST_PCR_DIGEST_MISMATCH] = "pcr-digest-mismatch",
	[MB_ATTEST_LOG_NOT_VERIFIED] = "log-not-verified",
	[MB_ATTEST_POLICY_VIOLATED] = "policy-violated",
	[MB_ATTEST_BANK_TOO_WEAK] = "bank-too-weak",
};

MB_EXPORT const char *mb_attest_reason_name(mb_attest_reason r)
{
	return (unsigned) r < _MB_ATTEST_REASON_MAX ? reason_names[r] : "unknown";
}

/*
 * A detail is one line of text, whatever the machine put in it: its event texts (a GRUB command
 * with a newline, a terminal escape) come out escaped (shared/text-escape.h), here, once, for the
 * tool's text and JSON, the fleet service's store, page and `mboot fleet show`.
 */
int verdict_add(mb_attest_verdict *v, mb_attest_reason r, const char *fmt, ...)
{
	va_list ap;
	char *detail = NULL, *safe;
	int n;

	if (v->n_reasons >= VERDICT_REASONS_MAX) {
		v->n_reasons_dropped++;
		return 0;
	}
	va_start(ap, fmt);
	n = vasprintf(&detail, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	safe = text_escape(detail, (size_t) n);
	free(detail);
	if (!safe)
		return -ENOMEM;
	v->reasons[v->n_reasons++] = (verdict_reason) { .reason = r, .detail = safe };
	return 0;
}

MB_EXPORT void mb_attest_verdict_free(mb_attest_verdict *v)
{
	size_t i, k;

	if (!v)
		return;
	for (i = 0; i < v->n_reasons; i++)
		free(v->reasons[i].detail);
	for (i = 0; i < v->n_violations; i++) {
		free(v->violations[i].text);
		free(v->violations[i].reason);
		for (k = 0; k < v->violations[i].n_closest_rules; k++)
			free(v->violations[i].closest_rules[k]);
		free(v->violations[i].closest_rules);
	}
	free(v->violations);
	ima_state_done(&v->ima);
	free(v->ima_state_text);
	free(v->firmware_set);
	free(v->pcrs);
	free(v->changes);
	free(v);
}

static int copy_violation(verdict_violation *d, const verdict_violation *s)
{
	size_t k;

	*d = *s;
	d->text = d->reason = NULL;
	d->closest_rules = NULL;
	d->n_closest_rules = 0;
	if ((s->text && !(d->text = strdup(s->text))) || (s->reason && !(d->reason = strdup(s->reason))))
		return -ENOMEM;
	if (s->n_closest_rules && !(d->closest_rules = calloc(s->n_closest_rules, sizeof(char *))))
		return -ENOMEM;
	for (k = 0; k < s->n_closest_rules; k++, d->n_closest_rules++)
		if (!(d->closest_rules[k] = strdup(s->closest_rules[k])))
			return -ENOMEM;
	return 0;
}

int verdict_copy_judgment(mb_attest_verdict *v, const mb_attest_verdict *src)
{
	size_t i;

	/* The quote passed in both, so src's first reasons are its logs' (its IMA list's come after). */
	for (i = 0; i < src->n_judgment_reasons; i++, v->n_reasons++)
		v->reasons[i] = (verdict_reason) { .reason = src->reasons[i].reason };
	for (i = 0; i < src->n_judgment_reasons; i++)
		if (!(v->reasons[i].detail = strdup(src->reasons[i].detail)))
			return -ENOMEM;
	v->n_reasons_dropped = src->n_judgment_dropped;
	v->logs_checked = src->logs_checked;
	v->logs_ok = src->logs_ok;
	v->n_verified = src->n_verified;
	v->n_failed = src->n_failed;
	if (src->n_pcrs) {
		if (!(v->pcrs = calloc(src->n_pcrs, sizeof(*v->pcrs))))
			return -ENOMEM;
		memcpy(v->pcrs, src->pcrs, src->n_pcrs * sizeof(*v->pcrs));
		v->n_pcrs = src->n_pcrs;
	}
	v->policy_checked = src->policy_checked;
	v->policy_ok = src->policy_ok;
	v->policy_bank = src->policy_bank;
	v->policy_ok_pcrs = src->policy_ok_pcrs;
	v->policy_violated_pcrs = src->policy_violated_pcrs;
	v->policy_has_sets = src->policy_has_sets;
	if (src->firmware_set && !(v->firmware_set = strdup(src->firmware_set)))
		return -ENOMEM;
	if (src->n_violations && !(v->violations = calloc(src->n_violations, sizeof(*v->violations))))
		return -ENOMEM;
	for (i = 0; i < src->n_violations; i++, v->n_violations++)
		if (copy_violation(&v->violations[i], &src->violations[i]) < 0) {
			v->n_violations++; /* its copied parts freed with v */
			return -ENOMEM;
		}
	return 0;
}

MB_EXPORT bool mb_attest_verdict_boot_key(const mb_attest_verdict *v, uint8_t key[32])
{
	if (!v || !v->has_boot_key)
		return false;
	memcpy(key, v->boot_key, sizeof(v->boot_key));
	return true;
}

MB_EXPORT bool mb_attest_verdict_eventlog_sha256(const mb_attest_verdict *v, uint8_t sha256[32], bool *ret_carried)
{
	if (!v || !v->eventlog_form)
		return false;
	memcpy(sha256, v->eventlog_sha256, sizeof(v->eventlog_sha256));
	if (ret_carried)
		*ret_carried = v->eventlog_form == 1;
	return true;
}

MB_EXPORT bool mb_attest_verdict_trusted(const mb_attest_verdict *v)
{
	/* Trusted only when the logs were checked (and the policy, when given) and nothing failed. */
	return v && v->n_reasons == 0 && v->n_reasons_dropped == 0 && v->logs_checked && v->logs_ok;
}

MB_EXPORT size_t mb_attest_verdict_n_reasons(const mb_attest_verdict *v)
{
	return v ? v->n_reasons : 0;
}

MB_EXPORT mb_attest_reason mb_attest_verdict_reason(const mb_attest_verdict *v, size_t i, const char **ret_detail)
{
	if (!v || i >= v->n_reasons) {
		if (ret_detail)
			*ret_detail = NULL;
		return _MB_ATTEST_REASON_MAX;
	}
	if (ret_detail)
		*ret_detail = v->reasons[i].detail;
	return v->reasons[i].reason;
}


static json_t *pcr_list(uint32_t mask)
{
	json_t *a = json_array();
	uint32_t p;

	for (p = 0; p < 32; p++)
		if (mask & (1u << p))
			json_array_append_new(a, json_integer((int) p));
	return a;
}


static json_t *quote_json(const mb_attest_verdict *v)
{
	const quote_attest *q = &v->quote;
	json_t *o = json_object(), *sel = json_object();
	char fw[24], buf[8];
	size_t i;

	snprintf(fw, sizeof(fw), "0x%016llx", (unsigned long long) q->firmware_version);
	json_object_set_new(o, "magic_ok", json_boolean(q->magic == TPM_GENERATED_VALUE));
	json_object_set_new(o, "type", json_integer(q->type));
	json_object_set_new(o, "signer", json_hex(q->signer, q->signer_size));
	json_object_set_new(o, "clock", json_integer(q->clock));
	json_object_set_new(o, "reset_count", json_integer(q->reset_count));
	json_object_set_new(o, "restart_count", json_integer(q->restart_count));
	json_object_set_new(o, "safe", json_boolean(q->safe));
	json_object_set_new(o, "firmware_version", json_text(fw));
	json_object_set_new(o, "signature", json_text(quote_sig_alg_name(v->sig_alg, buf)));
	json_object_set_new(o, "signature_hash", json_text(mb_digest_alg_name(v->sig_hash, buf)));
	for (i = 0; i < q->n_selections; i++)
		json_object_set_new(sel, mb_digest_alg_name(q->selections[i].hash, buf), pcr_list(q->selections[i].mask));
	json_object_set_new(o, "pcrs", sel);
	return o;
}

static json_t *logs_json(const mb_attest_verdict *v)
{
	json_t *o = json_object(), *banks, *pcrs;
	size_t i;
	char buf[8];

	json_object_set_new(o, "checked", json_boolean(v->logs_checked));
	if (!v->logs_checked)
		return o;
	banks = json_object();
	pcrs = json_array();
	json_object_set_new(o, "verified", json_boolean(v->logs_ok));
	json_object_set_new(o, "pcrs_verified", json_integer(v->n_verified));
	json_object_set_new(o, "pcrs_failed", json_integer(v->n_failed));
	for (i = 0; i < v->n_pcrs; i++) {
		const verdict_pcr *p = &v->pcrs[i];
		const char *name = mb_digest_alg_name(p->alg, buf);
		json_t *b, *e;

		if (p->verdict == MB_PCR_NOT_COVERED || p->verdict == MB_PCR_UNVERIFIED)
			continue;
		/* Per bank: verified when every PCR of it the logs extend verified. */
		if (!(b = json_object_get(banks, name))) {
			b = json_object();
			json_object_set_new(b, "verified", json_boolean(true));
			json_object_set_new(b, "pcrs_verified", json_integer(0));
			json_object_set_new(b, "pcrs_failed", json_integer(0));
			json_object_set_new(banks, name, b);
		}
		if (p->verdict == MB_PCR_VERIFIED) {
			e = json_object_get(b, "pcrs_verified");
			json_integer_set(e, (int) json_integer_value(e) + 1);
		} else {
			e = json_object_get(b, "pcrs_failed");
			json_integer_set(e, (int) json_integer_value(e) + 1);
			json_object_set_new(b, "verified", json_boolean(false));
		}
		e = json_object();
		json_object_set_new(e, "pcr", json_integer((int) p->pcr));
		json_object_set_new(e, "bank", json_text(name));
		json_object_set_new(e, "verdict", json_text(mb_pcr_verdict_name(p->verdict)));
		json_object_set_new(e, "events", json_integer(p->n_events));
		if (p->n_userspace)
			json_object_set_new(e, "userspace_records", json_integer(p->n_userspace));
		json_array_append_new(pcrs, e);
	}
	json_object_set_new(o, "banks", banks);
	json_object_set_new(o, "pcrs", pcrs);
	return o;
}

static json_t *policy_json(const mb_attest_verdict *v)
{
	json_t *o = json_object(), *viol;
	size_t i;
	char buf[8];

	json_object_set_new(o, "checked", json_boolean(v->policy_checked));
	if (!v->policy_checked)
		return o;
	json_object_set_new(o, "ok", json_boolean(v->policy_ok));
	json_object_set_new(o, "bank", json_text(mb_digest_alg_name(v->policy_bank, buf)));
	json_object_set_new(o, "pcrs_ok", pcr_list(v->policy_ok_pcrs));
	json_object_set_new(o, "pcrs_violated", pcr_list(v->policy_violated_pcrs));
	if (v->policy_has_sets)
		json_object_set_new(o, "firmware_set", v->firmware_set ? json_text(v->firmware_set) : json_null());
	viol = json_array();
	for (i = 0; i < v->n_violations; i++) {
		const verdict_violation *x = &v->violations[i];
		char tb[MB_EVENT_TYPE_LABEL_SIZE];
		/* the verdict keeps no digests: the log is gone when it is written */
		violation_view view = {
			.pcr = x->pcr, .event = x->event, .type = mb_event_type_label(x->type, tb), .record = x->record,
			.text = x->text, .text_len = x->text ? strlen(x->text) : 0, .reason = x->reason,
			.closest_rules = x->closest_rules, .n_closest_rules = x->n_closest_rules,
		};

		json_array_append_new(viol, violation_json_new(&view));
	}
	json_object_set_new(o, "violations", viol);
	return o;
}

static json_t *before_after_u64(uint64_t a, uint64_t b, bool hex)
{
	json_t *o = json_object();
	char s[24];

	if (hex) {
		snprintf(s, sizeof(s), "0x%016llx", (unsigned long long) a);
		json_object_set_new(o, "before", json_text(s));
		snprintf(s, sizeof(s), "0x%016llx", (unsigned long long) b);
		json_object_set_new(o, "after", json_text(s));
	} else {
		json_object_set_new(o, "before", json_integer(a));
		json_object_set_new(o, "after", json_integer(b));
	}
	json_object_set_new(o, "changed", json_boolean(a != b));
	return o;
}

static json_t *baseline_json(const mb_attest_verdict *v)
{
	static const char *const kinds[] = { "?", "removed", "added", "changed" };
	json_t *o = json_object(), *ev;
	size_t i;

	json_object_set_new(o, "firmware_version",
			       before_after_u64(v->base_firmware_version, v->quote.firmware_version, true));
	json_object_set_new(o, "reset_count", before_after_u64(v->base_reset_count, v->quote.reset_count, false));
	json_object_set_new(o, "restart_count",
			       before_after_u64(v->base_restart_count, v->quote.restart_count, false));
	/* resetCount counts TPM resets (reboots), restartCount TPM restarts (resume from hibernation). */
	json_object_set_new(o, "rebooted", json_boolean(v->base_reset_count != v->quote.reset_count ||
								       v->base_restart_count != v->quote.restart_count));
	json_object_set_new(o, "logs_compared", json_boolean(v->base_logs_compared));
	if (!v->base_logs_compared)
		return o;
	json_object_set_new(o, "pcrs_moved", pcr_list(v->base_pcrs_moved));
	ev = json_array();
	for (i = 0; i < v->n_changes; i++) {
		const verdict_change *c = &v->changes[i];
		json_t *e = json_object();
		char tb[MB_EVENT_TYPE_LABEL_SIZE];

		json_object_set_new(e, "kind", json_text(kinds[c->kind >= 1 && c->kind <= 3 ? c->kind : 0]));
		json_object_set_new(e, "pcr", json_integer((int) c->pcr));
		json_object_set_new(e, "type", json_text(mb_event_type_label(c->type, tb)));
		if (c->before >= 0)
			json_object_set_new(e, "baseline_event", json_integer(c->before));
		if (c->after >= 0)
			json_object_set_new(e, "event", json_integer(c->after));
		json_array_append_new(ev, e);
	}
	json_object_set_new(o, "events", ev);
	return o;
}

MB_EXPORT char *mb_attest_verdict_to_json(const mb_attest_verdict *v, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root, *reasons;
	char *out;
	size_t i;

	if (!v)
		return NULL;
	root = json_object();
	reasons = json_array();
	json_object_set_new(root, "trusted", json_boolean(mb_attest_verdict_trusted(v)));
	for (i = 0; i < v->n_reasons; i++) {
		json_t *r = json_object();

		json_object_set_new(r, "name", json_text(mb_attest_reason_name(v->reasons[i].reason)));
		json_object_set_new(r, "detail", json_text(v->reasons[i].detail));
		json_array_append_new(reasons, r);
	}
	json_object_set_new(root, "reasons", reasons);
	if (v->n_reasons_dropped)
		json_object_set_new(root, "reasons_not_listed", json_integer((int64_t) v->n_reasons_dropped));
	if (v->quote_decoded)
		json_object_set_new(root, "quote", quote_json(v));
	json_object_set_new(root, "logs", logs_json(v));
	json_object_set_new(root, "policy", policy_json(v));
	json_object_set_new(root, "ima", attest_ima_json(v));
	if (v->has_baseline)
		json_object_set_new(root, "baseline", baseline_json(v));
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}
