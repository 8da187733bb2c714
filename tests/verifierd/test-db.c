/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The database layer (src/verifierd/db.h) against both backends with the same checks:
 * SQLite in a temp file, and PostgreSQL when MB_TEST_PG_URL names one (test-db-pg.sh starts
 * a private server, see pg-env.sh, and serves MB_TEST_PG_CTL: a folder with two FIFOs, "req"
 * and "ack", through which this test stops and starts that server).
 *
 *   test-db [sqlite|postgresql]   one backend; without an argument, every backend available
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "verifierd/db.h"
#include "pg-control.h"

typedef struct fixture {
	db *d;
	char url[4096];
	char dir[1024]; /* SQLite: the temp dir holding the file */
} fixture;

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Runs sql and fails the test unless it succeeds; returns the changed-row count. */
static int64_t exec_ok(db *d, const char *sql, const char *const *params, size_t n)
{
	mb_error err = { 0 };
	int64_t r = db_exec(d, sql, params, n, &err);

	if (r < 0)
		fail_msg("%s: %s (%d)", sql, err.message, (int) r);
	return r;
}

static db_rows *query_ok(db *d, const char *sql, const char *const *params, size_t n)
{
	mb_error err = { 0 };
	db_rows *rows = NULL;
	int r = db_query(d, sql, params, n, &rows, &err);

	if (r < 0)
		fail_msg("%s: %s (%d)", sql, err.message, r);
	assert_non_null(rows);
	return rows;
}

/* The single cell of a one-row, one-column query (NULL for SQL NULL); freed by the caller. */
static char *scalar(db *d, const char *sql, const char *const *params, size_t n)
{
	db_rows *rows = query_ok(d, sql, params, n);
	const char *v;
	char *copy;

	assert_int_equal(db_rows_count(rows), 1);
	assert_int_equal(db_rows_columns(rows), 1);
	v = db_rows_get(rows, 0, 0);
	copy = v ? strdup(v) : NULL;
	db_rows_free(rows);
	return copy;
}

static void assert_scalar(db *d, const char *sql, const char *expected)
{
	char *v = scalar(d, sql, NULL, 0);

	if (expected) {
		assert_non_null(v);
		assert_string_equal(v, expected);
	} else {
		assert_null(v);
	}
	free(v);
}

static void fresh_table(db *d, const char *name)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
	exec_ok(d, sql, NULL, 0);
	snprintf(sql, sizeof(sql), "CREATE TABLE %s (k TEXT PRIMARY KEY, v TEXT, n BIGINT)", name);
	/* DDL changes no rows, whatever the statement before it changed. */
	assert_int_equal(exec_ok(d, sql, NULL, 0), 0);
}

static void test_placeholders(void **state)
{
	fixture *f = *state;
	const char *const ab[] = { "a", "b" };
	const char *const kv[] = { "value", "key" };
	db_rows *rows;

	/* $2 before $1, $2 twice: each placeholder is its parameter, not the next in line. */
	rows = query_ok(f->d, "SELECT $2, $1, $2", ab, 2);
	assert_int_equal(db_rows_count(rows), 1);
	assert_int_equal(db_rows_columns(rows), 3);
	assert_string_equal(db_rows_get(rows, 0, 0), "b");
	assert_string_equal(db_rows_get(rows, 0, 1), "a");
	assert_string_equal(db_rows_get(rows, 0, 2), "b");
	db_rows_free(rows);

	fresh_table(f->d, "t_placeholders");
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_placeholders (k, v) VALUES ($2, $1)", kv, 2), 1);
	rows = query_ok(f->d, "SELECT v FROM t_placeholders WHERE k = $2 AND v = $1", kv, 2);
	assert_int_equal(db_rows_count(rows), 1);
	assert_string_equal(db_rows_get(rows, 0, 0), "value");
	db_rows_free(rows);
	/* The same text with other parameters (the backends cache prepared statements). */
	rows = query_ok(f->d, "SELECT v FROM t_placeholders WHERE k = $2 AND v = $1", ab, 2);
	assert_int_equal(db_rows_count(rows), 0);
	db_rows_free(rows);
	/* $10 is the tenth parameter, not $1 followed by a 0. */
	{
		const char *const ten[] = { "1", "2", "3", "4", "5", "6", "7", "8", "9", "ten" };

		rows = query_ok(f->d, "SELECT $10, $1, $2, $3, $4, $5, $6, $7, $8, $9", ten, 10);
		assert_int_equal(db_rows_columns(rows), 10);
		assert_string_equal(db_rows_get(rows, 0, 0), "ten");
		assert_string_equal(db_rows_get(rows, 0, 1), "1");
		assert_string_equal(db_rows_get(rows, 0, 9), "9");
		db_rows_free(rows);
	}
}

