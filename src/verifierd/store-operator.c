/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operators' tables (store.h): tokens and the audit trail. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "verifierd/store-internal.h"

int store_token_add(db *d, const char *sha256, const char *name, int64_t now, mb_error *err)
{
	char nb[24];
	const char *p[] = { sha256, nb, name };
	int64_t r;

	i64s(nb, now);
	r = db_exec(d, "INSERT INTO tokens (sha256, created, name) VALUES ($1, $2, $3)", p, 3, err);
	return r < 0 ? (int) r : 0;
}

/* An unnamed token (made before tokens had names) goes by the start of its hash. */
static void token_name(char name[STORE_TOKEN_NAME_MAX + 1], const char *stored, const char *sha256)
{
	if (stored && *stored)
		snprintf(name, STORE_TOKEN_NAME_MAX + 1, "%s", stored);
	else
		snprintf(name, STORE_TOKEN_NAME_MAX + 1, "token-%.12s", sha256);
}

int store_token_check(db *d, const char *sha256, char name[STORE_TOKEN_NAME_MAX + 1], mb_error *err)
{
	const char *p[] = { sha256 };
	db_rows *rows;
	int r;

	r = db_query(d, "SELECT name FROM tokens WHERE sha256 = $1", p, 1, &rows, err);
	if (r < 0)
		return r;
	r = db_rows_count(rows) ? 1 : 0;
	if (r)
		token_name(name, db_rows_get(rows, 0, 0), sha256);
	db_rows_free(rows);
	return r;
}

int store_token_list(db *d, store_token **ret, size_t *ret_n, mb_error *err)
{
	db_rows *rows;
	store_token *t;
	size_t i, n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	r = db_query(d, "SELECT sha256, name, created FROM tokens ORDER BY created, sha256", NULL, 0, &rows, err);
	if (r < 0)
		return r;
	n = db_rows_count(rows);
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t) {
		db_rows_free(rows);
		return set_error(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		token_name(t[i].name, db_rows_get(rows, i, 1), db_rows_get(rows, i, 0));
		snprintf(t[i].sha256_prefix, sizeof(t[i].sha256_prefix), "%.12s", db_rows_get(rows, i, 0));
		t[i].created = to_i64(db_rows_get(rows, i, 2));
	}
	db_rows_free(rows);
	*ret = t;
	*ret_n = n;
	return 0;
}

int store_token_revoke(db *d, const char *name, mb_error *err)
{
	const char *p[] = { name };
	int64_t r;

	/* A named token by its name; an unnamed one by the name it goes by (token-HASH12). */
	r = db_exec(d, "DELETE FROM tokens WHERE name = $1 OR (name IS NULL AND 'token-' || substr(sha256, 1, 12) = $1)",
		    p, 1, err);
	if (r < 0)
		return (int) r;
	return r == 0 ? set_error(err, -ENOENT, "no operator token is named %s", name) : 0;
}

int store_audit_add(db *d, int64_t at_us, const char *operator_name, const char *action, const char *id,
		    const char *detail, mb_error *err)
{
	char ab[24];
	const char *p[] = { ab, operator_name, action, id, detail };
	int64_t r;

	i64s(ab, at_us);
	r = db_exec(d, "INSERT INTO audit (at_us, operator, action, machine_id, detail) VALUES ($1, $2, $3, $4, $5)", p,
		    5, err);
	return r < 0 ? (int) r : 0;
}

void store_audit_free(store_audit *a, size_t n)
{
	size_t i;

	for (i = 0; a && i < n; i++) {
		free(a[i].operator_name);
		free(a[i].action);
		free(a[i].machine_id);
		free(a[i].detail);
	}
	free(a);
}

int store_audit_get(db *d, const char *id, store_audit **ret, size_t *ret_n, mb_error *err)
{
	const char *p[] = { id };
	db_rows *rows;
	store_audit *a;
	size_t i, n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (id)
		r = db_query(d, "SELECT at_us, operator, action, machine_id, detail FROM audit WHERE machine_id = $1 "
			     "ORDER BY at_us DESC LIMIT " STR(STORE_AUDIT_MAX), p, 1, &rows, err);
	else
		r = db_query(d, "SELECT at_us, operator, action, machine_id, detail FROM audit "
			     "ORDER BY at_us DESC LIMIT " STR(STORE_AUDIT_MAX), NULL, 0, &rows, err);
	if (r < 0)
		return r;
	n = db_rows_count(rows);
	a = calloc(n ? n : 1, sizeof(*a));
	for (i = 0; a && i < n; i++) {
		a[i].at_us = to_i64(db_rows_get(rows, i, 0));
		a[i].operator_name = dup_or_null(db_rows_get(rows, i, 1));
		a[i].action = dup_or_null(db_rows_get(rows, i, 2));
		a[i].machine_id = dup_or_null(db_rows_get(rows, i, 3));
		a[i].detail = dup_or_null(db_rows_get(rows, i, 4));
		if (!a[i].operator_name || !a[i].action) {
			store_audit_free(a, i + 1);
			a = NULL;
		}
	}
	db_rows_free(rows);
	if (!a)
		return set_error(err, -ENOMEM, "out of memory");
	*ret = a;
	*ret_n = n;
	return 0;
}
