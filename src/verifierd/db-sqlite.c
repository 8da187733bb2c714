/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The embedded backend: one SQLite file, WAL journal, every commit synced. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "shared/fail.h"
#include "verifierd/db-internal.h"

/* The store's statements are string constants: keep each prepared once per connection. */
#define STMT_CACHE 48

typedef struct sqlite_db {
	struct db base;
	sqlite3 *conn;
	struct {
		char *sql;
		sqlite3_stmt *stmt;
	} cache[STMT_CACHE];
	size_t n_cache;
} sqlite_db;

static int sqlite_fail(sqlite_db *s, int rc, mb_error *err, const char *sql)
{
	int code = -EIO;

	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
		if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
			code = -EEXIST;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = -EBUSY;
		break;
	case SQLITE_NOMEM:
		code = -ENOMEM;
		break;
	}
	return set_error(err, code, "SQLite: %s (%.60s)", sqlite3_errmsg(s->conn), sql);
}

/* "$N" (PostgreSQL's placeholder) as "?N" (SQLite's numbered one), so one text serves both. */
static char *sql_for_sqlite(const char *sql)
{
	char *out = strdup(sql), *p;

	if (!out)
		return NULL;
	for (p = out; *p; p++)
		if (*p == '$' && p[1] >= '1' && p[1] <= '9')
			*p = '?';
	return out;
}

static int prepare(sqlite_db *s, const char *sql, sqlite3_stmt **ret, mb_error *err)
{
	sqlite3_stmt *stmt = NULL;
	char *text;
	size_t i;
	int rc;

	for (i = 0; i < s->n_cache; i++)
		if (strcmp(s->cache[i].sql, sql) == 0) {
			*ret = s->cache[i].stmt;
			return 0;
		}
	text = sql_for_sqlite(sql);
	if (!text)
		return set_error(err, -ENOMEM, "out of memory");
	rc = sqlite3_prepare_v2(s->conn, text, -1, &stmt, NULL);
	free(text);
	if (rc != SQLITE_OK)
		return sqlite_fail(s, rc, err, sql);
	if (s->n_cache == STMT_CACHE) {
		/* Full: the oldest goes (the store has fewer statements than this). */
		sqlite3_finalize(s->cache[0].stmt);
		free(s->cache[0].sql);
		memmove(&s->cache[0], &s->cache[1], sizeof(s->cache[0]) * (STMT_CACHE - 1));
		s->n_cache--;
	}
	s->cache[s->n_cache].sql = strdup(sql);
	if (!s->cache[s->n_cache].sql) {
		sqlite3_finalize(stmt);
		return set_error(err, -ENOMEM, "out of memory");
	}
	s->cache[s->n_cache++].stmt = stmt;
	*ret = stmt;
	return 0;
}

static int bind(sqlite_db *s, sqlite3_stmt *stmt, const char *sql, const char *const *params, size_t n_params,
		mb_error *err)
{
	size_t i;
	int rc;

	if ((size_t) sqlite3_bind_parameter_count(stmt) != n_params)
		return set_error(err, -EINVAL, "SQLite: %zu parameters for %d placeholders (%.60s)", n_params,
				 sqlite3_bind_parameter_count(stmt), sql);
	for (i = 0; i < n_params; i++) {
		rc = params[i] ? sqlite3_bind_text(stmt, (int) i + 1, params[i], -1, SQLITE_STATIC)
			       : sqlite3_bind_null(stmt, (int) i + 1);
		if (rc != SQLITE_OK)
			return sqlite_fail(s, rc, err, sql);
	}
	return 0;
}

