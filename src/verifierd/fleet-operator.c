/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator calls of docs/api.md (the token was checked by the router). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/base64.h"
#include "shared/fail.h"
#include "verifierd/fleet-internal.h"

/* Largest policy file taken (the library's own readers cap it too). */
#define FLEET_POLICY_MAX (4u << 20)
/* The events view: at most this many of a log's first events, and as many broken ones after. */
#define FLEET_EVENTS_SHOWN 2000

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

void fleet_list(fleet_worker *w, http_response *resp)
{
	store_machine *ms;
	mb_error err = { 0 };
	int64_t now = fleet_now();
	json_object *o, *arr;
	size_t i, n;
	int r;

	r = store_machine_list(w->d, &ms, &n, &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return;
	}
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "id", json_object_new_string(ms[i].id));
		json_object_object_add(e, "status", json_object_new_string(fleet_status_shown(w->f, &ms[i], now)));
		json_object_object_add(e, "enrolled", json_time(ms[i].enrolled));
		json_object_object_add(e, "last_attestation", json_time(ms[i].last_attestation));
		json_object_object_add(e, "interval", json_object_new_int64(fleet_interval_of(w->f, &ms[i])));
		json_object_object_add(e, "policy", str_or_null(ms[i].policy));
		json_object_object_add(e, "reasons", json_object_new_int64(ms[i].last_reasons));
		json_object_object_add(e, "changed", json_time(ms[i].status_changed));
		json_object_array_add(arr, e);
		store_machine_done(&ms[i]);
	}
	free(ms);
	o = json_object_new_object();
	json_object_object_add(o, "machines", arr);
	reply_json(resp, 200, o);
}

/* The machine, or 404 / 503 answered. */
static bool get_machine(fleet_worker *w, const char *id, store_machine *m, http_response *resp)
{
	mb_error err = { 0 };
	int r = store_machine_get(w->d, id, m, &err);

	if (r == -ENOENT)
		reply_error(resp, 404, "unknown machine %s", id);
	else if (r < 0)
		reply_db_error(resp, r, &err);
	return r >= 0;
}

void fleet_show(fleet_worker *w, const char *id, http_response *resp)
{
	store_history h[STORE_HISTORY];
	store_machine m;
	mb_error err = { 0 };
	json_object *o, *rec, *hist;
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
	rec = json_tokener_parse(m.record);
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(m.id));
	json_object_object_add(o, "status", json_object_new_string(fleet_status_shown(w->f, &m, fleet_now())));
	json_object_object_add(o, "enrolled", json_time(m.enrolled));
	json_object_object_add(o, "last_attestation", json_time(m.last_attestation));
	json_object_object_add(o, "interval", json_object_new_int64(fleet_interval_of(w->f, &m)));
	json_object_object_add(o, "policy", str_or_null(m.policy));
	json_object_object_add(o, "changed", json_time(m.status_changed));
	json_object_object_add(o, "ak_name", json_object_get(json_object_object_get(rec, "ak_name")));
	json_object_object_add(o, "ek_certificate_sha256",
			       json_object_get(json_object_object_get(rec, "ek_certificate_sha256")));
	json_object_object_add(o, "verdict", m.last_verdict ? json_tokener_parse(m.last_verdict) : NULL);
	hist = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "at", json_time(h[i].at));
		json_object_object_add(e, "trusted", json_object_new_boolean(h[i].trusted));
		json_object_object_add(e, "reasons", json_object_new_int64(h[i].reasons));
		json_object_array_add(hist, e);
	}
	json_object_object_add(o, "history", hist);
	json_object_put(rec);
	store_machine_done(&m);
	reply_json(resp, 200, o);
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

typedef struct broken_mark {
	bool broken;
	char why[256];
} broken_mark;