static void test_nulls(void **state)
{
	fixture *f = *state;
	const char *const params[] = { "k1", NULL };
	const char *const one[] = { NULL };
	db_rows *rows;

	fresh_table(f->d, "t_nulls");
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_nulls (k, v) VALUES ($1, $2)", params, 2), 1);
	rows = query_ok(f->d, "SELECT k, v, n FROM t_nulls", NULL, 0);
	assert_int_equal(db_rows_count(rows), 1);
	assert_int_equal(db_rows_columns(rows), 3);
	assert_string_equal(db_rows_get(rows, 0, 0), "k1");
	assert_null(db_rows_get(rows, 0, 1));
	assert_null(db_rows_get(rows, 0, 2));
	db_rows_free(rows);
	/* A NULL parameter is SQL NULL, not the text "NULL" nor "". */
	assert_scalar(f->d, "SELECT count(*) FROM t_nulls WHERE v IS NULL", "1");
	rows = query_ok(f->d, "SELECT count(*) FROM t_nulls WHERE v = $1", one, 1);
	assert_string_equal(db_rows_get(rows, 0, 0), "0");
	db_rows_free(rows);
	/* The empty string is not NULL. */
	assert_scalar(f->d, "SELECT ''", "");
}

static void test_counts(void **state)
{
	fixture *f = *state;
	db_rows *rows;

	fresh_table(f->d, "t_counts");
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_counts (k, v, n) VALUES ('a', 'x', 1), ('b', 'x', 2), "
				 "('c', 'y', 3)", NULL, 0), 3);
	rows = query_ok(f->d, "SELECT k, n FROM t_counts ORDER BY k", NULL, 0);
	assert_int_equal(db_rows_count(rows), 3);
	assert_int_equal(db_rows_columns(rows), 2);
	assert_string_equal(db_rows_get(rows, 2, 0), "c");
	assert_string_equal(db_rows_get(rows, 2, 1), "3");
	/* Outside the rows or the columns: NULL, not a read past the cells. */
	assert_null(db_rows_get(rows, 3, 0));
	assert_null(db_rows_get(rows, 0, 2));
	db_rows_free(rows);
	/* No rows still has its columns. */
	rows = query_ok(f->d, "SELECT k, v, n FROM t_counts WHERE k = 'none'", NULL, 0);
	assert_int_equal(db_rows_count(rows), 0);
	assert_int_equal(db_rows_columns(rows), 3);
	assert_null(db_rows_get(rows, 0, 0));
	db_rows_free(rows);

	/* Changed rows: what each statement changed, nothing left over from the one before. */
	assert_int_equal(exec_ok(f->d, "UPDATE t_counts SET n = n + 10 WHERE v = 'x'", NULL, 0), 2);
	assert_int_equal(exec_ok(f->d, "UPDATE t_counts SET n = 0 WHERE v = 'none'", NULL, 0), 0);
	assert_int_equal(exec_ok(f->d, "UPDATE t_counts SET n = n + 1", NULL, 0), 3);
	assert_scalar(f->d, "SELECT sum(n) FROM t_counts", "29");
	assert_int_equal(exec_ok(f->d, "DELETE FROM t_counts WHERE k <> 'a'", NULL, 0), 2);
	assert_int_equal(exec_ok(f->d, "CREATE INDEX t_counts_v ON t_counts (v)", NULL, 0), 0);
	assert_int_equal(exec_ok(f->d, "DELETE FROM t_counts", NULL, 0), 1);
}

