/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The machine calls of docs/api.md: enroll, activate, nonce, evidence. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "shared/base64.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "verifierd/fleet-internal.h"

/* SHA-256 of the bytes of a base64 string (the EK's TPM2B_PUBLIC), so that the request's and the
 * machine record's spellings of one key compare equal. */
static int b64_sha256(const char *b64, char out[65])
{
	uint8_t *buf;
	size_t size;
	int r;

	if (!b64 || !*b64)
		return -EBADMSG;
	r = base64_decode(b64, strlen(b64), 1u << 20, &buf, &size);
	if (r < 0)
		return r;
	sha256_hex(buf, size, out);
	free(buf);
	return 0;
}

/* o.keys[0].keys[1]... as a string, or NULL. */
static const char *json_path_string(json_t *o, const char *const *keys)
{
	for (; *keys; keys++)
		if (!(o = json_object_get(o, *keys)))
			return NULL;
	return json_is_string(o) ? json_string_value(o) : NULL;
}

/* The EK's fingerprint from the library's own output (a state or a machine record). */
static int ek_sha256_of(const char *json, const char *const *keys, char out[65])
{
	json_t *o = json_from_text(json);
	int r = b64_sha256(json_path_string(o, keys), out);

	json_decref(o);
	return r;
}

/* A machine known to the fleet that may not use this call: 403 (revoked) answered. */
static bool refused_revoked(const store_machine *m, http_response *resp)
{
	if (strcmp(m->status, "revoked") != 0)
		return false;
	reply_error(resp, 403, "machine %s is revoked: an operator refused it (it enrolls again only once "
		    "forgotten: 'mboot fleet forget %s')", m->id, m->id);
	return true;
}

pthread_mutex_t *fleet_machine_lock(fleet *f, const char *id)
{
	uint32_t h = 2166136261u;

	/* FNV-1a of the id */
	for (; *id; id++)
		h = (h ^ (uint8_t) *id) * 16777619u;
	return &f->machine_locks[h & (FLEET_MACHINE_LOCKS - 1)];
}

/* One TPM is one machine: the 409 for an EK enrolled under another id. */
static void reply_ek_taken(http_response *resp, const char *id, const char *other)
{
	reply_error(resp, 409, "this TPM (its EK) is enrolled as machine %s: one TPM is one machine; push as %s, "
		    "or 'mboot fleet forget %s' first to enroll it as %s", other, other, other, id);
}

void fleet_enroll(fleet_worker *w, const http_request *req, http_response *resp)
{
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .roots = w->f->ek_roots, .allow_no_ek_cert = w->f->allow_no_ek_cert,
					     .ek_check_validity = w->f->ek_check_validity };
	fleet_enroll_body body;
	store_machine m = { 0 };
	mb_error err = { 0 };
	char *challenge = NULL, *state = NULL, *other = NULL, ek[65];
	json_t *o;
	int64_t interval;
	int r;

	r = fleet_enroll_body_parse(req->body, req->body_size, &body, &err);
	if (r < 0) {
		reply_error(resp, 400, "%s", err.message);
		return;
	}
	r = mb_attest_challenge_make(body.request, body.request_size, &opts, &challenge, &state, &err);
	if (r == MB_ERR_ATTEST_REFUSED) {
		reply_error(resp, 403, "the enrollment request is refused: %s", err.message);
		goto out;
	}
	if (r < 0) {
		reply_error(resp, r == -ENOMEM ? 500 : 400, "the enrollment request: %s", err.message);
		goto out;
	}
	if (ek_sha256_of(state, (const char *const[]) { "request", "ek", "public", NULL }, ek) < 0) {
		/* The library checked the request it put into the state: this cannot be. */
		reply_error(resp, 500, "the enrollment state holds no EK public key");
		goto out;
	}
	r = store_machine_get(w->d, body.machine_id, &m, &err);
	if (r < 0 && r != -ENOENT) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	if (r >= 0) {
		if (refused_revoked(&m, resp))
			goto out;
		if (strcmp(m.ek_sha256, ek) != 0) {
			reply_error(resp, 409, "machine id %s is enrolled with another TPM (EK); forget it first: "
				    "'mboot fleet forget %s'", body.machine_id, body.machine_id);
			goto out;
		}
	}
	r = w->f->allow_ek_reuse ? -ENOENT : store_machine_with_ek(w->d, ek, body.machine_id, &other, &err);
	if (r >= 0) {
		reply_ek_taken(resp, body.machine_id, other);
		goto out;
	}
	if (r != -ENOENT) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	/* The verifier decides freshness: a machine may ask to attest more often, never less. */
	interval = body.interval && body.interval < w->f->max_interval ? body.interval
			: body.interval ? w->f->max_interval : w->f->interval;
	r = store_enrollment_put(w->d, body.machine_id, state, interval, fleet_now(), &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	o = json_object();
	json_object_set_new(o, "machine_id", json_text(body.machine_id));
	json_object_set_new(o, "challenge", json_from_text(challenge));
	json_object_set_new(o, "interval", json_integer(interval));
	reply_json(resp, 201, o);
out:
	store_machine_done(&m);
	fleet_enroll_body_done(&body);
	free(challenge);
	free(state);
	free(other);
}