/* What the verdict names: the PCRs whose log did not replay, the events the policy refused. */
static void mark_broken(json_object *verdict, const mb_event_log *log, broken_mark *marks, size_t n)
{
	json_object *logs, *pcrs, *policy, *viol;
	size_t i, k;

	if (json_object_object_get_ex(verdict, "logs", &logs) && json_object_object_get_ex(logs, "pcrs", &pcrs))
		for (k = 0; k < json_object_array_length(pcrs); k++) {
			json_object *p = json_object_array_get_idx(pcrs, k);
			const char *v = json_object_get_string(json_object_object_get(p, "verdict"));
			int pcr = json_object_get_int(json_object_object_get(p, "pcr"));

			if (!v || strcmp(v, "verified") == 0)
				continue;
			/* The log of this PCR does not replay to the quoted value: each of its
			 * events is suspect, none can be trusted. */
			for (i = 0; i < n; i++) {
				const mb_event *ev = mb_event_log_event(log, i);

				if (ev->pcr == (uint32_t) pcr && mb_event_extends(ev) && !marks[i].broken) {
					marks[i].broken = true;
					snprintf(marks[i].why, sizeof(marks[i].why), "PCR %d (%s): %s", pcr,
						 json_object_get_string(json_object_object_get(p, "bank")), v);
				}
			}
		}
	if (json_object_object_get_ex(verdict, "policy", &policy) && json_object_object_get_ex(policy, "violations", &viol))
		for (k = 0; k < json_object_array_length(viol); k++) {
			json_object *x = json_object_array_get_idx(viol, k), *e;
			int64_t ev;

			if (!json_object_object_get_ex(x, "event", &e))
				continue;
			ev = json_object_get_int64(e);
			for (i = 0; i < n; i++)
				if (mb_event_log_event(log, i)->number == (uint64_t) ev) {
					marks[i].broken = true;
					snprintf(marks[i].why, sizeof(marks[i].why), "policy: %s",
						 json_object_get_string(json_object_object_get(x, "reason")));
				}
		}
}

static json_object *event_json(const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec,
			       const broken_mark *mark)
{
	json_object *e = json_object_new_object(), *dg = json_object_new_object();
	const char *t = mb_event_type_name(ev->type);
	char tb[16], hex[2 * 64 + 1];
	uint32_t k;
	char *dj = NULL;

	if (!t)
		snprintf(tb, sizeof(tb), "0x%08x", ev->type);
	json_object_object_add(e, "index", json_object_new_int64(ev->number));
	json_object_object_add(e, "pcr", json_object_new_int64(ev->pcr));
	json_object_object_add(e, "type", json_object_new_string(t ? t : tb));
	for (k = 0; k < ev->n_digests; k++) {
		const mb_digest_info *di = mb_digest_by_alg(ev->digests[k].alg);
		size_t b;

		if (!di || ev->digests[k].size > 64)
			continue;
		for (b = 0; b < ev->digests[k].size; b++)
			snprintf(hex + 2 * b, 3, "%02x", ev->digests[k].bytes[b]);
		hex[2 * ev->digests[k].size] = 0;
		json_object_object_add(dg, di->name, json_object_new_string(hex));
	}
	json_object_object_add(e, "digests", dg);
	if (mb_event_decode(log, ev, dec) >= 0)
		dj = mb_event_decoded_json(dec);
	json_object_object_add(e, "decoded", dj ? json_tokener_parse(dj) : json_object_new_object());
	free(dj);
	json_object_object_add(e, "broken", json_object_new_boolean(mark->broken));
	json_object_object_add(e, "why", mark->broken ? json_object_new_string(mark->why) : NULL);
	return e;
}