static void test_constraint(void **state)
{
	fixture *f = *state;
	const char *const row[] = { "same", "first" };
	const char *const again[] = { "same", "second" };
	mb_error err = { 0 };

	fresh_table(f->d, "t_constraint");
	exec_ok(f->d, "CREATE UNIQUE INDEX t_constraint_v ON t_constraint (v)", NULL, 0);
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_constraint (k, v) VALUES ($1, $2)", row, 2), 1);
	assert_int_equal(db_exec(f->d, "INSERT INTO t_constraint (k, v) VALUES ($1, $2)", again, 2, &err), -EEXIST);
	assert_true(err.message[0] != '\0');
	/* A unique index other than the primary key: -EEXIST too. */
	{
		const char *const other[] = { "other", "first" };

		memset(&err, 0, sizeof(err));
		assert_int_equal(db_exec(f->d, "INSERT INTO t_constraint (k, v) VALUES ($1, $2)", other, 2, &err),
				 -EEXIST);
	}
	/* The refused rows are not there; the connection still works. */
	assert_scalar(f->d, "SELECT count(*) FROM t_constraint", "1");
	assert_scalar(f->d, "SELECT v FROM t_constraint WHERE k = 'same'", "first");
	/* A syntax error is -EIO with a message, and the connection still works. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(db_exec(f->d, "SELEKT 1", NULL, 0, &err), -EIO);
	assert_true(err.message[0] != '\0');
	assert_scalar(f->d, "SELECT 1", "1");
}

/* Another connection to the same database: a commit must be visible from there. */
static db *second_connection(const fixture *f)
{
	mb_error err = { 0 };
	db *d2 = NULL;

	if (db_open(f->url, &d2, &err) < 0)
		fail_msg("%s: %s", f->url, err.message);
	return d2;
}

static void test_transactions(void **state)
{
	fixture *f = *state;
	const char *const k1[] = { "rolled-back" };
	const char *const k2[] = { "committed" };
	mb_error err = { 0 };
	db *d2;

	fresh_table(f->d, "t_tx");
	d2 = second_connection(f);
	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "INSERT INTO t_tx (k) VALUES ($1)", k1, 1);
	assert_scalar(f->d, "SELECT count(*) FROM t_tx", "1");
	db_rollback(f->d);
	assert_scalar(f->d, "SELECT count(*) FROM t_tx", "0");

	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "INSERT INTO t_tx (k) VALUES ($1)", k2, 1);
	/* Not yet visible from elsewhere: the transaction is one. */
	assert_scalar(d2, "SELECT count(*) FROM t_tx", "0");
	assert_int_equal(db_commit(f->d, &err), 0);
	assert_scalar(d2, "SELECT k FROM t_tx", "committed");
	assert_scalar(f->d, "SELECT count(*) FROM t_tx", "1");

	/* After a failed statement the transaction is rolled back whole; the handle works on. */
	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "UPDATE t_tx SET v = 'changed'", NULL, 0);
	assert_int_equal(db_exec(f->d, "INSERT INTO t_tx (k) VALUES ($1)", k2, 1, &err), -EEXIST);
	db_rollback(f->d);
	assert_scalar(d2, "SELECT v FROM t_tx", NULL);
	assert_scalar(f->d, "SELECT v FROM t_tx", NULL);
	db_close(d2);
}

/* Statements run atomically (PostgreSQL: one pipeline, one implicit transaction): all of them,
 * seen from another connection only once all are; or none, when one fails. */
