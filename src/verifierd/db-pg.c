/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared backend: PostgreSQL through libpq, for several verifiers serving one fleet. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "shared/fail.h"
#include "verifierd/db-internal.h"

/* Each statement text is prepared once per connection, under a name of its own. */
#define STMT_CACHE 48

typedef struct pg_db {
	struct db base;
	PGconn *conn;
	struct {
		char *sql;
		char name[16];
	} cache[STMT_CACHE];
	size_t n_cache;
	unsigned next_name;
	bool in_transaction; /* a BEGIN went through, its COMMIT or ROLLBACK not yet */
} pg_db;

static void forget_statements(pg_db *p)
{
	size_t i;

	for (i = 0; i < p->n_cache; i++)
		free(p->cache[i].sql);
	p->n_cache = 0;
}

/* libpq's messages span lines ("...failed: ...\n\tIs the server running...?\n"); the service
 * puts them in a one-line JSON error and a log line. */
static int one_line(mb_error *err, int code)
{
	size_t i, len;

	if (!err)
		return code;
	len = strlen(err->message);
	for (i = 0; i < len; i++)
		if (err->message[i] == '\n' || err->message[i] == '\t' || err->message[i] == '\r')
			err->message[i] = ' ';
	while (len && err->message[len - 1] == ' ')
		err->message[--len] = '\0';
	return code;
}

/* An idle connection has nothing to read (the service does not LISTEN): if it has, that is
 * the server's goodbye (a restart sends FATAL 57P01, then closes). */
static bool server_said_goodbye(pg_db *p)
{
	struct pollfd pfd = { .fd = PQsocket(p->conn), .events = POLLIN };

	return pfd.fd >= 0 && poll(&pfd, 1, 0) == 1;
}

/* Each new session's settings. Verdicts (a few KB each, one per attestation) are compressed as
 * they are stored: LZ4 costs a fraction of pglz's CPU. A server built without it keeps its
 * default (the SET fails, and that is all). */
static void session_setup(pg_db *p)
{
	PQclear(PQexec(p->conn, "SET default_toast_compression = 'lz4'"));
}

/* A broken connection is reset before the next statement; the statement it broke fails.
 * Not inside a transaction: its earlier statements are gone with the old connection, so
 * everything up to the ROLLBACK fails, rather than run on, committed one by one. */
static int ensure_connected(pg_db *p, const char *sql, mb_error *err)
{
	bool rollback = strcmp(sql, "ROLLBACK") == 0;

	if (PQstatus(p->conn) == CONNECTION_OK && (p->in_transaction || !server_said_goodbye(p)))
		return 0;
	if (p->in_transaction && !rollback)
		return set_error(err, -ENOTCONN, "PostgreSQL: the connection was lost inside a transaction");
	p->in_transaction = false;
	forget_statements(p);
	PQreset(p->conn);
	if (PQstatus(p->conn) != CONNECTION_OK)
		return one_line(err, set_error(err, -ENOTCONN, "PostgreSQL: %s", PQerrorMessage(p->conn)));
	session_setup(p);
	return 0;
}

static int pg_fail(pg_db *p, const PGresult *res, mb_error *err, const char *sql)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(p->conn);
	size_t len = strlen(msg);
	int code = -EIO;

	if (PQstatus(p->conn) != CONNECTION_OK || !state)
		code = -ENOTCONN;
	else if (strcmp(state, "23505") == 0 || strcmp(state, "42P07") == 0 || strcmp(state, "42710") == 0)
		/* unique violation; duplicate table or type: two CREATE TABLE IF NOT EXISTS at
		 * once both miss the table, and the later one fails once the other commits */
		code = -EEXIST;
	else if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0)
		code = -EBUSY;
	else if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0)
		code = -ENOTCONN; /* connection exception, admin shutdown, cannot connect now */
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		len--;
	return one_line(err, set_error(err, code, "PostgreSQL: %.*s (%.60s)", (int) len, msg, sql));
}

