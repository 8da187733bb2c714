/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fleet (docs/api.md) driven through fleet_handle() in process, on SQLite in a temp
 * folder, with a real swtpm as the machine (test-fleet.sh prepares it): the library's
 * mb_tpm_attest_enroll / activate / mb_tpm_quote play the machine's part of every call.
 * The tests run in order and share the fleet: machines enrolled early are used later.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include "shared/json.h"
#include <mboot/mboot.h>

#include "verifierd/db.h"
#include "verifierd/service.h"
#include "verifierd/store.h"
#include "verifierd/web.h"
#include "pg-control.h"

static struct {
	fleet *f;
	fleet_worker *w;
	db *d; /* the test's own look into the database */
	mb_ek_roots *roots;
	mb_tpm *tpm;
	char *token;
	char db_url[512];
	uint8_t *log, *evil_log;
	size_t log_size, evil_log_size;
	char *policy;
	size_t policy_size;
	/* web1: enrolled with the TPM, attests with the good boot */
	char *ak1, *ak2, *evidence1, nonce1[65];
} T;

static char *slurp(const char *path, size_t *ret_size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t) n + 1)) && fread(buf, 1, (size_t) n, f) == (size_t) n) {
		buf[n] = 0;
		if (ret_size)
			*ret_size = (size_t) n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "%s is not set: run test-fleet.sh\n", name);
		exit(1);
	}
	return v;
}

/* One call: the status, and the body parsed (the caller puts it). */
typedef struct answer {
	unsigned status;
	json_t *json;
	char *body;
	const char *content_type;
} answer;

/* One call to the fleet of worker w. */
static answer call_on(fleet_worker *w, const char *method, const char *path, const char *nonce, const char *bearer,
		      const char *body)
{
	http_request req = { .method = method, .path = path, .nonce = nonce, .bearer = bearer,
			     .body = body ? body : "", .body_size = body ? strlen(body) : 0 };
	http_response resp;
	answer a = { 0 };

	fleet_handle(w, &req, &resp);
	a.status = resp.status;
	a.content_type = resp.content_type;
	a.body = strndup(resp.body, resp.body_size);
	if (!resp.content_type)
		a.json = json_loads(a.body, JSON_DECODE_ANY, NULL);
	if (!resp.body_static)
		free(resp.body);
	return a;
}

static answer call(const char *method, const char *path, const char *nonce, const char *bearer, const char *body)
{
	return call_on(T.w, method, path, nonce, bearer, body);
}

static void answer_done(answer *a)
{
	json_decref(a->json);
	free(a->body);
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v;

	return ((v = json_object_get(o, key)) != NULL) ? json_string_value(v) : NULL;
}

/* The call's status is want, and its body says why when it is an error. */
#define expect_status(a, want)                                                                             \
	do {                                                                                               \
		if ((a).status != (want))                                                                  \
			fprintf(stderr, "status %u, want %u: %s\n", (a).status, (unsigned) (want), (a).body); \
		assert_int_equal((a).status, (want));                                                      \
		if ((want) >= 400) {                                                                       \
			assert_non_null(jstr((a).json, "error"));                                          \
			assert_true(strlen(jstr((a).json, "error")) > 10);                                 \
		}                                                                                          \
	} while (0)

static void checked_call(unsigned want, const char *method, const char *path, const char *nonce, const char *bearer,
			 const char *body)
{
	answer a = call(method, path, nonce, bearer, body);

	expect_status(a, want);
	answer_done(&a);
}

/* The machine's side of enrollment, with a new AK of the swtpm: POST enroll, activate. */
static char *enroll_on(fleet_worker *w, const char *id, int64_t interval, unsigned want_enroll)
{
	char *ak = NULL, *request = NULL, *response = NULL, *body, path[128];
	mb_error err = { 0 };
	json_t *o;
	answer a;

	assert_int_equal(mb_tpm_attest_enroll(T.tpm, MB_ATTEST_KEY_ECC, &ak, &request, &err), 0);
	o = json_object();
	json_object_set_new(o, "machine_id", json_string_nocheck(id));
	json_object_set_new(o, "request", json_loads(request, JSON_DECODE_ANY, NULL));
	if (interval)
		json_object_set_new(o, "interval", json_integer(interval));
	body = json_dumps(o, 0);
	json_decref(o);
	a = call_on(w, "POST", "/v1/enroll", NULL, NULL, body);
	free(body);
	free(request);
	expect_status(a, want_enroll);
	if (want_enroll != 201) {
		answer_done(&a);
		free(ak);
		return NULL;
	}
	assert_string_equal(jstr(a.json, "machine_id"), id);
	{
		char *ch = json_dumps(json_object_get(a.json, "challenge"), 0); /* the object as text */

		assert_non_null(ch);
		if (mb_tpm_attest_activate(T.tpm, ak, strlen(ak), ch, strlen(ch), &response, &err) < 0)
			fail_msg("activate: %s", err.message);
		free(ch);
	}
	answer_done(&a);
	snprintf(path, sizeof(path), "/v1/enroll/%s/activate", id);
	a = call_on(w, "POST", path, NULL, NULL, response);
	free(response);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	answer_done(&a);
	return ak;
}

static char *enroll(const char *id, int64_t interval, unsigned want_enroll)
{
	return enroll_on(T.w, id, interval, want_enroll);
}

static void get_nonce(const char *id, char out[65])
{
	char path[128];
	answer a;

	snprintf(path, sizeof(path), "/v1/machines/%s/nonce", id);
	a = call("POST", path, NULL, NULL, NULL);
	expect_status(a, 200);
	assert_int_equal(strlen(jstr(a.json, "nonce")), 64);
	assert_int_equal(json_integer_value(json_object_get(a.json, "expires_in")), 60);
	memcpy(out, jstr(a.json, "nonce"), 65);
	answer_done(&a);
}

/* Evidence of web1's TPM for the nonce; the log named by its SHA-256 when it is log_known. */
static char *quote_naming(const char *ak, const char *nonce_hex, const uint8_t *log, size_t log_size,
			  const uint8_t *log_known)
{
	uint8_t nonce[32];
	mb_quote_input in = { .size = sizeof(mb_quote_input), .nonce = nonce, .nonce_size = 32, .eventlog = log,
			      .eventlog_size = log_size, .eventlog_known = log_known };
	mb_error err = { 0 };
	char *ev = NULL;
	size_t i;

	for (i = 0; i < 32; i++)
		assert_int_equal(sscanf(nonce_hex + 2 * i, "%2hhx", &nonce[i]), 1);
	if (mb_tpm_quote(T.tpm, ak, strlen(ak), &in, &ev, &err) < 0)
		fail_msg("quote: %s", err.message);
	return ev;
}

static char *quote(const char *ak, const char *nonce_hex, const uint8_t *log, size_t log_size)
{
	return quote_naming(ak, nonce_hex, log, log_size, NULL);
}

static answer post_evidence(const char *id, const char *nonce, const char *evidence)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/machines/%s/evidence", id);
	return call("POST", path, nonce, NULL, evidence);
}

static answer show(const char *id)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/machines/%s", id);
	return call("GET", path, NULL, T.token, NULL);
}

/* The names of a verdict's reasons, joined by ",". */
static void reason_names(json_t *verdict, char *out, size_t size)
{
	json_t *reasons = json_object_get(verdict, "reasons");
	size_t i;

	out[0] = 0;
	for (i = 0; i < json_array_size(reasons); i++) {
		const char *n = jstr(json_array_get(reasons, i), "name");

		snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? "," : "", n ? n : "?");
	}
}

