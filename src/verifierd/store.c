/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every SQL statement of the fleet (store.h), in the dialect SQLite and PostgreSQL share. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "shared/fail.h"
#include "verifierd/store-internal.h"

/* Version 1. Each later version appends its statements to a new array of its own. */
static const char *const schema_v1[] = {
	"CREATE TABLE IF NOT EXISTS policies ("
	" sha256 TEXT PRIMARY KEY,"
	" text TEXT NOT NULL)",
	"CREATE TABLE IF NOT EXISTS machines ("
	" id TEXT PRIMARY KEY,"
	" record TEXT NOT NULL,"
	" ek_sha256 TEXT NOT NULL,"
	" policy TEXT,"
	" interval_s BIGINT NOT NULL,"
	" status TEXT NOT NULL,"
	" status_changed BIGINT NOT NULL,"
	" enrolled BIGINT NOT NULL,"
	" last_attestation BIGINT,"
	" last_nonce TEXT,"
	" last_evidence TEXT,"
	" last_verdict TEXT,"
	" last_reasons BIGINT NOT NULL DEFAULT 0,"
	" revoked BIGINT)",
	"CREATE TABLE IF NOT EXISTS enrollments ("
	" machine_id TEXT PRIMARY KEY,"
	" state TEXT NOT NULL,"
	" interval_s BIGINT NOT NULL,"
	" created BIGINT NOT NULL)",
	"CREATE TABLE IF NOT EXISTS nonces ("
	" nonce TEXT PRIMARY KEY,"
	" machine_id TEXT NOT NULL,"
	" expires BIGINT NOT NULL,"
	" issued_us BIGINT NOT NULL)",
	"CREATE INDEX IF NOT EXISTS nonces_machine ON nonces (machine_id, issued_us)",
	/* Each nonce is judged at most once, so it names the attestation. */
	"CREATE TABLE IF NOT EXISTS attestations ("
	" nonce TEXT PRIMARY KEY,"
	" machine_id TEXT NOT NULL,"
	" at BIGINT NOT NULL,"
	" seq BIGINT NOT NULL,"
	" trusted INTEGER NOT NULL,"
	" reasons BIGINT NOT NULL,"
	" verdict TEXT NOT NULL)",
	"CREATE INDEX IF NOT EXISTS attestations_machine ON attestations (machine_id, seq)",
	"CREATE TABLE IF NOT EXISTS tokens ("
	" sha256 TEXT PRIMARY KEY,"
	" created BIGINT NOT NULL)",
	NULL,
};

/*
 * Version 2. Nonces are made and checked with a key (fleet-nonce.c), so none is stored until its
 * evidence is (attestations.nonce: each is judged once); the key lives in secrets, shared by the
 * verifiers of one database. generation changes whenever what a verdict depends on changes
 * (record, policy, status): a verdict is stored only under the generation it was judged in.
 */
static const char *const schema_v2[] = {
	"DROP TABLE IF EXISTS nonces",
	"CREATE TABLE IF NOT EXISTS secrets ("
	" name TEXT PRIMARY KEY,"
	" value TEXT NOT NULL)",
	"ALTER TABLE machines ADD COLUMN generation BIGINT NOT NULL DEFAULT 0",
	NULL,
};

/* Version 3. One TPM is one machine: enrolling looks its EK up. */
static const char *const schema_v3[] = {
	"CREATE INDEX IF NOT EXISTS machines_ek ON machines (ek_sha256)",
	NULL,
};

/*
 * Version 4. What changed since the last trusted boot: the evidence of the last trusted
 * attestation, kept only while the machine is untrusted (while it is trusted that is
 * last_evidence), so a fleet stores a second evidence only for the machines that went wrong.
 */
static const char *const schema_v4[] = {
	"ALTER TABLE machines ADD COLUMN trusted_evidence TEXT",
	/* Operator tokens have names (unnamed ones from before are named by their hash), and what
	 * an operator does is kept: who, when, what, on which machine. */
	"ALTER TABLE tokens ADD COLUMN name TEXT",
	"CREATE UNIQUE INDEX IF NOT EXISTS tokens_name ON tokens (name)",
	"CREATE TABLE IF NOT EXISTS audit ("
	" at_us BIGINT NOT NULL,"
	" operator TEXT NOT NULL,"
	" action TEXT NOT NULL,"
	" machine_id TEXT,"
	" detail TEXT)",
	"CREATE INDEX IF NOT EXISTS audit_at ON audit (at_us)",
	"CREATE INDEX IF NOT EXISTS audit_machine ON audit (machine_id, at_us)",
	NULL,
};

