/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSON_H
#define MB_SHARED_JSON_H
/*
 * mboot's one JSON module. Trees are jansson's (json_t); text comes in through
 * untrusted_json_parse() (json-read.c: jansson's parser under mboot's rules) and goes out
 * through json_write() (jsonout.c, on the streaming writer of jsonout.h), so that every
 * document mboot prints has one layout. The typed fields of mboot's own documents are
 * json-doc.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <mboot/error.h>

/*
 * Parsing. Only RFC 8259: no comments, trailing commas, single quotes, NaN or "1."; strings
 * of well-formed UTF-8 without unescaped control characters, lone surrogates or \u0000 (which
 * would cut a C string short); nothing but white space after the value; no NUL byte; at most
 * max_depth nested arrays and objects; no key twice in one object (a reader keeping the last of
 * two would let a lax rule hide behind a strict one). Integers fit int64_t.
 *
 * Errors are -EBADMSG (-E2BIG over INT_MAX bytes, -EINVAL for a max_depth over
 * JSON_READ_MAX_DEPTH, -ENOMEM) with a message "line L, column C: what", lines and columns
 * (characters) counted from 1.
 */
#define JSON_READ_MAX_DEPTH 64

/* One JSON value of any type in text[0, size); *ret is the caller's to json_decref(). */
int untrusted_json_parse(const char *text, size_t size, unsigned max_depth, json_t **ret, mb_error *err);
/* The same for the value in doc[start, start + len), one piece of a larger document:
 * lines and columns in messages are those of doc. */
int untrusted_json_parse_in(const char *doc, size_t doc_size, size_t start, size_t len, unsigned max_depth,
			    json_t **ret, mb_error *err);
/* A NUL-terminated text mboot wrote itself (a verdict or a record kept in the fleet's
 * database), read by the same rules at full depth; NULL when it is not JSON. */
json_t *json_from_text(const char *text);

/* Writing: compact (one line, no blanks) or pretty (one member or element a line, two spaces a
 * level, "key": value, as `jq .` prints it). */
typedef enum json_layout {
	JSON_LAYOUT_COMPACT,
	JSON_LAYOUT_PRETTY,
} json_layout;

/* v as text, without a final newline (malloc'd; NULL on ENOMEM or for a NULL v). */
char *json_write(const json_t *v, json_layout layout);

/*
 * Building a tree. json_object_set_new() and json_array_append_new() that run out of memory
 * (or are handed the NULL of a failed json_string()) leave the member out, and the tree looks
 * whole: a verdict without its "violations" would read as none. So jansson allocates through
 * mboot (json_set_alloc_funcs(), installed when mboot's code is loaded, in front of whatever
 * allocator was installed before, and removed when it is unloaded), and every allocation that
 * fails is counted per thread. A program that installs its own allocator after mboot's is
 * loaded turns the count off: then a lost member goes unnoticed, as in plain jansson. A writer takes json_build_mark() before it builds and writes with
 * json_write_built(), which fails when any allocation of the thread failed since the mark.
 */
typedef struct json_build_mark {
	unsigned long failed;
} json_build_mark;

json_build_mark json_build_begin(void);
/* Whether an allocation of this thread failed since mark. */
bool json_build_failed(json_build_mark mark);
/* For a value builder whose own allocation failed (a base64 or an escaped copy): counted as jansson's. */
void json_build_note_failure(void);
/* json_write(v), or NULL when the tree may have lost a member since mark. */
char *json_write_built(const json_t *v, json_layout layout, json_build_mark mark);

/*
 * A string from what mboot holds (names, hex, a log's text): jansson's string when it is UTF-8;
 * when it is not (a hostile log's text), its copy with every control character and stray byte
 * as an escape (shared/text-escape.h), so that whatever mboot writes its own reader takes back.
 * NULL for a NULL s or on ENOMEM.
 */
json_t *json_text(const char *s);
json_t *json_textn(const char *s, size_t n);
/* Lower-case hex of p[0..n) as a string; NULL on ENOMEM (noted as the build's failure). */
json_t *json_hex(const uint8_t *p, size_t n);

/* A missing member or a JSON null. */
static inline bool json_is_null_or_absent(const json_t *v)
{
	return !v || json_is_null(v);
}

/* Each member of object o in order, key and value declared by the loop (scoped to it). */
#define json_object_each(o, key, value)                                                              \
	for (const char *key = json_object_iter_key(json_object_iter((json_t *) (o))); key; key = NULL)            \
		for (json_t *value; key && (value = json_object_iter_value(json_object_key_to_iter(key))); \
		     key = json_object_iter_key(json_object_iter_next((json_t *) (o), json_object_key_to_iter(key))))

#endif