static int setup(void **state)
{
	mb_error err = { 0 };
	fleet_options o = { 0 };
	(void) state;
	if (getenv("MB_FLEET_DB_URL") && getenv("MB_FLEET_DB_URL")[0])
		snprintf(T.db_url, sizeof(T.db_url), "%s", getenv("MB_FLEET_DB_URL"));
	else
		snprintf(T.db_url, sizeof(T.db_url), "sqlite:%s/fleet.db", env("MB_FLEET_DIR"));
	if (mb_ek_roots_new(&T.roots, &err) < 0 || mb_ek_roots_add_path(T.roots, env("MB_FLEET_EK_CA"), &err) < 0 ||
	    mb_tpm_open(env("MB_FLEET_TCTI"), &T.tpm, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.message);
		return -1;
	}
	T.log = (uint8_t *) slurp(env("MB_FLEET_LOG"), &T.log_size);
	T.evil_log = (uint8_t *) slurp(env("MB_FLEET_EVIL_LOG"), &T.evil_log_size);
	T.policy = slurp(env("MB_FLEET_POLICY"), &T.policy_size);
	if (!T.log || !T.evil_log || !T.policy)
		return -1;
	o.db_url = T.db_url;
	o.ek_roots = T.roots;
	o.allow_ek_reuse = true; /* the machines here are ids of the one swtpm (fleet-e2e: refused) */
	o.interval = 600;
	o.nonce_ttl = 60;
	if (fleet_new(&o, &T.f, &err) < 0 || fleet_new_token(T.f, "test", &T.token, &err) < 0 ||
	    db_open(T.db_url, &T.d, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.message);
		return -1;
	}
	T.w = fleet_worker_new(T.f);
	return T.w ? 0 : -1;
}

static int teardown(void **state)
{
	(void) state;
	fleet_worker_free(T.w);
	fleet_free(T.f);
	db_close(T.d);
	mb_ek_roots_free(T.roots);
	mb_tpm_free(T.tpm);
	free(T.token);
	free(T.log);
	free(T.evil_log);
	free(T.policy);
	free(T.ak1);
	free(T.ak2);
	free(T.evidence1);
	return 0;
}

/* A second fleet on the same database finds the schema made: migration is idempotent. */
static void test_schema(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots };
	mb_error err = { 0 };
	db_rows *rows;
	fleet *f2;

	(void) state;
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	fleet_free(f2);
	assert_int_equal(db_query(T.d, "SELECT version FROM schema_version ORDER BY version", NULL, 0, &rows, &err), 0);
	assert_int_equal(db_rows_count(rows), 7);
	assert_string_equal(db_rows_get(rows, 0, 0), "1");
	assert_string_equal(db_rows_get(rows, 1, 0), "2");
	assert_string_equal(db_rows_get(rows, 2, 0), "3");
	assert_string_equal(db_rows_get(rows, 3, 0), "4");
	assert_string_equal(db_rows_get(rows, 4, 0), "5");
	assert_string_equal(db_rows_get(rows, 5, 0), "6");
	assert_string_equal(db_rows_get(rows, 6, 0), "7");
	db_rows_free(rows);
	/* One nonce key, kept by the second fleet too. */
	assert_int_equal(db_query(T.d, "SELECT value FROM secrets WHERE name = 'nonce-key'", NULL, 0, &rows, &err), 0);
	assert_int_equal(db_rows_count(rows), 1);
	assert_int_equal(strlen(db_rows_get(rows, 0, 0)), 64);
	db_rows_free(rows);
	/* Only the token's hash is kept. */
	{
		const char *p[] = { T.token };
		size_t i;

		assert_int_equal(db_query(T.d, "SELECT sha256 FROM tokens", NULL, 0, &rows, &err), 0);
		assert_true(db_rows_count(rows) >= 1);
		for (i = 0; i < db_rows_count(rows); i++)
			assert_int_equal(strlen(db_rows_get(rows, i, 0)), 64);
		db_rows_free(rows);
		assert_int_equal(db_query(T.d, "SELECT 1 FROM tokens WHERE sha256 = $1", p, 1, &rows, &err), 0);
		assert_int_equal(db_rows_count(rows), 0);
		db_rows_free(rows);
	}
}

static void test_healthz_and_page(void **state)
{
	answer a;

	(void) state;
	a = call("GET", "/healthz", NULL, NULL, NULL);
	expect_status(a, 200);
	assert_true(json_is_true(json_object_get(a.json, "ok")));
	assert_string_equal(jstr(a.json, "db"), strncmp(T.db_url, "sqlite:", 7) == 0 ? "sqlite" : "postgresql");
	answer_done(&a);

	a = call("GET", "/", NULL, NULL, NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/html; charset=utf-8");
	assert_int_equal(strlen(a.body), verifierd_web_page_len);
	assert_memory_equal(a.body, verifierd_web_page, verifierd_web_page_len);
	answer_done(&a);

	checked_call(404, "GET", "/v2/nothing", NULL, NULL, NULL);
	checked_call(405, "DELETE", "/healthz", NULL, NULL, NULL);
}

static void test_operator_token(void **state)
{
	answer a;

	(void) state;
	checked_call(401, "GET", "/v1/machines", NULL, NULL, NULL);
	checked_call(401, "GET", "/v1/machines", NULL, "not-the-token", NULL);
	checked_call(401, "GET", "/v1/machines/web1", NULL, NULL, NULL);
	checked_call(401, "PUT", "/v1/machines/web1/policy", NULL, "x", "{}");
	checked_call(401, "DELETE", "/v1/machines/web1", NULL, NULL, NULL);
	a = call("GET", "/v1/machines", NULL, T.token, NULL);
	expect_status(a, 200);
	assert_int_equal(json_array_size(json_object_get(a.json, "machines")), 0);
	answer_done(&a);
}

static void test_malformed(void **state)
{
	answer a;

	(void) state;
	a = call("POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \"web1\",");
	expect_status(a, 400);
	/* The strict reader's position of the problem. */
	assert_non_null(strstr(jstr(a.json, "error"), "line 1"));
	answer_done(&a);
	checked_call(400, "POST", "/v1/enroll", NULL, NULL, "[]");
	checked_call(400, "POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \".hidden\", \"request\": {}}");
	checked_call(400, "POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \"a/b\", \"request\": {}}");
	checked_call(400, "POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \"web1\", \"request\": []}");
	checked_call(400, "POST", "/v1/enroll", NULL, NULL,
		     "{\"machine_id\": \"web1\", \"request\": {}, \"interval\": -5}");
	checked_call(400, "POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \"web1\", \"machine_id\": \"x\"}");
	/* A request the library refuses to read. */
	a = call("POST", "/v1/enroll", NULL, NULL, "{\"machine_id\": \"web1\", \"request\": {\"version\": 1}}");
	expect_status(a, 400);
	answer_done(&a);
	checked_call(400, "GET", "/v1/machines/.x", NULL, T.token, NULL);
	checked_call(400, "POST", "/v1/machines/web1/evidence", NULL, NULL, "{}");
	checked_call(400, "POST", "/v1/machines/web1/evidence", "zz", NULL, "{}");
	checked_call(404, "POST", "/v1/enroll/web1/activate", NULL, NULL, "{}");
	checked_call(404, "POST", "/v1/machines/nobody/nonce", NULL, NULL, NULL);
	checked_call(404, "GET", "/v1/machines/nobody", NULL, T.token, NULL);
}

/* Enroll, nonce, evidence: untrusted for want of a policy; the policy set re-judges it trusted. */
static void test_attest_no_policy_then_policy(void **state)
{
	char names[256], path[128], sha[65];
	answer a;

	(void) state;
	T.ak1 = enroll("web1", 0, 201);
	a = show("web1");
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_true(json_is_null_or_absent(json_object_get(a.json, "policy")));
	assert_non_null(jstr(a.json, "ak_name"));
	assert_int_equal(strlen(jstr(a.json, "ek_certificate_sha256")), 64);
	answer_done(&a);

	get_nonce("web1", T.nonce1);
	T.evidence1 = quote(T.ak1, T.nonce1, T.log, T.log_size);
	a = post_evidence("web1", T.nonce1, T.evidence1);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	assert_string_equal(jstr(a.json, "nonce"), T.nonce1);
	reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
	assert_string_equal(names, "no-policy");
	assert_false(json_is_true(json_object_get(json_object_get(a.json, "verdict"), "trusted")));
	answer_done(&a);

	a = call("PUT", "/v1/machines/web1/policy", NULL, T.token, "{\"version\": 1, \"pcrs\": ");
	expect_status(a, 400);
	answer_done(&a);

	a = call("PUT", "/v1/machines/web1/policy", NULL, T.token, T.policy);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "trusted");
	{
		/* Stored once, under its SHA-256. */
		mb_error err = { 0 };
		db_rows *rows;
		const char *p[] = { jstr(a.json, "policy") };

		assert_int_equal(strlen(p[0]), 64);
		assert_int_equal(db_query(T.d, "SELECT text FROM policies WHERE sha256 = $1", p, 1, &rows, &err), 0);
		assert_int_equal(db_rows_count(rows), 1);
		assert_string_equal(db_rows_get(rows, 0, 0), T.policy);
		db_rows_free(rows);
		memcpy(sha, p[0], 65);
	}
	answer_done(&a);

	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "trusted");
	assert_string_equal(jstr(a.json, "policy"), sha);
	assert_true(json_is_true(json_object_get(json_object_get(a.json, "verdict"), "trusted")));
	answer_done(&a);

	/* A fresh nonce, a fresh quote: trusted at once. */
	{
		char n2[65];
		char *ev;

		get_nonce("web1", n2);
		ev = quote(T.ak1, n2, T.log, T.log_size);
		a = post_evidence("web1", n2, ev);
		expect_status(a, 200);
		assert_string_equal(jstr(a.json, "status"), "trusted");
		reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
		assert_string_equal(names, "");
		answer_done(&a);
		free(ev);
	}
	a = show("web1");
	{
		json_t *h = json_object_get(a.json, "history");

		assert_int_equal(json_array_size(h), 2);
		/* Newest first. */
		assert_true(json_is_true(json_object_get(json_array_get(h, 0), "trusted")));
		assert_false(json_is_true(json_object_get(json_array_get(h, 1), "trusted")));
		assert_int_equal((int) json_integer_value(json_object_get(json_array_get(h, 1), "reasons")), 1);
	}
	answer_done(&a);
	a = call("GET", "/v1/machines", NULL, T.token, NULL);
	expect_status(a, 200);
	{
		json_t *m = json_array_get(json_object_get(a.json, "machines"), 0);

		assert_string_equal(jstr(m, "id"), "web1");
		assert_string_equal(jstr(m, "status"), "trusted");
		assert_string_equal(jstr(m, "policy"), sha);
		assert_int_equal((int) json_integer_value(json_object_get(m, "interval")), 600);
		assert_non_null(jstr(m, "last_attestation"));
	}
	answer_done(&a);
	snprintf(path, sizeof(path), "/v1/machines/%s/events", "web1");
	a = call("GET", path, NULL, T.token, NULL);
	expect_status(a, 200);
	{
		json_t *evs = json_object_get(a.json, "events");
		size_t i;

		assert_true(json_array_size(evs) > 100);
		for (i = 0; i < json_array_size(evs); i++)
			assert_false(json_is_true(json_object_get(json_array_get(evs, i), "broken")));
	}
	answer_done(&a);
}

