/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_DB_INTERNAL_H
#define MBOOT_VERIFIERD_DB_INTERNAL_H
/* What a database backend provides to db.c (db-sqlite.c, db-pg.c). */
#include "verifierd/db.h"

struct db_ops {
	int64_t (*exec)(db *d, const char *sql, const char *const *params, size_t n_params, mb_error *err);
	int (*query)(db *d, const char *sql, const char *const *params, size_t n_params, db_rows **ret,
		     mb_error *err);
	/* optional: one round trip for db_exec_atomic() (db.c runs a transaction without it) */
	int (*exec_atomic)(db *d, const db_statement *stmts, size_t n, int64_t *changed, mb_error *err);
	void (*close)(db *d);
};

/* A backend's connection starts with this (the backend allocates the whole of it). */
struct db {
	const struct db_ops *ops;
	db_kind kind;
};

/* Rows as text cells, row-major; built by the backends, read through db.h. */
struct db_rows {
	size_t n_rows, n_cols;
	char **cells; /* n_rows * n_cols, NULL for SQL NULL */
};

db_rows *db_rows_new(size_t n_rows, size_t n_cols);
/* Copy len bytes of value (NULL: SQL NULL) into cell (i, j); -ENOMEM. */
int db_rows_set(db_rows *r, size_t i, size_t j, const char *value, size_t len);

int db_sqlite_open(const char *path, db **ret, mb_error *err);
int db_pg_open(const char *url, db **ret, mb_error *err);

#endif
