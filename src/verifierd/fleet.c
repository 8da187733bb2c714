/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fleet (service.h): its lifetime, the routing of docs/api.md, operator tokens, answers. */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "shared/fail.h"
#include "verifierd/fleet-internal.h"
#include "verifierd/web.h"

/* Transactions retried this often while the database reports a lock conflict. */
#define FLEET_TX_TRIES 5

int64_t fleet_now(void)
{
	return (int64_t) time(NULL);
}

int64_t fleet_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

json_t *json_time(int64_t t)
{
	time_t tt = (time_t) t;
	struct tm tm;
	char buf[32];

	if (t <= 0 || !gmtime_r(&tt, &tm))
		return NULL;
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_text(buf);
}

void sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	size_t i;

	EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++) {
		out[2 * i] = "0123456789abcdef"[md[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
	}
	out[64] = 0;
}

void reply_json(http_response *resp, unsigned status, json_t *o)
{
	char *body = json_write_built(o, JSON_LAYOUT_COMPACT, resp->json_mark);

	json_decref(o);
	reply_text(resp, status, body);
}

void reply_json_with(http_response *resp, unsigned status, json_t *o, const char *key, const char *text)
{
	char *head = json_write_built(o, JSON_LAYOUT_COMPACT, resp->json_mark), *body = NULL;
	size_t n = head ? strlen(head) : 0;

	json_decref(o);
	/* head is "{...}": its last brace makes way for the member */
	if (n >= 2 && head[n - 1] == '}') {
		head[n - 1] = '\0';
		if (asprintf(&body, "%s%s\"%s\":%s}", head, n > 2 ? "," : "", key, text) < 0)
			body = NULL;
	}
	free(head);
	reply_text(resp, status, body);
}

void reply_text(http_response *resp, unsigned status, char *body)
{
	if (!body) {
		static const char oom[] = "{\"error\":\"out of memory\"}";

		resp->status = 500;
		resp->content_type = NULL;
		resp->body = (char *) oom;
		resp->body_size = sizeof(oom) - 1;
		resp->body_static = true;
		return;
	}
	resp->status = status;
	resp->content_type = NULL;
	resp->body = body;
	resp->body_size = strlen(body);
	resp->body_static = false;
}

void reply_error(http_response *resp, unsigned status, const char *fmt, ...)
{
	json_t *o = json_object();
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(o, "error", json_text(msg));
	reply_json(resp, status, o);
}

void reply_db_error(http_response *resp, int r, const mb_error *err)
{
	const char *m = err && err->message[0] ? err->message : mb_strerror(r);

	fleet_metrics_db_error();
	if (r == -ENOTCONN || r == -EIO || r == -EBUSY)
		reply_error(resp, 503, "the database is unavailable, nothing was stored (retry): %s", m);
	else if (r == -ENOMEM)
		reply_error(resp, 500, "out of memory");
	else
		reply_error(resp, 500, "database: %s", m);
}

bool reply_machine_failed(http_response *resp, int r, const mb_error *err, const char *id)
{
	if (r == -ENOENT)
		reply_error(resp, 404, "unknown machine %s ('mboot fleet list' lists the machines)", id);
	else if (r < 0)
		reply_db_error(resp, r, err);
	return r < 0;
}

int fleet_transaction(db *d, fleet_tx_fn fn, void *ctx, mb_error *err)
{
	int r = 0, i;

	for (i = 0; i < FLEET_TX_TRIES; i++) {
		r = db_begin(d, err);
		if (r >= 0) {
			r = fn(d, ctx, err);
			if (r < 0)
				db_rollback(d);
			else
				r = db_commit(d, err);
		}
		if (r != -EBUSY)
			return r;
		/* Another writer holds the lock: back off a little, longer each time. */
		nanosleep(&(struct timespec) { .tv_nsec = 2000000L << i }, NULL);
	}
	return r;
}

int64_t fleet_interval_of(const fleet *f, const store_machine *m)
{
	return m->interval > 0 && m->interval < f->max_interval ? m->interval : f->max_interval;
}

const char *const fleet_statuses[FLEET_STATUSES] = { "trusted", "untrusted", "stale", "enrolled", "revoked" };

const char *fleet_status_shown(const fleet *f, const store_machine *m, int64_t now)
{
	int64_t last = m->last_attestation > m->enrolled ? m->last_attestation : m->enrolled;

	/* Announced stale: so until it attests, also when a larger --max-interval came since. */
	if (strcmp(m->status, "revoked") != 0 && (m->stale_announced || now - last > 2 * fleet_interval_of(f, m)))
		return "stale";
	return m->status;
}

const char *fleet_status_told(const store_machine *m)
{
	return m->stale_announced && strcmp(m->status, "revoked") != 0 ? "stale" : m->status;
}

int fleet_policy_get(fleet_worker *w, const char *sha256, const mb_policy **ret, mb_policy **ret_owned,
		     mb_error *err)
{
	fleet *f = w->f;
	mb_policy *p = NULL;
	char *text = NULL;
	size_t i;
	int r;

	*ret = NULL;
	*ret_owned = NULL;
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->n_policies; i++)
		if (strcmp(f->policies[i].sha256, sha256) == 0) {
			*ret = f->policies[i].policy;
			pthread_mutex_unlock(&f->lock);
			return 0;
		}
	pthread_mutex_unlock(&f->lock);

	r = store_policy_get(w->d, sha256, &text, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	/* Stored only after mb_policy_parse took it, so this parses (unless the library changed). */
	r = mb_policy_parse(text, strlen(text), &p, err);
	free(text);
	if (r < 0)
		return prefix_error(err, r, "the stored policy");

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->n_policies; i++)
		if (strcmp(f->policies[i].sha256, sha256) == 0)
			break;
	if (i < f->n_policies) {
		/* Another thread parsed it meanwhile: keep the first. */
		mb_policy_free(p);
		p = f->policies[i].policy;
	} else if (f->n_policies < FLEET_POLICY_CACHE_MAX) {
		memcpy(f->policies[i].sha256, sha256, 65);
		f->policies[i].policy = p;
		f->n_policies++;
	} else
		/* The cache is full (more policies than a fleet has groups): this caller's own. */
		*ret_owned = p;
	pthread_mutex_unlock(&f->lock);
	*ret = p;
	return 0;
}

