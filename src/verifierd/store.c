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

int store_new_generation(char buf[24], mb_error *err)
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

int store_machine_copy(const store_machine *src, store_machine *dst)
{
	*dst = *src;
	dst->id = dup_or_null(src->id);
	dst->record = dup_or_null(src->record);
	dst->ek_sha256 = dup_or_null(src->ek_sha256);
	dst->policy = dup_or_null(src->policy);
	dst->status = dup_or_null(src->status);
	dst->last_nonce = dup_or_null(src->last_nonce);
	dst->last_verdict = dup_or_null(src->last_verdict);
	dst->evidence_nonce = dup_or_null(src->evidence_nonce);
	dst->evidence_boot = dup_or_null(src->evidence_boot);
	dst->ima_state = dup_or_null(src->ima_state);
	if ((src->id && !dst->id) || (src->record && !dst->record) || (src->ek_sha256 && !dst->ek_sha256) ||
	    (src->policy && !dst->policy) || (src->status && !dst->status) || (src->last_nonce && !dst->last_nonce) ||
	    (src->last_verdict && !dst->last_verdict) || (src->evidence_nonce && !dst->evidence_nonce) ||
	    (src->evidence_boot && !dst->evidence_boot) || (src->ima_state && !dst->ima_state)) {
		store_machine_done(dst);
		return -ENOMEM;
	}
	return 0;
}

#define MACHINE_COLUMNS                                                                                         \
	"id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled, last_attestation, last_nonce, " \
	"last_verdict, last_reasons, generation, evidence_nonce, evidence_boot, stale_announced, ima_state"
#define MACHINE_COLUMNS_ATTESTING                                                                         \
	"id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled, last_attestation, last_nonce, " \
	"NULL, last_reasons, generation, evidence_nonce, evidence_boot, stale_announced, ima_state"

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

/* The machine's row as read by machine_get(): by purpose. */
typedef enum machine_read {
	MACHINE_READ,
	MACHINE_READ_LOCKED, /* PostgreSQL: FOR UPDATE (SQLite's write transaction holds the whole database) */
	MACHINE_READ_ATTESTING,
	MACHINE_READ_ASKING, /* for a nonce: its id, status, policy, stored boot and IMA state */
} machine_read;

static int machine_get(db *d, const char *id, const char *nonce, machine_read how, store_machine *ret,
		       mb_error *err)
{
	static const char *const sql[] = {
		[MACHINE_READ] = "SELECT " MACHINE_COLUMNS " FROM machines WHERE id = $1",
		[MACHINE_READ_LOCKED] = "SELECT " MACHINE_COLUMNS " FROM machines WHERE id = $1 FOR UPDATE",
		/* without the verdict (a few KB, compressed in PostgreSQL), and whether the nonce was
		 * used: an attestation's reads in one round trip */
		[MACHINE_READ_ATTESTING] = ("SELECT " MACHINE_COLUMNS_ATTESTING ", CASE WHEN EXISTS (SELECT 1 FROM "
					    "attestations WHERE nonce = $2) THEN 1 ELSE 0 END FROM machines WHERE id = $1"),
		[MACHINE_READ_ASKING] = ("SELECT id, NULL, NULL, policy, 0, status, 0, 0, NULL, NULL, NULL, 0, 0, NULL, "
					 "evidence_boot, 0, ima_state FROM machines WHERE id = $1"),
	};
	const char *p[] = { id, nonce };
	db_rows *rows;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (how == MACHINE_READ_LOCKED && db_get_kind(d) != DB_POSTGRESQL)
		how = MACHINE_READ;
	r = db_query(d, sql[how], p, how == MACHINE_READ_ATTESTING ? 2 : 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? machine_from_row(rows, 0, ret) : -ENOENT;
	if (r == 0 && how == MACHINE_READ_ATTESTING)
		ret->nonce_used = to_i64(db_rows_get(rows, 0, 17)) != 0;
	db_rows_free(rows);
	return r == -ENOMEM ? set_error(err, r, "out of memory") : r;
}

int store_machine_get(db *d, const char *id, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, NULL, MACHINE_READ, ret, err);
}

int store_machine_get_tx(db *d, const char *id, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, NULL, MACHINE_READ_LOCKED, ret, err);
}

int store_machine_get_attesting(db *d, const char *id, const char *nonce, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, nonce, MACHINE_READ_ATTESTING, ret, err);
}

int store_machine_get_asking(db *d, const char *id, store_machine *ret, mb_error *err)
{
	return machine_get(d, id, NULL, MACHINE_READ_ASKING, ret, err);
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
	r = store_new_generation(gb, err);
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
	int64_t r = store_new_generation(gb, err);

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
	r = store_new_generation(gb, err);
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

int store_ping(db *d, mb_error *err)
{
	db_rows *rows;
	int r = db_query(d, "SELECT 1", NULL, 0, &rows, err);

	if (r >= 0)
		db_rows_free(rows);
	return r < 0 ? r : 0;
}