typedef struct activate_ctx {
	const char *id, *record, *ek, *policy;
	bool allow_ek_reuse;
	int64_t interval;
	unsigned refused; /* 403 or 409 when the stored machine forbids it */
	char old_status[16]; /* the status before, for the webhooks ("": a new machine) */
	char *ek_taken;   /* 409: the id of another machine with this EK */
} activate_ctx;

static int activate_tx(db *d, void *p, mb_error *err)
{
	activate_ctx *c = p;
	store_machine m;
	int r;

	/* Read again inside the transaction: another verifier may have enrolled the id since. */
	r = store_machine_get_tx(d, c->id, &m, err);
	c->old_status[0] = '\0';
	if (r >= 0) {
		snprintf(c->old_status, sizeof(c->old_status), "%s", fleet_status_told(&m));
		c->refused = strcmp(m.status, "revoked") == 0 ? 403 : strcmp(m.ek_sha256, c->ek) != 0 ? 409 : 0;
		store_machine_done(&m);
		if (c->refused)
			return -EPERM;
	} else if (r != -ENOENT)
		return r;
	/* Another verifier may have enrolled this TPM under another id since the enrollment. */
	free(c->ek_taken);
	c->ek_taken = NULL;
	r = c->allow_ek_reuse ? -ENOENT : store_machine_with_ek(d, c->ek, c->id, &c->ek_taken, err);
	if (r >= 0) {
		c->refused = 409;
		return -EPERM;
	}
	if (r != -ENOENT)
		return r;
	return store_activate_tx(d, c->id, c->record, c->ek, c->policy, c->interval, fleet_now(), err);
}

