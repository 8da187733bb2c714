/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_DB_H
#define MBOOT_VERIFIERD_DB_H
/*
 * One connection to the verifier's database: SQLite (embedded, the default) or PostgreSQL
 * (several verifiers sharing one fleet). The fleet's SQL (store.c) is written once, in the
 * dialect both accept: $1..$N placeholders (the SQLite backend binds them as ?N), TEXT,
 * BIGINT and INTEGER columns, INSERT ... ON CONFLICT, DELETE ... RETURNING.
 *
 * A db is used by one thread at a time (the service opens one per worker thread).
 * Every parameter and every value read back is text; NULL is SQL NULL.
 *
 * Errors (negative errno, message in err):
 *   -ENOTCONN  the database is unreachable or the connection broke; the next call tries to
 *              reconnect (the service answers 503: nothing was stored)
 *   -EEXIST    a unique or primary-key constraint refused the row
 *   -EBUSY     a lock or serialization conflict (SQLITE_BUSY after the busy timeout,
 *              PostgreSQL 40001/40P01): retry the transaction
 *   -EINVAL    a URL neither backend takes
 *   -EIO       any other database error
 */
#include <stddef.h>
#include <stdint.h>

#include <mboot/error.h>

typedef struct db db;
typedef struct db_rows db_rows;

typedef enum db_kind {
	DB_SQLITE,
	DB_POSTGRESQL,
} db_kind;

/*
 * url: "sqlite:PATH" (the file is created, WAL mode, 0600), or a PostgreSQL URL
 * ("postgresql://..." or "postgres://...", libpq's own syntax, e.g.
 * "postgresql:///mboot?host=/run/pg-sock").
 */
int db_open(const char *url, db **ret, mb_error *err);
void db_close(db *d);
db_kind db_get_kind(const db *d);

/* Run one statement; returns the number of rows it changed (>= 0) or a negative errno. */
int64_t db_exec(db *d, const char *sql, const char *const *params, size_t n_params, mb_error *err);

/* Run one statement that returns rows (SELECT, ... RETURNING); *ret is set on success. */
int db_query(db *d, const char *sql, const char *const *params, size_t n_params, db_rows **ret,
	     mb_error *err);
size_t db_rows_count(const db_rows *r);
size_t db_rows_columns(const db_rows *r);
/* Row i, column j as text (NULL for SQL NULL); owned by r. */
const char *db_rows_get(const db_rows *r, size_t i, size_t j);
void db_rows_free(db_rows *r);

/* One statement of db_exec_atomic(). */
typedef struct db_statement {
	const char *sql;
	const char *const *params;
	size_t n_params;
} db_statement;

/*
 * Run the statements as one transaction, outside any other: all of them or none. changed[i]:
 * the rows statement i changed. PostgreSQL gets them in one round trip (libpq's pipeline mode:
 * the statements, then one Sync, which commits them as one implicit transaction); SQLite runs
 * them between BEGIN IMMEDIATE and COMMIT. Errors as db_exec's.
 */
int db_exec_atomic(db *d, const db_statement *stmts, size_t n, int64_t *changed, mb_error *err);

/* Transactions (PostgreSQL: READ COMMITTED; the store's statements are written to be safe
 * there). A failed COMMIT is an error: nothing of the transaction happened. */
int db_begin(db *d, mb_error *err);
int db_commit(db *d, mb_error *err);
void db_rollback(db *d);

#endif
