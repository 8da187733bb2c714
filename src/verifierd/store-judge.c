/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The writes that judge a machine: an attestation's verdict, a policy change's judging again of
 * its last evidence, and the stale sweep's marks. Each is conditional on the machine's row as it
 * was read, so a change that committed meanwhile (a policy set, a revoke, another attestation,
 * another verifier's sweep) is found, never overwritten.
 */
#include "shared/fail.h"
#include "verifierd/store-internal.h"

/* Why an update of machine id under generation g changed no row: -ENOENT (gone or revoked) or
 * -ESTALE (its generation moved on). */
static int why_unchanged(db *d, const char *id, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	int r;

	r = db_query(d, "SELECT status FROM machines WHERE id = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	r = !db_rows_count(rows) || strcmp(db_rows_get(rows, 0, 0), "revoked") == 0 ? -ENOENT : -ESTALE;
	db_rows_free(rows);
	return r;
}

/* An update of a machine, made in two variants: for a machine not announced stale, and for one
 * announced stale (the announcement cleared). The variant of what was read (*stale) is tried
 * first; when it changes no row, the other one (the sweep, or an attestation, came between).
 * *stale: the variant that changed the row. 0 rows: neither did. */
static int64_t exec_stale_variant(db *d, const char *const sql[2], const char *const *p, size_t n, bool *stale,
				  mb_error *err)
{
	int64_t r = db_exec(d, sql[*stale], p, n, err);

	if (r == 0 && (r = db_exec(d, sql[!*stale], p, n, err)) > 0)
		*stale = !*stale;
	return r;
}

/* An attestation's change of the machine's row, in the two variants exec_stale_variant() takes.
 * Under PostgreSQL's READ COMMITTED the row's condition is checked again on the newest version
 * once a concurrent change of it committed, so a policy set (or a revoke) that committed while
 * the evidence was judged makes this change no row; so does another attestation of it (its last
 * nonce no longer the one read: the IMA state judged on is no longer the row's). The last
 * trusted evidence: dropped when
 * this one is trusted, kept from the row's when the machine turns untrusted now (SET reads the
 * row as it was). Without evidence (the stored one is of this boot), only while the stored one
 * is still of this boot. A machine announced stale changes status (from stale) whatever its
 * verdict. */
#define ATTESTATION_SET                                                                                 \
	"UPDATE machines SET status_changed = CASE WHEN status = $2 AND stale_announced IS NULL "       \
	"THEN status_changed ELSE $3 END, "                                                             \
	"trusted_evidence = CASE WHEN $2 = 'trusted' THEN NULL WHEN status = 'trusted' THEN last_evidence " \
	"ELSE trusted_evidence END, stale_announced = NULL, "                                           \
	"status = $2, last_attestation = $3, last_nonce = $4, last_verdict = $5, last_reasons = $6, ima_state = $9"
#define ATTESTATION_EVIDENCE ", evidence_boot = $8, last_evidence = $11, evidence_nonce = $4"
#define ATTESTATION_WHERE                                                                              \
	" WHERE id = $1 AND generation = $7 AND status <> 'revoked' AND last_nonce IS NOT DISTINCT FROM $10 " \
	"AND stale_announced "
#define ATTESTATION_SAME_BOOT " AND evidence_boot = $8"
static const char *const attestation_with_evidence[2] = {
	ATTESTATION_SET ATTESTATION_EVIDENCE ATTESTATION_WHERE "IS NULL",
	ATTESTATION_SET ATTESTATION_EVIDENCE ATTESTATION_WHERE "IS NOT NULL",
};
static const char *const attestation_same_boot[2] = {
	ATTESTATION_SET ATTESTATION_WHERE "IS NULL" ATTESTATION_SAME_BOOT,
	ATTESTATION_SET ATTESTATION_WHERE "IS NOT NULL" ATTESTATION_SAME_BOOT,
};
#undef ATTESTATION_SET
#undef ATTESTATION_EVIDENCE
#undef ATTESTATION_WHERE
#undef ATTESTATION_SAME_BOOT

/* The parameters of the machine's change ($1..$11) and of the history row ($1..$7). */
typedef struct attestation_params {
	char at[24], seq[24], reasons[24], generation[24];
	const char *machine[11], *history[7];
	size_t n_machine;
} attestation_params;

static void attestation_params_fill(attestation_params *a, const char *id, int64_t generation, const char *read_nonce,
				    const char *nonce, int64_t at, int64_t seq, bool trusted, int64_t n_reasons,
				    const char *verdict, const char *evidence, const char *boot, const char *ima_state)
{
	i64s(a->at, at);
	i64s(a->seq, seq);
	i64s(a->reasons, n_reasons);
	i64s(a->generation, generation);
	memcpy(a->machine, (const char *[]) { id, trusted ? "trusted" : "untrusted", a->at, nonce, verdict, a->reasons,
		a->generation, boot && *boot ? boot : NULL, ima_state, read_nonce, evidence }, sizeof(a->machine));
	memcpy(a->history, (const char *[]) { nonce, id, a->at, a->seq, trusted ? "1" : "0", a->reasons, verdict },
	       sizeof(a->history));
	a->n_machine = evidence ? 11 : 10;
}

int store_attestation_tx(db *d, const char *id, int64_t generation, const char *read_nonce, const char *nonce,
			 int64_t at, int64_t seq, bool trusted, int64_t n_reasons, const char *verdict, const char *evidence, const char *boot,
			 const char *ima_state, bool *stale, mb_error *err)
{
	attestation_params a;
	int64_t r;

	attestation_params_fill(&a, id, generation, read_nonce, nonce, at, seq, trusted, n_reasons, verdict, evidence, boot,
				ima_state);
	r = exec_stale_variant(d, evidence ? attestation_with_evidence : attestation_same_boot, a.machine,
			       a.n_machine, stale, err);
	if (r < 0)
		return (int) r;
	if (r == 0)
		return why_unchanged(d, id, err);
	r = db_exec(d,
		    "INSERT INTO attestations (nonce, machine_id, at, seq, trusted, reasons, verdict) "
		    "VALUES ($1, $2, $3, $4, $5, $6, $7)",
		    a.history, 7, err);
	return r < 0 ? (int) r : 0;
}

int store_attestation_once(db *d, const char *id, int64_t generation, const char *read_nonce, const char *nonce,
			   int64_t at, int64_t seq, bool trusted, int64_t n_reasons, const char *verdict, const char *evidence, const char *boot,
			   const char *ima_state, bool stale, mb_error *err)
{
	attestation_params a;
	int64_t changed[2] = { 0, 0 };
	int r;

	attestation_params_fill(&a, id, generation, read_nonce, nonce, at, seq, trusted, n_reasons, verdict, evidence, boot,
				ima_state);
	/* Both at once, so the history row must not depend on the first's answer: it is written
	 * only where the machine's row now names this nonce, i.e. where the first changed it. */
	r = db_exec_atomic(d,
			   (const db_statement[]) {
				   { (evidence ? attestation_with_evidence : attestation_same_boot)[stale], a.machine,
				     a.n_machine },
				   { "INSERT INTO attestations (nonce, machine_id, at, seq, trusted, reasons, verdict) "
				     "SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS BIGINT), CAST($4 AS BIGINT), "
				     "CAST($5 AS INTEGER), CAST($6 AS BIGINT), CAST($7 AS TEXT) WHERE EXISTS "
				     "(SELECT 1 FROM machines WHERE id = CAST($2 AS TEXT) AND last_nonce = CAST($1 AS TEXT))",
				     a.history, 7 },
			   },
			   2, changed, err);
	if (r < 0)
		return r;
	return changed[0] > 0 && changed[1] > 0;
}

int store_rejudge_tx(db *d, const char *id, int64_t generation, const char *nonce, int64_t now, bool trusted,
		     int64_t n_reasons, const char *verdict, const char *ima_state, bool *stale, mb_error *err)
{
	char nb[24], rb[24], gb[24], next[24];
	const char *p[] = { id, nonce, trusted ? "trusted" : "untrusted", nb, verdict, rb, gb, ima_state, next };
	/* Only while that evidence is still the last one, and the machine's policy, record and
	 * status those it was judged under. A machine announced stale stays so (and its time). A
	 * new generation: the status and IMA state change, so evidence judged on the row as it was
	 * (read, or kept by a verifier, in between) must not be stored. */
#define REJUDGE                                                                                      \
	"UPDATE machines SET status_changed = CASE WHEN status = $3 OR stale_announced IS NOT NULL "   \
	"THEN status_changed ELSE $4 END, status = $3, last_verdict = $5, last_reasons = $6, "         \
	"ima_state = $8, generation = $9 "                                                              \
	"WHERE id = $1 AND last_nonce = $2 AND generation = $7 AND status <> 'revoked' AND stale_announced "
	static const char *const sql[2] = { REJUDGE "IS NULL", REJUDGE "IS NOT NULL" };
#undef REJUDGE
	int64_t r;

	i64s(nb, now);
	i64s(rb, n_reasons);
	i64s(gb, generation);
	r = store_new_generation(next, err);
	if (r < 0)
		return (int) r;
	r = exec_stale_variant(d, sql, p, 9, stale, err);
	if (r < 0)
		return (int) r;
	return r == 0 ? -ENOENT : 0;
}

/* A machine's deadline as fleet_status_shown has it: its last attestation or its enrollment (the
 * later), plus twice the interval it is held to ($2: the verifier's maximum), before now ($1). */
#define STALE_DUE                                                                                       \
	"stale_announced IS NULL AND status <> 'revoked' AND "                                          \
	"CASE WHEN last_attestation > enrolled THEN last_attestation ELSE enrolled END + 2 * "          \
	"CASE WHEN interval_s > 0 AND interval_s < CAST($2 AS BIGINT) THEN interval_s ELSE CAST($2 AS BIGINT) END " \
	"< CAST($1 AS BIGINT)"

int store_stale_mark_tx(db *d, int64_t now, int64_t max_interval, store_stale **ret, size_t *ret_n, mb_error *err)
{
	char nb[24], ib[24];
	const char *p[] = { nb, ib };
	/* The marking's condition is the choice's again: under PostgreSQL's READ COMMITTED it is
	 * checked on the newest version of a row another verifier (or an attestation) changed
	 * meanwhile, so a row is marked by one caller only. There the rows are locked in id order,
	 * those another sweep holds skipped: two sweeps split the work and never deadlock. */
#define STALE_MARK(lock)                                                                                \
	"UPDATE machines SET stale_announced = CAST($1 AS BIGINT), status_changed = CAST($1 AS BIGINT) " \
	"WHERE " STALE_DUE " AND id IN (SELECT id FROM machines WHERE " STALE_DUE                        \
	" ORDER BY id LIMIT " STR(STORE_STALE_BATCH) lock ") "                                               \
	"RETURNING id, status, CASE WHEN last_attestation > enrolled THEN last_attestation ELSE enrolled END, " \
	"CASE WHEN interval_s > 0 AND interval_s < CAST($2 AS BIGINT) THEN interval_s ELSE CAST($2 AS BIGINT) END"
	static const char *const sql_sqlite = STALE_MARK(""), *const sql_pg = STALE_MARK(" FOR UPDATE SKIP LOCKED");
#undef STALE_MARK
	store_stale *s;
	db_rows *rows;
	size_t i, n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	i64s(nb, now);
	i64s(ib, max_interval);
	r = db_query(d, db_get_kind(d) == DB_POSTGRESQL ? sql_pg : sql_sqlite, p, 2, &rows, err);
	if (r < 0)
		return r;
	n = db_rows_count(rows);
	s = calloc(n ? n : 1, sizeof(*s));
	for (i = 0; s && i < n; i++) {
		s[i] = (store_stale) {
			.id = dup_or_null(db_rows_get(rows, i, 0)),
			.status = dup_or_null(db_rows_get(rows, i, 1)),
			.last_seen = to_i64(db_rows_get(rows, i, 2)),
			.interval = to_i64(db_rows_get(rows, i, 3)),
		};
		if (!s[i].id || !s[i].status) {
			store_stale_free(s, i + 1);
			s = NULL;
		}
	}
	db_rows_free(rows);
	if (!s)
		return set_error(err, -ENOMEM, "out of memory");
	*ret = s;
	*ret_n = n;
	return 0;
}
#undef STALE_DUE

void store_stale_free(store_stale *s, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++) {
		free(s[i].id);
		free(s[i].status);
	}
	free(s);
}