static void test_replay_refused(void **state)
{
	answer a;

	(void) state;
	/* The first evidence again, with its (used) nonce. */
	a = post_evidence("web1", T.nonce1, T.evidence1);
	expect_status(a, 409);
	answer_done(&a);
	/* A nonce never given. */
	a = post_evidence("web1", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", T.evidence1);
	expect_status(a, 409);
	answer_done(&a);
}

/* Four posts of one fresh nonce at once, each on its own worker (its own connection, as the
 * server's threads have): all may be judged, exactly one verdict is stored and answered 200,
 * the others 409. The nonce is consumed in the transaction that stores the verdict. */
#define RACERS 4

typedef struct racer {
	pthread_t thread;
	fleet_worker *w;
	const char *nonce, *evidence;
	unsigned status;
} racer;

static void *race(void *p)
{
	racer *r = p;
	http_request req = { .method = "POST", .path = "/v1/machines/web1/evidence", .nonce = r->nonce,
			     .body = r->evidence, .body_size = strlen(r->evidence) };
	http_response resp;

	fleet_handle(r->w, &req, &resp);
	r->status = resp.status;
	if (!resp.body_static)
		free(resp.body);
	return NULL;
}

/* The first column of the first row of sql with one parameter, as a number (-1: none, NULL). */
static long long db_number(const char *sql, const char *param)
{
	const char *p[] = { param };
	mb_error err = { 0 };
	db_rows *rows;
	long long v = -1;

	assert_int_equal(db_query(T.d, sql, p, param ? 1 : 0, &rows, &err), 0);
	if (db_rows_count(rows) && db_rows_get(rows, 0, 0))
		v = atoll(db_rows_get(rows, 0, 0));
	db_rows_free(rows);
	return v;
}

/* Rows of the history with this nonce (each is judged at most once). */
static long long nonce_rows(const char *nonce)
{
	return db_number("SELECT count(*) FROM attestations WHERE nonce = $1", nonce);
}

static void test_concurrent_posts_one_nonce(void **state)
{
	racer rs[RACERS] = { 0 };
	char nonce[65], *evidence;
	unsigned ok = 0, conflict = 0, i;

	(void) state;
	get_nonce("web1", nonce);
	evidence = quote(T.ak1, nonce, T.log, T.log_size);
	for (i = 0; i < RACERS; i++) {
		rs[i] = (racer) { .w = fleet_worker_new(T.f), .nonce = nonce, .evidence = evidence };
		assert_non_null(rs[i].w);
	}
	for (i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&rs[i].thread, NULL, race, &rs[i]), 0);
	for (i = 0; i < RACERS; i++) {
		assert_int_equal(pthread_join(rs[i].thread, NULL), 0);
		ok += rs[i].status == 200;
		conflict += rs[i].status == 409;
		fleet_worker_free(rs[i].w);
	}
	assert_int_equal(ok, 1);
	assert_int_equal(conflict, RACERS - 1);
	assert_int_equal(nonce_rows(nonce), 1);
	free(evidence);
}

/* A nonce of a verifier on the same database whose nonces live 1 s, posted 2 s later: the key
 * is shared (the other verifier's nonce is this one's), and the expiry is the nonce's own. */
static void test_expired_nonce(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true, .nonce_ttl = 1 };
	http_request req = { .method = "POST", .path = "/v1/machines/web1/nonce", .body = "" };
	http_response resp;
	mb_error err = { 0 };
	fleet *f2;
	fleet_worker *w2;
	json_t *o2;
	char n[65], fresh[65], *ev;
	answer a;

	(void) state;
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	w2 = fleet_worker_new(f2);
	fleet_handle(w2, &req, &resp);
	assert_int_equal(resp.status, 200);
	o2 = json_loads(resp.body, JSON_DECODE_ANY, NULL);
	snprintf(n, sizeof(n), "%s", jstr(o2, "nonce"));
	json_decref(o2);
	free(resp.body);
	fleet_handle(w2, &req, &resp);
	o2 = json_loads(resp.body, JSON_DECODE_ANY, NULL);
	snprintf(fresh, sizeof(fresh), "%s", jstr(o2, "nonce"));
	json_decref(o2);
	free(resp.body);
	fleet_worker_free(w2);
	fleet_free(f2);

	/* Within its second it is good here (the trusted boot, so web1's state stays). */
	ev = quote(T.ak1, fresh, T.log, T.log_size);
	a = post_evidence("web1", fresh, ev);
	expect_status(a, 200);
	answer_done(&a);
	free(ev);
	sleep(2);
	ev = quote(T.ak1, n, T.log, T.log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 409);
	assert_non_null(strstr(jstr(a.json, "error"), "expired"));
	answer_done(&a);
	/* One digit of its expiry changed: the MAC no longer fits, not this verifier's nonce. */
	n[30] = n[30] == 'f' ? 'e' : 'f';
	a = post_evidence("web1", n, ev);
	expect_status(a, 409);
	answer_done(&a);
	free(ev);
}

/* The value of a line of GET /metrics ("name{labels}"), -1 when it has none. */
static long long metric_value(const char *series)
{
	char line[160];
	const char *at;
	answer a = call("GET", "/metrics", NULL, T.token, NULL);
	long long n = -1;

	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/plain; version=0.0.4; charset=utf-8");
	snprintf(line, sizeof(line), "\n%s ", series);
	at = strstr(a.body, line);
	if (at)
		n = strtoll(at + strlen(line), NULL, 10);
	answer_done(&a);
	return n;
}

/* The refusals counted in GET /metrics for reason name. */
static long long refused_count(const char *reason)
{
	char series[128];

	snprintf(series, sizeof(series), "mboot_verifierd_evidence_refused_total{reason=\"%s\"}", reason);
	return metric_value(series);
}