int fleet_new(const fleet_options *o, fleet **ret, mb_error *err)
{
	fleet *f;
	db *d = NULL;
	size_t i;
	int r;

	*ret = NULL;
	if (!o || !o->db_url)
		return set_error(err, -EINVAL, "no database URL");
	if (!o->ek_roots && !o->allow_no_ek_cert)
		return set_error(err, -EINVAL, "no EK CA certificates (and EK certificates are required)");
	f = calloc(1, sizeof(*f));
	if (!f || !(f->db_url = strdup(o->db_url))) {
		free(f);
		return set_error(err, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&f->lock, NULL);
	for (i = 0; i < FLEET_MACHINE_LOCKS; i++)
		pthread_mutex_init(&f->machine_locks[i], NULL);
	fleet_stale_init(f);
	f->stale_sweep = o->stale_sweep > 0 ? o->stale_sweep : 0;
	f->ek_roots = o->ek_roots;
	f->allow_no_ek_cert = o->allow_no_ek_cert;
	f->allow_ek_reuse = o->allow_ek_reuse;
	f->ek_check_validity = o->ek_check_validity;
	f->min_bank = o->min_bank;
	f->interval = o->interval > 0 ? o->interval : 600;
	f->max_interval = o->max_interval > 0 ? o->max_interval : f->interval;
	f->nonce_ttl = o->nonce_ttl > 0 ? o->nonce_ttl : 60;
	f->notify = o->notify;
	if (f->max_interval < f->interval) {
		r = set_error(err, -EINVAL, "the maximum interval (%lld s) is below the default interval (%lld s)",
			      (long long) f->max_interval, (long long) f->interval);
		fleet_free(f);
		return r;
	}

	/* As many parsed machine records as boots judged: one each for a fleet the cache holds, and
	 * as many machines' rows (--judge-cache 0: everything read and judged anew). */
	if (o->judge_cache >= 0 &&
	    (fleet_cache_new(o->judge_cache ? (size_t) o->judge_cache : FLEET_JUDGE_CACHE, &f->judged) < 0 ||
	     fleet_cache_new(o->judge_cache ? (size_t) o->judge_cache : FLEET_JUDGE_CACHE, &f->machines) < 0 ||
	     fleet_cache_new(o->judge_cache ? (size_t) o->judge_cache : FLEET_JUDGE_CACHE, &f->rows) < 0)) {
		fleet_free(f);
		return set_error(err, -ENOMEM, "out of memory");
	}

	r = db_open(f->db_url, &d, err);
	if (r >= 0) {
		f->kind = db_get_kind(d);
		r = store_migrate(d, err);
	}
	if (r >= 0)
		r = fleet_nonce_key_load(f, d, err);
	if (r >= 0 && o->default_policy) {
		mb_policy *p = NULL;
		char *text = strndup(o->default_policy, o->default_policy_size);

		if (!text)
			r = set_error(err, -ENOMEM, "out of memory");
		else if ((r = mb_policy_parse(text, strlen(text), &p, err)) < 0)
			prefix_error(err, r, "the default policy");
		else {
			mb_policy_free(p);
			sha256_hex(text, strlen(text), f->default_policy);
			r = store_policy_put(d, f->default_policy, text, err);
		}
		free(text);
	}
	db_close(d);
	if (r >= 0)
		r = fleet_stale_start(f, err);
	if (r < 0) {
		fleet_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

void fleet_set_after_judging(fleet *f, void (*fn)(void *ctx), void *ctx)
{
	f->after_judging = fn;
	f->after_judging_ctx = ctx;
}

void fleet_keep_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

void fleet_free(fleet *f)
{
	size_t i;

	if (!f)
		return;
	fleet_stale_stop(f);
	for (i = 0; i < f->n_policies; i++)
		mb_policy_free(f->policies[i].policy);
	fleet_cache_free(f->judged);
	fleet_cache_free(f->machines);
	fleet_cache_free(f->rows);
	for (i = 0; i < FLEET_MACHINE_LOCKS; i++)
		pthread_mutex_destroy(&f->machine_locks[i]);
	pthread_mutex_destroy(&f->lock);
	fleet_nonce_key_free(f);
	free(f->db_url);
	free(f);
}

fleet_worker *fleet_worker_new(fleet *f)
{
	fleet_worker *w = calloc(1, sizeof(*w));

	if (w)
		w->f = f;
	return w;
}

void fleet_worker_free(fleet_worker *w)
{
	if (!w)
		return;
	db_close(w->d);
	free(w);
}

bool fleet_token_name_valid(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n > STORE_TOKEN_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-", name[i]))
			return false;
	return true;
}

int fleet_new_token(fleet *f, const char *name, char **ret_token, mb_error *err)
{
	uint8_t raw[32];
	char *token, hash[65];
	db *d = NULL;
	size_t i;
	int r;

	*ret_token = NULL;
	if (name && !fleet_token_name_valid(name))
		return set_error(err, -EINVAL, "a token name is 1 to %d of [A-Za-z0-9._@-], not \"%s\"",
				 STORE_TOKEN_NAME_MAX, name);
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return set_error(err, -EIO, "no random bytes from OpenSSL");
	token = malloc(2 * sizeof(raw) + 1);
	if (!token)
		return set_error(err, -ENOMEM, "out of memory");
	for (i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	sha256_hex(token, strlen(token), hash);
	r = db_open(f->db_url, &d, err);
	if (r >= 0)
		r = store_token_add(d, hash, name, fleet_now(), err);
	if (r == -EEXIST)
		r = set_error(err, -EEXIST, "a token is named %s already (mboot-verifierd --list-tokens)", name);
	if (r >= 0)
		r = store_audit_add(d, fleet_now_us(), "mboot-verifierd --new-token", "token-added", NULL,
				    name ? name : "(unnamed)", err);
	db_close(d);
	if (r < 0) {
		explicit_bzero(token, strlen(token));
		free(token);
		return r;
	}
	*ret_token = token;
	return 0;
}

int fleet_list_tokens(fleet *f, FILE *out, mb_error *err)
{
	store_token *t = NULL;
	size_t i, n = 0;
	db *d = NULL;
	int r = db_open(f->db_url, &d, err);

	if (r >= 0)
		r = store_token_list(d, &t, &n, err);
	db_close(d);
	for (i = 0; r >= 0 && i < n; i++) {
		time_t tt = (time_t) t[i].created;
		struct tm tm;
		char at[32] = "?";

		if (gmtime_r(&tt, &tm))
			strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(out, "%-24s %s %s\n", t[i].name, at, t[i].sha256_prefix);
	}
	free(t);
	return r;
}

int fleet_revoke_token(fleet *f, const char *name, mb_error *err)
{
	db *d = NULL;
	int r = db_open(f->db_url, &d, err);

	if (r >= 0)
		r = store_token_revoke(d, name, err);
	if (r >= 0)
		r = store_audit_add(d, fleet_now_us(), "mboot-verifierd --revoke-token", "token-revoked", NULL, name, err);
	db_close(d);
	return r;
}

static void healthz(fleet_worker *w, http_response *resp)
{
	mb_error err = { 0 };
	json_t *o;
	int r = store_ping(w->d, &err);

	if (r < 0) {
		reply_error(resp, 503, "the database does not answer: %s", err.message[0] ? err.message : mb_strerror(r));
		return;
	}
	o = json_object();
	json_object_set_new(o, "ok", json_boolean(true));
	json_object_set_new(o, "db", json_text(w->f->kind == DB_SQLITE ? "sqlite" : "postgresql"));
	reply_json(resp, 200, o);
}

static bool operator_ok(fleet_worker *w, const http_request *req, http_response *resp)
{
	mb_error err = { 0 };
	char hash[65];
	int r;

	if (!req->bearer || !req->bearer[0]) {
		reply_error(resp, 401, "this call needs an operator token (Authorization: Bearer TOKEN)");
		return false;
	}
	/* Only the hash is looked up, so the lookup's timing says nothing of the token. */
	sha256_hex(req->bearer, strlen(req->bearer), hash);
	r = store_token_check(w->d, hash, w->operator_name, &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return false;
	}
	if (r == 0) {
		reply_error(resp, 401, "the operator token is not known to this verifier");
		return false;
	}
	return true;
}

static bool method_is(const http_request *req, const char *m)
{
	return strcmp(req->method, m) == 0;
}

static void no_method(const http_request *req, http_response *resp)
{
	reply_error(resp, 405, "%s is not a method of %s", req->method, req->path);
}

/* /v1/machines/{id}[/{what}] */
static void route_machine(fleet_worker *w, const http_request *req, const char *id, const char *what,
			  http_response *resp)
{
	bool machine_call = what && (strcmp(what, "nonce") == 0 || strcmp(what, "evidence") == 0);

	if (!machine_call && !operator_ok(w, req, resp))
		return;
	if (!fleet_id_valid(id, strlen(id))) {
		reply_error(resp, 400, "a machine id is 1 to 64 of [A-Za-z0-9._-], not starting with '.'");
		return;
	}
	if (!what) {
		if (method_is(req, "GET"))
			fleet_show(w, id, resp);
		else if (method_is(req, "DELETE"))
			fleet_forget(w, id, resp);
		else
			no_method(req, resp);
	} else if (strcmp(what, "nonce") == 0) {
		if (method_is(req, "POST"))
			fleet_nonce(w, id, resp);
		else
			no_method(req, resp);
	} else if (strcmp(what, "evidence") == 0) {
		if (method_is(req, "POST"))
			fleet_evidence(w, id, req, resp);
		else
			no_method(req, resp);
	} else if (strcmp(what, "events") == 0) {
		if (method_is(req, "GET"))
			fleet_events(w, id, resp);
		else
			no_method(req, resp);
	} else if (strcmp(what, "policy") == 0) {
		if (method_is(req, "PUT"))
			fleet_policy_put(w, id, req, resp);
		else if (method_is(req, "DELETE"))
			fleet_policy_delete(w, id, resp);
		else
			no_method(req, resp);
	} else if (strcmp(what, "revoke") == 0) {
		if (method_is(req, "POST"))
			fleet_revoke(w, id, resp);
		else
			no_method(req, resp);
	} else
		reply_error(resp, 404, "no such path: %s", req->path);
}

/* Split "a/b" at the first '/' into buf: *ret_id = "a", *ret_rest = "b" or NULL. */
static bool split_id(const char *s, char *buf, size_t size, char **ret_id, char **ret_rest)
{
	char *slash;

	size_t len = strlen(s);

	if (len >= size)
		return false;
	memcpy(buf, s, len + 1);
	*ret_id = buf;
	*ret_rest = NULL;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		*ret_rest = slash + 1;
		if (strchr(*ret_rest, '/'))
			return false;
	}
	return true;
}

void fleet_handle(fleet_worker *w, const http_request *req, http_response *resp)
{
	const char *path = req->path ? req->path : "";
	char buf[160], *id, *rest;
	mb_error err = { 0 };
	int r;

	memset(resp, 0, sizeof(*resp));
	resp->json_mark = json_build_begin();
	if (!req->method) {
		reply_error(resp, 400, "no method");
		return;
	}
	if (strcmp(path, "/") == 0) {
		if (!method_is(req, "GET")) {
			no_method(req, resp);
			return;
		}
		resp->status = 200;
		resp->content_type = "text/html; charset=utf-8";
		resp->body = (char *) verifierd_web_page;
		resp->body_size = verifierd_web_page_len;
		resp->body_static = true;
		return;
	}
	if (!w->d) {
		r = db_open(w->f->db_url, &w->d, &err);
		if (r < 0) {
			w->d = NULL;
			reply_db_error(resp, r == -EINVAL ? -EIO : r, &err);
			return;
		}
	}
	if (strcmp(path, "/healthz") == 0) {
		if (method_is(req, "GET"))
			healthz(w, resp);
		else
			no_method(req, resp);
	} else if (strcmp(path, "/v1/enroll") == 0) {
		if (method_is(req, "POST"))
			fleet_enroll(w, req, resp);
		else
			no_method(req, resp);
	} else if (strncmp(path, "/v1/enroll/", 11) == 0) {
		if (!split_id(path + 11, buf, sizeof(buf), &id, &rest) || !rest || strcmp(rest, "activate") != 0)
			reply_error(resp, 404, "no such path: %s", path);
		else if (!method_is(req, "POST"))
			no_method(req, resp);
		else if (!fleet_id_valid(id, strlen(id)))
			reply_error(resp, 400, "a machine id is 1 to 64 of [A-Za-z0-9._-], not starting with '.'");
		else
			fleet_activate(w, id, req, resp);
	} else if (strcmp(path, "/metrics") == 0) {
		if (!operator_ok(w, req, resp))
			return;
		if (method_is(req, "GET"))
			fleet_metrics(w, resp);
		else
			no_method(req, resp);
	} else if (strcmp(path, "/v1/machines") == 0) {
		if (!operator_ok(w, req, resp))
			return;
		if (method_is(req, "GET"))
			fleet_list(w, resp);
		else
			no_method(req, resp);
	} else if (strcmp(path, "/v1/audit") == 0) {
		if (!operator_ok(w, req, resp))
			return;
		if (method_is(req, "GET"))
			fleet_audit(w, resp);
		else
			no_method(req, resp);
	} else if (strncmp(path, "/v1/machines/", 13) == 0) {
		if (!split_id(path + 13, buf, sizeof(buf), &id, &rest))
			reply_error(resp, 404, "no such path: %s", path);
		else
			route_machine(w, req, id, rest, resp);
	} else
		reply_error(resp, 404, "no such path: %s", path);
}