/*
 * Version 5. Evidence is stored once per boot: a later attestation of the same boot (its logs
 * and PCR values: the boot key, mb_attest_verdict_boot_key) stores its verdict and history row
 * and refers to the stored evidence, whose own nonce judges it again after a policy change.
 */
static const char *const schema_v5[] = {
	"ALTER TABLE machines ADD COLUMN evidence_nonce TEXT",
	"ALTER TABLE machines ADD COLUMN evidence_boot TEXT",
	"UPDATE machines SET evidence_nonce = last_nonce WHERE last_evidence IS NOT NULL",
	NULL,
};

/*
 * Version 6. A machine turning stale is told once (fleet-stale.c): the verifier whose sweep marks
 * it (a conditional UPDATE: of the verifiers of one database, one marks it) announces it, and
 * a verifier started again finds it marked. Its next attestation, or enrollment, clears the mark.
 */
static const char *const schema_v6[] = {
	"ALTER TABLE machines ADD COLUMN stale_announced BIGINT",
	NULL,
};

/* Version 7. The IMA list judged so far in the machine's boot (mb_attest_verdict_ima_state): the
 * next evidence carries only the entries after it. Dropped with a new policy or record. */
static const char *const schema_v7[] = {
	"ALTER TABLE machines ADD COLUMN ima_state TEXT",
	NULL,
};

static const char *const *const migrations[STORE_SCHEMA_VERSION] = { schema_v1, schema_v2, schema_v3, schema_v4,
								      schema_v5, schema_v6, schema_v7 };

/* A machine's next generation: random, so that a machine forgotten and enrolled again never
 * repeats the generation an evidence still being judged was read under. */
static int new_generation(char buf[24], mb_error *err)
{
	uint64_t g;

	if (RAND_bytes((unsigned char *) &g, sizeof(g)) != 1)
		return set_error(err, -EIO, "no random bytes from OpenSSL");
	i64s(buf, (int64_t) (g >> 2));
	return 0;
}

/* One try of the whole migration; -EEXIST / -EBUSY when another verifier raced us. */
static int migrate_once(db *d, mb_error *err)
{
	db_rows *rows = NULL;
	int64_t version = 0;
	char vbuf[24];
	int r;

	r = db_begin(d, err);
	if (r < 0)
		return r;
	r = (int) db_exec(d, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied BIGINT)",
			  NULL, 0, err);
	if (r >= 0)
		r = db_query(d, "SELECT MAX(version) FROM schema_version", NULL, 0, &rows, err);
	if (r >= 0) {
		version = db_rows_count(rows) ? to_i64(db_rows_get(rows, 0, 0)) : 0;
		db_rows_free(rows);
		if (version > STORE_SCHEMA_VERSION)
			r = set_error(err, -EPROTO,
				      "the database's schema is version %" PRId64 ", newer than this verifier's (%d)",
				      version, STORE_SCHEMA_VERSION);
	}
	for (; r >= 0 && version < STORE_SCHEMA_VERSION; version++) {
		const char *const *sql = migrations[version];
		const char *p[1];

		for (; r >= 0 && *sql; sql++)
			r = (int) db_exec(d, *sql, NULL, 0, err);
		if (r < 0)
			break;
		i64s(vbuf, version + 1);
		p[0] = vbuf;
		/* Two verifiers migrating at once: the second one's row conflicts (-EEXIST), and its
		 * retry finds the schema done. */
		r = (int) db_exec(d, "INSERT INTO schema_version (version, applied) VALUES ($1, 0)", p, 1, err);
	}
	if (r < 0) {
		db_rollback(d);
		return r;
	}
	return db_commit(d, err);
}

int store_migrate(db *d, mb_error *err)
{
	int r = 0, i;

	for (i = 0; i < 10; i++) {
		r = migrate_once(d, err);
		if (r != -EEXIST && r != -EBUSY)
			return r;
	}
	return r;
}

void store_machine_done(store_machine *m)
{
	free(m->id);
	free(m->record);
	free(m->ek_sha256);
	free(m->policy);
	free(m->status);
	free(m->last_nonce);
	free(m->last_verdict);
	free(m->evidence_nonce);
	free(m->evidence_boot);
	free(m->ima_state);
	memset(m, 0, sizeof(*m));
}