void fleet_activate(fleet_worker *w, const char *id, const http_request *req, http_response *resp)
{
	mb_error err = { 0 };
	char *state = NULL, *record = NULL, ek[65];
	activate_ctx c = { .id = id };
	json_t *o;
	int r;

	r = store_enrollment_get(w->d, id, &state, &c.interval, &err);
	if (r == -ENOENT) {
		reply_error(resp, 404, "no pending enrollment for machine %s (enroll first: 'mboot attest push' "
			    "enrolls on first contact)", id);
		return;
	}
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return;
	}
	r = mb_attest_challenge_check(state, strlen(state), req->body, req->body_size, &record, &err);
	if (r == MB_ERR_ATTEST_REFUSED) {
		reply_error(resp, 403, "the activation is refused: %s", err.message);
		goto out;
	}
	if (r < 0) {
		reply_error(resp, r == -ENOMEM ? 500 : 400, "the activation response: %s", err.message);
		goto out;
	}
	if (ek_sha256_of(record, (const char *const[]) { "ek_public", NULL }, ek) < 0) {
		reply_error(resp, 500, "the machine record holds no EK public key");
		goto out;
	}
	c.record = record;
	c.ek = ek;
	c.policy = w->f->default_policy[0] ? w->f->default_policy : NULL;
	c.allow_ek_reuse = w->f->allow_ek_reuse;
	pthread_mutex_lock(fleet_machine_lock(w->f, id));
	r = fleet_transaction(w->d, activate_tx, &c, &err);
	fleet_row_forget(w->f, id);
	pthread_mutex_unlock(fleet_machine_lock(w->f, id));
	if (c.refused == 403)
		reply_error(resp, 403, "machine %s is revoked: an operator refused it (it enrolls again only once "
			    "forgotten: 'mboot fleet forget %s')", id, id);
	else if (c.refused == 409 && c.ek_taken)
		reply_ek_taken(resp, id, c.ek_taken);
	else if (c.refused == 409)
		reply_error(resp, 409, "machine id %s is enrolled with another TPM (EK); forget it first: "
			    "'mboot fleet forget %s'", id, id);
	else if (r < 0)
		reply_db_error(resp, r, &err);
	else {
		notify_change_send(w->f->notify, &(notify_change){ .machine_id = id, .new_status = "enrolled",
			.old_status = c.old_status[0] ? c.old_status : NULL, .cause = "enrollment", .at = fleet_now() });
		o = json_object();
		json_object_set_new(o, "machine_id", json_text(id));
		json_object_set_new(o, "status", json_text("enrolled"));
		reply_json(resp, 200, o);
	}
out:
	free(state);
	free(record);
	free(c.ek_taken);
}

/* The machine, answered 404 / 403 / 503 when it may not attest: as evidence needs it (with
 * m->nonce_used for nonce), or, asking, as a nonce needs it. */
static bool machine_for_attestation(fleet_worker *w, const char *id, const char *nonce, bool asking,
				    store_machine *m, http_response *resp)
{
	mb_error err = { 0 };
	int r = asking ? store_machine_get_asking(w->d, id, m, &err)
		       : store_machine_get_attesting(w->d, id, nonce, m, &err);

	if (r == -ENOENT) {
		reply_error(resp, 404, "unknown machine %s (enroll it: 'mboot attest push' enrolls on first "
			    "contact)", id);
		return false;
	}
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return false;
	}
	if (refused_revoked(m, resp)) {
		store_machine_done(m);
		return false;
	}
	return true;
}

/* A machine's row as this verifier last read or wrote it. A machine whose row was changed
 * through another verifier since (a load balancer that spreads one machine's requests) is read
 * for each nonce from then on, as the row of that attestation: judging on a row kept here would
 * miss, cost a second judgment and more round trips each time. */
typedef struct kept_row {
	store_machine m;
	bool read_first;
} kept_row;

static void free_row(void *p)
{
	store_machine_done(&((kept_row *) p)->m);
	free(p);
}

static int row_key(const char *id, uint8_t key[32])
{
	return mb_digest(MB_ALG_SHA256, id, strlen(id), key);
}

/* Keeps the row for the machine's next nonce and evidence (best effort: without it, it is read). */
static void row_keep(fleet *f, const store_machine *m, bool read_first)
{
	uint8_t key[32];
	kept_row *copy;

	if (!f->rows || row_key(m->id, key) < 0)
		return;
	if (!(copy = malloc(sizeof(*copy))) || store_machine_copy(m, &copy->m) < 0) {
		free(copy);
		fleet_cache_drop(f->rows, key);
		return;
	}
	copy->m.nonce_used = false; /* of one nonce only */
	copy->read_first = read_first;
	fleet_cache_put(f->rows, key, copy, free_row);
}

void fleet_row_forget(fleet *f, const char *id)
{
	uint8_t key[32];

	if (f->rows && row_key(id, key) >= 0)
		fleet_cache_drop(f->rows, key);
}

/* The kept row of the machine: true when kept (a copy in *m; *read_first: read it for a nonce).
 * It may be older than the database's (another verifier, an operator there): what is stored on
 * it is stored only while the row is still as kept, and otherwise judged again on the row read. */