/* Rows of machine id in attestations. */
static size_t history_rows(const char *id)
{
	const char *p[] = { id };
	mb_error err = { 0 };
	db_rows *rows;
	size_t n;

	assert_int_equal(db_query(T.d, "SELECT nonce FROM attestations WHERE machine_id = $1", p, 1, &rows, &err), 0);
	n = db_rows_count(rows);
	db_rows_free(rows);
	return n;
}

/* One machine pushing from several threads at once, each with its own nonce (a timer and an
 * operator's push, say): every push is answered 200 and stored. Unserialized, each push's
 * store spoiled the rows the others were judged on, until one ran out of tries (409). */
#define PUSHES_EACH 6

typedef struct pusher {
	pthread_t thread;
	fleet_worker *w;
	char nonces[PUSHES_EACH][65];
	char *evidence[PUSHES_EACH];
	unsigned ok;
	char last_error[256];
} pusher;

static void *push_all(void *p)
{
	pusher *u = p;
	unsigned k;

	for (k = 0; k < PUSHES_EACH; k++) {
		http_request req = { .method = "POST", .path = "/v1/machines/web1/evidence", .nonce = u->nonces[k],
				     .body = u->evidence[k], .body_size = strlen(u->evidence[k]) };
		http_response resp;

		fleet_handle(u->w, &req, &resp);
		if (resp.status == 200)
			u->ok++;
		else
			snprintf(u->last_error, sizeof(u->last_error), "%u %.200s", resp.status,
				 resp.body ? resp.body : "");
		if (!resp.body_static)
			free(resp.body);
	}
	return NULL;
}

/* Between judging and storing: long enough for the other threads' pushes to land there. */
static void linger(void *p)
{
	(void) p;
	usleep(3000);
}

static void test_concurrent_pushes_one_machine(void **state)
{
	pusher us[RACERS] = { 0 };
	size_t before = history_rows("web1");
	long long judged, kept;
	unsigned i, k;
	char n[65];

	(void) state;
	for (i = 0; i < RACERS; i++) {
		us[i].w = fleet_worker_new(T.f);
		assert_non_null(us[i].w);
		for (k = 0; k < PUSHES_EACH; k++) {
			get_nonce("web1", us[i].nonces[k]);
			us[i].evidence[k] = quote(T.ak1, us[i].nonces[k], T.log, T.log_size);
		}
	}
	judged = metric_value("mboot_verifierd_judge_seconds_count");
	fleet_set_after_judging(T.f, linger, NULL);
	for (i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&us[i].thread, NULL, push_all, &us[i]), 0);
	for (i = 0; i < RACERS; i++)
		assert_int_equal(pthread_join(us[i].thread, NULL), 0);
	fleet_set_after_judging(T.f, NULL, NULL);
	for (i = 0; i < RACERS; i++) {
		if (us[i].ok != PUSHES_EACH)
			fail_msg("pusher %u: %u of %d answered 200; last: %s", i, us[i].ok, PUSHES_EACH, us[i].last_error);
		for (k = 0; k < PUSHES_EACH; k++)
			free(us[i].evidence[k]);
		fleet_worker_free(us[i].w);
	}
	assert_int_equal(history_rows("web1"), before + RACERS * PUSHES_EACH);
	/* Each judged once, on the row the push before left (kept, and taken under the lock); the
	 * machine's row is still kept, not read for each nonce as one changed elsewhere. */
	assert_int_equal(metric_value("mboot_verifierd_judge_seconds_count"), judged + RACERS * PUSHES_EACH);
	kept = metric_value("mboot_verifierd_nonce_rows_total{from=\"kept\"}");
	get_nonce("web1", n);
	assert_int_equal(metric_value("mboot_verifierd_nonce_rows_total{from=\"kept\"}"), kept + 1);
}

/* The nonce answer names the log whose judgment the verifier keeps (openssl's SHA-256 of it); evidence
 * naming it instead of carrying it is judged trusted, and the stored evidence (with its log) stays.
 * Where the judgment is not kept, or another log is named, the answer is 409 "send": "eventlog",
 * nothing is stored, and the same nonce with the log is taken. */
static void test_log_named(void **state)
{
	const char *want = env("MB_FLEET_LOG_SHA256");
	char n[65], *ev, *forged, *at, path[128];
	uint8_t known[32];
	answer a;

	(void) state;
	snprintf(path, sizeof(path), "/v1/machines/web1/nonce");
	a = call("POST", path, NULL, NULL, NULL);
	expect_status(a, 200);
	assert_non_null(jstr(a.json, "eventlog_sha256"));
	assert_string_equal(jstr(a.json, "eventlog_sha256"), want);
	snprintf(n, sizeof(n), "%s", jstr(a.json, "nonce"));
	answer_done(&a);
	for (size_t i = 0; i < 32; i++)
		assert_int_equal(sscanf(want + 2 * i, "%2hhx", &known[i]), 1);

	{
		const char *p[] = { "web1" };
		db_rows *rows;
		mb_error err = { 0 };
		char *stored_nonce;

		assert_int_equal(db_query(T.d, "SELECT evidence_nonce FROM machines WHERE id = $1", p, 1, &rows, &err), 0);
		stored_nonce = strdup(db_rows_get(rows, 0, 0));
		db_rows_free(rows);
		ev = quote_naming(T.ak1, n, T.log, T.log_size, known);
		assert_null(strstr(ev, "\"eventlog\""));
		assert_non_null(strstr(ev, want));
		a = post_evidence("web1", n, ev);
		expect_status(a, 200);
		assert_string_equal(jstr(a.json, "status"), "trusted");
		answer_done(&a);
		assert_int_equal(nonce_rows(n), 1);
		/* the stored evidence is still the one with the log */
		assert_int_equal(db_query(T.d, "SELECT evidence_nonce FROM machines WHERE id = $1", p, 1, &rows, &err), 0);
		assert_string_equal(db_rows_get(rows, 0, 0), stored_nonce);
		db_rows_free(rows);
		free(stored_nonce);
		free(ev);
	}

	/* A verifier that keeps no judgment (just started) neither offers it nor takes it. */
	{
		fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true };
		mb_error err = { 0 };
		fleet *f2;
		fleet_worker *w2;

		assert_int_equal(fleet_new(&o, &f2, &err), 0);
		w2 = fleet_worker_new(f2);
		a = call_on(w2, "POST", "/v1/machines/web1/nonce", NULL, NULL, NULL);
		expect_status(a, 200);
		assert_null(json_object_get(a.json, "eventlog_sha256"));
		snprintf(n, sizeof(n), "%s", jstr(a.json, "nonce"));
		answer_done(&a);
		ev = quote_naming(T.ak1, n, T.log, T.log_size, known);
		a = call_on(w2, "POST", "/v1/machines/web1/evidence", n, NULL, ev);
		expect_status(a, 409);
		assert_string_equal(jstr(a.json, "send"), "eventlog");
		answer_done(&a);
		assert_int_equal(nonce_rows(n), 0);
		/* the same nonce, the log carried: judged */
		free(ev);
		ev = quote(T.ak1, n, T.log, T.log_size);
		a = call_on(w2, "POST", "/v1/machines/web1/evidence", n, NULL, ev);
		expect_status(a, 200);
		/* the named log's miss left no judgment of the boot behind */
		assert_string_equal(jstr(a.json, "status"), "trusted");
		answer_done(&a);
		assert_int_equal(nonce_rows(n), 1);
		fleet_worker_free(w2);
		fleet_free(f2);
		free(ev);
	}

	/* Another log named (the evil boot's, with the good boot's PCRs): no judgment of it is kept. */
	get_nonce("web1", n);
	ev = quote_naming(T.ak1, n, T.log, T.log_size, known);
	forged = strdup(ev);
	at = strstr(forged, want);
	assert_non_null(at);
	at[0] = at[0] == '0' ? '1' : '0';
	a = post_evidence("web1", n, forged);
	expect_status(a, 409);
	assert_string_equal(jstr(a.json, "send"), "eventlog");
	answer_done(&a);
	assert_int_equal(nonce_rows(n), 0);
	free(forged);

	/* A log both carried and named is malformed. */
	free(ev);
	ev = quote(T.ak1, n, T.log, T.log_size);
	at = strstr(ev, "\"eventlog\"");
	assert_non_null(at);
	{
		size_t head = (size_t) (at - ev);
		char *both = NULL;

		assert_true(asprintf(&both, "%.*s\"eventlog_sha256\":\"%s\",%s", (int) head, ev, want, at) > 0);
		a = post_evidence("web1", n, both);
		expect_status(a, 400);
		assert_non_null(strstr(jstr(a.json, "error"), "both"));
		answer_done(&a);
		free(both);
	}
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	answer_done(&a);
	free(ev);
}