static void test_atomic(void **state)
{
	fixture *f = *state;
	const char *const a[] = { "a", "1" }, *const b[] = { "b", "2" }, *const bump[] = { "a" };
	int64_t changed[3] = { -1, -1, -1 };
	mb_error err = { 0 };
	db *d2;

	fresh_table(f->d, "t_atomic");
	d2 = second_connection(f);
	assert_int_equal(db_exec_atomic(f->d,
					(const db_statement[]) {
						{ "INSERT INTO t_atomic (k, n) VALUES ($1, CAST($2 AS BIGINT))", a, 2 },
						{ "INSERT INTO t_atomic (k, n) VALUES ($1, CAST($2 AS BIGINT))", b, 2 },
						{ "UPDATE t_atomic SET n = n + 10 WHERE k <> $1", bump, 1 },
					},
					3, changed, &err),
			 0);
	assert_int_equal(changed[0], 1);
	assert_int_equal(changed[1], 1);
	/* the third saw the second's row: one transaction, in order */
	assert_int_equal(changed[2], 1);
	assert_scalar(d2, "SELECT n FROM t_atomic WHERE k = 'b'", "12");

	/* The second fails (the key is taken): the first's change is gone too. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(db_exec_atomic(f->d,
					(const db_statement[]) {
						{ "UPDATE t_atomic SET v = 'changed' WHERE k = $1", bump, 1 },
						{ "INSERT INTO t_atomic (k, n) VALUES ($1, CAST($2 AS BIGINT))", b, 2 },
					},
					2, changed, &err),
			 -EEXIST);
	assert_true(err.message[0] != '\0');
	assert_scalar(d2, "SELECT v FROM t_atomic WHERE k = 'a'", NULL);
	assert_scalar(f->d, "SELECT count(*) FROM t_atomic", "2");

	/* A statement that changes nothing is no failure: the others are stored. */
	assert_int_equal(db_exec_atomic(f->d,
					(const db_statement[]) {
						{ "UPDATE t_atomic SET v = 'none' WHERE k = 'nobody'", NULL, 0 },
						{ "UPDATE t_atomic SET v = 'seen' WHERE k = $1", bump, 1 },
					},
					2, changed, &err),
			 0);
	assert_int_equal(changed[0], 0);
	assert_int_equal(changed[1], 1);
	assert_scalar(d2, "SELECT v FROM t_atomic WHERE k = 'a'", "seen");

	/* Not inside a transaction of the caller's (PostgreSQL's pipeline would join it; SQLite's
	 * BEGIN would fail): refused, or failing, either way nothing of it is stored on its own. */
	assert_int_equal(db_begin(f->d, &err), 0);
	assert_true(db_exec_atomic(f->d, (const db_statement[]) { { "DELETE FROM t_atomic", NULL, 0 } }, 1, changed,
				   &err) < 0);
	db_rollback(f->d);
	assert_scalar(d2, "SELECT count(*) FROM t_atomic", "2");
	db_close(d2);
}

