/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_STORE_H
#define MBOOT_VERIFIERD_STORE_H
/*
 * The fleet's tables and every SQL statement the fleet runs, written once for both backends
 * (db.h). Times are BIGINT unix seconds; digests lowercase hex; JSON documents TEXT.
 * Functions return 0 (or a count), -ENOENT where a row is missing, or db.h's errors.
 * Functions named *_tx run inside a transaction the caller opened.
 */
#include <stdbool.h>
#include <stdint.h>

#include "verifierd/db.h"

#define STORE_SCHEMA_VERSION 7
#define STORE_HISTORY 20

/* Create or migrate the schema (in one transaction; safe when verifiers start together). */
int store_migrate(db *d, mb_error *err);

/* A machine's row; strings are malloc'd (NULL for SQL NULL). */
typedef struct store_machine {
	char *id;
	char *record;          /* the mboot-machine JSON */
	char *ek_sha256;       /* SHA-256 of the EK public (TPM2B_PUBLIC) */
	char *policy;          /* sha256 of its policy, or NULL */
	int64_t interval;
	char *status;          /* enrolled, trusted, untrusted, revoked */
	int64_t status_changed;
	int64_t enrolled;
	int64_t last_attestation; /* 0: none */
	char *last_nonce;
	char *last_verdict;
	int64_t last_reasons;
	int64_t generation;    /* changes with the record, the policy (and its re-judging) and a revoke */
	char *evidence_nonce;  /* the nonce of the stored (last) evidence: a later attestation of the
				* same boot refers to it */
	char *evidence_boot;   /* its boot key (hex), NULL when its logs were not judged */
	int64_t stale_announced; /* when a sweep announced it stale (0: not since its last attestation
				  * or enrollment) */
	char *ima_state;       /* the IMA list judged so far in this boot (mb_attest_verdict_ima_state) */
	bool nonce_used;       /* store_machine_get_attesting(): evidence under its nonce was stored */
} store_machine;

void store_machine_done(store_machine *m);
/* A copy of src (each string its own); -ENOMEM (dst then empty). */
int store_machine_copy(const store_machine *src, store_machine *dst);

int store_machine_get(db *d, const char *id, store_machine *ret, mb_error *err);
/* The same inside a transaction, the row locked until it ends (what is read stays so). */
int store_machine_get_tx(db *d, const char *id, store_machine *ret, mb_error *err);
/* All machines, sorted by id (record and last_verdict left NULL). */
int store_machine_list(db *d, store_machine **ret, size_t *ret_n, mb_error *err);
/* The id of a machine other than id enrolled with this EK, in *ret (caller frees); -ENOENT: none. */
int store_machine_with_ek(db *d, const char *ek_sha256, const char *id, char **ret, mb_error *err);
/* The last evidence of a machine (-ENOENT: none). */
int store_machine_last_evidence(db *d, const char *id, char **ret, mb_error *err);
/* The evidence of its last trusted attestation (-ENOENT: none since it was enrolled, or the
 * evidence was judged trusted only after a policy change). */
int store_machine_trusted_evidence(db *d, const char *id, char **ret, mb_error *err);

/* Enrollment: the verifier's state of one pending enrollment per machine. */
int store_enrollment_put(db *d, const char *id, const char *state, int64_t interval, int64_t now, mb_error *err);
int store_enrollment_get(db *d, const char *id, char **ret_state, int64_t *ret_interval, mb_error *err);

/*
 * Activation: store the machine (a new one with policy, an existing one keeping its policy
 * and history, with the new record) and drop its pending enrollment.
 */
int store_activate_tx(db *d, const char *id, const char *record, const char *ek_sha256, const char *policy,
		      int64_t interval, int64_t now, mb_error *err);

/* The machine as an attestation needs it, in one query: all but last_verdict, and nonce_used
 * for nonce (NULL: no nonce yet, when it asks for one). */
int store_machine_get_attesting(db *d, const char *id, const char *nonce, store_machine *ret, mb_error *err);
/* The machine as asking for a nonce needs it: id, status, policy, evidence_boot and ima_state;
 * the rest empty. */
int store_machine_get_asking(db *d, const char *id, store_machine *ret, mb_error *err);

/* The verifiers' shared secret of this name: the stored one, or fresh stored when there is none. */
int store_secret_get(db *d, const char *name, const char *fresh, char **ret, mb_error *err);

/* The judgment of one nonce's evidence, judged on the machine's row as read (its generation, and
 * its last nonce read_nonce: NULL when it had none): the history row
 * and the machine's state, with the evidence and its boot key (hex, or NULL); evidence NULL: the
 * stored evidence is of this boot and stays (-ESTALE when it no longer is). Returns -ENOENT when
 * the machine is gone or revoked, -ESTALE when its row moved on (a policy set, enrolled again,
 * another attestation), -EEXIST when the nonce was used (nothing written: the caller rolls back). *stale: in,
 * whether the machine was read announced stale; out, whether it was when written (the mark is
 * cleared: it came back from stale). ima_state: the IMA state after it (NULL: none). */
