/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_FLEET_INTERNAL_H
#define MBOOT_VERIFIERD_FLEET_INTERNAL_H
/* What the fleet's files share (fleet.c: routing; fleet-machine.c, fleet-operator.c: the calls;
 * fleet-judge.c: judging evidence). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/json.h"
#include <mboot/mboot.h>

#include "verifierd/db.h"
#include "verifierd/notify.h"
#include "verifierd/service.h"
#include "verifierd/store.h"

typedef struct fleet_cache fleet_cache; /* fleet-cache.c */

/* Policies parsed once per SHA-256 and kept for the process (there are few). */
#define FLEET_POLICY_CACHE_MAX 64

typedef struct fleet_policy {
	char sha256[65];
	mb_policy *policy;
} fleet_policy;

/* The judging-time histogram's buckets with a bound (fleet-metrics.c). */
#define FLEET_JUDGE_BUCKETS 10

/* Locks that serialize one machine's attestations (a power of two). */
#define FLEET_MACHINE_LOCKS 256

/* The verifier's nonces (fleet-nonce.c): what the fleet gives is this many bytes. */
#define FLEET_NONCE_SIZE 32

struct fleet {
	char *db_url;
	const mb_ek_roots *ek_roots;
	bool allow_no_ek_cert;
	bool allow_ek_reuse;
	bool ek_check_validity;
	uint16_t min_bank;
	char default_policy[65]; /* sha256 of the default policy, "" when none */
	int64_t interval;
	int64_t max_interval;
	int64_t nonce_ttl;
	db_kind kind;
	uint8_t nonce_key[32];   /* shared by the verifiers of the database (its secrets table) */
	struct evp_mac_ctx_st *nonce_mac; /* HMAC-SHA256 keyed with it, copied for each nonce */
	notifier *notify;        /* webhooks: told of each status change once committed; NULL: none */

	/* Evidence refused as not this machine's TPM's answer (nothing stored), by reason. */
	atomic_uint_fast64_t refused[_MB_ATTEST_REASON_MAX];
	/* GET /metrics (fleet-metrics.c): attestations stored (untrusted, trusted), the reasons of
	 * the untrusted ones, judging time by bucket (the last: over the largest bound). */
	atomic_uint_fast64_t stored[2];
	atomic_uint_fast64_t stored_reasons[_MB_ATTEST_REASON_MAX];
	atomic_uint_fast64_t judge_buckets[FLEET_JUDGE_BUCKETS + 1];
	atomic_uint_fast64_t judge_sum_us;
	/* Evidence whose logs were judged, and whose boot's judgment was taken (fleet-cache.c). */
	atomic_uint_fast64_t boots_judged, boots_reused;
	/* Evidence stored that named its firmware log by SHA-256 instead of carrying it, and evidence
	 * that named one whose judgment was not kept here (answered "send": "eventlog"). */
	atomic_uint_fast64_t logs_named, logs_asked;
	/* Nonces given on a machine's row kept here, and on its row read from the database. */
	atomic_uint_fast64_t rows_kept, rows_read;
	/* Test hook: called after evidence was judged, before its verdict is stored. */
	void (*after_judging)(void *ctx);
	void *after_judging_ctx;

	/* The stale sweep (fleet-stale.c): its thread, its own connection, what it told. */
	int64_t stale_sweep;   /* seconds between sweeps; 0: no thread */
	db *stale_db;
	pthread_t stale_thread;
	bool stale_started, stale_stopping, stale_failing;
	pthread_mutex_t stale_lock; /* guards stale_stopping */
	pthread_cond_t stale_cond;  /* stopping */
	/* Machines this verifier announced stale, and stale ones that attested here again. */
	atomic_uint_fast64_t stale_announced, stale_back;

	fleet_cache *judged;   /* boots judged (verdicts); NULL: every evidence judged in full */
	fleet_cache *machines; /* machine records parsed (mb_attest_machine), by the record's SHA-256 */
	fleet_cache *rows;     /* machines' rows (store_machine) as this verifier last read or wrote
				* them, by SHA-256 of the id: nonces and evidence need no read
				* (fleet-machine.c) */

	/* A machine's evidence is judged and stored under the lock of its id's hash: a push that
	 * overlaps another of the same machine waits instead of being judged on a row that the
	 * other changes (fleet-machine.c; other verifiers on the database are met by retrying). */
	pthread_mutex_t machine_locks[FLEET_MACHINE_LOCKS];

	pthread_mutex_t lock; /* guards policies */
	fleet_policy policies[FLEET_POLICY_CACHE_MAX];
	size_t n_policies;
};

struct fleet_worker {
	fleet *f;
	db *d; /* opened on the first request */
	/* The operator token's name of the request being served (operator calls), for the audit. */
	char operator_name[STORE_TOKEN_NAME_MAX + 1];
};