static void test_returning_upsert(void **state)
{
	fixture *f = *state;
	const char *const put[] = { "k", "v1" };
	const char *const put2[] = { "k", "v2" };
	db_rows *rows;

	fresh_table(f->d, "t_ret");
	/* ON CONFLICT DO NOTHING: the second insert of a key changes nothing. */
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_ret (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING", put, 2), 1);
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_ret (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING", put2, 2), 0);
	assert_scalar(f->d, "SELECT v FROM t_ret", "v1");
	/* ON CONFLICT DO UPDATE with excluded: one row changed, the new value. */
	assert_int_equal(exec_ok(f->d, "INSERT INTO t_ret (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET "
				 "v = excluded.v", put2, 2), 1);
	assert_scalar(f->d, "SELECT v FROM t_ret", "v2");
	rows = query_ok(f->d, "INSERT INTO t_ret (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET "
			"v = t_ret.v || excluded.v RETURNING k, v", put, 2);
	assert_int_equal(db_rows_count(rows), 1);
	assert_string_equal(db_rows_get(rows, 0, 1), "v2v1");
	db_rows_free(rows);
}

static void test_returning_delete(void **state)
{
	fixture *f = *state;
	const char *const del[] = { "x" };
	db_rows *rows;
	const char *a, *b;

	fresh_table(f->d, "t_del");
	exec_ok(f->d, "INSERT INTO t_del (k, v) VALUES ('a', 'x'), ('b', 'x'), ('c', 'y')", NULL, 0);
	/* DELETE ... RETURNING: the rows it took, and they are gone (a single-use nonce is taken so). */
	rows = query_ok(f->d, "DELETE FROM t_del WHERE v = $1 RETURNING k", del, 1);
	assert_int_equal(db_rows_count(rows), 2);
	assert_int_equal(db_rows_columns(rows), 1);
	a = db_rows_get(rows, 0, 0);
	b = db_rows_get(rows, 1, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_true((strcmp(a, "a") == 0 && strcmp(b, "b") == 0) || (strcmp(a, "b") == 0 && strcmp(b, "a") == 0));
	db_rows_free(rows);
	/* Taken once: the second time returns nothing. */
	rows = query_ok(f->d, "DELETE FROM t_del WHERE v = $1 RETURNING k", del, 1);
	assert_int_equal(db_rows_count(rows), 0);
	db_rows_free(rows);
	assert_scalar(f->d, "SELECT k FROM t_del", "c");
	/* Through db_exec: the rows are counted. */
	assert_int_equal(exec_ok(f->d, "DELETE FROM t_del RETURNING k", NULL, 0), 1);
}

static void test_bad_url(void **state)
{
	mb_error err = { 0 };
	db *d = (db *) 1;

	(void) state;
	assert_int_equal(db_open("mysql://localhost/x", &d, &err), -EINVAL);
	assert_null(d);
	assert_int_equal(db_open("sqlite:", &d, &err), -EINVAL);
}

/* ---- SQLite ---- */

static int setup_sqlite(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	mb_error err = { 0 };
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/mboot-test-db.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->url, sizeof(f->url), "sqlite:%s/fleet.db", f->dir);
	/* A permissive umask: the file's 0600 must come from the backend, not from here. */
	umask(022);
	if (db_open(f->url, &f->d, &err) < 0) {
		fprintf(stderr, "%s: %s\n", f->url, err.message);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[4200];

	db_close(f->d);
	if (f->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", f->dir);
	}
	free(f);
	return 0;
}

static void assert_mode_0600(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		fail_msg("%s: %s", path, strerror(errno));
	if ((st.st_mode & 07777) != 0600)
		fail_msg("%s: mode %o, not 600", path, (unsigned) (st.st_mode & 07777));
}

static void test_sqlite_file_mode(void **state)
{
	fixture *f = *state;
	char path[4200];

	/* A write, so that the WAL (which holds the same rows until a checkpoint) exists too. */
	fresh_table(f->d, "t_mode");
	exec_ok(f->d, "INSERT INTO t_mode (k) VALUES ('secret')", NULL, 0);
	snprintf(path, sizeof(path), "%s/fleet.db", f->dir);
	assert_mode_0600(path);
	snprintf(path, sizeof(path), "%s/fleet.db-wal", f->dir);
	assert_mode_0600(path);
	assert_scalar(f->d, "PRAGMA journal_mode", "wal");
	/* Every commit synced (FULL = 2): an acknowledged verdict survives a crash. */
	assert_scalar(f->d, "PRAGMA synchronous", "2");
}

/* ---- PostgreSQL ---- */

static int setup_pg(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	mb_error err = { 0 };
	const char *url = getenv("MB_TEST_PG_URL");

	if (!f || !url)
		return -1;
	snprintf(f->url, sizeof(f->url), "%s", url);
	if (db_open(f->url, &f->d, &err) < 0) {
		fprintf(stderr, "%s: %s\n", f->url, err.message);
		return -1;
	}
	*state = f;
	return 0;
}

/* A message the service can put in a one-line JSON error and a log line: libpq's span lines. */
static void assert_one_line(const char *msg)
{
	size_t len = strlen(msg);

	assert_true(len > 0);
	if (strpbrk(msg, "\n\r\t") || msg[len - 1] == ' ')
		fail_msg("not one line: \"%s\"", msg);
}

/* Asks test-db-pg.sh to "stop" or "start" the server, and waits until it has. */
static void pg_ctl(const char *what)
{
	if (!getenv("MB_PG_CONTROL"))
		skip();
	assert_int_equal(pg_control(what), 0);
}

static void test_pg_reconnect(void **state)
{
	fixture *f = *state;
	const char *const k[] = { "before" };
	const char *const k2[] = { "during" };
	mb_error err = { 0 };

	fresh_table(f->d, "t_reconnect");
	exec_ok(f->d, "INSERT INTO t_reconnect (k) VALUES ($1)", k, 1);

	pg_ctl("stop");
	/* Server gone: -ENOTCONN with a message (the service answers 503), every time. */
	assert_int_equal(db_exec(f->d, "INSERT INTO t_reconnect (k) VALUES ($1)", k2, 1, &err), -ENOTCONN);
	assert_one_line(err.message);
	memset(&err, 0, sizeof(err));
	assert_int_equal(db_exec(f->d, "SELECT 1", NULL, 0, &err), -ENOTCONN);
	assert_int_equal(db_begin(f->d, &err), -ENOTCONN);

	pg_ctl("start");
	/* The same handle reconnects by itself: the first statement works. */
	assert_scalar(f->d, "SELECT k FROM t_reconnect", "before");
	/* Its prepared statements were the old connection's: prepared again, not "does not exist". */
	exec_ok(f->d, "INSERT INTO t_reconnect (k) VALUES ($1)", k2, 1);
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "2");

	/* Server gone: statements run atomically fail as one, with -ENOTCONN; back, they run. */
	pg_ctl("stop");
	assert_int_equal(db_exec_atomic(f->d, (const db_statement[]) { { "INSERT INTO t_reconnect (k) VALUES ($1)", k2, 1 } },
					1, (int64_t[1]) { 0 }, &err),
			 -ENOTCONN);
	pg_ctl("start");
	{
		const char *const k3[] = { "atomic" };
		int64_t changed[2];

		assert_int_equal(db_exec_atomic(f->d,
						(const db_statement[]) {
							{ "INSERT INTO t_reconnect (k) VALUES ($1)", k3, 1 },
							{ "DELETE FROM t_reconnect WHERE k = $1", k3, 1 },
						},
						2, changed, &err),
				 0);
		assert_int_equal(changed[1], 1);
	}
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "2");

	/* Restarted while idle (the handle did not see it go): the server's goodbye is noticed
	 * before the next statement, which works on a new connection. */
	pg_ctl("stop");
	pg_ctl("start");
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "2");

	/* Restarted inside a transaction: the rest of it fails, not run on a new connection one
	 * statement at a time (each its own commit), until the ROLLBACK; nothing of it stays. */
	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "DELETE FROM t_reconnect WHERE k = 'before'", NULL, 0);
	pg_ctl("stop");
	pg_ctl("start");
	assert_int_equal(db_exec(f->d, "DELETE FROM t_reconnect WHERE k = 'during'", NULL, 0, &err), -ENOTCONN);
	assert_int_equal(db_exec(f->d, "DELETE FROM t_reconnect WHERE k = 'during'", NULL, 0, &err), -ENOTCONN);
	db_rollback(f->d);
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "2");

	/* Connection lost inside a transaction: nothing of it is stored, the rollback and the next
	 * transaction work. */
	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "DELETE FROM t_reconnect", NULL, 0);
	pg_ctl("stop");
	assert_int_equal(db_commit(f->d, &err), -ENOTCONN);
	pg_ctl("start");
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "2");
	assert_int_equal(db_begin(f->d, &err), 0);
	exec_ok(f->d, "DELETE FROM t_reconnect", NULL, 0);
	assert_int_equal(db_commit(f->d, &err), 0);
	assert_scalar(f->d, "SELECT count(*) FROM t_reconnect", "0");
}