/* Evidence of machine id for a nonce of this verifier, posted here: the answer. The nonce was
 * given on the row this verifier keeps (from "kept") or on the row read (from "read"), as the
 * metric counts. */
static answer attest_from(const char *id, const char *ak, const char *from, char nonce[65])
{
	char series[96];
	long long before;
	char *ev;
	answer a;

	snprintf(series, sizeof(series), "mboot_verifierd_nonce_rows_total{from=\"%s\"}", from);
	before = metric_value(series);
	get_nonce(id, nonce);
	assert_int_equal(metric_value(series), before + 1);
	ev = quote(ak, nonce, T.log, T.log_size);
	a = post_evidence(id, nonce, ev);
	free(ev);
	return a;
}

/* Machine id enrolled here with the good policy, attested once: trusted, its row kept. */
static char *enroll_attested(const char *id)
{
	char n[65], path[128], *ak = enroll(id, 0, 201);
	answer a;

	snprintf(path, sizeof(path), "/v1/machines/%s/policy", id);
	checked_call(200, "PUT", path, NULL, T.token, T.policy);
	a = attest_from(id, ak, "read", n); /* the enrollment dropped what was kept */
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "trusted");
	answer_done(&a);
	return ak;
}

/* The row this verifier keeps of a machine is older than the database's when another verifier
 * changed the machine: enrolled it again with another AK, cleared its policy, revoked it. The
 * evidence is then judged on the row as it is: the new AK's quote trusted (not refused as a
 * stranger's), the verdict of no policy stored, the revoke the answer. Such a machine is read
 * for each nonce from then on. */
static void test_kept_row_changed_elsewhere(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true };
	mb_error err = { 0 };
	char n[65], *ak, *ak_new, names[256];
	fleet *f2;
	fleet_worker *w2;
	answer a;

	(void) state;
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	w2 = fleet_worker_new(f2);

	ak = enroll_attested("kept1");
	a = call_on(w2, "DELETE", "/v1/machines/kept1", NULL, T.token, NULL);
	expect_status(a, 200);
	answer_done(&a);
	ak_new = enroll_on(w2, "kept1", 0, 201);
	a = call_on(w2, "PUT", "/v1/machines/kept1/policy", NULL, T.token, T.policy);
	expect_status(a, 200);
	answer_done(&a);
	a = attest_from("kept1", ak_new, "kept", n);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "trusted");
	answer_done(&a);
	assert_int_equal(nonce_rows(n), 1);
	/* changed elsewhere once: read for each nonce */
	a = attest_from("kept1", ak_new, "read", n);
	expect_status(a, 200);
	answer_done(&a);
	free(ak);
	free(ak_new);

	ak = enroll_attested("kept2");
	a = call_on(w2, "DELETE", "/v1/machines/kept2/policy", NULL, T.token, NULL);
	expect_status(a, 200);
	answer_done(&a);
	a = attest_from("kept2", ak, "kept", n);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
	assert_string_equal(names, "no-policy");
	answer_done(&a);
	free(ak);

	/* Revoked there: this verifier gives a nonce on what it keeps, but stores nothing under it,
	 * and reads the row from then on. */
	ak = enroll_attested("kept3");
	a = call_on(w2, "POST", "/v1/machines/kept3/revoke", NULL, T.token, NULL);
	expect_status(a, 200);
	answer_done(&a);
	a = attest_from("kept3", ak, "kept", n);
	expect_status(a, 403);
	assert_non_null(strstr(jstr(a.json, "error"), "revoked"));
	answer_done(&a);
	assert_int_equal(nonce_rows(n), 0);
	checked_call(403, "POST", "/v1/machines/kept3/nonce", NULL, NULL, NULL);
	free(ak);

	fleet_worker_free(w2);
	fleet_free(f2);
}

static void test_other_machines_nonce(void **state)
{
	char n[65], *ev;
	long long before;
	answer a;

	(void) state;
	T.ak2 = enroll("web2", 0, 201);
	get_nonce("web2", n);
	ev = quote(T.ak1, n, T.log, T.log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 409);
	answer_done(&a);
	/* web1's quote of web2's nonce, posted as web2's evidence: not web2's TPM's answer (another
	 * AK), so it is refused and nothing of it is stored; counted by reason. */
	before = refused_count("ak-not-enrolled");
	a = post_evidence("web2", n, ev);
	expect_status(a, 403);
	assert_non_null(strstr(jstr(a.json, "error"), "ak-not-enrolled"));
	assert_non_null(strstr(jstr(a.json, "error"), "nothing was stored"));
	answer_done(&a);
	assert_int_equal(refused_count("ak-not-enrolled"), before + 1);
	assert_int_equal(history_rows("web2"), 0);
	a = show("web2");
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_true(json_is_null_or_absent(json_object_get(a.json, "verdict")));
	answer_done(&a);
	free(ev);
	/* The nonce was not used up by the refused posts: web2's own quote of it counts. */
	ev = quote(T.ak2, n, T.log, T.log_size);
	a = post_evidence("web2", n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted"); /* no policy */
	answer_done(&a);
	free(ev);
}

/* Nonces cost nothing to give: a client asking for many takes none from the machine (with a
 * stored cap per machine, 8 asks used to push out the machine's own). */
static void test_nonces_plentiful(void **state)
{
	char first[65], n[65], *ev;
	answer a;
	int i;

	(void) state;
	get_nonce("web2", first);
	for (i = 0; i < 500; i++)
		get_nonce("web2", n);
	ev = quote(T.ak2, first, T.log, T.log_size);
	a = post_evidence("web2", first, ev);
	expect_status(a, 200);
	answer_done(&a);
	free(ev);
	/* Malformed evidence under a good nonce: 400, with the library's message. */
	a = post_evidence("web2", n, "{\"version\": 1}");
	expect_status(a, 400);
	answer_done(&a);
}

/* Evidence from a client without web1's TPM: its AK is web2's (the same TPM's other key) and its
 * signature does not verify with web1's AK. Refused; web1's last verdict, history and boot chain
 * stay those of its own last evidence. */
static void test_forged_evidence_not_stored(void **state)
{
	char n[65], *ev, *verdict_before, *events_before;
	size_t rows_before = history_rows("web1");
	long long before = refused_count("ak-not-enrolled");
	answer a;

	(void) state;
	a = show("web1");
	verdict_before = json_dumps(json_object_get(a.json, "verdict"), 0);
	answer_done(&a);
	a = call("GET", "/v1/machines/web1/events", NULL, T.token, NULL);
	events_before = strdup(a.body);
	answer_done(&a);

	get_nonce("web1", n);
	ev = quote(T.ak2, n, T.evil_log, T.evil_log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 403);
	answer_done(&a);
	free(ev);

	assert_int_equal(refused_count("ak-not-enrolled"), before + 1);
	assert_int_equal(history_rows("web1"), rows_before);
	a = show("web1");
	{
		char *verdict_after = json_dumps(json_object_get(a.json, "verdict"), 0);

		assert_string_equal(verdict_after, verdict_before);
		free(verdict_after);
	}
	answer_done(&a);
	a = call("GET", "/v1/machines/web1/events", NULL, T.token, NULL);
	assert_string_equal(a.body, events_before);
	answer_done(&a);
	free(verdict_before);
	free(events_before);
	/* Without the token, no metrics. */
	checked_call(401, "GET", "/metrics", NULL, NULL, NULL);
}

/* What an operator does while a machine's evidence is being judged (the machine can make judging
 * slow at will): one call on another worker, once. */
typedef struct meanwhile {
	fleet_worker *w;
	const char *method, *path, *body;
	unsigned status; /* the call's answer; 0 while not made */
} meanwhile;

static void operator_meanwhile(void *p)
{
	meanwhile *m = p;
	http_request req = { .method = m->method, .path = m->path, .bearer = T.token, .body = m->body ? m->body : "",
			     .body_size = m->body ? strlen(m->body) : 0 };
	http_response resp;

	if (m->status)
		return;
	fleet_handle(m->w, &req, &resp);
	m->status = resp.status;
	if (!resp.body_static)
		free(resp.body);
}

/* The policy removed while web1's good boot is judged under it: the verdict judged under the old
 * policy is not stored; the evidence is judged again under what web1 has now (none: untrusted).
 * The operator's calls go through a second verifier on the database: this one makes its own
 * changes of a machine under the machine's lock, after the evidence being judged. */
static void test_policy_changed_while_judging(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true };
	mb_error err = { 0 };
	fleet *f2;
	meanwhile mw = { .method = "DELETE", .path = "/v1/machines/web1/policy" };
	char n[65], *ev, names[256];
	answer a;

	(void) state;
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	mw.w = fleet_worker_new(f2);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "trusted");
	answer_done(&a);
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.log, T.log_size);
	fleet_set_after_judging(T.f, operator_meanwhile, &mw);
	a = post_evidence("web1", n, ev);
	fleet_set_after_judging(T.f, NULL, NULL);
	assert_int_equal(mw.status, 200);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
	assert_string_equal(names, "no-policy");
	answer_done(&a);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	assert_true(json_is_null_or_absent(json_object_get(a.json, "policy")));
	answer_done(&a);
	free(ev);

	/* A stricter policy put meanwhile: judged under it. The policy set back, the last
	 * evidence is judged again: trusted. */
	mw = (meanwhile) { .w = mw.w, .method = "PUT", .path = "/v1/machines/web1/policy", .body = T.policy };
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.log, T.log_size);
	fleet_set_after_judging(T.f, operator_meanwhile, &mw);
	a = post_evidence("web1", n, ev);
	fleet_set_after_judging(T.f, NULL, NULL);
	assert_int_equal(mw.status, 200);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "trusted");
	answer_done(&a);
	free(ev);

	/* web2 revoked while its evidence is judged: refused, nothing stored. */
	{
		size_t rows = history_rows("web2");

		mw = (meanwhile) { .w = mw.w, .method = "POST", .path = "/v1/machines/web2/revoke" };
		get_nonce("web2", n);
		ev = quote(T.ak2, n, T.log, T.log_size);
		fleet_set_after_judging(T.f, operator_meanwhile, &mw);
		a = post_evidence("web2", n, ev);
		fleet_set_after_judging(T.f, NULL, NULL);
		assert_int_equal(mw.status, 200);
		expect_status(a, 403);
		answer_done(&a);
		free(ev);
		assert_int_equal(history_rows("web2"), rows);
		/* Forgotten and enrolled again for the tests after this one. */
		checked_call(200, "DELETE", "/v1/machines/web2", NULL, T.token, NULL);
		free(T.ak2);
		T.ak2 = enroll("web2", 0, 201);
	}
	fleet_worker_free(mw.w);
	fleet_free(f2);
}

