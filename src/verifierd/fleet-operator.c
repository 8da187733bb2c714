/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator calls of docs/api.md (the token was checked by the router). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/base64.h"
#include "shared/fail.h"
#include "shared/jsonout.h"
#include "verifierd/fleet-internal.h"

/* Largest policy file taken (the library's own readers cap it too). */
#define FLEET_POLICY_MAX (4u << 20)
/* The events view: at most this many of a log's first events, and as many broken ones after. */
#define FLEET_EVENTS_SHOWN 2000

static json_t *str_or_null(const char *s)
{
	return s ? json_text(s) : json_null();
}

void fleet_list(fleet_worker *w, http_response *resp)
{
	store_machine *ms;
	mb_error err = { 0 };
	int64_t now = fleet_now();
	json_t *o, *arr;
	size_t i, n;
	int r;

	r = store_machine_list(w->d, &ms, &n, &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return;
	}
	arr = json_array();
	for (i = 0; i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "id", json_text(ms[i].id));
		json_object_set_new(e, "status", json_text(fleet_status_shown(w->f, &ms[i], now)));
		json_object_set_new(e, "enrolled", json_time(ms[i].enrolled));
		json_object_set_new(e, "last_attestation", json_time(ms[i].last_attestation));
		json_object_set_new(e, "interval", json_integer(fleet_interval_of(w->f, &ms[i])));
		json_object_set_new(e, "policy", str_or_null(ms[i].policy));
		json_object_set_new(e, "reasons", json_integer(ms[i].last_reasons));
		json_object_set_new(e, "changed", json_time(ms[i].status_changed));
		json_array_append_new(arr, e);
		store_machine_done(&ms[i]);
	}
	free(ms);
	o = json_object();
	json_object_set_new(o, "machines", arr);
	reply_json(resp, 200, o);
}

/* The machine, or 404 / 503 answered. */
static bool get_machine(fleet_worker *w, const char *id, store_machine *m, http_response *resp)
{
	mb_error err = { 0 };
	int r = store_machine_get(w->d, id, m, &err);

	if (r == -ENOENT)
		reply_error(resp, 404, "unknown machine %s ('mboot fleet list' lists the machines)", id);
	else if (r < 0)
		reply_db_error(resp, r, &err);
	return r >= 0;
}

/* Base64 of the evidence's firmware log into bytes (the library judged that evidence, so the
 * field is well-formed; anything else is taken as no log). */
static uint8_t *b64_decode(const char *s, size_t *ret_size)
{
	uint8_t *buf;

	if (!s || !*s || base64_decode(s, strlen(s), SIZE_MAX / 2, &buf, ret_size) < 0)
		return NULL;
	return buf;
}

/* An evidence's firmware log, parsed (NULL: none, or not one). */
static mb_event_log *evidence_log(const char *evidence)
{
	json_t *ev = evidence ? json_from_text(evidence) : NULL;
	size_t size = 0;
	uint8_t *bytes = b64_decode(json_string_value(json_object_get(ev, "eventlog")), &size);
	mb_event_log *log = NULL;
	mb_error err = { 0 };

	if (bytes && mb_event_log_parse(bytes, size, &log, &err) < 0)
		log = NULL;
	free(bytes);
	json_decref(ev);
	return log;
}

/*
 * What changed since the machine's last trusted boot (issue 31): the log of its last trusted
 * attestation against now's, as `mboot log diff` aligns them. Only for a machine that is not
 * trusted now and was trusted once since it enrolled; otherwise (or when that evidence cannot
 * be read) have is false and nothing is said.
 */
typedef struct since_trusted {
	mb_event_log *log; /* the trusted boot's */
	mb_diff diff;
	bool have;
} since_trusted;

static void since_trusted_load(fleet_worker *w, const store_machine *m, const mb_event_log *now, since_trusted *s)
{
	mb_error err = { 0 };
	char *text = NULL;

	memset(s, 0, sizeof(*s));
	if (!now || !m->status || strcmp(m->status, "untrusted") != 0)
		return;
	if (store_machine_trusted_evidence(w->d, m->id, &text, &err) < 0)
		return;
	s->log = evidence_log(text);
	free(text);
	if (s->log && mb_log_diff(s->log, now, &s->diff, &err) >= 0)
		s->have = true;
}