static void test_pg_unreachable(void **state)
{
	mb_error err = { 0 };
	db *d = (db *) 1;

	(void) state;
	/* No server on this socket: -ENOTCONN at open, nothing allocated. */
	assert_int_equal(db_open("postgresql:///mboot?host=/nonexistent-mboot-test", &d, &err), -ENOTCONN);
	assert_null(d);
	assert_one_line(err.message);
}

#define COMMON_TESTS                                                                                   \
	cmocka_unit_test(test_placeholders), cmocka_unit_test(test_nulls), cmocka_unit_test(test_counts),  \
		cmocka_unit_test(test_constraint), cmocka_unit_test(test_transactions), cmocka_unit_test(test_atomic), \
		cmocka_unit_test(test_returning_upsert), cmocka_unit_test(test_returning_delete),          \
		cmocka_unit_test(test_bad_url)

int main(int argc, char **argv)
{
	const struct CMUnitTest sqlite_tests[] = {
		COMMON_TESTS,
		cmocka_unit_test(test_sqlite_file_mode),
	};
	const struct CMUnitTest pg_tests[] = {
		COMMON_TESTS,
		cmocka_unit_test(test_pg_unreachable),
		cmocka_unit_test(test_pg_reconnect),
	};
	const char *only = argc > 1 ? argv[1] : NULL;
	int failed = 0;

	if (!only || strcmp(only, "sqlite") == 0)
		failed += cmocka_run_group_tests_name("sqlite", sqlite_tests, setup_sqlite, teardown);
	if ((!only && getenv("MB_TEST_PG_URL")) || (only && strcmp(only, "postgresql") == 0))
		failed += cmocka_run_group_tests_name("postgresql", pg_tests, setup_pg, teardown);
	return failed ? 1 : 0;
}
