/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoded-event tree (include/mboot/events.h): nodes carved from chunks an
 * mb_event_decoded owns and keeps from one event to the next, so decoding an event costs no
 * allocation once the first chunk exists (a JSON library's tree per event cost a malloc per
 * value and a hash table per object, which made `log show --json` slow). The builders the
 * decoders use (decode-internal.h) keep a JSON object's rule: a member added again replaces
 * the first in place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/jsonout.h"
#include "decode-internal.h"

/* Big enough for nearly every event; a larger piece (a long hex blob) gets a chunk of its own. */
#define CHUNK_SIZE (16u << 10)

typedef struct chunk {
	struct chunk *next;
	size_t size, used;
	max_align_t data[];
} chunk;

struct mb_event_decoded {
	chunk *chunks; /* the newest first */
	mb_decoded_node *root;
	bool oom;
};

/* A new chunk with room for n, the newest: out of line, as it is rare. */
static void *arena_grow(mb_event_decoded *d, size_t n)
{
	size_t size = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
	chunk *c = malloc(sizeof(*c) + size);

	if (!c) {
		d->oom = true;
		return NULL;
	}
	c->size = size;
	c->used = n;
	c->next = d->chunks;
	d->chunks = c;
	return c->data;
}

/* Inline: a decoder asks for a few nodes and strings an event, and a call each showed in profiles. */
static inline void *arena_alloc(mb_event_decoded *d, size_t n)
{
	chunk *c = d->chunks;
	void *p;

	if (d->oom)
		return NULL;
	n = (n + _Alignof(max_align_t) - 1) & ~(size_t) (_Alignof(max_align_t) - 1);
	if (!c || c->size - c->used < n)
		return arena_grow(d, n);
	p = (char *) c->data + c->used;
	c->used += n;
	return p;
}

/* Forget every node; keep one standard chunk for the next event. */
static void arena_reset(mb_event_decoded *d)
{
	chunk *c = d->chunks, *keep = NULL;

	while (c) {
		chunk *next = c->next;

		if (!keep && c->size == CHUNK_SIZE) {
			keep = c;
			keep->used = 0;
			keep->next = NULL;
		} else {
			free(c);
		}
		c = next;
	}
	d->chunks = keep;
	d->root = NULL;
	d->oom = false;
}

MB_EXPORT mb_event_decoded *mb_event_decoded_new(void)
{
	return calloc(1, sizeof(mb_event_decoded));
}

MB_EXPORT void mb_event_decoded_free(mb_event_decoded *d)
{
	if (!d)
		return;
	arena_reset(d);
	free(d->chunks);
	free(d);
}

static mb_decoded_node *new_node(mb_event_decoded *d, mb_decoded_type type)
{
	mb_decoded_node *n = arena_alloc(d, sizeof(*n));

	if (n) {
		memset(n, 0, sizeof(*n));
		n->type = type;
		n->owner = d;
	}
	return n;
}

/* The dispatcher's start: an empty root object in d. */
mb_decoded_node *dec_begin(mb_event_decoded *d)
{
	arena_reset(d);
	d->root = new_node(d, MB_DECODED_OBJECT);
	return d->root;
}

/* The dispatcher's end: rc, or -ENOMEM when a node failed to allocate (a tree with holes is no
 * result); on failure the root is NULL. */
int dec_end(mb_event_decoded *d, int rc)
{
	if (rc == 0 && (d->oom || !d->root))
		rc = -ENOMEM;
	if (rc < 0)
		d->root = NULL;
	return rc;
}

static mb_decoded_node *value_node(const mb_decoded_node *near, mb_decoded_type type)
{
	return near ? new_node(near->owner, type) : NULL;
}

mb_decoded_node *dec_new_object(const mb_decoded_node *near)
{
	return near ? new_node(near->owner, MB_DECODED_OBJECT) : NULL;
}

mb_decoded_node *dec_new_array(const mb_decoded_node *near)
{
	return near ? new_node(near->owner, MB_DECODED_ARRAY) : NULL;
}

static void append(mb_decoded_node *list, mb_decoded_node *v)
{
	v->next = NULL;
	if (list->v.list.last)
		((mb_decoded_node *) list->v.list.last)->next = v;
	else
		list->v.list.first = v;
	list->v.list.last = v;
	list->v.list.count++;
}