static void since_trusted_done(since_trusted *s)
{
	if (s->have)
		mb_diff_done(&s->diff);
	mb_event_log_free(s->log);
}

/* "since_trusted": null, or each difference as {"change", "pcr", "event" (now's index or null),
 * "trusted_event" (the trusted boot's or null), "type", "description"}. */
static json_t *since_trusted_json(const since_trusted *s, const mb_event_log *now)
{
	json_t *a;
	size_t i;

	if (!s->have)
		return json_null();
	a = json_array();
	for (i = 0; i < s->diff.n_entries; i++) {
		const mb_diff_entry *e = &s->diff.entries[i];
		const mb_event *ev = e->b ? e->b : e->a;
		char tb[MB_EVENT_TYPE_LABEL_SIZE], *desc = mb_event_description(e->b ? now : s->log, ev);
		json_t *o = json_object();

		json_object_set_new(o, "change", json_text(mb_diff_kind_name(e->kind)));
		json_object_set_new(o, "pcr", json_integer(e->pcr));
		json_object_set_new(o, "event", e->b ? json_integer(e->b->number) : json_null());
		json_object_set_new(o, "trusted_event", e->a ? json_integer(e->a->number) : json_null());
		json_object_set_new(o, "type", json_text(mb_event_type_label(ev->type, tb)));
		json_object_set_new(o, "description", json_text(desc ? desc : ""));
		if (!desc)
			json_build_note_failure();
		free(desc);
		json_array_append_new(a, o);
	}
	return a;
}

/* The audit trail's entries (of one machine, or all) as [{"at", "operator", "action",
 * "machine_id", "detail"}], newest first; NULL after answering a database error. */
static json_t *audit_json(fleet_worker *w, const char *id, http_response *resp)
{
	store_audit *a = NULL;
	mb_error err = { 0 };
	size_t i, n = 0;
	json_t *list;
	int r = store_audit_get(w->d, id, &a, &n, &err);

	if (r < 0) {
		reply_db_error(resp, r, &err);
		return NULL;
	}
	list = json_array();
	for (i = 0; i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "at", json_time(a[i].at_us / 1000000));
		json_object_set_new(e, "operator", json_text(a[i].operator_name));
		json_object_set_new(e, "action", json_text(a[i].action));
		json_object_set_new(e, "machine_id", a[i].machine_id ? json_text(a[i].machine_id) : json_null());
		json_object_set_new(e, "detail", a[i].detail ? json_text(a[i].detail) : json_null());
		json_array_append_new(list, e);
	}
	store_audit_free(a, n);
	return list;
}

void fleet_audit(fleet_worker *w, http_response *resp)
{
	json_t *list = audit_json(w, NULL, resp), *o;

	if (!list)
		return;
	o = json_object();
	json_object_set_new(o, "entries", list);
	reply_json(resp, 200, o);
}

