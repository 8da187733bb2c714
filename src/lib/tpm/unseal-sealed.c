/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unsealing a sealed file's secret: which PolicyOR branch or signed policy to satisfy,
 * given the TPM's PCRs, and when the TPM refuses, why (the PCRs that differ and the
 * events that made them differ), as a list of items for the caller to show.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/json.h"

#include <mboot/diff.h>
#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/tpm.h>
#include "lib/replay/pcr-values.h"
#include "lib/seal/event-summary.h"
#include "lib/seal/sealed-internal.h"
#include "shared/hex.h"
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/options.h"
#include "tpm-internal.h"
#include "unseal-internal.h"

static mb_unseal_item *add_item(mb_unseal_explanation *e, mb_unseal_item_kind kind)
{
	mb_unseal_item *n = realloc(e->items, (e->n_items + 1) * sizeof(*n));

	if (!n) {
		e->incomplete = true;
		return NULL;
	}
	e->items = n;
	n = &e->items[e->n_items++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	return n;
}

static void add_note(mb_unseal_explanation *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(mb_unseal_explanation *e, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	mb_unseal_item *it;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	it = text ? add_item(e, MB_UNSEAL_NOTE) : NULL;
	if (!it) {
		e->incomplete = true;
		free(text);
		return;
	}
	it->text = text;
}

/* A name of the caller's, copied: NULL stays NULL, and a failed copy marks e incomplete. */
static char *copy_name(mb_unseal_explanation *e, const char *name)
{
	char *c = name ? strdup(name) : NULL;

	if (name && !c)
		e->incomplete = true;
	return c;
}

static void add_error(mb_unseal_explanation *e, const char *what, const mb_error *error)
{
	mb_unseal_item *it = add_item(e, MB_UNSEAL_ERROR);

	if (!it)
		return;
	it->what = copy_name(e, what);
	it->error = *error;
}

/* PCR p of want differs: the TPM holds now->value[p], or nothing readable. */
static void add_pcr(mb_unseal_explanation *e, const char *signature, unsigned p, const mb_pcr_bank *want,
		    const mb_pcr_bank *now)
{
	mb_unseal_item *it = add_item(e, MB_UNSEAL_PCR);

	if (!it)
		return;
	it->pcr = p;
	it->alg = want->alg;
	memcpy(it->expected, want->value[p], want->size);
	it->now_read = (now->present & (1u << p)) != 0;
	if (it->now_read)
		memcpy(it->now, now->value[p], want->size);
	it->signature = copy_name(e, signature);
}

static const char *signature_name(const mb_unseal_options *opt, size_t i, char buf[32])
{
	if (opt->signature_names && opt->signature_names[i])
		return opt->signature_names[i];
	snprintf(buf, 32, "signature %zu", i + 1);
	return buf;
}

/*
 * The PCRs of mask whose values in the TPM now differ from want's (0: none); *now gets
 * what the TPM holds. A negative code on a TPM error.
 */
static int64_t pcrs_differ(mb_tpm *t, const mb_pcr_bank *want, uint32_t mask, mb_pcr_bank *now, mb_error *err)
{
	mb_pcr_values v;
	const mb_pcr_bank *b;
	uint32_t differ = 0;
	int r = mb_tpm_read_pcrs(t, &want->alg, 1, mask, &v, NULL, err);

	if (r < 0)
		return r;
	b = pcrv_bank_const(&v, want->alg);
	if (b)
		*now = *b;
	else
		memset(now, 0, sizeof(*now));
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) &&
		    (!(now->present & (1u << p)) || memcmp(now->value[p], want->value[p], want->size) != 0))
			differ |= 1u << p;
	return differ;
}

/* "#N TYPE: description" of an event (NULL on ENOMEM). */
static char *event_words(const mb_event_log *log, const mb_event *ev)
{
	char *desc = mb_event_description(log, ev);
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], *s = NULL;
	const char *type = mb_event_type_label(ev->type, tbuf);

	if (asprintf(&s, "#%u %s%s%s", ev->number, type, desc ? ": " : "", desc ? desc : "") < 0)
		s = NULL;
	free(desc);
	return s;
}

/* Today's event log for the explanation: opt's, else read from opt->log_path (*owned set). */
static const mb_event_log *today_log(mb_unseal_explanation *e, const mb_unseal_options *opt, mb_event_log **owned)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;

	*owned = NULL;
	if (opt->log)
		return opt->log;
	if (!opt->log_path) {
		add_note(e, "No event log of today was given: cannot say which events changed.");
		return NULL;
	}
	if (access(opt->log_path, R_OK) == 0) {
		if (file_read(opt->log_path, MB_LOG_MAX_SIZE, &buf, &size, &err) == 0 &&
		    mb_event_log_parse_take(buf, size, owned, &err) == 0)
			return *owned;
		add_error(e, opt->log_path, &err);
	}
	add_note(e, "Today's event log (%s) is not readable: cannot say which events changed.", opt->log_path);
	return NULL;
}