void dec_add(mb_decoded_node *o, const char *key, mb_decoded_node *v)
{
	mb_decoded_node *m, *prev = NULL;

	if (!o || !v || !key)
		return;
	/* A member added twice is replaced where it stood (objects are small). */
	for (m = (mb_decoded_node *) o->v.list.first; m; prev = m, m = (mb_decoded_node *) m->next) {
		if (m->key != key && (m->key[0] != key[0] || strcmp(m->key, key) != 0))
			continue;
		v->key = m->key;
		v->next = m->next;
		if (prev)
			prev->next = v;
		else
			o->v.list.first = v;
		if (o->v.list.last == m)
			o->v.list.last = v;
		return;
	}
	v->key = key;
	append(o, v);
}

void dec_append(mb_decoded_node *a, mb_decoded_node *v)
{
	if (a && v)
		append(a, v);
}

const char *dec_key_copy(const mb_decoded_node *near, const char *key)
{
	size_t n = strlen(key);
	char *k = arena_alloc(near->owner, n + 1);

	if (k)
		memcpy(k, key, n + 1);
	return k;
}

/* A STRING node holding a copy of s[0..n), which must be valid UTF-8 already. */
static mb_decoded_node *string_node(mb_event_decoded *d, const char *s, size_t n)
{
	mb_decoded_node *v = new_node(d, MB_DECODED_STRING);
	char *copy = arena_alloc(d, n + 1);

	if (!v || !copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = 0;
	v->v.string.text = copy;
	v->v.string.len = n;
	return v;
}

mb_decoded_node *dec_new_strn(const mb_decoded_node *near, const char *s, size_t n)
{
	mb_decoded_node *v;

	if (!near)
		return NULL;
	if (n > MB_DEC_MAX_STRING)
		n = MB_DEC_MAX_STRING;
	v = string_node(near->owner, s, n);
	if (v && !utf8_valid((const uint8_t *) s, n))
		utf8_sanitize((char *) v->v.string.text, n);
	return v;
}

void dec_add_strn(mb_decoded_node *o, const char *key, const char *s, size_t n)
{
	dec_add(o, key, dec_new_strn(o, s, n));
}

void dec_add_str(mb_decoded_node *o, const char *key, const char *s)
{
	dec_add_strn(o, key, s ? s : "", s ? strlen(s) : 0);
}

void dec_add_u64(mb_decoded_node *o, const char *key, uint64_t v)
{
	mb_decoded_node *n = value_node(o, MB_DECODED_UINT);

	if (n) {
		n->v.uint = v;
		dec_add(o, key, n);
	}
}

void dec_add_addr(mb_decoded_node *o, const char *key, uint64_t v)
{
	mb_decoded_node *n = value_node(o, MB_DECODED_ADDRESS);

	if (n) {
		n->v.uint = v;
		dec_add(o, key, n);
	}
}

void dec_add_bool(mb_decoded_node *o, const char *key, bool v)
{
	mb_decoded_node *n = value_node(o, MB_DECODED_BOOL);

	if (n) {
		n->v.boolean = v;
		dec_add(o, key, n);
	}
}

static void add_bytes(mb_decoded_node *o, const char *key, mb_decoded_type type, const uint8_t *p, size_t n)
{
	mb_decoded_node *v = value_node(o, type);
	uint8_t *copy = o ? arena_alloc(o->owner, n ? n : 1) : NULL;

	if (!v || !copy)
		return;
	memcpy(copy, p, n);
	v->v.bytes.data = copy;
	v->v.bytes.len = n;
	dec_add(o, key, v);
}

void dec_add_hex(mb_decoded_node *o, const char *key, const uint8_t *p, size_t n)
{
	if (n > MB_DEC_MAX_HEX_BYTES) {
		n = MB_DEC_MAX_HEX_BYTES;
		dec_add_bool(o, "hex_truncated", true);
	}
	add_bytes(o, key, MB_DECODED_BYTES, p, n);
}

void dec_add_guid(mb_decoded_node *o, const char *key, const uint8_t g[16])
{
	add_bytes(o, key, MB_DECODED_GUID, g, 16);
}

void dec_set_kind(mb_decoded_node *o, const char *kind)
{
	dec_add_str(o, "kind", kind);
}

/*
 * vsnprintf(buf, size, fmt, ap), the same bytes, when fmt's conversions are all %s, %.Ns, %.*s
 * or %%: an event's description is mostly strings pasted together, and glibc's vsnprintf (a
 * FILE set up per call) cost more than decoding the event. Returns the length written, or -1 at
 * any other conversion (the caller then formats with vsnprintf, from a copy of ap taken before).
 */
static int put_strings(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t n = 0;

	while (*fmt) {
		const char *s;
		size_t len, max = SIZE_MAX;

		if (*fmt != '%') {
			s = fmt;
			len = strcspn(fmt, "%");
			fmt += len;
		} else if (fmt[1] == '%') {
			s = "%";
			len = 1;
			fmt += 2;
		} else {
			fmt++;
			if (*fmt == '.') {
				fmt++;
				if (*fmt == '*') {
					int prec = va_arg(ap, int);

					if (prec >= 0) /* a negative precision is taken as none */
						max = (size_t) prec;
					fmt++;
				} else {
					for (max = 0; *fmt >= '0' && *fmt <= '9'; fmt++)
						max = 10 * max + (size_t) (*fmt - '0');
				}
			}
			if (*fmt != 's')
				return -1;
			fmt++;
			s = va_arg(ap, const char *);
			if (!s) /* as glibc prints it */
				s = max >= 6 ? "(null)" : "";
			len = strnlen(s, max);
		}
		if (len > size - 1 - n)
			len = size - 1 - n;
		memcpy(buf + n, s, len);
		n += len;
	}
	buf[n] = '\0';
	return (int) n;
}

void dec_set_desc(mb_decoded_node *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap, again;
	size_t n;
	int len;

	if (!strchr(fmt, '%')) {
		/* A fixed text (a literal of ours: one line, ASCII): no formatting to pay for. */
		if (o)
			dec_add(o, "description", string_node(o->owner, fmt, strlen(fmt)));
		return;
	}
	va_start(ap, fmt);
	va_copy(again, ap);
	len = put_strings(buf, sizeof(buf), fmt, ap);
	if (len >= 0) {
		n = (size_t) len;
	} else {
		buf[0] = '\0';
		(void) vsnprintf(buf, sizeof(buf), fmt, again);
		n = strlen(buf); /* up to a NUL a %c may have put in */
	}
	va_end(again);
	va_end(ap);
	/* One line for people: no control characters from the input. */
	text_one_line(buf, n);
	if (o)
		dec_add(o, "description", string_node(o->owner, buf, n));
}

MB_EXPORT const mb_decoded_node *mb_event_decoded_root(const mb_event_decoded *d)
{
	return d ? d->root : NULL;
}

MB_EXPORT const mb_decoded_node *mb_decoded_get(const mb_decoded_node *obj, const char *key)
{
	const mb_decoded_node *m;

	if (!obj || obj->type != MB_DECODED_OBJECT || !key)
		return NULL;
	for (m = obj->v.list.first; m; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

MB_EXPORT const char *mb_decoded_string(const mb_decoded_node *n)
{
	return n && n->type == MB_DECODED_STRING ? n->v.string.text : NULL;
}

MB_EXPORT const char *mb_event_decoded_kind(const mb_event_decoded *d)
{
	const char *s = mb_decoded_string(mb_decoded_get(mb_event_decoded_root(d), "kind"));

	return s ? s : "";
}

MB_EXPORT const char *mb_event_decoded_description(const mb_event_decoded *d)
{
	const char *s = mb_decoded_string(mb_decoded_get(mb_event_decoded_root(d), "description"));

	return s ? s : "";
}

MB_EXPORT char *mb_event_decoded_json(const mb_event_decoded *d)
{
	jsonout b = { 0 };

	if (!d || !d->root)
		return NULL;
	jsonout_decoded(&b, d->root);
	jsonout_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

MB_EXPORT char *mb_event_description(const mb_event_log *log, const mb_event *ev)
{
	mb_event_decoded *d = mb_event_decoded_new();
	char *s = NULL;

	if (d && mb_event_decode(log, ev, d) == 0)
		s = strdup(mb_event_decoded_description(d));
	mb_event_decoded_free(d);
	return s;
}