/* The verifier decides freshness: a machine asking for a year gets the verifier's maximum, and a
 * verifier started with a lower maximum holds machines enrolled before to it. */
static void test_interval_capped(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true, .interval = 1, .max_interval = 1 };
	http_request req = { .method = "GET", .path = "/v1/machines/slow1", .bearer = T.token, .body = "" };
	http_response resp;
	mb_error err = { 0 };
	fleet *f2;
	fleet_worker *w2;
	json_t *o2;
	char *ak;
	answer a;

	(void) state;
	ak = enroll("slow1", 31622400, 201);
	a = show("slow1");
	assert_int_equal(json_integer_value(json_object_get(a.json, "interval")), 600);
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	answer_done(&a);
	free(ak);

	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	w2 = fleet_worker_new(f2);
	sleep(3);
	fleet_handle(w2, &req, &resp);
	assert_int_equal(resp.status, 200);
	o2 = json_loads(resp.body, JSON_DECODE_ANY, NULL);
	assert_string_equal(jstr(o2, "status"), "stale");
	assert_int_equal(json_integer_value(json_object_get(o2, "interval")), 1);
	json_decref(o2);
	free(resp.body);
	fleet_worker_free(w2);
	fleet_free(f2);
	/* A maximum below the default interval is refused. */
	o.interval = 60;
	o.max_interval = 30;
	assert_int_equal(fleet_new(&o, &f2, &err), -EINVAL);
	checked_call(200, "DELETE", "/v1/machines/slow1", NULL, T.token, NULL);
}

/* A verifier started with --min-bank sha384 judges web1's good boot (its TPM has sha1 and sha256)
 * bank-too-weak; the same evidence passes the default rule (sha256 quoted). */
static void test_min_bank(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true, .min_bank = 0x000c };
	mb_error err = { 0 };
	fleet *f2;
	fleet_worker *w0 = T.w;
	char n[65], *ev, names[256];
	answer a;

	(void) state;
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	T.w = fleet_worker_new(f2);
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.log, T.log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
	assert_string_equal(names, "bank-too-weak");
	answer_done(&a);
	free(ev);
	fleet_worker_free(T.w);
	fleet_free(f2);
	T.w = w0;
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.log, T.log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "trusted");
	answer_done(&a);
	free(ev);
}

/* The good boot's PCR 8 extended with the event init=/bin/sh adds: genuine quote, genuine
 * log, a boot the policy refuses; the verdict and the events name the event. */
static void test_evil_boot(void **state)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	const mb_event *added;
	char n[65], *ev, names[256];
	json_t *viol, *evs;
	int64_t index;
	size_t i, n_broken = 0;
	answer a;

	(void) state;
	assert_int_equal(mb_event_log_parse(T.evil_log, T.evil_log_size, &log, &err), 0);
	added = mb_event_log_event(log, mb_event_log_count(log) - 1);
	assert_int_equal(added->pcr, 8);
	assert_int_equal(mb_tpm_extend(T.tpm, 8, added->digests, added->n_digests, &err), 0);
	index = added->number;

	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.evil_log, T.evil_log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	reason_names(json_object_get(a.json, "verdict"), names, sizeof(names));
	assert_string_equal(names, "policy-violated");
	viol = json_object_get(json_object_get(json_object_get(a.json, "verdict"), "policy"), "violations");
	assert_int_equal(json_array_size(viol), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(viol, 0), "event")),
			 index);
	answer_done(&a);
	free(ev);

	a = call("GET", "/v1/machines/web1/events", NULL, T.token, NULL);
	expect_status(a, 200);
	evs = json_object_get(a.json, "events");
	assert_int_equal(json_array_size(evs), mb_event_log_count(log));
	for (i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i);

		if (!json_is_true(json_object_get(e, "broken"))) {
			assert_true(json_is_null_or_absent(json_object_get(e, "why")));
			continue;
		}
		n_broken++;
		assert_int_equal(json_integer_value(json_object_get(e, "index")), index);
		assert_int_equal((int) json_integer_value(json_object_get(e, "pcr")), 8);
		assert_string_equal(jstr(e, "type"), "EV_IPL");
		assert_non_null(jstr(e, "why"));
		/* The decoded GRUB command is the one that was added. */
		{
			char *decoded = json_dumps(json_object_get(e, "decoded"), 0);

			assert_non_null(decoded);
			assert_non_null(strstr(decoded, "init=/bin/sh"));
			free(decoded);
		}
		{
			char hex[65];
			const mb_event_digest *d = mb_event_digest_for(added, 0x000b);
			size_t b;

			for (b = 0; b < 32; b++)
				snprintf(hex + 2 * b, 3, "%02x", d->bytes[b]);
			assert_string_equal(jstr(json_object_get(e, "digests"), "sha256"), hex);
		}
	}
	assert_int_equal(n_broken, 1);
	answer_done(&a);
	mb_event_log_free(log);

	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	answer_done(&a);
}

/* A log of any length gives a bounded events view: web1's evil boot with 5,000 events more in
 * PCR 16 (which the TPM holds at zero, so none of them replays: each is broken). The first 2,000
 * events and 2,000 broken ones after them are shown, the rest counted. */