/* "sealed event K of PCR P: TYPE, BANK PREFIX…": all a summary says of an event of sealing (NULL on ENOMEM). */
static char *summary_words(const summary_change *c, uint32_t pcr, uint16_t alg)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], hex[2 * MB_EVENT_SUMMARY_PREFIX + 1], *s = NULL;
	const char *type = mb_event_type_label(c->then_type, tbuf);

	if (asprintf(&s, "sealed event %zu of PCR %u: %s, %s %s…", c->then_pos + 1, pcr, type, d ? d->name : "?",
		     hex_format(c->then_prefix, MB_EVENT_SUMMARY_PREFIX, hex)) < 0)
		s = NULL;
	return s;
}

/*
 * No log of sealing, but its summary (a LUKS2 token's): today's events of each differing
 * PCR against the summary's, by type and digest prefix.
 */
static void explain_from_summary(mb_unseal_explanation *e, const mb_sealed *s, const mb_unseal_options *opt,
				 uint32_t differ)
{
	uint32_t summarised = event_summary_pcrs(s->summary, s->summary_size);
	mb_event_log *owned = NULL;
	const mb_event_log *now = today_log(e, opt, &owned);
	size_t shown = 0;

	if (!now)
		return;
	for (unsigned p = 0; p < MB_PCR_COUNT; p++) {
		summary_change *c = NULL;
		size_t n = 0;

		if (!(differ & (1u << p)))
			continue;
		if (!(summarised & (1u << p))) {
			add_note(e, "PCR %u: its events at sealing were not kept (more than %d events in all): cannot say "
				 "which changed.", p, MB_EVENT_SUMMARY_MAX_EVENTS);
			shown++;
			continue;
		}
		if (event_summary_compare(s->summary, s->summary_size, s->pcrs.alg, now, p, &c, &n) < 0) {
			e->incomplete = true;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			mb_unseal_item *it = add_item(e, MB_UNSEAL_EVENT);

			shown++;
			if (!it)
				continue;
			it->pcr = p;
			it->change = c[i].kind == MB_DIFF_CHANGED ? "changed" : c[i].kind == MB_DIFF_ADDED ? "added" : "removed";
			if (c[i].kind != MB_DIFF_ADDED && !(it->before = summary_words(&c[i], p, s->pcrs.alg)))
				e->incomplete = true;
			if (c[i].kind != MB_DIFF_REMOVED && !(it->after = event_words(now, c[i].now)) &&
			    !(it->after = strdup("?")))
				e->incomplete = true;
		}
		free(c);
	}
	if (!shown)
		add_note(e, "Today's event log shows no change in these PCRs since sealing (extended outside the logged "
			 "boot?).");
	mb_event_log_free(owned);
}

/*
 * A changed event shown as "before → after": when the two read the same (a file measured under
 * the same path, other bytes), after says so with both digests; when they share a long start
 * (a kernel command line with one word added), both drop the middle of it, so that the eye
 * lands where they differ.
 */
#define SAME_HEAD 64 /* characters kept of a long common start (the event's type and kind) */
#define SAME_TAIL 24 /* and right before the difference */
static void mark_difference(mb_unseal_item *it, const mb_diff_entry *de, uint16_t alg)
{
	const char *ra, *rb; /* the words after "#N", which differ when the events moved */
	size_t same = 0, la, lb;
	char *na = NULL, *nb = NULL;

	if (!it->before || !it->after || !(ra = strchr(it->before, ' ')) || !(rb = strchr(it->after, ' ')))
		return;
	if (strcmp(ra, rb) == 0) {
		const mb_event_digest *da = mb_event_digest_for(de->a, alg), *db = mb_event_digest_for(de->b, alg);
		const mb_digest_info *info = mb_digest_by_alg(alg);
		char ha[17] = "?", hb[17] = "?";

		if (da && da->size >= 8)
			hex_format(da->bytes, 8, ha);
		if (db && db->size >= 8)
			hex_format(db->bytes, 8, hb);
		/* a digest of something the log does not hold (a file, an image) and only names: its path */
		if (asprintf(&nb, "%.*s: same %s, other contents (%s %s… → %s…)", (int) (rb - it->after), it->after,
			     de->data_measured ? "text" : "path", info ? info->name : "digest", ha, hb) >= 0) {
			free(it->after);
			it->after = nb;
		}
		return;
	}
	la = strlen(ra);
	lb = strlen(rb);
	while (same < la && same < lb && ra[same] == rb[same])
		same++;
	if (same < SAME_HEAD + SAME_TAIL + 16)
		return;
	/* "#N", the start, [… N same …], the last characters before the difference, the rest */
	if (asprintf(&na, "%.*s%.*s[…%zu same…]%s", (int) (ra - it->before), it->before, SAME_HEAD, ra,
		     same - SAME_HEAD - SAME_TAIL, ra + same - SAME_TAIL) < 0)
		return;
	if (asprintf(&nb, "%.*s%.*s[…%zu same…]%s", (int) (rb - it->after), it->after, SAME_HEAD, rb,
		     same - SAME_HEAD - SAME_TAIL, rb + same - SAME_TAIL) < 0) {
		free(na);
		return;
	}
	free(it->before);
	free(it->after);
	it->before = na;
	it->after = nb;
}