void fleet_show(fleet_worker *w, const char *id, http_response *resp)
{
	store_history h[STORE_HISTORY];
	store_machine m;
	mb_error err = { 0 };
	json_t *o, *rec, *hist;
	size_t i, n;
	int r;

	if (!get_machine(w, id, &m, resp))
		return;
	r = store_history_get(w->d, id, h, STORE_HISTORY, &n, &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		store_machine_done(&m);
		return;
	}
	rec = json_from_text(m.record);
	o = json_object();
	json_object_set_new(o, "id", json_text(m.id));
	json_object_set_new(o, "status", json_text(fleet_status_shown(w->f, &m, fleet_now())));
	json_object_set_new(o, "enrolled", json_time(m.enrolled));
	json_object_set_new(o, "last_attestation", json_time(m.last_attestation));
	json_object_set_new(o, "interval", json_integer(fleet_interval_of(w->f, &m)));
	json_object_set_new(o, "policy", str_or_null(m.policy));
	json_object_set_new(o, "changed", json_time(m.status_changed));
	json_object_set_new(o, "ak_name", json_incref(json_object_get(rec, "ak_name")));
	json_object_set_new(o, "ek_certificate_sha256",
			       json_incref(json_object_get(rec, "ek_certificate_sha256")));
	json_object_set_new(o, "verdict", m.last_verdict ? json_from_text(m.last_verdict) : json_null());
	{
		char *evidence = NULL;
		mb_event_log *now = NULL;
		since_trusted st;

		/* Not for a trusted machine: since_trusted_load asks for none then. */
		if (m.status && strcmp(m.status, "untrusted") == 0 &&
		    store_machine_last_evidence(w->d, id, &evidence, &err) >= 0)
			now = evidence_log(evidence);
		free(evidence);
		since_trusted_load(w, &m, now, &st);
		json_object_set_new(o, "since_trusted", since_trusted_json(&st, now));
		since_trusted_done(&st);
		mb_event_log_free(now);
	}
	hist = json_array();
	for (i = 0; i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "at", json_time(h[i].at));
		json_object_set_new(e, "trusted", json_boolean(h[i].trusted));
		json_object_set_new(e, "reasons", json_integer(h[i].reasons));
		json_array_append_new(hist, e);
	}
	json_object_set_new(o, "history", hist);
	json_decref(rec);
	{
		/* The last operator actions on this machine (the page shows them, so does fleet show). */
		json_t *audit = audit_json(w, id, resp);

		if (!audit) {
			json_decref(o);
			store_machine_done(&m);
			return;
		}
		while (json_array_size(audit) > STORE_HISTORY)
			json_array_remove(audit, json_array_size(audit) - 1);
		json_object_set_new(o, "audit", audit);
	}
	store_machine_done(&m);
	reply_json(resp, 200, o);
}

typedef struct broken_mark {
	bool broken;
	const char *changed; /* since the last trusted boot: "added", "changed", or NULL */
	char why[256];
} broken_mark;

/* The index of ev in log (events are numbered from 0 in order). */
static size_t event_slot(const mb_event_log *log, const mb_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (mb_event_log_event(log, i) == ev)
			return i;
	return SIZE_MAX;
}

/*
 * What the verdict names: the PCRs whose log did not replay, the events the policy refused. With
 * the last trusted boot to compare with (st), a PCR that did not replay marks the events of it
 * that changed since then, not every one of its events: those are the ones to look at.
 */
static void mark_broken(json_t *verdict, const mb_event_log *log, broken_mark *marks, size_t n,
			const since_trusted *st)
{
	json_t *logs, *pcrs, *policy, *viol;
	uint32_t changed_pcrs = 0;
	size_t i, k;

	for (k = 0; st->have && k < st->diff.n_entries; k++) {
		const mb_diff_entry *e = &st->diff.entries[k];

		if (e->b && (i = event_slot(log, e->b, n)) != SIZE_MAX) {
			marks[i].changed = mb_diff_kind_name(e->kind);
			changed_pcrs |= e->pcr < MB_PCR_COUNT ? 1u << e->pcr : 0;
		}
	}

	if (((logs = json_object_get(verdict, "logs")) != NULL) && ((pcrs = json_object_get(logs, "pcrs")) != NULL))
		for (k = 0; k < json_array_size(pcrs); k++) {
			json_t *p = json_array_get(pcrs, k);
			const char *v = json_string_value(json_object_get(p, "verdict"));
			int pcr = (int) json_integer_value(json_object_get(p, "pcr"));

			if (!v || strcmp(v, "verified") == 0)
				continue;
			/* The log of this PCR does not replay to the quoted value: each of its
			 * events is suspect, none can be trusted. */
			for (i = 0; i < n; i++) {
				const mb_event *ev = mb_event_log_event(log, i);

				if (ev->pcr == (uint32_t) pcr && mb_event_extends(ev) && !marks[i].broken &&
				    (!(changed_pcrs & (1u << ev->pcr)) || marks[i].changed)) {
					marks[i].broken = true;
					snprintf(marks[i].why, sizeof(marks[i].why), "PCR %d (%s): %s", pcr,
						 json_string_value(json_object_get(p, "bank")), v);
				}
			}
		}
	if (((policy = json_object_get(verdict, "policy")) != NULL) && ((viol = json_object_get(policy, "violations")) != NULL))
		for (k = 0; k < json_array_size(viol); k++) {
			json_t *x = json_array_get(viol, k), *e;
			int64_t ev;

			if (!(e = json_object_get(x, "event")))
				continue;
			ev = json_integer_value(e);
			for (i = 0; i < n; i++)
				if (mb_event_log_event(log, i)->number == (uint64_t) ev) {
					marks[i].broken = true;
					snprintf(marks[i].why, sizeof(marks[i].why), "policy: %s",
						 json_string_value(json_object_get(x, "reason")));
				}
		}
}

