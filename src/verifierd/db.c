/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backend by the URL's scheme, and what both backends share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "verifierd/db-internal.h"

int db_open(const char *url, db **ret, mb_error *err)
{
	*ret = NULL;
	if (strncmp(url, "sqlite:", 7) == 0) {
		if (!url[7])
			return set_error(err, -EINVAL, "database URL %s: no file name after sqlite:", url);
		return db_sqlite_open(url + 7, ret, err);
	}
	if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0)
		return db_pg_open(url, ret, err);
	return set_error(err, -EINVAL, "database URL %s: neither sqlite:PATH nor postgresql://...", url);
}

void db_close(db *d)
{
	if (d)
		d->ops->close(d);
}

db_kind db_get_kind(const db *d)
{
	return d->kind;
}

int64_t db_exec(db *d, const char *sql, const char *const *params, size_t n_params, mb_error *err)
{
	return d->ops->exec(d, sql, params, n_params, err);
}

int db_query(db *d, const char *sql, const char *const *params, size_t n_params, db_rows **ret, mb_error *err)
{
	*ret = NULL;
	return d->ops->query(d, sql, params, n_params, ret, err);
}

int db_exec_atomic(db *d, const db_statement *stmts, size_t n, int64_t *changed, mb_error *err)
{
	size_t i;
	int64_t r;

	if (d->ops->exec_atomic)
		return d->ops->exec_atomic(d, stmts, n, changed, err);
	r = db_begin(d, err);
	if (r < 0)
		return (int) r;
	for (i = 0; r >= 0 && i < n; i++)
		r = changed[i] = db_exec(d, stmts[i].sql, stmts[i].params, stmts[i].n_params, err);
	if (r < 0) {
		db_rollback(d);
		return (int) r;
	}
	return db_commit(d, err);
}

int db_begin(db *d, mb_error *err)
{
	/* SQLite: take the write lock now; a deferred transaction that reads, then writes,
	 * fails at once with SQLITE_BUSY when another connection wrote in between. */
	int64_t r = db_exec(d, d->kind == DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN", NULL, 0, err);

	return r < 0 ? (int) r : 0;
}

int db_commit(db *d, mb_error *err)
{
	int64_t r = db_exec(d, "COMMIT", NULL, 0, err);

	if (r < 0) {
		/* A failed COMMIT may leave the transaction open (SQLite when busy): end it. */
		db_rollback(d);
		return (int) r;
	}
	return 0;
}

void db_rollback(db *d)
{
	(void) db_exec(d, "ROLLBACK", NULL, 0, NULL);
}

db_rows *db_rows_new(size_t n_rows, size_t n_cols)
{
	db_rows *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->n_rows = n_rows;
	r->n_cols = n_cols;
	if (n_rows && n_cols) {
		r->cells = calloc(n_rows * n_cols, sizeof(char *));
		if (!r->cells) {
			free(r);
			return NULL;
		}
	}
	return r;
}

int db_rows_set(db_rows *r, size_t i, size_t j, const char *value, size_t len)
{
	char *c;

	if (!value)
		return 0;
	c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, value, len);
	c[len] = '\0';
	r->cells[i * r->n_cols + j] = c;
	return 0;
}

size_t db_rows_count(const db_rows *r)
{
	return r->n_rows;
}

size_t db_rows_columns(const db_rows *r)
{
	return r->n_cols;
}

const char *db_rows_get(const db_rows *r, size_t i, size_t j)
{
	if (i >= r->n_rows || j >= r->n_cols)
		return NULL;
	return r->cells[i * r->n_cols + j];
}

void db_rows_free(db_rows *r)
{
	size_t k;

	if (!r)
		return;
	for (k = 0; k < r->n_rows * r->n_cols; k++)
		free(r->cells[k]);
	free(r->cells);
	free(r);
}