/* Which events of today's log made the differing PCRs differ from the log of sealing. */
static void explain_events(mb_unseal_explanation *e, const mb_sealed *s, const mb_unseal_options *opt,
			   uint32_t differ)
{
	mb_event_log *then = NULL, *owned = NULL;
	const mb_event_log *now;
	mb_diff d = { 0 };
	mb_error err = { 0 };
	size_t shown = 0;

	if (!s->eventlog && s->summary) {
		explain_from_summary(e, s, opt, differ);
		return;
	}
	if (!s->eventlog) {
		add_note(e, "The sealed file keeps no event log: cannot say which events changed.");
		return;
	}
	if (mb_event_log_parse(s->eventlog, s->eventlog_size, &then, &err) < 0) {
		add_note(e, "The event log kept in the sealed file does not parse: %s", err.message);
		return;
	}
	now = today_log(e, opt, &owned);
	if (!now) {
		mb_event_log_free(then);
		return;
	}
	if (mb_log_diff(then, now, &d, &err) < 0) {
		add_note(e, "Cannot compare the event logs: %s", err.message);
		goto out;
	}
	for (size_t i = 0; i < d.n_entries; i++) {
		const mb_diff_entry *de = &d.entries[i];
		mb_unseal_item *it;

		if (de->pcr >= MB_PCR_COUNT || !(differ & (1u << de->pcr)))
			continue;
		shown++;
		it = add_item(e, MB_UNSEAL_EVENT);
		if (!it)
			continue;
		it->pcr = de->pcr;
		it->change = de->kind == MB_DIFF_CHANGED ? "changed" : de->kind == MB_DIFF_ADDED ? "added" : "removed";
		/* "?" when the words cannot be made: the event is still named as changed */
		if (de->kind != MB_DIFF_ADDED)
			it->before = de->a ? event_words(then, de->a) : NULL;
		if (de->kind != MB_DIFF_REMOVED)
			it->after = de->b ? event_words(now, de->b) : NULL;
		if ((de->kind != MB_DIFF_ADDED && !it->before && !(it->before = strdup("?"))) ||
		    (de->kind != MB_DIFF_REMOVED && !it->after && !(it->after = strdup("?"))))
			e->incomplete = true;
		if (de->kind == MB_DIFF_CHANGED && de->a && de->b)
			mark_difference(it, de, s->pcrs.alg);
	}
	if (!shown)
		add_note(e, "The event logs show no change in these PCRs (extended outside the logged boot?).");
out:
	mb_diff_done(&d);
	mb_event_log_free(then);
	mb_event_log_free(owned);
}

static int refused(mb_error *err)
{
	return set_error(err, MB_ERR_TPM_POLICY, "the PCRs do not have the values the secret is sealed to");
}

/* The PCRs that moved since sealing (against the boot of sealing, s->pcrs); then the events that moved them. */
static int explain_failure(mb_unseal_explanation *e, mb_tpm *t, const mb_sealed *s, const mb_unseal_options *opt,
			   mb_error *err)
{
	mb_error read_err = { 0 };
	mb_pcr_bank now;
	int64_t differ;

	add_note(e, "Not unsealed: the PCRs do not hold the values the secret is sealed to.");
	differ = pcrs_differ(t, &s->pcrs, s->mask, &now, &read_err);
	if (differ < 0) {
		add_error(e, "TPM", &read_err);
		return refused(err);
	}
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if (differ & (1u << p))
			add_pcr(e, NULL, p, &s->pcrs, &now);
	if (!differ)
		add_note(e, "All sealed PCRs hold their sealed values now (they changed during the unseal?).");
	else
		explain_events(e, s, opt, (uint32_t) differ);
	return refused(err);
}