#define MACHINE_COLUMNS                                                                                         \
	"id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled, last_attestation, last_nonce, " \
	"last_verdict, last_reasons, generation, evidence_nonce, evidence_boot, stale_announced, ima_state"

static int machine_from_row(const db_rows *rows, size_t i, store_machine *m)
{
	memset(m, 0, sizeof(*m));
	m->id = dup_or_null(db_rows_get(rows, i, 0));
	m->record = dup_or_null(db_rows_get(rows, i, 1));
	m->ek_sha256 = dup_or_null(db_rows_get(rows, i, 2));
	m->policy = dup_or_null(db_rows_get(rows, i, 3));
	m->interval = to_i64(db_rows_get(rows, i, 4));
	m->status = dup_or_null(db_rows_get(rows, i, 5));
	m->status_changed = to_i64(db_rows_get(rows, i, 6));
	m->enrolled = to_i64(db_rows_get(rows, i, 7));
	m->last_attestation = to_i64(db_rows_get(rows, i, 8));
	m->last_nonce = dup_or_null(db_rows_get(rows, i, 9));
	m->last_verdict = dup_or_null(db_rows_get(rows, i, 10));
	m->last_reasons = to_i64(db_rows_get(rows, i, 11));
	m->generation = to_i64(db_rows_get(rows, i, 12));
	m->evidence_nonce = dup_or_null(db_rows_get(rows, i, 13));
	m->evidence_boot = dup_or_null(db_rows_get(rows, i, 14));
	m->stale_announced = to_i64(db_rows_get(rows, i, 15));
	m->ima_state = dup_or_null(db_rows_get(rows, i, 16));
	if (!m->id || !m->status) {
		store_machine_done(m);
		return -ENOMEM;
	}
	return 0;
}

static int machine_get(db *d, const char *id, bool lock, store_machine *ret, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	int r;

	memset(ret, 0, sizeof(*ret));
	/* SQLite's write transaction holds the whole database already. */
	r = db_query(d, lock && db_get_kind(d) == DB_POSTGRESQL
			     ? "SELECT " MACHINE_COLUMNS " FROM machines WHERE id = $1 FOR UPDATE"
			     : "SELECT " MACHINE_COLUMNS " FROM machines WHERE id = $1",
		     p, 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? machine_from_row(rows, 0, ret) : -ENOENT;
	db_rows_free(rows);
	return r == -ENOMEM ? set_error(err, r, "out of memory") : r;
}

int store_machine_get(db *d, const char *id, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, false, ret, err);
}

int store_machine_get_tx(db *d, const char *id, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, true, ret, err);
}

int store_machine_list(db *d, store_machine **ret, size_t *ret_n, mb_error *err)
{
	store_machine *m;
	db_rows *rows;
	size_t i, n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	r = db_query(d,
		     "SELECT id, NULL, ek_sha256, policy, interval_s, status, status_changed, enrolled, "
		     "last_attestation, last_nonce, NULL, last_reasons, generation, NULL, NULL, stale_announced FROM machines "
		     "ORDER BY id",
		     NULL, 0, &rows, err);
	if (r < 0)
		return r;
	n = db_rows_count(rows);
	m = calloc(n ? n : 1, sizeof(*m));
	for (i = 0; m && i < n; i++)
		if (machine_from_row(rows, i, &m[i]) < 0) {
			while (i--)
				store_machine_done(&m[i]);
			free(m);
			m = NULL;
		}
	db_rows_free(rows);
	if (!m)
		return set_error(err, -ENOMEM, "out of memory");
	*ret = m;
	*ret_n = n;
	return 0;
}

/* The first column of the first row of a query, or -ENOENT (also for SQL NULL). */
static int query_text(db *d, const char *sql, const char *const *p, size_t n, char **ret, mb_error *err)
{
	db_rows *rows;
	const char *v;
	int r;

	*ret = NULL;
	r = db_query(d, sql, p, n, &rows, err);
	if (r < 0)
		return r;
	v = db_rows_count(rows) ? db_rows_get(rows, 0, 0) : NULL;
	if (!v)
		r = -ENOENT;
	else if (!(*ret = strdup(v)))
		r = set_error(err, -ENOMEM, "out of memory");
	db_rows_free(rows);
	return r;
}