static bool row_take(fleet *f, const char *id, store_machine *m, bool *read_first)
{
	fleet_cache_entry *e;
	uint8_t key[32];
	bool found;

	*read_first = false;
	if (!f->rows || row_key(id, key) < 0 || !(e = fleet_cache_get(f->rows, key)))
		return false;
	found = store_machine_copy(&((const kept_row *) fleet_cache_value(e))->m, m) >= 0;
	*read_first = ((const kept_row *) fleet_cache_value(e))->read_first;
	fleet_cache_release(e);
	return found;
}

static bool set_text(char **p, const char *value)
{
	free(*p);
	*p = value ? strdup(value) : NULL;
	return *p || !value;
}

/* The SHA-256 of the firmware log of the machine's stored evidence, when this verifier keeps the
 * judgment of that boot under the machine's policy: the machine may name the log instead of
 * sending it (a hint: its evidence is taken only if the judgment is still kept then). */
static bool kept_log_sha256(fleet *f, const store_machine *m, uint8_t sha256[32])
{
	uint8_t boot_key[32], key[32];
	fleet_cache_entry *e;
	bool carried = false, found;

	if (!f->judged || !m->evidence_boot || strlen(m->evidence_boot) != 64 ||
	    hex_parse(m->evidence_boot, 64, boot_key, sizeof(boot_key)) < 0 ||
	    fleet_judged_key(boot_key, m->policy, key) < 0 || !(e = fleet_cache_get(f->judged, key)))
		return false;
	found = mb_attest_verdict_eventlog_sha256(fleet_cache_value(e), sha256, &carried) && carried;
	fleet_cache_release(e);
	return found;
}

void fleet_nonce(fleet_worker *w, const char *id, http_response *resp)
{
	char hex[2 * FLEET_NONCE_SIZE + 1];
	store_machine m = { 0 };
	int64_t expires = fleet_now() + w->f->nonce_ttl;
	json_t *o;

	uint64_t ima_from = 0;
	uint8_t ima_last[20], log_sha256[32];
	char last_hex[41], log_hex[65];
	bool have_log, read_first;

	/* Nothing is stored: asking costs a lookup at most, and no number of asks takes one from
	 * the machine. The row is read (whole, to be kept) unless this verifier keeps it: the
	 * machine's change since, made elsewhere, is found where the verdict is stored. */
	if (row_take(w->f, id, &m, &read_first) && !read_first) {
		atomic_fetch_add(&w->f->rows_kept, 1);
		if (refused_revoked(&m, resp)) {
			store_machine_done(&m);
			return;
		}
	} else {
		/* Read and kept under the machine's lock, as this verifier's changes of it are made
		 * and dropped: a row read before such a change is never kept after it. */
		pthread_mutex_t *lock = fleet_machine_lock(w->f, id);
		bool found;

		store_machine_done(&m);
		pthread_mutex_lock(lock);
		found = machine_for_attestation(w, id, NULL, !w->f->rows, &m, resp);
		if (found)
			row_keep(w->f, &m, read_first);
		pthread_mutex_unlock(lock);
		if (!found)
			return;
		atomic_fetch_add(&w->f->rows_read, 1);
	}
	/* the IMA entries judged in its boot: the machine may leave them out (a hint: its evidence
	 * is judged on top of the state the verifier holds then, whatever it sends) */
	if (m.ima_state && mb_attest_ima_state_resume(m.ima_state, strlen(m.ima_state), &ima_from, ima_last, NULL) < 0)
		ima_from = 0;
	have_log = kept_log_sha256(w->f, &m, log_sha256);
	if (fleet_nonce_make(w->f, id, expires, hex) < 0) {
		store_machine_done(&m);
		reply_error(resp, 500, "no nonce: OpenSSL failed");
		return;
	}
	store_machine_done(&m);
	o = json_object();
	json_object_set_new(o, "nonce", json_text(hex));
	if (ima_from) {
		json_object_set_new(o, "ima_from", json_integer((json_int_t) ima_from));
		json_object_set_new(o, "ima_last", json_text(hex_format(ima_last, sizeof(ima_last), last_hex)));
	}
	if (have_log)
		json_object_set_new(o, "eventlog_sha256", json_text(hex_format(log_sha256, sizeof(log_sha256), log_hex)));
	json_object_set_new(o, "expires", json_time(expires));
	json_object_set_new(o, "expires_in", json_integer(w->f->nonce_ttl));
	reply_json(resp, 200, o);
}