static void test_events_capped(void **state)
{
	const size_t extra = 5000;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	const mb_event *last;
	uint8_t *big, *p;
	size_t per_event, k, i, total, n_events;
	char n[65], *ev;
	json_t *evs;
	answer a;

	(void) state;
	assert_int_equal(mb_event_log_parse(T.evil_log, T.evil_log_size, &log, &err), 0);
	n_events = mb_event_log_count(log);
	last = mb_event_log_event(log, n_events - 1);
	per_event = 12 + 4 + 1;
	for (k = 0; k < last->n_digests; k++)
		per_event += 2 + last->digests[k].size;
	big = malloc(T.evil_log_size + extra * per_event);
	assert_non_null(big);
	memcpy(big, T.evil_log, T.evil_log_size);
	p = big + T.evil_log_size;
	for (i = 0; i < extra; i++) {
		/* TCG_PCR_EVENT2: PCR 16, EV_IPL, the log's banks with digests of zeros, 1 byte of data. */
		uint32_t head[3] = { 16, 0xd, (uint32_t) last->n_digests }, one = 1;

		memcpy(p, head, 12);
		p += 12;
		for (k = 0; k < last->n_digests; k++) {
			memcpy(p, &last->digests[k].alg, 2);
			memset(p + 2, 0, last->digests[k].size);
			p += 2 + last->digests[k].size;
		}
		memcpy(p, &one, 4);
		p[4] = 'x';
		p += 5;
	}
	total = n_events + extra;
	mb_event_log_free(log);

	get_nonce("web1", n);
	ev = quote(T.ak1, n, big, (size_t) (p - big));
	free(big);
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	answer_done(&a);
	free(ev);

	a = call("GET", "/v1/machines/web1/events", NULL, T.token, NULL);
	expect_status(a, 200);
	evs = json_object_get(a.json, "events");
	assert_int_equal(json_integer_value(json_object_get(a.json, "total")), total);
	assert_int_equal(json_array_size(evs), 4000);
	assert_int_equal(json_integer_value(json_object_get(a.json, "omitted")), total - 4000);
	for (i = 2000; i < 4000; i++)
		assert_true(json_is_true(json_object_get(json_array_get(evs, i), "broken")));
	answer_done(&a);
}

/* The same TPM enrolls web1 again (a new AK): its policy and history stay, the new AK counts. */
static void test_reenroll_same_ek(void **state)
{
	char *policy, *ak, n[65], *ev;
	size_t n_history;
	answer a;

	(void) state;
	a = show("web1");
	policy = strdup(jstr(a.json, "policy"));
	n_history = json_array_size(json_object_get(a.json, "history"));
	assert_true(n_history >= 3);
	answer_done(&a);

	ak = enroll("web1", 0, 201);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_string_equal(jstr(a.json, "policy"), policy);
	assert_int_equal(json_array_size(json_object_get(a.json, "history")), n_history);
	answer_done(&a);

	/* The old AK's evidence no longer vouches for web1: refused, nothing stored. */
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.evil_log, T.evil_log_size);
	a = post_evidence("web1", n, ev);
	expect_status(a, 403);
	assert_non_null(strstr(a.body, "ak-not-enrolled"));
	answer_done(&a);
	free(ev);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_int_equal(json_array_size(json_object_get(a.json, "history")), n_history);
	answer_done(&a);
	free(T.ak1);
	T.ak1 = ak;
	free(policy);
}

static void test_stale(void **state)
{
	char *ak;
	answer a;

	(void) state;
	ak = enroll("quiet1", 1, 201);
	a = show("quiet1");
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_int_equal((int) json_integer_value(json_object_get(a.json, "interval")), 1);
	answer_done(&a);
	sleep(3);
	a = show("quiet1");
	assert_string_equal(jstr(a.json, "status"), "stale");
	answer_done(&a);
	free(ak);
}

/* A sweep in a thread of its own, as a second verifier's would run beside the first one's. */
typedef struct sweeper {
	fleet *f;
	int64_t now_us;
	int announced;
	pthread_t thread;
} sweeper;

static void *sweeper_main(void *p)
{
	sweeper *s = p;
	mb_error err = { 0 };

	s->announced = fleet_stale_sweep(s->f, s->now_us, &err);
	if (s->announced < 0)
		fprintf(stderr, "sweep: %s\n", err.message);
	return NULL;
}

/* Attest machine id with the boot its TPM holds (since test_evil_boot, the evil one): its status. */
static void attest_now(const char *id, const char *ak, const char *want)
{
	char n[65], *ev;
	answer a;

	get_nonce(id, n);
	ev = quote(ak, n, T.evil_log, T.evil_log_size);
	a = post_evidence(id, n, ev);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), want);
	answer_done(&a);
	free(ev);
}

/* Turning stale is an event (fleet-stale.c): a sweep marks the machines whose deadline passed once,
 * whichever verifier sweeps, however often, also two at once; the audit trail says so; a policy set
 * leaves the machine stale; its attestation clears the mark. Sweeps ahead of the clock stand for
 * the time passing (the thread sweeps at the clock's time). */
static void test_stale_sweep(void **state)
{
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots, .allow_ek_reuse = true, .interval = 600 };
	int64_t now = (int64_t) time(NULL), shown_stale = 0, rest;
	sweeper s[2];
	mb_error err = { 0 };
	json_t *audit, *e;
	char want[96];
	fleet *f2;
	answer a;
	size_t i;

	(void) state;
	a = call("GET", "/v1/machines", NULL, T.token, NULL);
	expect_status(a, 200);
	for (i = 0; i < json_array_size(json_object_get(a.json, "machines")); i++)
		shown_stale += strcmp(jstr(json_array_get(json_object_get(a.json, "machines"), i), "status"), "stale") == 0;
	answer_done(&a);
	assert_true(shown_stale >= 1); /* quiet1, interval 1 s, silent since test_stale */

	/* What the page shows stale is announced, once: not by a second sweep, nor by another
	 * verifier of the database (or this one started again). */
	assert_int_equal(fleet_stale_sweep(T.f, now * 1000000, &err), shown_stale);
	assert_int_equal(fleet_stale_sweep(T.f, now * 1000000, &err), 0);
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	assert_int_equal(fleet_stale_sweep(f2, now * 1000000 + 1, &err), 0);
	assert_int_equal(db_number("SELECT stale_announced FROM machines WHERE id = $1", "quiet1"), now);
	a = show("quiet1");
	assert_string_equal(jstr(a.json, "status"), "stale");
	audit = json_object_get(a.json, "audit");
	e = json_array_get(audit, 0);
	assert_non_null(e);
	assert_non_null(jstr(e, "operator"));
	assert_string_equal(jstr(e, "operator"), "mboot-verifierd (stale sweep)");
	assert_string_equal(jstr(e, "action"), "stale");
	assert_non_null(strstr(jstr(e, "detail"), "was enrolled; nothing judged since "));
	assert_non_null(strstr(jstr(e, "detail"), "(interval 1 s)"));
	answer_done(&a);

	/* An hour on, every other machine (interval 600 s) is stale: two verifiers sweeping at once
	 * announce each once between them. */
	rest = db_number("SELECT count(*) FROM machines WHERE status <> 'revoked' AND stale_announced IS NULL", NULL);
	assert_true(rest >= 1);
	s[0] = (sweeper) { .f = T.f, .now_us = (now + 3600) * 1000000 };
	s[1] = (sweeper) { .f = f2, .now_us = (now + 3600) * 1000000 };
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&s[i].thread, NULL, sweeper_main, &s[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(s[i].thread, NULL);
	assert_true(s[0].announced >= 0 && s[1].announced >= 0);
	assert_int_equal(s[0].announced + s[1].announced, rest);
	assert_int_equal(db_number("SELECT count(*) FROM machines WHERE status <> 'revoked' AND stale_announced IS NULL",
				   NULL), 0);
	assert_int_equal(db_number("SELECT count(*) FROM audit WHERE action = 'stale'", NULL), shown_stale + rest);
	assert_int_equal(db_number("SELECT count(DISTINCT machine_id) FROM audit WHERE action = 'stale'", NULL),
			 shown_stale + rest);
	fleet_free(f2);

	/* web1 (announced stale) attests: untrusted (its TPM holds the evil boot), the mark gone,
	 * counted as back from stale. */
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "stale");
	answer_done(&a);
	attest_now("web1", T.ak1, "untrusted");
	assert_int_equal(db_number("SELECT COALESCE(stale_announced, -2) FROM machines WHERE id = $1", "web1"), -2);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "untrusted");
	answer_done(&a);
	a = call("GET", "/metrics", NULL, T.token, NULL);
	expect_status(a, 200);
	assert_non_null(strstr(a.body, "\nmboot_verifierd_stale_total{change=\"attested\"} 1\n"));
	snprintf(want, sizeof(want), "\nmboot_verifierd_stale_total{change=\"announced\"} %lld\n",
		 (long long) (shown_stale + s[0].announced));
	assert_non_null(strstr(a.body, want));
	answer_done(&a);

	/* Silent again, announced again; a policy set judges its evidence again, but it stays stale
	 * (marked) until it attests. */
	assert_int_equal(fleet_stale_sweep(T.f, (now + 7200) * 1000000, &err), 1);
	a = call("PUT", "/v1/machines/web1/policy", NULL, T.token, T.policy);
	expect_status(a, 200);
	assert_string_equal(jstr(a.json, "status"), "stale");
	answer_done(&a);
	assert_int_equal(db_number("SELECT stale_announced FROM machines WHERE id = $1", "web1"), now + 7200);
	a = show("web1");
	assert_string_equal(jstr(a.json, "status"), "stale");
	answer_done(&a);
	attest_now("web1", T.ak1, "untrusted");
	assert_int_equal(db_number("SELECT COALESCE(stale_announced, -2) FROM machines WHERE id = $1", "web1"), -2);
}