int store_machine_last_evidence(db *d, const char *id, char **ret, mb_error *err)
{
	const char *p[] = { id };

	return query_text(d, "SELECT last_evidence FROM machines WHERE id = $1", p, 1, ret, err);
}

int store_machine_trusted_evidence(db *d, const char *id, char **ret, mb_error *err)
{
	const char *p[] = { id };

	return query_text(d,
			  "SELECT CASE WHEN status = 'trusted' THEN last_evidence ELSE trusted_evidence END "
			  "FROM machines WHERE id = $1",
			  p, 1, ret, err);
}

int store_machine_with_ek(db *d, const char *ek_sha256, const char *id, char **ret, mb_error *err)
{
	const char *p[] = { ek_sha256, id };

	return query_text(d, "SELECT id FROM machines WHERE ek_sha256 = $1 AND id <> $2 ORDER BY id LIMIT 1", p, 2,
			  ret, err);
}

int store_enrollment_put(db *d, const char *id, const char *state, int64_t interval, int64_t now, mb_error *err)
{
	char ib[24], nb[24];
	const char *p[] = { id, state, ib, nb };
	int64_t r;

	i64s(ib, interval);
	i64s(nb, now);
	r = db_exec(d,
		    "INSERT INTO enrollments (machine_id, state, interval_s, created) VALUES ($1, $2, $3, $4) "
		    "ON CONFLICT (machine_id) DO UPDATE SET state = excluded.state, interval_s = excluded.interval_s, "
		    "created = excluded.created",
		    p, 4, err);
	return r < 0 ? (int) r : 0;
}