/* A PolicyPCR or PolicyOR object: the branch whose PCR values the TPM holds now is the one to satisfy
 * (the firmware-update window last: also while mboot's counter holds its value). */
static int unseal_pcr_state(mb_unseal_explanation *e, mb_tpm *t, const mb_sealed *s, const mb_unseal_options *opt,
			    uint8_t *out, size_t *out_size, mb_error *err)
{
	const mb_pcr_bank *bank = &s->pcrs;
	uint32_t mask = s->mask;
	tpm_nv_condition nv = { s->window_index, s->window_counter };
	bool use_window = false, window_closed = false;
	uint64_t counter = 0;
	uint8_t auth[32];
	size_t i;
	int r;

	for (i = 0; i < s->n_branches; i++) {
		mb_pcr_bank now;
		int64_t differ = pcrs_differ(t, &s->branch[i], s->branch_mask[i], &now, err);

		if (differ < 0)
			return (int) differ;
		if (differ)
			continue;
		if (s->window && i + 1 == s->n_branches) {
			mb_error cerr = { 0 };

			r = mb_tpm_counter_read(t, s->window_index, false, &counter, &cerr);
			if (r < 0 && r != -ENOENT && r != -EEXIST) {
				if (err)
					*err = cerr;
				return r;
			}
			if (r < 0 || counter != s->window_counter) {
				window_closed = true;
				if (r < 0)
					add_note(e, "The firmware-update window is closed: %s.", cerr.message);
				else
					add_note(e, "The firmware-update window is closed: mboot's NV counter 0x%08x is at "
						 "%llu, the window was open at %llu.", s->window_index,
						 (unsigned long long) counter, (unsigned long long) s->window_counter);
				continue;
			}
			use_window = true;
		}
		break;
	}
	if (s->n_branches && i == s->n_branches) {
		if (!window_closed)
			add_note(e, "None of the %zu PCR states the secret is sealed to holds now.", s->n_branches);
		return explain_failure(e, t, s, opt, err);
	}
	if (s->n_branches) {
		bank = &s->branch[i];
		mask = s->branch_mask[i];
	}
	if (s->pin) {
		r = tpm_pin_auth(opt->pin, opt->pin_size, auth, err);
		if (r < 0)
			return r;
	}
	r = tpm_unseal_pcr(t, s->pub, s->pub_size, s->priv, s->priv_size, s->parent_persistent, s->parent_handle,
			  bank->alg, mask, use_window ? &nv : NULL,
			  s->n_branches ? (const uint8_t (*)[32]) s->branch_digest : NULL, s->n_branches,
			  s->pin ? auth : NULL, out, out_size, err);
	explicit_bzero(auth, sizeof(auth));
	if (r == MB_ERR_TPM_POLICY)
		return explain_failure(e, t, s, opt, err);
	return r;
}

/*
 * A PolicyAuthorize object: every signature by the sealed key for today's values is a
 * candidate, in order: one the TPM refuses (a corrupt or relabelled file) must not hide
 * a good one after it. When none fits, say for each signature why.
 */