/* An id enrolled with one EK is not taken over by another TPM. */
static void test_other_ek(void **state)
{
	mb_error err = { 0 };
	const char *p[] = { "quiet1" };
	char *ak;

	(void) state;
	assert_int_equal(db_exec(T.d, "UPDATE machines SET ek_sha256 = 'another-tpm' WHERE id = $1", p, 1, &err), 1);
	ak = enroll("quiet1", 0, 409);
	assert_null(ak);
}

static void test_revoke_forget(void **state)
{
	char n[65], *ak;
	answer a;

	(void) state;
	get_nonce("web2", n);
	checked_call(200, "POST", "/v1/machines/web2/revoke", NULL, T.token, NULL);
	a = show("web2");
	assert_string_equal(jstr(a.json, "status"), "revoked");
	answer_done(&a);
	checked_call(403, "POST", "/v1/machines/web2/nonce", NULL, NULL, NULL);
	a = post_evidence("web2", n, "{}");
	expect_status(a, 403);
	answer_done(&a);
	assert_null(enroll("web2", 0, 403));

	checked_call(200, "DELETE", "/v1/machines/web2", NULL, T.token, NULL);
	checked_call(404, "GET", "/v1/machines/web2", NULL, T.token, NULL);
	checked_call(404, "POST", "/v1/machines/web2/nonce", NULL, NULL, NULL);
	checked_call(404, "DELETE", "/v1/machines/web2", NULL, T.token, NULL);
	ak = enroll("web2", 0, 201);
	a = show("web2");
	assert_string_equal(jstr(a.json, "status"), "enrolled");
	assert_int_equal(json_array_size(json_object_get(a.json, "history")), 0);
	answer_done(&a);
	free(ak);
}

/* The machines' rows of the columns every schema version has, one line each. */
static char *machine_rows(void)
{
	mb_error err = { 0 };
	db_rows *rows;
	size_t i, n, len = 0;
	char *out = calloc(1, 1);

	assert_int_equal(db_query(T.d, "SELECT id, status, policy, last_nonce, last_verdict, evidence_boot "
				  "FROM machines ORDER BY id", NULL, 0, &rows, &err), 0);
	n = db_rows_count(rows);
	for (i = 0; i < n; i++)
		for (size_t c = 0; c < 6; c++) {
			const char *v = db_rows_get(rows, i, c);
			size_t add = strlen(v ? v : "(null)") + 1;

			out = realloc(out, len + add + 1);
			assert_non_null(out);
			snprintf(out + len, add + 1, "%s%c", v ? v : "(null)", c == 5 ? '\n' : '|');
			len += add;
		}
	db_rows_free(rows);
	return out;
}

/* A database of schema 5 holding machines, attestations and verdicts (this run's, their newer
 * columns dropped), opened by this version: migrated to the newest, every row kept, the new
 * columns empty. */
static void test_migrate_with_data(void **state)
{
	static const char *const down[] = {
		"ALTER TABLE machines DROP COLUMN ima_state",
		"ALTER TABLE machines DROP COLUMN stale_announced",
		"DELETE FROM schema_version WHERE version > 5",
	};
	fleet_options o = { .db_url = T.db_url, .ek_roots = T.roots };
	mb_error err = { 0 };
	char *before, *after, buf[32];
	db_rows *rows;
	fleet *f2;

	(void) state;
	before = machine_rows();
	assert_non_null(strstr(before, "trusted")); /* machines with verdicts to keep */
	for (size_t i = 0; i < sizeof(down) / sizeof(down[0]); i++)
		assert_true(db_exec(T.d, down[i], NULL, 0, &err) >= 0);
	assert_int_equal(fleet_new(&o, &f2, &err), 0);
	fleet_free(f2);
	assert_int_equal(db_query(T.d, "SELECT count(*), max(version) FROM schema_version", NULL, 0, &rows, &err), 0);
	snprintf(buf, sizeof(buf), "%s|%s", db_rows_get(rows, 0, 0), db_rows_get(rows, 0, 1));
	db_rows_free(rows);
	assert_string_equal(buf, "7|7");
	after = machine_rows();
	assert_string_equal(after, before);
	assert_int_equal(db_query(T.d, "SELECT count(*) FROM machines WHERE ima_state IS NOT NULL OR "
				  "stale_announced IS NOT NULL", NULL, 0, &rows, &err), 0);
	assert_string_equal(db_rows_get(rows, 0, 0), "0");
	db_rows_free(rows);
	free(before);
	free(after);
}

/* The database gone: every call that needs it is 503 with a message, nothing half-done; once it
 * is back the same worker reconnects. */
static void test_database_down(void **state)
{
	char n[65], *ev;
	answer a;

	(void) state;
	if (!getenv("MB_PG_CONTROL"))
		skip();
	get_nonce("web1", n);
	ev = quote(T.ak1, n, T.evil_log, T.evil_log_size);
	assert_int_equal(pg_control("stop"), 0);
	a = call("GET", "/healthz", NULL, NULL, NULL);
	expect_status(a, 503);
	answer_done(&a);
	/* A machine whose row this verifier keeps (web1 attested here) is given a nonce without a
	 * read; its evidence cannot be stored. A machine it does not keep needs the database. */
	{
		char n2[65], *ev2;

		get_nonce("web1", n2);
		ev2 = quote(T.ak1, n2, T.log, T.log_size);
		a = post_evidence("web1", n2, ev2);
		expect_status(a, 503);
		answer_done(&a);
		free(ev2);
	}
	checked_call(503, "POST", "/v1/machines/never-seen/nonce", NULL, NULL, NULL);
	a = post_evidence("web1", n, ev);
	expect_status(a, 503);
	answer_done(&a);
	checked_call(503, "GET", "/v1/machines", NULL, T.token, NULL);
	/* The page needs no database. */
	checked_call(200, "GET", "/", NULL, NULL, NULL);
	assert_int_equal(pg_control("start"), 0);
	checked_call(200, "GET", "/healthz", NULL, NULL, NULL);
	/* The nonce was not consumed (the database never saw the evidence): it still counts. */
	a = post_evidence("web1", n, ev);
	expect_status(a, 200);
	answer_done(&a);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_healthz_and_page),
		cmocka_unit_test(test_operator_token),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_attest_no_policy_then_policy),
		cmocka_unit_test(test_replay_refused),
		cmocka_unit_test(test_concurrent_posts_one_nonce),
		cmocka_unit_test(test_concurrent_pushes_one_machine),
		cmocka_unit_test(test_log_named),
		cmocka_unit_test(test_kept_row_changed_elsewhere),
		cmocka_unit_test(test_expired_nonce),
		cmocka_unit_test(test_other_machines_nonce),
		cmocka_unit_test(test_nonces_plentiful),
		cmocka_unit_test(test_forged_evidence_not_stored),
		cmocka_unit_test(test_policy_changed_while_judging),
		cmocka_unit_test(test_interval_capped),
		cmocka_unit_test(test_min_bank),
		cmocka_unit_test(test_evil_boot),
		cmocka_unit_test(test_events_capped),
		cmocka_unit_test(test_reenroll_same_ek),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_stale_sweep),
		cmocka_unit_test(test_other_ek),
		cmocka_unit_test(test_revoke_forget),
		cmocka_unit_test(test_migrate_with_data),
		cmocka_unit_test(test_database_down),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