/*
 * One event of the answer: the event as `mboot log show --json` writes it (mb_event_to_json, the
 * one writer of that shape; its decoded data may hold integers up to 2^64 - 1, more than a tree
 * here holds), with the verdict's mark added as its last members. The compact object ends with
 * its closing brace: the marks go before it.
 */
static void event_write(jsonout *b, const mb_event_log *log, const mb_event *ev, const broken_mark *mark)
{
	char *text = mb_event_to_json(log, ev, false);
	size_t len = text ? strlen(text) : 0;

	if (len < 2 || text[len - 1] != '}') {
		b->oom = true;
		free(text);
		return;
	}
	jsonout_put(b, text, len - 1);
	free(text);
	jsonout_lit(b, ",\"broken\":");
	if (mark->broken) {
		jsonout_lit(b, "true,\"why\":");
		jsonout_string(b, mark->why, strlen(mark->why));
	} else {
		jsonout_lit(b, "false,\"why\":null");
	}
	jsonout_lit(b, ",\"changed\":");
	if (mark->changed)
		jsonout_string(b, mark->changed, strlen(mark->changed));
	else
		jsonout_lit(b, "null");
	jsonout_lit(b, "}");
}

void fleet_events(fleet_worker *w, const char *id, http_response *resp)
{
	store_machine m;
	mb_error err = { 0 };
	char *evidence = NULL;
	json_t *verdict = NULL, *since = NULL;
	jsonout b = { 0 };
	mb_event_log *log = NULL;
	broken_mark *marks = NULL;
	since_trusted st = { 0 };
	size_t i, n = 0, shown = 0, n_broken_late = 0;
	int r;

	if (!get_machine(w, id, &m, resp))
		return;
	r = store_machine_last_evidence(w->d, id, &evidence, &err);
	if (r < 0 && r != -ENOENT) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	log = evidence_log(evidence);
	if (log) {
		n = mb_event_log_count(log);
		marks = calloc(n ? n : 1, sizeof(*marks));
		if (!marks) {
			reply_error(resp, 500, "out of memory");
			goto out;
		}
		since_trusted_load(w, &m, log, &st);
		verdict = m.last_verdict ? json_from_text(m.last_verdict) : NULL;
		mark_broken(verdict, log, marks, n, &st);
	}
	jsonout_open(&b, '{');
	jsonout_key(&b, "events");
	jsonout_open(&b, '[');
	/* The first events, then only the broken or changed ones, each part capped: a machine's log of any
	 * length costs a bounded answer, and the events the verdict names are there. */
	for (i = 0; i < n; i++)
		if (i < FLEET_EVENTS_SHOWN ||
		    ((marks[i].broken || marks[i].changed) && n_broken_late++ < FLEET_EVENTS_SHOWN)) {
			jsonout_next(&b);
			event_write(&b, log, mb_event_log_event(log, i), &marks[i]);
			shown++;
		}
	jsonout_close(&b, ']');
	jsonout_key(&b, "total");
	jsonout_u64(&b, n);
	jsonout_key(&b, "omitted");
	jsonout_u64(&b, n - shown);
	/* Every difference from the last trusted boot, those gone from this log included. */
	jsonout_key(&b, "since_trusted");
	since = since_trusted_json(&st, log);
	if (since)
		jsonout_json(&b, since);
	else
		b.oom = true;
	jsonout_close(&b, '}');
	jsonout_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		b.p = NULL;
	}
	reply_text(resp, 200, b.p);
out:
	json_decref(since);
	since_trusted_done(&st);
	json_decref(verdict);
	mb_event_log_free(log);
	free(marks);
	free(evidence);
	store_machine_done(&m);
}