/* Evidence judged on a kept row that failed is answered as if the row had been read before
 * judging: a machine revoked or forgotten meanwhile, or a nonce used, is the answer (-1:
 * replied). 1: the row changed in what judging rests on (the machine enrolled again with another
 * TPM, another policy: another generation), so the evidence is judged again on it. 0: the
 * failure stands (nothing to do for a row just read). */
static int failed_as_read(fleet_worker *w, const char *id, const char *nonce, bool kept, store_machine *m,
			  http_response *resp)
{
	int64_t generation = m->generation;

	if (!kept)
		return 0;
	fleet_row_forget(w->f, id);
	store_machine_done(m);
	if (!machine_for_attestation(w, id, nonce, false, m, resp))
		return -1;
	if (m->nonce_used) {
		reply_error(resp, 409, "nonce %s was used already", nonce);
		return -1;
	}
	return m->generation != generation ? 1 : 0;
}

typedef struct evidence_ctx {
	const char *id, *nonce, *evidence;
	const char *read_nonce; /* the machine's last nonce when its row was read */
	const fleet_judgment *j;
	int64_t generation, at;
	bool stale; /* the machine was announced stale: read, then as written */
} evidence_ctx;

/* The row as the attestation changed it (store-judge.c), kept: the machine's next nonce and
 * evidence need no read. */
static void row_stored(fleet *f, store_machine *m, const evidence_ctx *c, bool read_first)
{
	const char *status = c->j->trusted ? "trusted" : "untrusted";
	bool ok;

	if (!f->rows)
		return;
	if (c->stale || strcmp(m->status, status) != 0)
		m->status_changed = c->at;
	ok = set_text(&m->status, status) && set_text(&m->last_nonce, c->nonce) &&
	     set_text(&m->ima_state, c->j->ima_state) && set_text(&m->last_verdict, NULL);
	if (ok && c->evidence)
		ok = set_text(&m->evidence_boot, c->j->boot[0] ? c->j->boot : NULL) &&
		     set_text(&m->evidence_nonce, c->nonce);
	m->last_attestation = c->at;
	m->last_reasons = c->j->n_reasons;
	m->stale_announced = 0;
	if (ok)
		row_keep(f, m, read_first);
	else
		fleet_row_forget(f, m->id);
}

static int evidence_tx(db *d, void *p, mb_error *err)
{
	evidence_ctx *c = p;

	/* Stored only under the generation the evidence was judged in (-ESTALE otherwise); the nonce
	 * is spent by the attestation's row (-EEXIST: of two posts of one nonce, exactly one commits). */
	return store_attestation_tx(d, c->id, c->generation, c->read_nonce, c->nonce, c->at, fleet_now_us(), c->j->trusted,
				    c->j->n_reasons, c->j->verdict, c->evidence, c->j->boot, c->j->ima_state, &c->stale,
				    err);
}

/* Evidence that is not the machine's TPM's answer: refused, counted and logged; nothing stored. */
static void refuse_evidence(fleet_worker *w, const char *id, const fleet_judgment *j, http_response *resp)
{
	const char *name = mb_attest_reason_name(j->refusal);

	if ((unsigned) j->refusal < _MB_ATTEST_REASON_MAX)
		atomic_fetch_add(&w->f->refused[j->refusal], 1);
	fprintf(stderr, "mboot-verifierd: evidence for machine %s refused (%s), nothing stored: %s\n", id,
		name ? name : "?", j->refusal_detail);
	reply_error(resp, 403,
		    "the evidence is not machine %s's TPM's quote of this nonce (%s: %s); nothing was stored", id,
		    name ? name : "?", j->refusal_detail);
}