/* ---- fleet-request.c: request bodies and path pieces (no database; fuzzed) ---- */

/* docs/api.md: 1 to 64 of [A-Za-z0-9._-], not starting with '.'. */
/* The longest machine id. */
#define FLEET_ID_MAX 64
bool fleet_id_valid(const char *id, size_t n);

typedef struct fleet_enroll_body {
	char *machine_id;
	char *request;        /* the mboot-attest-request, as JSON text */
	size_t request_size;
	int64_t interval;     /* 0: not given */
} fleet_enroll_body;

/* {"machine_id": ID, "request": {...}, "interval": S}: -EBADMSG with a message when malformed. */
int fleet_enroll_body_parse(const char *body, size_t size, fleet_enroll_body *ret, mb_error *err);
void fleet_enroll_body_done(fleet_enroll_body *b);

/* ---- fleet-nonce.c: the verifier's nonces ---- */

/* A new nonce for machine id, good until expires, in lowercase hex; -EIO when OpenSSL fails. */
int fleet_nonce_make(const fleet *f, const char *id, int64_t expires, char hex[2 * FLEET_NONCE_SIZE + 1]);
/* 1 when nonce is one this fleet's key made for machine id and it has not expired at now. */
int fleet_nonce_check(const fleet *f, const char *id, const uint8_t *nonce, size_t size, int64_t now);
/* The key from the database (made there by the first verifier). */
int fleet_nonce_key_load(fleet *f, db *d, mb_error *err);
void fleet_nonce_key_free(fleet *f);

/* A nonce in lowercase hex of MB_ATTEST_NONCE_MIN..MAX bytes; lowercases into out (65 bytes). */
int fleet_nonce_parse(const char *hex, char out[2 * MB_ATTEST_NONCE_MAX + 1], uint8_t *bytes, size_t *ret_size);

/* ---- fleet.c: answers and shared helpers ---- */

void reply_json(http_response *resp, unsigned status, json_t *o); /* takes o */
/* reply_json(o) with the member key: text last, text a JSON text this service wrote (a verdict),
 * put in as it is rather than read and written again. */
