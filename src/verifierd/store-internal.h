/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_STORE_INTERNAL_H
#define MBOOT_VERIFIERD_STORE_INTERNAL_H
/* What the store's files share (store.c: the schema and the machines; store-judge.c: the
 * writes of verdicts and stale marks; store-operator.c: the operators' tokens and the audit
 * trail). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifierd/store.h"

/* Literals in SQL text: SQLite takes no text parameter for LIMIT. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* A number as the text of a parameter. */
static inline void i64s(char buf[24], int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
}

/* A number the database returned for a BIGINT column (0 for NULL: an absent value). */
static inline int64_t to_i64(const char *s)
{
	char *end;
	long long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno || *end ? 0 : v;
}

/* A machine's next generation: random, so that a machine forgotten and enrolled again never
 * repeats the generation an evidence still being judged was read under. */
int store_new_generation(char buf[24], mb_error *err);

static inline char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

#endif