/* The status after the policy changed: the last evidence judged again with its own nonce. */
static int rejudge(fleet_worker *w, const char *id, const char **ret_status, mb_error *err)
{
	store_machine m;
	fleet_judgment j;
	char *evidence = NULL;
	bool db_error, stale = false;
	int r, i;

	for (i = 0; i < 3; i++) {
		r = store_machine_get(w->d, id, &m, err);
		if (r < 0)
			return r;
		if (!m.last_nonce || strcmp(m.status, "revoked") == 0) {
			*ret_status = fleet_status_shown(w->f, &m, fleet_now());
			/* Static strings: fleet_status_shown returns "stale" or m.status. */
			*ret_status = strcmp(*ret_status, "stale") == 0 ? "stale"
				      : strcmp(*ret_status, "revoked") == 0 ? "revoked"
									 : "enrolled";
			store_machine_done(&m);
			return 0;
		}
		r = store_machine_last_evidence(w->d, id, &evidence, err);
		if (r >= 0)
			/* the evidence with its own nonce: a later attestation of its boot stored none */
			r = fleet_judge(w, &m, evidence, strlen(evidence), m.evidence_nonce ? m.evidence_nonce : m.last_nonce,
					&j, err, &db_error);
		free(evidence);
		evidence = NULL;
		if (r >= 0) {
			stale = m.stale_announced != 0;
			pthread_mutex_lock(fleet_machine_lock(w->f, id));
			r = store_rejudge_tx(w->d, id, m.generation, m.last_nonce, fleet_now(), j.trusted, j.n_reasons,
					     j.verdict, j.ima_state, &stale, err);
			fleet_row_forget(w->f, id);
			pthread_mutex_unlock(fleet_machine_lock(w->f, id));
			/* A machine announced stale stays stale (shown and told) until it attests. */
			if (r >= 0 && !stale)
				notify_change_send(w->f->notify, &(notify_change){ .machine_id = id,
					.old_status = m.status, .new_status = j.trusted ? "trusted" : "untrusted",
					.cause = "policy", .nonce = m.last_nonce, .verdict = j.verdict,
					.operator_name = w->operator_name[0] ? w->operator_name : NULL, .at = fleet_now() });
			free(j.verdict);
			free(j.ima_state);
		}
		store_machine_done(&m);
		if (r >= 0) {
			*ret_status = stale ? "stale" : j.trusted ? "trusted" : "untrusted";
			return 0;
		}
		/* -ENOENT: new evidence arrived meanwhile (or the machine went): look again. */
		if (r != -ENOENT)
			return r;
	}
	return r;
}

static void policy_answer(fleet_worker *w, const char *id, const char *sha, http_response *resp)
{
	const char *status = NULL;
	mb_error err = { 0 };
	json_t *o;
	int r = rejudge(w, id, &status, &err);

	if (r == -ENOENT) {
		reply_error(resp, 404, "unknown machine %s ('mboot fleet list' lists the machines)", id);
		return;
	}
	if (r < 0) {
		/* The policy is stored; the old verdict stands until the next evidence. */
		if (r == -ENOTCONN || r == -EIO || r == -EBUSY)
			reply_db_error(resp, r, &err);
		else
			reply_error(resp, 500, "the policy is set, but the last evidence could not be judged again: %s",
				    err.message);
		return;
	}
	o = json_object();
	json_object_set_new(o, "id", json_text(id));
	json_object_set_new(o, "policy", str_or_null(sha));
	json_object_set_new(o, "status", json_text(status));
	reply_json(resp, 200, o);
}

/*
 * An operator's change of a machine and its line in the audit trail, in one transaction: the
 * trail holds what was done, and nothing that was not.
 */
typedef struct audited {
	const char *operator_name, *action, *id;
	const char *sha, *policy_text; /* policy-set */
	int64_t at_us;
	bool want_old;       /* revoke, forget with webhooks: the status before, read in the transaction */
	char old_status[16]; /* "": no such machine (a pending enrollment only) */
} audited;