static int statement_name(pg_db *p, const char *sql, size_t n_params, const char **ret, mb_error *err)
{
	PGresult *res;
	size_t i;
	int r;

	for (i = 0; i < p->n_cache; i++)
		if (strcmp(p->cache[i].sql, sql) == 0) {
			*ret = p->cache[i].name;
			return 0;
		}
	if (p->n_cache == STMT_CACHE) {
		/* Full: statements are no longer cached (the store has fewer than this). */
		*ret = "";
		return 0;
	}
	i = p->n_cache;
	snprintf(p->cache[i].name, sizeof(p->cache[i].name), "mb%u", p->next_name++);
	res = PQprepare(p->conn, p->cache[i].name, sql, (int) n_params, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		r = pg_fail(p, res, err, sql);
		PQclear(res);
		return r;
	}
	PQclear(res);
	p->cache[i].sql = strdup(sql);
	if (!p->cache[i].sql)
		return set_error(err, -ENOMEM, "out of memory");
	p->n_cache++;
	*ret = p->cache[i].name;
	return 0;
}

static int run(pg_db *p, const char *sql, const char *const *params, size_t n_params, PGresult **ret, mb_error *err)
{
	const char *name = NULL;
	PGresult *res;
	ExecStatusType st;
	int r;

	*ret = NULL;
	r = ensure_connected(p, sql, err);
	if (r < 0)
		return r;
	if (strcmp(sql, "COMMIT") == 0 || strcmp(sql, "ROLLBACK") == 0)
		p->in_transaction = false;
	/* BEGIN, COMMIT and ROLLBACK are not worth a prepared statement. */
	if (n_params || strncmp(sql, "SELECT", 6) == 0 || strncmp(sql, "INSERT", 6) == 0 ||
	    strncmp(sql, "UPDATE", 6) == 0 || strncmp(sql, "DELETE", 6) == 0) {
		r = statement_name(p, sql, n_params, &name, err);
		if (r < 0)
			return r;
	}
	if (name && *name)
		res = PQexecPrepared(p->conn, name, (int) n_params, params, NULL, NULL, 0);
	else
		res = PQexecParams(p->conn, sql, (int) n_params, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		r = pg_fail(p, res, err, sql);
		PQclear(res);
		return r;
	}
	if (strcmp(sql, "BEGIN") == 0)
		p->in_transaction = true;
	*ret = res;
	return 0;
}

static int64_t changed_count(PGresult *res)
{
	const char *n = PQcmdTuples(res);
	char *end;
	long long changed;

	/* "" for statements that change no rows (BEGIN, CREATE TABLE). */
	if (!n || !*n)
		return 0;
	errno = 0;
	changed = strtoll(n, &end, 10);
	return errno || *end || changed < 0 ? 0 : (int64_t) changed;
}

static int64_t pg_exec(db *d, const char *sql, const char *const *params, size_t n_params, mb_error *err)
{
	pg_db *p = (pg_db *) d;
	PGresult *res;
	int64_t changed;
	int r;

	r = run(p, sql, params, n_params, &res, err);
	if (r < 0)
		return r;
	changed = changed_count(res);
	PQclear(res);
	return changed;
}

/* The pipeline's results: one per statement (each followed by a NULL), then the Sync's. The
 * first error is kept; the statements after it are skipped by the server (PIPELINE_ABORTED). */
static int pipeline_results(pg_db *p, const db_statement *stmts, size_t n, int64_t *changed, mb_error *err)
{
	PGresult *res;
	ExecStatusType st;
	size_t i;
	int r = 0;

	for (i = 0; i < n; i++) {
		res = PQgetResult(p->conn);
		if (!res)
			return r < 0 ? r : pg_fail(p, NULL, err, stmts[i].sql);
		st = PQresultStatus(res);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
			changed[i] = changed_count(res);
		else if (r == 0 && st != PGRES_PIPELINE_ABORTED)
			r = pg_fail(p, res, err, stmts[i].sql);
		PQclear(res);
		/* the NULL that ends this statement's results */
		while ((res = PQgetResult(p->conn)) != NULL)
			PQclear(res);
	}
	res = PQgetResult(p->conn);
	if (!res || PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
		if (r == 0)
			r = pg_fail(p, res, err, "the pipeline's Sync");
		PQclear(res);
		return r;
	}
	PQclear(res);
	return r;
}

/* The statements of one pipeline, at most (the store sends two). */
#define PIPELINE_MAX 8

