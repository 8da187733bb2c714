/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_STORE_INTERNAL_H
#define MBOOT_VERIFIERD_STORE_INTERNAL_H
/* What the store's files share (store.c: the schema and the machines; store-operator.c: the
 * operators' tokens and the audit trail). */
#include <stdint.h>

#include "verifierd/store.h"

/* Literals in SQL text: SQLite takes no text parameter for LIMIT. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* A number as the text of a parameter. */
void store_i64s(char buf[24], int64_t v);
/* A number the database returned for a BIGINT column (0 for NULL). */
int64_t store_to_i64(const char *s);
char *store_dup_or_null(const char *s);

#endif
