/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_SERVICE_H
#define MBOOT_VERIFIERD_SERVICE_H
/*
 * The seam between the HTTP server (http.c, main.c: libmicrohttpd, TLS, limits, threads)
 * and the fleet (fleet*.c, store.c: routing, enrollment, nonces, verdicts, the database).
 * The server turns each complete request into an http_request and sends back the
 * http_response fleet_handle() fills; it knows nothing of machines. The fleet knows
 * nothing of sockets, so its tests call fleet_handle() directly.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mboot/attest.h>
#include <mboot/error.h>
#include "shared/json.h"

typedef struct http_request {
	const char *method;   /* "GET", "POST", "PUT", "DELETE", ... */
	const char *path;     /* "/v1/machines/web1/evidence" (no query string), percent-decoded */
	const char *nonce;    /* the query argument "nonce", or NULL */
	const char *bearer;   /* the token of "Authorization: Bearer TOKEN", or NULL */
	const char *body;     /* NUL-terminated (the NUL is not counted); "" when none */
	size_t body_size;
} http_request;

typedef struct http_response {
	unsigned status;           /* 200, 201, 400, ... */
	const char *content_type;  /* NULL: "application/json" */
	char *body;                /* malloc'd, freed by the server (unless body_static) */
	size_t body_size;
	bool body_static;          /* body points to constant data (the web page) */
	json_build_mark json_mark; /* taken as the request begins: a reply built without memory is a 500 */
} http_response;

typedef struct fleet_options {
	const char *db_url;             /* "sqlite:PATH" or a PostgreSQL URL */
	const mb_ek_roots *ek_roots;    /* NULL only with allow_no_ek_cert */
	bool allow_no_ek_cert;
	bool allow_ek_reuse;            /* one EK may enroll under several ids (else a second id is 409) */
	uint16_t min_bank;              /* TCG id of the weakest bank a quote may rest on (0: the TPM's strongest) */
	bool ek_check_validity;         /* refuse an EK certificate (chain) outside its validity dates */
	const char *default_policy;     /* policy file text for new machines, or NULL */
	size_t default_policy_size;
	int64_t interval;               /* seconds a machine gets when it does not say (600) */
	int64_t max_interval;           /* the most a machine may ask for (0: interval); never less than interval */
	int64_t nonce_ttl;              /* seconds a nonce is good for (60) */
	int64_t judge_cache;            /* boots whose logs' judgment is kept: 0 the default
					 * (FLEET_JUDGE_CACHE), < 0 none (every evidence judged in full) */
	struct notifier *notify;        /* webhooks (notify.h), or NULL; the caller frees it after the fleet */
	int64_t stale_sweep;            /* seconds between sweeps announcing machines turned stale
					 * (fleet-stale.c); 0: none (a process serving no machines) */
} fleet_options;

#define FLEET_JUDGE_CACHE 10000

typedef struct fleet fleet;               /* one per process; shared by all threads */
typedef struct fleet_worker fleet_worker; /* one per server thread: its database connection */

/* Opens the database once to create or migrate the schema; fails when it cannot. */
int fleet_new(const fleet_options *o, fleet **ret, mb_error *err);
void fleet_free(fleet *f);
/* The process's allocator set for a service (call once, before threads start): freed memory kept
 * for the next evidence. Each evidence is parsed into megabytes (its logs, an IMA list), and
 * glibc's defaults hand them back to the kernel, so every one faulted fresh pages in: half the
 * time of judging 10,000 new IMA entries (bench/bench-ima-attest.sh). */
void fleet_keep_memory(void);

/* A worker connects lazily (on its first request) and reconnects after a failure. */
fleet_worker *fleet_worker_new(fleet *f);
void fleet_worker_free(fleet_worker *w);

/* Answer one request; never fails (an error is a response with a JSON body {"error": ...}). */
void fleet_handle(fleet_worker *w, const http_request *req, http_response *resp);

/* One stale sweep, as of now_us (unix microseconds; the thread's sweeps use the clock; tests may
 * go ahead of it): the machines announced stale (marked, audited, told to the webhooks), or a
 * negative errno. Not while the thread runs (fleet_options.stale_sweep 0). */
int fleet_stale_sweep(fleet *f, int64_t now_us, mb_error *err);

/* Tests: fn(ctx) runs after each evidence is judged and before its verdict is stored (NULL: none). */
void fleet_set_after_judging(fleet *f, void (*fn)(void *ctx), void *ctx);

/* A new operator token (printed once by `mboot-verifierd --new-token`); only its hash is stored,
 * with its name (NULL: it goes by "token-" and the start of its hash). */
int fleet_new_token(fleet *f, const char *name, char **ret_token, mb_error *err);
/* 1 to 64 of [A-Za-z0-9._@-]. */
bool fleet_token_name_valid(const char *name);
/* mboot-verifierd --list-tokens: "NAME CREATED SHA256-PREFIX" lines on out. */
int fleet_list_tokens(fleet *f, FILE *out, mb_error *err);
/* mboot-verifierd --revoke-token NAME (audited); -ENOENT when no token has it. */
int fleet_revoke_token(fleet *f, const char *name, mb_error *err);

#endif