static int unseal_signed(mb_unseal_explanation *e, mb_tpm *t, const mb_sealed *s, const mb_unseal_options *opt,
			 uint8_t *out, size_t *out_size, mb_error *err)
{
	const mb_policy_signature *sigs = opt->signatures;
	size_t i, tried = 0, revoked = 0;
	char nbuf[32];

	if (!opt->n_signatures || !sigs)
		return set_error(err, -EINVAL, "the secret is sealed to signed policies: no signature given");
	for (i = 0; i < opt->n_signatures; i++) {
		mb_error try_err = { 0 };
		mb_pcr_bank now;
		int64_t differ;
		int r;

		if (memcmp(sigs[i].key_name, s->auth_key_name, MB_TPM_NAME_SIZE) != 0)
			continue;
		differ = pcrs_differ(t, &sigs[i].pcrs, sigs[i].mask, &now, err);
		if (differ < 0)
			return (int) differ;
		if (differ)
			continue;
		if (sigs[i].counter) {
			uint64_t counter = 0;
			mb_error cerr = { 0 };

			r = mb_tpm_counter_read(t, sigs[i].counter_index, false, &counter, &cerr);
			if (r < 0 && r != -ENOENT && r != -EEXIST) {
				if (err)
					*err = cerr;
				return r;
			}
			/* revoked (mboot policy revoke moved the counter on), or no such counter: not tried */
			if (r < 0) {
				revoked++;
				add_note(e, "Not unsealed with %s: %s.", signature_name(opt, i, nbuf), cerr.message);
				continue;
			}
			if (counter != sigs[i].counter_value) {
				revoked++;
				add_note(e, "Not unsealed with %s: revoked (signed for NV counter 0x%08x at %llu, which is "
					 "at %llu now).", signature_name(opt, i, nbuf), sigs[i].counter_index,
					 (unsigned long long) sigs[i].counter_value, (unsigned long long) counter);
				continue;
			}
		}
		tried++;
		r = tpm_unseal_authorized(t, s->pub, s->pub_size, s->priv, s->priv_size, s->parent_persistent,
					     s->parent_handle, s->auth_key, s->auth_key_size, &sigs[i], out, out_size,
					     &try_err);
		if (r == 0)
			return 0;
		if (try_err.code == MB_ERR_TPM_SIGNATURE) {
			add_note(e, "Not unsealed with %s: %s", signature_name(opt, i, nbuf), try_err.message);
			continue;
		}
		if (try_err.code == MB_ERR_TPM_POLICY) {
			add_note(e, "Not unsealed: the PCRs changed during the unseal: %s", try_err.message);
			if (err)
				*err = try_err;
			return MB_ERR_TPM_POLICY;
		}
		if (err)
			*err = try_err;
		if (try_err.code == -EBADMSG) /* a malformed signature the parser let through */
			return prefix_error(err, -EBADMSG, signature_name(opt, i, nbuf));
		return r;
	}
	if (tried || revoked)
		return refused(err);
	add_note(e, "Not unsealed: no signature approves the PCR values this machine holds.");
	for (i = 0; i < opt->n_signatures; i++) {
		mb_unseal_item *it;
		mb_pcr_bank now;
		int64_t differ;

		if (memcmp(sigs[i].key_name, s->auth_key_name, MB_TPM_NAME_SIZE) != 0) {
			it = add_item(e, MB_UNSEAL_OTHER_KEY);
			if (it) {
				it->signature = copy_name(e, signature_name(opt, i, nbuf));
				memcpy(it->key_name, sigs[i].key_name, MB_TPM_NAME_SIZE);
				memcpy(it->sealed_key_name, s->auth_key_name, MB_TPM_NAME_SIZE);
			}
			continue;
		}
		differ = pcrs_differ(t, &sigs[i].pcrs, sigs[i].mask, &now, err);
		if (differ < 0)
			return (int) differ;
		for (unsigned p = 0; p < MB_PCR_COUNT; p++)
			if (differ & (1u << p))
				add_pcr(e, signature_name(opt, i, nbuf), p, &sigs[i].pcrs, &now);
	}
	return refused(err);
}

MB_EXPORT int mb_tpm_unseal_sealed(mb_tpm *t, const mb_sealed *s, const mb_unseal_options *opt_in, uint8_t *out,
				   size_t *out_size, mb_unseal_explanation **explanation, mb_error *err)
{
	mb_unseal_options o;
	const mb_unseal_options *opt = &o;
	mb_unseal_explanation *e;
	int r;

	*out_size = 0;
	*explanation = NULL;
	r = OPTIONS_TAKE(o, opt_in, err);
	if (r < 0)
		return r;
	if (!s->authorized && opt->n_signatures)
		return set_error(err, -EINVAL, "the secret is sealed to PCR values, not to signed policies");
	if (s->pin && (!opt->pin || !opt->pin_size))
		return set_error(err, -ENOKEY, "the secret is sealed with a PIN: no PIN given");
	if (s->pin && opt->pin_size > MB_PIN_MAX)
		return set_error(err, -EINVAL, "a PIN of 1 to %u bytes, not %zu", MB_PIN_MAX, opt->pin_size);
	e = calloc(1, sizeof(*e));
	if (!e)
		return set_error(err, -ENOMEM, "out of memory");
	if (s->authorized)
		r = unseal_signed(e, t, s, opt, out, out_size, err);
	else
		r = unseal_pcr_state(e, t, s, opt, out, out_size, err);
	if (r < 0)
		*out_size = 0;
	if (e->n_items || e->incomplete)
		*explanation = e;
	else
		mb_unseal_explanation_free(e);
	return r;
}

MB_EXPORT void mb_unseal_explanation_free(mb_unseal_explanation *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_items; i++) {
		free(e->items[i].text);
		free(e->items[i].signature);
		free(e->items[i].before);
		free(e->items[i].after);
		free(e->items[i].what);
	}
	free(e->items);
	free(e);
}