int store_attestation_tx(db *d, const char *id, int64_t generation, const char *read_nonce, const char *nonce,
			 int64_t at, int64_t seq, bool trusted, int64_t n_reasons, const char *verdict,
			 const char *evidence, const char *boot, const char *ima_state, bool *stale, mb_error *err);
/* The same in one round trip, as its own transaction, for the common case: the machine's row
 * still as read (stale as read). 1: stored; 0: that row changed meanwhile and nothing was
 * written (store_attestation_tx() in a transaction tells why); -EEXIST: the nonce was used. */
int store_attestation_once(db *d, const char *id, int64_t generation, const char *read_nonce, const char *nonce,
			   int64_t at, int64_t seq, bool trusted, int64_t n_reasons, const char *verdict,
			   const char *evidence, const char *boot, const char *ima_state, bool stale, mb_error *err);

/* The last judgment replaced (a policy change re-judged the last evidence), under a new
 * generation; -ENOENT unless the evidence of nonce is still the last and generation still the
 * machine's. *stale as store_attestation_tx's, but the mark stays (the machine is as silent as
 * it was). */
int store_rejudge_tx(db *d, const char *id, int64_t generation, const char *nonce, int64_t now, bool trusted,
		     int64_t n_reasons, const char *verdict, const char *ima_state, bool *stale, mb_error *err);

/* The stale sweep: machines (not revoked, not announced yet) with nothing judged or enrolled
 * within twice their interval (capped at max_interval) at now, marked announced at now, at most
 * STORE_STALE_BATCH of them (the first by id); each marked by exactly one caller, also of several
 * verifiers at once. What each was (a stale machine keeps its status, shown stale). */
#define STORE_STALE_BATCH 500
typedef struct store_stale {
	char *id, *status;
	int64_t last_seen; /* its last attestation, or its enrollment */
	int64_t interval;  /* the one it is held to */
} store_stale;
int store_stale_mark_tx(db *d, int64_t now, int64_t max_interval, store_stale **ret, size_t *ret_n, mb_error *err);
void store_stale_free(store_stale *s, size_t n);

typedef struct store_history {
	int64_t at;
	bool trusted;
	int64_t reasons;
} store_history;
int store_history_get(db *d, const char *id, store_history *ret, size_t max, size_t *ret_n, mb_error *err);

int store_policy_put(db *d, const char *sha256, const char *text, mb_error *err);
int store_policy_get(db *d, const char *sha256, char **ret_text, mb_error *err);
/* Set (sha256) or remove (NULL) a machine's policy; -ENOENT for an unknown machine. */
int store_machine_set_policy(db *d, const char *id, const char *sha256, mb_error *err);

int store_machine_revoke(db *d, const char *id, int64_t now, mb_error *err);
/* Forget a machine: its history, pending enrollment; -ENOENT when none of it existed. */
int store_machine_delete_tx(db *d, const char *id, mb_error *err);

/* Operator tokens: only their SHA-256 is kept, with a name (1 to 64 of [A-Za-z0-9._@-]). */
#define STORE_TOKEN_NAME_MAX 64
int store_token_add(db *d, const char *sha256, const char *name, int64_t now, mb_error *err);
/* 1 when a token with this hash exists (its name in name), 0 when not. */
int store_token_check(db *d, const char *sha256, char name[STORE_TOKEN_NAME_MAX + 1], mb_error *err);
typedef struct store_token {
	char name[STORE_TOKEN_NAME_MAX + 1];
	char sha256_prefix[13];
	int64_t created;
} store_token;
/* Every token, oldest first (*ret: caller frees). */
int store_token_list(db *d, store_token **ret, size_t *ret_n, mb_error *err);
/* -ENOENT when no token has this name. */
int store_token_revoke(db *d, const char *name, mb_error *err);

/* The audit trail: what operators did (who, when, what, on which machine). */
#define STORE_AUDIT_MAX 200
typedef struct store_audit {
	int64_t at_us;
	char *operator_name, *action, *machine_id, *detail; /* machine_id, detail: NULL for none */
} store_audit;
int store_audit_add(db *d, int64_t at_us, const char *operator_name, const char *action, const char *id,
		    const char *detail, mb_error *err);
/* The newest STORE_AUDIT_MAX entries, of one machine (id) or all (NULL), newest first. */
int store_audit_get(db *d, const char *id, store_audit **ret, size_t *ret_n, mb_error *err);
void store_audit_free(store_audit *a, size_t n);

/* A trivial query: is the database answering? */
int store_ping(db *d, mb_error *err);

#endif
