/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every SQL statement of the fleet (store.h), in the dialect SQLite and PostgreSQL share. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "verifierd/store.h"

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

static const char *const *const migrations[STORE_SCHEMA_VERSION] = { schema_v1 };

/* Literals in SQL text: SQLite takes no text parameter for LIMIT. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define STORE_NONCES_KEEP 7 /* STORE_NONCES_PER_MACHINE - 1: room for the new one */
_Static_assert(STORE_NONCES_KEEP == STORE_NONCES_PER_MACHINE - 1, "nonces kept");

static void i64s(char buf[24], int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
}

/* A number the database returned for a BIGINT column (never NULL there but for absent rows). */
static int64_t to_i64(const char *s)
{
	char *end;
	long long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno || *end ? 0 : v;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
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
	memset(m, 0, sizeof(*m));
}

#define MACHINE_COLUMNS                                                                                         \
	"id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled, last_attestation, last_nonce, " \
	"last_verdict, last_reasons"

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
	if (!m->id || !m->status) {
		store_machine_done(m);
		return -ENOMEM;
	}
	return 0;
}

int store_machine_get(db *d, const char *id, store_machine *ret, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = db_query(d, "SELECT " MACHINE_COLUMNS " FROM machines WHERE id = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? machine_from_row(rows, 0, ret) : -ENOENT;
	db_rows_free(rows);
	return r == -ENOMEM ? set_error(err, r, "out of memory") : r;
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
		     "last_attestation, last_nonce, NULL, last_reasons FROM machines ORDER BY id",
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
	char ib[24], nb[24];
	const char *p[] = { id, record, ek_sha256, policy, ib, nb };
	const char *pid[] = { id };
	int64_t r;

	i64s(ib, interval);
	i64s(nb, now);
	/* A re-enrolled machine keeps its policy, history and last verdict; it starts a new
	 * period of its interval from now (so it is not stale at once). */
	r = db_exec(d,
		    "INSERT INTO machines (id, record, ek_sha256, policy, interval_s, status, status_changed, enrolled) "
		    "VALUES ($1, $2, $3, $4, $5, 'enrolled', $6, $6) "
		    "ON CONFLICT (id) DO UPDATE SET record = excluded.record, ek_sha256 = excluded.ek_sha256, "
		    "interval_s = excluded.interval_s, enrolled = excluded.enrolled, "
		    "status_changed = CASE WHEN machines.status = 'enrolled' THEN machines.status_changed "
		    "ELSE excluded.status_changed END, status = 'enrolled' "
		    "WHERE machines.ek_sha256 = excluded.ek_sha256 AND machines.status <> 'revoked'",
		    p, 6, err);
	/* Another TPM's machine, or a revoked one, that the caller's check did not see yet
	 * (PostgreSQL, READ COMMITTED: committed meanwhile): the transaction's retry sees it. */
	if (r == 0)
		return set_error(err, -EBUSY, "machine %s changed meanwhile", id);
	if (r >= 0)
		r = db_exec(d, "DELETE FROM enrollments WHERE machine_id = $1", pid, 1, err);
	return r < 0 ? (int) r : 0;
}

int store_nonce_add(db *d, const char *nonce, const char *id, int64_t expires, int64_t issued_us, int64_t now,
		    mb_error *err)
{
	char eb[24], ub[24], nb[24];
	const char *prune[] = { id, nb };
	const char *p[] = { nonce, id, eb, ub };
	int64_t r;

	i64s(eb, expires);
	i64s(ub, issued_us);
	i64s(nb, now);
	/* Before the insert, so that the new nonce is never the one pruned. */
	r = db_exec(d,
		    "DELETE FROM nonces WHERE machine_id = $1 AND (expires < $2 OR nonce NOT IN "
		    "(SELECT nonce FROM nonces WHERE machine_id = $1 ORDER BY issued_us DESC LIMIT " STR(STORE_NONCES_KEEP) "))",
		    prune, 2, err);
	if (r >= 0)
		r = db_exec(d, "INSERT INTO nonces (nonce, machine_id, expires, issued_us) VALUES ($1, $2, $3, $4)", p, 4,
			    err);
	return r < 0 ? (int) r : 0;
}

int store_nonce_take(db *d, const char *nonce, const char *id, int64_t now, mb_error *err)
{
	char nb[24];
	const char *p[] = { nonce, id, nb };
	db_rows *rows;
	int r;

	i64s(nb, now);
	/* One statement: of two requests with the same nonce, exactly one gets the row. */
	r = db_query(d, "DELETE FROM nonces WHERE nonce = $1 AND machine_id = $2 AND expires >= $3 RETURNING nonce", p,
		     3, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? 1 : 0;
	db_rows_free(rows);
	return r;
}

int store_nonce_valid(db *d, const char *nonce, const char *id, int64_t now, mb_error *err)
{
	char nb[24];
	const char *p[] = { nonce, id, nb };
	db_rows *rows;
	int r;

	i64s(nb, now);
	r = db_query(d, "SELECT nonce FROM nonces WHERE nonce = $1 AND machine_id = $2 AND expires >= $3", p, 3, &rows,
		     err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? 1 : 0;
	db_rows_free(rows);
	return r;
}

int store_nonce_set_expires(db *d, const char *nonce, int64_t expires, mb_error *err)
{
	char eb[24];
	const char *p[] = { nonce, eb };
	int64_t r;

	i64s(eb, expires);
	r = db_exec(d, "UPDATE nonces SET expires = $2 WHERE nonce = $1", p, 2, err);
	return r < 0 ? (int) r : r == 0 ? -ENOENT : 0;
}

int store_attestation_tx(db *d, const char *id, const char *nonce, int64_t at, int64_t seq, bool trusted,
			 int64_t n_reasons, const char *verdict, const char *evidence, mb_error *err)
{
	char ab[24], sb[24], rb[24];
	const char *status = trusted ? "trusted" : "untrusted";
	const char *pa[] = { nonce, id, ab, sb, trusted ? "1" : "0", rb, verdict };
	const char *pm[] = { id, status, ab, nonce, evidence, verdict, rb };
	int64_t r;

	i64s(ab, at);
	i64s(sb, seq);
	i64s(rb, n_reasons);
	r = db_exec(d,
		    "INSERT INTO attestations (nonce, machine_id, at, seq, trusted, reasons, verdict) "
		    "VALUES ($1, $2, $3, $4, $5, $6, $7)",
		    pa, 7, err);
	if (r < 0)
		return (int) r;
	r = db_exec(d,
		    "UPDATE machines SET status_changed = CASE WHEN status = $2 THEN status_changed ELSE $3 END, "
		    "status = $2, last_attestation = $3, last_nonce = $4, last_evidence = $5, last_verdict = $6, "
		    "last_reasons = $7 WHERE id = $1 AND status <> 'revoked'",
		    pm, 7, err);
	if (r < 0)
		return (int) r;
	return r == 0 ? -ENOENT : 0;
}

int store_rejudge_tx(db *d, const char *id, const char *nonce, int64_t now, bool trusted, int64_t n_reasons,
		     const char *verdict, mb_error *err)
{
	char nb[24], rb[24];
	const char *p[] = { id, nonce, trusted ? "trusted" : "untrusted", nb, verdict, rb };
	int64_t r;

	i64s(nb, now);
	i64s(rb, n_reasons);
	/* Only while that evidence is still the last one and the machine not revoked. */
	r = db_exec(d,
		    "UPDATE machines SET status_changed = CASE WHEN status = $3 THEN status_changed ELSE $4 END, "
		    "status = $3, last_verdict = $5, last_reasons = $6 "
		    "WHERE id = $1 AND last_nonce = $2 AND status <> 'revoked'",
		    p, 6, err);
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
	const char *p[] = { id, sha256 };
	int64_t r = db_exec(d, "UPDATE machines SET policy = $2 WHERE id = $1", p, 2, err);

	return r < 0 ? (int) r : r == 0 ? -ENOENT : 0;
}

int store_machine_revoke(db *d, const char *id, int64_t now, mb_error *err)
{
	char nb[24];
	const char *p[] = { id, nb };
	int64_t r;

	i64s(nb, now);
	r = db_exec(d,
		    "UPDATE machines SET status_changed = CASE WHEN status = 'revoked' THEN status_changed ELSE $2 END, "
		    "revoked = COALESCE(revoked, $2), status = 'revoked' WHERE id = $1",
		    p, 2, err);
	return r < 0 ? (int) r : r == 0 ? -ENOENT : 0;
}

int store_machine_delete_tx(db *d, const char *id, mb_error *err)
{
	static const char *const sql[] = {
		"DELETE FROM attestations WHERE machine_id = $1",
		"DELETE FROM nonces WHERE machine_id = $1",
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
		if (i >= 2)
			total += r;
	}
	return total == 0 ? -ENOENT : 0;
}

int store_token_add(db *d, const char *sha256, int64_t now, mb_error *err)
{
	char nb[24];
	const char *p[] = { sha256, nb };
	int64_t r;

	i64s(nb, now);
	r = db_exec(d, "INSERT INTO tokens (sha256, created) VALUES ($1, $2)", p, 2, err);
	return r < 0 ? (int) r : 0;
}

int store_token_check(db *d, const char *sha256, mb_error *err)
{
	const char *p[] = { sha256 };
	db_rows *rows;
	int r;

	r = db_query(d, "SELECT 1 FROM tokens WHERE sha256 = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? 1 : 0;
	db_rows_free(rows);
	return r;
}

int store_ping(db *d, mb_error *err)
{
	db_rows *rows;
	int r = db_query(d, "SELECT 1", NULL, 0, &rows, err);

	if (r >= 0)
		db_rows_free(rows);
	return r < 0 ? r : 0;
}