int store_enrollment_get(db *d, const char *id, char **ret_state, int64_t *ret_interval, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	int r;

	*ret_state = NULL;
	r = db_query(d, "SELECT state, interval_s FROM enrollments WHERE machine_id = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	if (!db_rows_count(rows))
		r = -ENOENT;
	else if (!(*ret_state = strdup(db_rows_get(rows, 0, 0))))
		r = set_error(err, -ENOMEM, "out of memory");
	else
		*ret_interval = to_i64(db_rows_get(rows, 0, 1));
	db_rows_free(rows);
	return r;
}

int store_activate_tx(db *d, const char *id, const char *record, const char *ek_sha256, const char *policy,
		      int64_t interval, int64_t now, mb_error *err)
{
	char ib[24], nb[24], gb[24];
	const char *p[] = { id, record, ek_sha256, policy, ib, nb, gb };
	const char *pid[] = { id };
	int64_t r;

	i64s(ib, interval);
	i64s(nb, now);
	r = new_generation(gb, err);
	if (r < 0)
		return (int) r;
	/* A re-enrolled machine keeps its policy, history and last verdict; it starts a new
	 * period of its interval from now (so it is not stale at once). */
	r = db_exec(d,
		    "INSERT INTO machines (id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled, "
		    "generation) VALUES ($1, $2, $3, $4, $5, 'enrolled', $6, $6, $7) "
		    "ON CONFLICT (id) DO UPDATE SET record = excluded.record, ek_sha256 = excluded.ek_sha256, "
		    "interval_s = excluded.interval_s, enrolled = excluded.enrolled, generation = excluded.generation, "
		    "status_changed = CASE WHEN machines.status = 'enrolled' AND machines.stale_announced IS NULL "
		    "THEN machines.status_changed ELSE excluded.status_changed END, status = 'enrolled', "
		    "stale_announced = NULL, ima_state = NULL "
		    "WHERE machines.ek_sha256 = excluded.ek_sha256 AND machines.status <> 'revoked'",
		    p, 7, err);
	/* Another TPM's machine, or a revoked one, that the caller's check did not see yet
	 * (PostgreSQL, READ COMMITTED: committed meanwhile): the transaction's retry sees it. */
	if (r == 0)
		return set_error(err, -EBUSY, "machine %s changed meanwhile", id);
	if (r >= 0)
		r = db_exec(d, "DELETE FROM enrollments WHERE machine_id = $1", pid, 1, err);
	return r < 0 ? (int) r : 0;
}

int store_nonce_used(db *d, const char *nonce, mb_error *err)
{
	const char *p[] = { nonce };
	db_rows *rows;
	int r;

	r = db_query(d, "SELECT 1 FROM attestations WHERE nonce = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? 1 : 0;
	db_rows_free(rows);
	return r;
}

int store_secret_get(db *d, const char *name, const char *fresh, char **ret, mb_error *err)
{
	const char *p[] = { name, fresh };
	int64_t r;

	/* Of verifiers starting together on one database, the first one's value stays. */
	r = db_exec(d, "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", p, 2, err);
	if (r < 0)
		return (int) r;
	return query_text(d, "SELECT value FROM secrets WHERE name = $1", p, 1, ret, err);
}

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

int store_attestation_tx(db *d, const char *id, int64_t generation, const char *nonce, int64_t at, int64_t seq,
			 bool trusted, int64_t n_reasons, const char *verdict, const char *evidence, const char *boot,
			 const char *ima_state, bool *stale, mb_error *err)
{
	char ab[24], sb[24], rb[24], gb[24];
	const char *status = trusted ? "trusted" : "untrusted";
	const char *pa[] = { nonce, id, ab, sb, trusted ? "1" : "0", rb, verdict };
	const char *pm[] = { id, status, ab, nonce, verdict, rb, gb, boot && *boot ? boot : NULL, ima_state, evidence };
	int64_t r;

	i64s(ab, at);
	i64s(sb, seq);
	i64s(rb, n_reasons);
	i64s(gb, generation);
	/* The machine first: under PostgreSQL's READ COMMITTED the row's condition is checked again
	 * on the newest version once a concurrent change of it committed, so a policy set (or a
	 * revoke) that committed while the evidence was judged makes this change no row. The last
	 * trusted evidence: dropped when this one is trusted, kept from the row's when the machine
	 * turns untrusted now (SET reads the row as it was). Without evidence (the stored one is of
	 * this boot), only while the stored one is still of this boot. A machine announced stale
	 * changes status (from stale) whatever its verdict. */
#define ATTESTATION_SET                                                                                 \
	"UPDATE machines SET status_changed = CASE WHEN status = $2 AND stale_announced IS NULL "       \
	"THEN status_changed ELSE $3 END, "                                                             \
	"trusted_evidence = CASE WHEN $2 = 'trusted' THEN NULL WHEN status = 'trusted' THEN last_evidence " \
	"ELSE trusted_evidence END, stale_announced = NULL, "                                           \
	"status = $2, last_attestation = $3, last_nonce = $4, last_verdict = $5, last_reasons = $6, ima_state = $9"
#define ATTESTATION_EVIDENCE ", evidence_boot = $8, last_evidence = $10, evidence_nonce = $4"
#define ATTESTATION_WHERE " WHERE id = $1 AND generation = $7 AND status <> 'revoked' AND stale_announced "
#define ATTESTATION_SAME_BOOT " AND evidence_boot = $8"
	static const char *const with_evidence[2] = {
		ATTESTATION_SET ATTESTATION_EVIDENCE ATTESTATION_WHERE "IS NULL",
		ATTESTATION_SET ATTESTATION_EVIDENCE ATTESTATION_WHERE "IS NOT NULL",
	};
	static const char *const same_boot[2] = {
		ATTESTATION_SET ATTESTATION_WHERE "IS NULL" ATTESTATION_SAME_BOOT,
		ATTESTATION_SET ATTESTATION_WHERE "IS NOT NULL" ATTESTATION_SAME_BOOT,
	};
#undef ATTESTATION_SET
#undef ATTESTATION_EVIDENCE
#undef ATTESTATION_WHERE
#undef ATTESTATION_SAME_BOOT
	r = exec_stale_variant(d, evidence ? with_evidence : same_boot, pm, evidence ? 10 : 9, stale, err);
	if (r < 0)
		return (int) r;
	if (r == 0)
		return why_unchanged(d, id, err);
	r = db_exec(d,
		    "INSERT INTO attestations (nonce, machine_id, at, seq, trusted, reasons, verdict) "
		    "VALUES ($1, $2, $3, $4, $5, $6, $7)",
		    pa, 7, err);
	return r < 0 ? (int) r : 0;
}

int store_rejudge_tx(db *d, const char *id, int64_t generation, const char *nonce, int64_t now, bool trusted,
		     int64_t n_reasons, const char *verdict, const char *ima_state, bool *stale, mb_error *err)
{
	char nb[24], rb[24], gb[24];
	const char *p[] = { id, nonce, trusted ? "trusted" : "untrusted", nb, verdict, rb, gb, ima_state };
	/* Only while that evidence is still the last one, and the machine's policy, record and
	 * status those it was judged under. A machine announced stale stays so (and its time). */
#define REJUDGE                                                                                      \
	"UPDATE machines SET status_changed = CASE WHEN status = $3 OR stale_announced IS NOT NULL "   \
	"THEN status_changed ELSE $4 END, status = $3, last_verdict = $5, last_reasons = $6, "         \
	"ima_state = $8 "                                                                               \
	"WHERE id = $1 AND last_nonce = $2 AND generation = $7 AND status <> 'revoked' AND stale_announced "
	static const char *const sql[2] = { REJUDGE "IS NULL", REJUDGE "IS NOT NULL" };
#undef REJUDGE
	int64_t r;

	i64s(nb, now);
	i64s(rb, n_reasons);
	i64s(gb, generation);
	r = exec_stale_variant(d, sql, p, 8, stale, err);
	if (r < 0)
		return (int) r;
	return r == 0 ? -ENOENT : 0;
}

int store_history_get(db *d, const char *id, store_history *ret, size_t max, size_t *ret_n, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	size_t i, n;
	int r;

	*ret_n = 0;
	r = db_query(d, "SELECT at, trusted, reasons FROM attestations WHERE machine_id = $1 ORDER BY seq DESC LIMIT " STR(STORE_HISTORY),
		     p, 1, &rows, err);
	if (r < 0)
		return r;
	n = db_rows_count(rows);
	for (i = 0; i < n && i < max; i++)
		ret[i] = (store_history) {
			.at = to_i64(db_rows_get(rows, i, 0)),
			.trusted = to_i64(db_rows_get(rows, i, 1)) != 0,
			.reasons = to_i64(db_rows_get(rows, i, 2)),
		};
	*ret_n = i;
	db_rows_free(rows);
	return 0;
}

int store_policy_put(db *d, const char *sha256, const char *text, mb_error *err)
{
	const char *p[] = { sha256, text };
	int64_t r = db_exec(d, "INSERT INTO policies (sha256, text) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING", p,
			    2, err);

	return r < 0 ? (int) r : 0;
}

int store_policy_get(db *d, const char *sha256, char **ret_text, mb_error *err)
{
	const char *p[] = { sha256 };

	return query_text(d, "SELECT text FROM policies WHERE sha256 = $1", p, 1, ret_text, err);
}

int store_machine_set_policy(db *d, const char *id, const char *sha256, mb_error *err)
{
	char gb[24];
	const char *p[] = { id, sha256, gb };
	int64_t r = new_generation(gb, err);

	if (r >= 0)
		r = db_exec(d, "UPDATE machines SET policy = $2, generation = $3, ima_state = NULL WHERE id = $1", p, 3, err);
	return r < 0 ? (int) r : r == 0 ? -ENOENT : 0;
}

int store_machine_revoke(db *d, const char *id, int64_t now, mb_error *err)
{
	char nb[24], gb[24];
	const char *p[] = { id, nb, gb };
	int64_t r;

	i64s(nb, now);
	r = new_generation(gb, err);
	if (r >= 0)
		r = db_exec(d,
			    "UPDATE machines SET status_changed = CASE WHEN status = 'revoked' THEN status_changed ELSE $2 END, "
			    "revoked = COALESCE(revoked, $2), status = 'revoked', generation = $3 WHERE id = $1",
			    p, 3, err);
	return r < 0 ? (int) r : r == 0 ? -ENOENT : 0;
}

int store_machine_delete_tx(db *d, const char *id, mb_error *err)
{
	static const char *const sql[] = {
		"DELETE FROM attestations WHERE machine_id = $1",
		"DELETE FROM enrollments WHERE machine_id = $1",
		"DELETE FROM machines WHERE id = $1",
	};
	const char *p[] = { id };
	int64_t r = 0, total = 0;
	size_t i;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		r = db_exec(d, sql[i], p, 1, err);
		if (r < 0)
			return (int) r;
		/* The machine row itself, or a pending enrollment, is what makes the id known. */
		if (i >= 1)
			total += r;
	}
	return total == 0 ? -ENOENT : 0;
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

int store_ping(db *d, mb_error *err)
{
	db_rows *rows;
	int r = db_query(d, "SELECT 1", NULL, 0, &rows, err);

	if (r >= 0)
		db_rows_free(rows);
	return r < 0 ? r : 0;
}