static int pg_exec_atomic(db *d, const db_statement *stmts, size_t n, int64_t *changed, mb_error *err)
{
	pg_db *p = (pg_db *) d;
	const char *names[PIPELINE_MAX];
	size_t i;
	int r, sent;

	if (n == 0 || n > PIPELINE_MAX || p->in_transaction)
		return set_error(err, -EINVAL, "PostgreSQL: %zu statements to run atomically%s", n,
				 p->in_transaction ? " inside a transaction" : "");
	r = ensure_connected(p, stmts[0].sql, err);
	/* prepared before the pipeline: PQprepare waits for its answer */
	for (i = 0; r >= 0 && i < n; i++)
		r = statement_name(p, stmts[i].sql, stmts[i].n_params, &names[i], err);
	if (r < 0)
		return r;
	if (!PQenterPipelineMode(p->conn))
		return pg_fail(p, NULL, err, stmts[0].sql);
	for (i = 0, sent = 1; sent && i < n; i++)
		sent = *names[i] ? PQsendQueryPrepared(p->conn, names[i], (int) stmts[i].n_params, stmts[i].params,
						       NULL, NULL, 0)
				 : PQsendQueryParams(p->conn, stmts[i].sql, (int) stmts[i].n_params, NULL,
						     stmts[i].params, NULL, NULL, 0);
	/* Nothing runs before the Sync: when a statement or the Sync could not be sent (the
	 * connection broke), nothing ran. */
	if (!sent || !PQpipelineSync(p->conn))
		r = pg_fail(p, NULL, err, stmts[sent ? 0 : i - 1].sql);
	else
		r = pipeline_results(p, stmts, n, changed, err);
	if (!PQexitPipelineMode(p->conn)) {
		/* results left unread (a broken connection): the next call starts on a fresh one */
		if (r == 0)
			r = pg_fail(p, NULL, err, "leaving pipeline mode");
		forget_statements(p);
		PQreset(p->conn);
		if (PQstatus(p->conn) == CONNECTION_OK)
			session_setup(p);
	}
	return r;
}

static int pg_query(db *d, const char *sql, const char *const *params, size_t n_params, db_rows **ret,
		    mb_error *err)
{
	pg_db *p = (pg_db *) d;
	PGresult *res;
	db_rows *rows;
	size_t n, m, i, j;
	int r;

	r = run(p, sql, params, n_params, &res, err);
	if (r < 0)
		return r;
	n = (size_t) PQntuples(res);
	m = (size_t) PQnfields(res);
	rows = db_rows_new(n, m);
	if (!rows) {
		PQclear(res);
		return set_error(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < m; j++) {
			if (PQgetisnull(res, (int) i, (int) j))
				continue;
			if (db_rows_set(rows, i, j, PQgetvalue(res, (int) i, (int) j),
					(size_t) PQgetlength(res, (int) i, (int) j)) < 0) {
				db_rows_free(rows);
				PQclear(res);
				return set_error(err, -ENOMEM, "out of memory");
			}
		}
	PQclear(res);
	*ret = rows;
	return 0;
}

static void pg_close(db *d)
{
	pg_db *p = (pg_db *) d;

	forget_statements(p);
	PQfinish(p->conn);
	free(p);
}

static const struct db_ops pg_ops = {
	.exec = pg_exec,
	.query = pg_query,
	.exec_atomic = pg_exec_atomic,
	.close = pg_close,
};

static void quiet_notices(void *arg, const char *message)
{
	/* "relation already exists, skipping" and the like: the service logs its own errors. */
}

int db_pg_open(const char *url, db **ret, mb_error *err)
{
	pg_db *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return set_error(err, -ENOMEM, "out of memory");
	p->base.ops = &pg_ops;
	p->base.kind = DB_POSTGRESQL;
	p->conn = PQconnectdb(url);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		r = one_line(err, set_error(err, p->conn ? -ENOTCONN : -ENOMEM, "PostgreSQL: %s",
					    p->conn ? PQerrorMessage(p->conn) : "out of memory"));
		PQfinish(p->conn);
		free(p);
		return r;
	}
	PQsetNoticeProcessor(p->conn, quiet_notices, NULL);
	session_setup(p);
	*ret = &p->base;
	return 0;
}