void reply_json_with(http_response *resp, unsigned status, json_t *o, const char *key, const char *text);
/* JSON already written (takes body; NULL: out of memory, answered 500). */
void reply_text(http_response *resp, unsigned status, char *body);
void reply_error(http_response *resp, unsigned status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A database error: 503 (nothing stored) for the connection, busy and I/O errors, else 500. */
void reply_db_error(http_response *resp, int r, const mb_error *err);
/* r < 0 answered (404 "unknown machine ID" for -ENOENT, else as reply_db_error): true. */
bool reply_machine_failed(http_response *resp, int r, const mb_error *err, const char *id);

int64_t fleet_now(void);
int64_t fleet_now_us(void);
/* RFC 3339 UTC, or JSON null for 0. */
json_t *json_time(int64_t t);
void sha256_hex(const void *p, size_t n, char out[65]);

/* The parsed policy of this sha256 (cached, owned by the fleet; or, once the cache is full,
 * also in *ret_owned for the caller to free), NULL when the database has none by that hash;
 * a negative errno on a database error. */
int fleet_policy_get(fleet_worker *w, const char *sha256, const mb_policy **ret, mb_policy **ret_owned,
		     mb_error *err);

/* The interval a machine is held to: its own, never more than the verifier's --max-interval
 * (a machine enrolled before a lower maximum was set is held to the new one). */
int64_t fleet_interval_of(const fleet *f, const store_machine *m);
/* The machine's status as shown: stale when nothing was judged within twice its interval. */
const char *fleet_status_shown(const fleet *f, const store_machine *m, int64_t now);
/* The status webhooks were last told of: "stale" once a sweep announced it (until it attests or
 * enrolls again), else the stored one. */
const char *fleet_status_told(const store_machine *m);
/* Every status fleet_status_shown gives. */
#define FLEET_STATUSES 5
extern const char *const fleet_statuses[FLEET_STATUSES];


/* Run fn in a transaction, retried while the database says busy. */
typedef int (*fleet_tx_fn)(db *d, void *ctx, mb_error *err);
int fleet_transaction(db *d, fleet_tx_fn fn, void *ctx, mb_error *err);

/* fleet-judge.c. Judge evidence of a machine: the verdict JSON as stored (with no-policy added when the
 * machine has none); a negative errno when the evidence is malformed (message in err). */
typedef struct fleet_judgment {
	char *verdict; /* JSON text */
	char boot[65];    /* the evidence's boot key in hex, "" when its logs were not judged */
	bool boot_reused; /* the logs' judgment was taken from an earlier evidence of that boot */
	bool log_named;   /* the evidence named its firmware log by SHA-256 instead of carrying it */
	bool trusted;
	int64_t n_reasons;
	/* false: the quote is not the enrolled AK's signed answer to this nonce (a reason below);
	 * such evidence says nothing about the machine and is never stored. */
	bool authentic;
	mb_attest_reason refusal;
	char refusal_detail[256];
	char *ima_state;  /* the IMA list judged so far in the boot (NULL: none) */
} fleet_judgment;
/* Is evidence with this reason refused (not the enrolled AK's quote of the nonce: nothing stored)? */
bool fleet_reason_refuses(mb_attest_reason r);
int fleet_judge(fleet_worker *w, const store_machine *m, const char *evidence, size_t evidence_size,
		const char *nonce_hex, fleet_judgment *ret, mb_error *err, bool *ret_db_error);
/* fleet-machine.c: the machine's row, if kept, is read from the database next time (this
 * verifier changed it: under the machine's lock, with the change). */
void fleet_row_forget(fleet *f, const char *id);
/* The lock of machine id (one of FLEET_MACHINE_LOCKS, by a hash of the id): its evidence is
 * judged and stored, its row read for a nonce and kept, and changed by an operator under it. */
pthread_mutex_t *fleet_machine_lock(fleet *f, const char *id);
/* Frees what a judgment holds (it is then empty). */
void fleet_judgment_reset(fleet_judgment *j);

/* ---- fleet-cache.c: boots judged, machine records parsed ---- */

/* Values kept by a 32-byte key, at most 2 * max (max 0: none kept, every lookup misses). */
typedef struct fleet_cache_entry fleet_cache_entry;
int fleet_cache_new(size_t max, fleet_cache **ret);
void fleet_cache_free(fleet_cache *c);
/* The entry of key with a reference (fleet_cache_release), or NULL. */
fleet_cache_entry *fleet_cache_get(fleet_cache *c, const uint8_t key[32]);
const void *fleet_cache_value(const fleet_cache_entry *e);
void fleet_cache_release(fleet_cache_entry *e);
/* Keep value (taken; free_value frees it when no one holds it) under key, unless an entry has
 * that key already. */
void fleet_cache_add(fleet_cache *c, const uint8_t key[32], void *value, void (*free_value)(void *value));
/* Keep value under key in place of what is kept there (replaced: found no more). */
void fleet_cache_put(fleet_cache *c, const uint8_t key[32], void *value, void (*free_value)(void *value));
/* What is kept under key is found no more. */
void fleet_cache_drop(fleet_cache *c, const uint8_t key[32]);
/* Entries kept (in both tables; one kept in both counts twice). */
size_t fleet_cache_count(fleet_cache *c);
/* The key of a judged boot: its boot key under a policy (its sha256, NULL for none). */
int fleet_judged_key(const uint8_t boot_key[32], const char *policy_sha256, uint8_t key[32]);

/* ---- fleet-metrics.c: GET /metrics ---- */
void fleet_metrics(fleet_worker *w, http_response *resp);
/* Counted as they happen: a database call failed; one evidence judged in us; an attestation stored. */
void fleet_metrics_db_error(void);
void fleet_metrics_judged(fleet *f, int64_t us);
void fleet_metrics_stored(fleet *f, const fleet_judgment *j);

/* ---- fleet-stale.c: the stale sweep ---- */
/* Init first (never fails); then the thread sweeping every f->stale_sweep seconds (none when 0);
 * stop joins it and frees what init and the sweeps made. */
void fleet_stale_init(fleet *f);
int fleet_stale_start(fleet *f, mb_error *err);
void fleet_stale_stop(fleet *f);

/* ---- the calls ---- */
void fleet_enroll(fleet_worker *w, const http_request *req, http_response *resp);
void fleet_activate(fleet_worker *w, const char *id, const http_request *req, http_response *resp);
void fleet_nonce(fleet_worker *w, const char *id, http_response *resp);
void fleet_evidence(fleet_worker *w, const char *id, const http_request *req, http_response *resp);

void fleet_list(fleet_worker *w, http_response *resp);
void fleet_show(fleet_worker *w, const char *id, http_response *resp);
void fleet_events(fleet_worker *w, const char *id, http_response *resp);
/* GET /v1/audit: the operators' actions, newest first. */
void fleet_audit(fleet_worker *w, http_response *resp);
void fleet_policy_put(fleet_worker *w, const char *id, const http_request *req, http_response *resp);
void fleet_policy_delete(fleet_worker *w, const char *id, http_response *resp);
void fleet_revoke(fleet_worker *w, const char *id, http_response *resp);
void fleet_forget(fleet_worker *w, const char *id, http_response *resp);

#endif