static int audited_tx(db *d, void *ctx, mb_error *err)
{
	audited *a = ctx;
	store_machine m;
	int r;

	a->old_status[0] = '\0';
	if (a->want_old) {
		r = store_machine_get_tx(d, a->id, &m, err);
		if (r < 0 && r != -ENOENT)
			return r;
		if (r >= 0)
			snprintf(a->old_status, sizeof(a->old_status), "%s", fleet_status_told(&m));
		if (r >= 0)
			store_machine_done(&m);
	}
	if (strcmp(a->action, "policy-set") == 0) {
		r = store_policy_put(d, a->sha, a->policy_text, err);
		if (r >= 0)
			r = store_machine_set_policy(d, a->id, a->sha, err);
	} else if (strcmp(a->action, "policy-clear") == 0) {
		r = store_machine_set_policy(d, a->id, NULL, err);
	} else if (strcmp(a->action, "revoke") == 0) {
		r = store_machine_revoke(d, a->id, a->at_us / 1000000, err);
	} else {
		r = store_machine_delete_tx(d, a->id, err);
	}
	if (r >= 0)
		r = store_audit_add(d, a->at_us, a->operator_name, a->action, a->id, a->sha, err);
	return r;
}

static int audited_do(fleet_worker *w, const char *action, const char *id, const char *sha, const char *text,
		      mb_error *err)
{
	audited a = { .operator_name = w->operator_name[0] ? w->operator_name : "?", .action = action, .id = id,
		      .sha = sha, .policy_text = text, .at_us = fleet_now_us(),
		      .want_old = w->f->notify && (strcmp(action, "revoke") == 0 || strcmp(action, "forget") == 0) };
	int r;

	/* under the machine's lock, with the drop of its kept row: a nonce's read from before the
	 * change is not kept after it (fleet-machine.c) */
	pthread_mutex_lock(fleet_machine_lock(w->f, id));
	r = fleet_transaction(w->d, audited_tx, &a, err);
	fleet_row_forget(w->f, id);
	pthread_mutex_unlock(fleet_machine_lock(w->f, id));
	/* Committed: a revoke or forget of a machine is a status change for the webhooks. */
	if (r >= 0 && a.want_old && a.old_status[0])
		notify_change_send(w->f->notify, &(notify_change){ .machine_id = id, .old_status = a.old_status,
			.new_status = strcmp(action, "revoke") == 0 ? "revoked" : NULL, .cause = action,
			.operator_name = a.operator_name, .at = a.at_us / 1000000 });
	return r;
}

void fleet_policy_put(fleet_worker *w, const char *id, const http_request *req, http_response *resp)
{
	mb_policy *p = NULL;
	mb_error err = { 0 };
	char sha[65];
	int r;

	if (req->body_size > FLEET_POLICY_MAX || strlen(req->body) != req->body_size) {
		reply_error(resp, 400, "the policy is over %u bytes or holds a NUL byte", FLEET_POLICY_MAX);
		return;
	}
	r = mb_policy_parse(req->body, req->body_size, &p, &err);
	if (r < 0) {
		reply_error(resp, r == -ENOMEM ? 500 : 400, "the policy: %s", err.message);
		return;
	}
	mb_policy_free(p);
	sha256_hex(req->body, req->body_size, sha);
	r = audited_do(w, "policy-set", id, sha, req->body, &err);
	if (reply_machine_failed(resp, r, &err, id))
		return;
	policy_answer(w, id, sha, resp);
}

void fleet_policy_delete(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	int r = audited_do(w, "policy-clear", id, NULL, NULL, &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	policy_answer(w, id, NULL, resp);
}

void fleet_revoke(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	json_t *o;
	int r = audited_do(w, "revoke", id, NULL, NULL, &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	o = json_object();
	json_object_set_new(o, "id", json_text(id));
	json_object_set_new(o, "status", json_text("revoked"));
	reply_json(resp, 200, o);
}

void fleet_forget(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	json_t *o;
	int r = audited_do(w, "forget", id, NULL, NULL, &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	o = json_object();
	json_object_set_new(o, "id", json_text(id));
	json_object_set_new(o, "forgotten", json_boolean(true));
	reply_json(resp, 200, o);
}