void fleet_events(fleet_worker *w, const char *id, http_response *resp)
{
	store_machine m;
	mb_error err = { 0 };
	char *evidence = NULL;
	json_object *ev_json = NULL, *verdict = NULL, *arr = json_object_new_array(), *o;
	mb_event_log *log = NULL;
	mb_event_decoded *dec = NULL;
	broken_mark *marks = NULL;
	uint8_t *bytes;
	size_t size = 0, i, n = 0, shown = 0, n_broken_late = 0;
	int r;

	if (!get_machine(w, id, &m, resp)) {
		json_object_put(arr);
		return;
	}
	r = store_machine_last_evidence(w->d, id, &evidence, &err);
	if (r < 0 && r != -ENOENT) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	if (evidence)
		ev_json = json_tokener_parse(evidence);
	bytes = b64_decode(json_object_get_string(json_object_object_get(ev_json, "eventlog")), &size);
	if (bytes && mb_event_log_parse(bytes, size, &log, &err) >= 0) {
		n = mb_event_log_count(log);
		marks = calloc(n ? n : 1, sizeof(*marks));
		dec = mb_event_decoded_new();
		if (!marks || !dec) {
			free(bytes);
			reply_error(resp, 500, "out of memory");
			goto out;
		}
		verdict = m.last_verdict ? json_tokener_parse(m.last_verdict) : NULL;
		mark_broken(verdict, log, marks, n);
		/* The first events, then only the broken ones, each part capped: a machine's log of
		 * any length costs a bounded answer, and the events the verdict names are there. */
		for (i = 0; i < n; i++)
			if (i < FLEET_EVENTS_SHOWN || (marks[i].broken && n_broken_late++ < FLEET_EVENTS_SHOWN)) {
				json_object_array_add(arr, event_json(log, mb_event_log_event(log, i), dec, &marks[i]));
				shown++;
			}
	}
	free(bytes);
	o = json_object_new_object();
	json_object_object_add(o, "events", arr);
	json_object_object_add(o, "total", json_object_new_int64((int64_t) n));
	json_object_object_add(o, "omitted", json_object_new_int64((int64_t) (n - shown)));
	arr = NULL;
	reply_json(resp, 200, o);
out:
	json_object_put(arr);
	json_object_put(ev_json);
	json_object_put(verdict);
	mb_event_decoded_free(dec);
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
	bool db_error;
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
			r = fleet_judge(w, &m, evidence, strlen(evidence), m.last_nonce, &j, err, &db_error);
		free(evidence);
		evidence = NULL;
		if (r >= 0) {
			r = store_rejudge_tx(w->d, id, m.generation, m.last_nonce, fleet_now(), j.trusted, j.n_reasons,
					     j.verdict, err);
			free(j.verdict);
		}
		store_machine_done(&m);
		if (r >= 0) {
			*ret_status = j.trusted ? "trusted" : "untrusted";
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
	json_object *o;
	int r = rejudge(w, id, &status, &err);

	if (r == -ENOENT) {
		reply_error(resp, 404, "unknown machine %s", id);
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
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "policy", str_or_null(sha));
	json_object_object_add(o, "status", json_object_new_string(status));
	reply_json(resp, 200, o);
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
	r = store_policy_put(w->d, sha, req->body, &err);
	if (r >= 0)
		r = store_machine_set_policy(w->d, id, sha, &err);
	if (reply_machine_failed(resp, r, &err, id))
		return;
	policy_answer(w, id, sha, resp);
}

void fleet_policy_delete(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	int r = store_machine_set_policy(w->d, id, NULL, &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	policy_answer(w, id, NULL, resp);
}

void fleet_revoke(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	json_object *o;
	int r = store_machine_revoke(w->d, id, fleet_now(), &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string("revoked"));
	reply_json(resp, 200, o);
}

static int forget_tx(db *d, void *id, mb_error *err)
{
	return store_machine_delete_tx(d, id, err);
}

void fleet_forget(fleet_worker *w, const char *id, http_response *resp)
{
	mb_error err = { 0 };
	json_object *o;
	int r = fleet_transaction(w->d, forget_tx, (void *) id, &err);

	if (reply_machine_failed(resp, r, &err, id))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "forgotten", json_object_new_boolean(true));
	reply_json(resp, 200, o);
}