/* 409 {"error", "send": "eventlog"}: evidence that named its firmware log is answered with this
 * when the verifier holds no judgment of that log for the machine (restarted, another verifier). */
static void reply_send_log(http_response *resp, const char *id)
{
	json_t *o = json_object();

	json_object_set_new(o, "error", json_text("this verifier keeps no judgment of the firmware log the evidence "
						  "names by its SHA-256; nothing was stored: send the evidence again "
						  "with the log, with the same nonce"));
	json_object_set_new(o, "machine_id", json_text(id));
	json_object_set_new(o, "send", json_text("eventlog"));
	reply_json(resp, 409, o);
}

/* Judged this often at most when the machine changes (a policy set) while its evidence is judged. */
#define EVIDENCE_JUDGE_TRIES 3

void fleet_evidence(fleet_worker *w, const char *id, const http_request *req, http_response *resp)
{
	uint8_t raw[MB_ATTEST_NONCE_MAX];
	char nonce[2 * MB_ATTEST_NONCE_MAX + 1];
	fleet_judgment j = { 0 };
	store_machine m = { 0 };
	mb_error err = { 0 };
	evidence_ctx c;
	json_t *o;
	size_t n;
	pthread_mutex_t *lock = NULL;
	bool db_error, kept, read_first, elsewhere = false;
	char old_status[16]; /* the status before (stale when the announcement is cleared) */
	int r, tries;

	if (!req->nonce) {
		reply_error(resp, 400, "no nonce: POST /v1/machines/ID/evidence?nonce=HEX");
		return;
	}
	if (fleet_nonce_parse(req->nonce, nonce, raw, &n) < 0) {
		reply_error(resp, 400, "the nonce is not hex of %d to %d bytes", MB_ATTEST_NONCE_MIN, MB_ATTEST_NONCE_MAX);
		return;
	}
	/* Two pushes of one machine at once: the second is judged on what the first stored (its
	 * IMA entries, its boot; the row taken under the lock) and does not undo it; unserialized,
	 * each could keep spoiling the other's row until both ran out of tries. */
	lock = fleet_machine_lock(w->f, id);
	pthread_mutex_lock(lock);
	kept = row_take(w->f, id, &m, &read_first);
	if (!kept && !machine_for_attestation(w, id, nonce, false, &m, resp))
		goto out;
	/* Checked before anything is judged: replays and strangers' nonces cost no verification. */
	if (!fleet_nonce_check(w->f, id, raw, n, fleet_now())) {
		reply_error(resp, 409, "nonce %s is not one this verifier gave machine %s, or it expired", nonce, id);
		goto out;
	}
	if (m.nonce_used) {
		reply_error(resp, 409, "nonce %s was used already", nonce);
		goto out;
	}
	for (tries = 1;; tries++) {
		int64_t t0 = fleet_now_us();

		r = fleet_judge(w, &m, req->body, req->body_size, nonce, &j, &err, &db_error);
		if (r >= 0)
			fleet_metrics_judged(w->f, fleet_now_us() - t0);
		if (r < 0 && db_error) {
			reply_db_error(resp, r, &err);
			goto out;
		}
		if (r < 0 || !j.authentic) {
			int as_read = failed_as_read(w, id, nonce, kept, &m, resp);

			kept = false;
			elsewhere |= as_read > 0;
			if (as_read > 0 && tries < EVIDENCE_JUDGE_TRIES) {
				fleet_judgment_reset(&j);
				continue;
			}
			if (as_read >= 0 && r < 0)
				reply_error(resp, r == -ENOMEM ? 500 : 400, "the evidence: %s", err.message);
			else if (as_read >= 0)
				refuse_evidence(w, id, &j, resp);
			goto out;
		}
		if (w->f->after_judging)
			w->f->after_judging(w->f->after_judging_ctx);
		/* A log named by its SHA-256 is taken only as the stored evidence's, whose judgment is
		 * kept: what is stored always carries its log (the page, judging again after a policy
		 * set). Else the machine sends it, with this nonce (still unused). */
		if (j.log_named && !(j.boot_reused && m.evidence_boot && strcmp(m.evidence_boot, j.boot) == 0)) {
			atomic_fetch_add(&w->f->logs_asked, 1);
			reply_send_log(resp, id);
			goto out;
		}
		/* Evidence once per boot: what is stored is this boot's, so this one refers to it. */
		c = (evidence_ctx) { .id = id, .nonce = nonce, .read_nonce = m.last_nonce, .j = &j,
				     .generation = m.generation, .at = fleet_now(),
				     .stale = m.stale_announced != 0,
				     .evidence = j.boot[0] && m.evidence_boot && strcmp(m.evidence_boot, j.boot) == 0
							 ? NULL
							 : req->body };
		/* One round trip when the machine's row is still as read; when it changed, a
		 * transaction finds out how. */
		r = store_attestation_once(w->d, c.id, c.generation, c.read_nonce, c.nonce, c.at, fleet_now_us(),
					   j.trusted, j.n_reasons, j.verdict, c.evidence, j.boot, j.ima_state, c.stale,
					   &err);
		if (r == 0 || r == -EBUSY)
			r = fleet_transaction(w->d, evidence_tx, &c, &err);
		else if (r > 0)
			r = 0;
		if (r != -ESTALE || tries == EVIDENCE_JUDGE_TRIES)
			break;
		/* The policy (or the enrollment, or its last attestation) changed while this was
		 * judged: a verdict on the old row must not be stored, so judge again on what the
		 * machine has now. */
		fleet_judgment_reset(&j);
		store_machine_done(&m);
		fleet_row_forget(w->f, id);
		elsewhere |= kept;
		kept = false;
		if (!machine_for_attestation(w, id, nonce, false, &m, resp))
			goto out;
		if (m.nonce_used) {
			reply_error(resp, 409, "nonce %s was used already", nonce);
			goto out;
		}
	}
	/* Still under the lock: the next push of the machine takes the row as this one left it. */
	if (r >= 0) {
		snprintf(old_status, sizeof(old_status), "%s", c.stale ? "stale" : m.status);
		row_stored(w->f, &m, &c, read_first || elsewhere);
	} else {
		fleet_row_forget(w->f, id); /* the row changed, or may have: read it next time */
	}
	pthread_mutex_unlock(lock);
	lock = NULL;
	if (r == -ESTALE) {
		reply_error(resp, 409, "machine %s changed each time its evidence was judged (%d times); nothing was "
			    "stored (retry with a new nonce)", id, tries);
		goto out;
	}
	if (r == -ENOENT) {
		/* Forgotten or revoked while the evidence was judged. */
		store_machine_done(&m);
		if (machine_for_attestation(w, id, NULL, false, &m, resp))
			reply_error(resp, 409, "machine %s changed while its evidence was judged", id);
		goto out;
	}
	if (r == -EEXIST) {
		reply_error(resp, 409, "nonce %s was used already (or while the evidence was judged)", nonce);
		goto out;
	}
	if (r < 0) {
		reply_db_error(resp, r, &err);
		goto out;
	}
	fleet_metrics_stored(w->f, &j);
	if (c.stale)
		atomic_fetch_add(&w->f->stale_back, 1);
	/* Committed: the webhooks hear of it (old: the status read before judging; stale when the
	 * announcement was cleared by this attestation). */
	notify_change_send(w->f->notify, &(notify_change){ .machine_id = id, .old_status = old_status,
		.new_status = j.trusted ? "trusted" : "untrusted", .cause = "attestation", .nonce = nonce,
		.verdict = j.verdict, .at = c.at });
	o = json_object();
	json_object_set_new(o, "machine_id", json_text(id));
	json_object_set_new(o, "status", json_text(j.trusted ? "trusted" : "untrusted"));
	json_object_set_new(o, "at", json_time(c.at));
	json_object_set_new(o, "nonce", json_text(nonce));
	reply_json_with(resp, 200, o, "verdict", j.verdict);
out:
	if (lock)
		pthread_mutex_unlock(lock);
	store_machine_done(&m);
	free(j.verdict);
	free(j.ima_state);
}