/* Every statement is reset after use: the cached one is then ready, and holds no parameter. */
static void statement_end(sqlite3_stmt *stmt)
{
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

/* The cached statement for sql, with params bound. */
static int statement_start(sqlite_db *s, const char *sql, const char *const *params, size_t n_params,
			   sqlite3_stmt **ret, mb_error *err)
{
	int r = prepare(s, sql, ret, err);

	if (r < 0)
		return r;
	r = bind(s, *ret, sql, params, n_params, err);
	if (r < 0)
		statement_end(*ret);
	return r;
}

static int64_t sqlite_exec(db *d, const char *sql, const char *const *params, size_t n_params, mb_error *err)
{
	sqlite_db *s = (sqlite_db *) d;
	sqlite3_stmt *stmt;
	sqlite3_int64 total_before = sqlite3_total_changes64(s->conn);
	int r, rc;

	r = statement_start(s, sql, params, n_params, &stmt, err);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		r = sqlite_fail(s, rc, err, sql);
	statement_end(stmt);
	if (r < 0)
		return r;
	/* sqlite3_changes64() is the last INSERT, UPDATE or DELETE's count, even when this
	 * statement was none (CREATE, BEGIN): it only counts if this one changed something. */
	return sqlite3_total_changes64(s->conn) == total_before ? 0 : (int64_t) sqlite3_changes64(s->conn);
}

static int sqlite_query(db *d, const char *sql, const char *const *params, size_t n_params, db_rows **ret,
			mb_error *err)
{
	sqlite_db *s = (sqlite_db *) d;
	sqlite3_stmt *stmt;
	db_rows *rows = NULL;
	size_t n_cols, cap = 0, n = 0, i, j;
	char **cells = NULL;
	int r, rc;

	r = statement_start(s, sql, params, n_params, &stmt, err);
	if (r < 0)
		return r;
	n_cols = (size_t) sqlite3_column_count(stmt);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			char **nc = realloc(cells, ncap * n_cols * sizeof(char *) + 1);

			if (!nc) {
				r = set_error(err, -ENOMEM, "out of memory");
				goto out;
			}
			cells = nc;
			cap = ncap;
		}
		for (j = 0; j < n_cols; j++) {
			const unsigned char *v = sqlite3_column_text(stmt, (int) j);

			cells[n * n_cols + j] = v ? strdup((const char *) v) : NULL;
			if (v && !cells[n * n_cols + j]) {
				for (i = 0; i < j; i++)
					free(cells[n * n_cols + i]);
				r = set_error(err, -ENOMEM, "out of memory");
				goto out;
			}
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		r = sqlite_fail(s, rc, err, sql);
		goto out;
	}
	rows = db_rows_new(0, n_cols);
	if (!rows) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	rows->n_rows = n;
	rows->cells = cells;
	cells = NULL;
	n = 0;
	*ret = rows;
out:
	for (i = 0; cells && i < n * n_cols; i++)
		free(cells[i]);
	free(cells);
	statement_end(stmt);
	return r;
}

static void sqlite_close(db *d)
{
	sqlite_db *s = (sqlite_db *) d;
	size_t i;

	for (i = 0; i < s->n_cache; i++) {
		sqlite3_finalize(s->cache[i].stmt);
		free(s->cache[i].sql);
	}
	sqlite3_close(s->conn);
	free(s);
}

static const struct db_ops sqlite_ops = {
	.exec = sqlite_exec,
	.query = sqlite_query,
	.close = sqlite_close,
};

int db_sqlite_open(const char *path, db **ret, mb_error *err)
{
	static const char *const setup[] = {
		/* WAL: readers do not block the writer; FULL: a commit is on disk before the
		 * service answers, so an acknowledged verdict survives a crash or power loss. */
		"PRAGMA journal_mode=WAL",
		"PRAGMA synchronous=FULL",
		"PRAGMA foreign_keys=ON",
	};
	sqlite_db *s;
	size_t i;
	int fd, rc;

	/*
	 * Created 0600 here, not by SQLite with the umask's mode: it holds the operators' token
	 * hashes (SQLite gives the -wal and -shm files the database's mode). Only when it does not
	 * exist: closing any descriptor of the file drops every POSIX lock this process holds on it,
	 * the other connections' (the service's other threads) included, and another process (a
	 * token added meanwhile) would then reset the WAL under them: they would go on reading an
	 * old snapshot, a revoked token still good.
	 */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	else if (errno != EEXIST)
		return set_error(err, -errno, "%s: %s", path, strerror(errno));
	s = calloc(1, sizeof(*s));
	if (!s)
		return set_error(err, -ENOMEM, "out of memory");
	s->base.ops = &sqlite_ops;
	s->base.kind = DB_SQLITE;
	rc = sqlite3_open_v2(path, &s->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		int r = set_error(err, -EIO, "%s: %s", path, s->conn ? sqlite3_errmsg(s->conn) : sqlite3_errstr(rc));

		sqlite3_close(s->conn);
		free(s);
		return r;
	}
	/* SQLITE_CONSTRAINT_PRIMARYKEY and _UNIQUE (-EEXIST) are extended codes: without this,
	 * sqlite3_step() says only SQLITE_CONSTRAINT. */
	sqlite3_extended_result_codes(s->conn, 1);
	sqlite3_busy_timeout(s->conn, 5000);
	for (i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
		rc = sqlite3_exec(s->conn, setup[i], NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			int r = sqlite_fail(s, rc, err, setup[i]);

			sqlite_close(&s->base);
			return r;
		}
	}
	*ret = &s->base;
	return 0;
}
