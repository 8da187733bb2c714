/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot's one JSON writer (see jsonout.h and json.h): a growable buffer written piece by
 * piece, the printer of trees on top of it, and json_write().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <mboot/events.h>
#include <mboot/replay.h>
#include "shared/hex.h"
#include "shared/jsonout.h"
#include "shared/text-escape.h"

char *jsonout_grow(jsonout *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->cap - b->n < n) {
		size_t ncap = b->cap ? b->cap : 4096;
		char *np;

		while (ncap - b->n < n)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (!np) {
			b->oom = true;
			return NULL;
		}
		b->p = np;
		b->cap = ncap;
	}
	return b->p + b->n;
}

void jsonout_raw(jsonout *b, const char *s)
{
	jsonout_put(b, s, strlen(s));
}

/* "00", "01", ... "99": two decimal digits per division. */
static const char digit_pairs[201] =
	"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
	"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* Written where it goes, from the last digit back: no copy of a computed size. */
char *jsonout_at_u64(char *d, uint64_t v)
{
	static const uint64_t tens[19] = {
		10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
		10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
		1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
		10000000000000000000u,
	};
	size_t len = 1, i; /* UINT64_MAX has 20 digits */

	while (len < 20 && v >= tens[len - 1])
		len++;
	i = len;
	while (v >= 100) {
		i -= 2;
		memcpy(d + i, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(d, digit_pairs + 2 * v, 2);
	else
		d[0] = (char) ('0' + v);
	return d + len;
}

void jsonout_u64(jsonout *b, uint64_t v)
{
	char *d = jsonout_room(b, JSONOUT_U64_ROOM);

	if (d)
		b->n = (size_t) (jsonout_at_u64(d, v) - b->p);
}

/* Both hex digits of every byte value, "000102...ff": one lookup per byte. */
static const char hex_pairs[512] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

char *jsonout_at_hex(char *d, const uint8_t *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	/* 16 bytes a step: split into nibbles, interleave high and low, add '0' or 'a' - 10. */
	for (; i + 16 <= n; i += 16) {
		const __m128i low4 = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9);
		const __m128i zero = _mm_set1_epi8('0'), letters = _mm_set1_epi8('a' - '0' - 10);
		__m128i x = _mm_loadu_si128((const __m128i *) (const void *) (p + i));
		__m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), low4), lo = _mm_and_si128(x, low4);
		__m128i first = _mm_unpacklo_epi8(hi, lo), second = _mm_unpackhi_epi8(hi, lo);

		first = _mm_add_epi8(_mm_add_epi8(first, zero), _mm_and_si128(_mm_cmpgt_epi8(first, nine), letters));
		second = _mm_add_epi8(_mm_add_epi8(second, zero), _mm_and_si128(_mm_cmpgt_epi8(second, nine), letters));
		_mm_storeu_si128((__m128i *) (void *) (d + 2 * i), first);
		_mm_storeu_si128((__m128i *) (void *) (d + 2 * i + 16), second);
	}
#endif
	/* Four bytes per step through a register: byte stores through d may alias p. */
	for (; i + 4 <= n; i += 4) {
		uint16_t w[4];

		memcpy(&w[0], hex_pairs + 2 * p[i], 2);
		memcpy(&w[1], hex_pairs + 2 * p[i + 1], 2);
		memcpy(&w[2], hex_pairs + 2 * p[i + 2], 2);
		memcpy(&w[3], hex_pairs + 2 * p[i + 3], 2);
		memcpy(d + 2 * i, w, 8);
	}
	for (; i < n; i++)
		memcpy(d + 2 * i, hex_pairs + 2 * p[i], 2);
	return d + 2 * n;
}

void jsonout_hex(jsonout *b, const uint8_t *p, size_t n)
{
	char *d = jsonout_room(b, 2 * n);

	if (d)
		b->n = (size_t) (jsonout_at_hex(d, p, n) - b->p);
}

int jsonout_flush(jsonout *b, FILE *f)
{
	if (b->n && fwrite(b->p, 1, b->n, f) != b->n)
		return -EIO;
	b->n = 0;
	return 0;
}

const char jsonout_blanks[JSONOUT_LINE_MAX + 1] = "\n                              ";

void jsonout_line_at(char *d, size_t depth)
{
	d[0] = '\n';
	memset(d + 1, ' ', 2 * depth);
}

/* Bytes escaped: controls, '"' and '\\' (the rest, '/' and bytes over 0x7e too, as they are). */
static inline bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/* s[i..n) from its first byte to escape, escaped; the quotes are the caller's. */
static void escaped_tail(jsonout *b, const char *s, size_t i, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t start = i;

	for (; i < n; i++) {
		unsigned char c = (unsigned char) s[i];
		char esc[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t elen = 2;

		if (!needs_escape(c))
			continue;
		switch (c) {
		case '\b': esc[1] = 'b'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '\f': esc[1] = 'f'; break;
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		default:
			esc[1] = 'u';
			esc[4] = digits[c >> 4];
			esc[5] = digits[c & 15];
			elen = 6;
		}
		jsonout_put(b, s + start, i - start);
		jsonout_put(b, esc, elen);
		start = i + 1;
	}
	jsonout_put(b, s + start, n - start);
}

/*
 * Copied as it is scanned, 16 bytes a step (room for 16 more is taken so that the last step
 * may store a whole block); at the first byte to escape, the rest goes through escaped_tail.
 */
void jsonout_string(jsonout *b, const char *s, size_t n)
{
	char *d = jsonout_room(b, n + 2 + 16);
	size_t i = 0;

	if (!d)
		return;
	*d++ = '"';
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
		const __m128i ctl = _mm_set1_epi8(0x1f);
		__m128i x = _mm_loadu_si128((const __m128i *) (const void *) (s + i));
		/* unsigned x <= 0x1f: max(x, 0x1f) == 0x1f */
		__m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
					   _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));

		_mm_storeu_si128((__m128i *) (void *) (d + i), x);
		if (_mm_movemask_epi8(bad))
			break;
	}
#endif
	for (; i < n && !needs_escape((unsigned char) s[i]); i++)
		d[i] = s[i];
	b->n += 1 + i;
	if (i < n)
		escaped_tail(b, s, i, n);
	jsonout_lit(b, "\"");
}

/*
 * A tree in the writer's layout: members in insertion order, strings escaped as
 * jsonout_string does. A real (only benchmarks write them) in the fewest digits that read back
 * the same, with ".0" when it would look like an integer.
 */
void jsonout_json(jsonout *b, const json_t *o)
{
	char num[32];
	size_t i, n;
	json_int_t v;

	if (!o) {
		jsonout_lit(b, "null");
		return;
	}
	switch (json_typeof(o)) {
	case JSON_NULL:
		jsonout_lit(b, "null");
		return;
	case JSON_TRUE:
		jsonout_lit(b, "true");
		return;
	case JSON_FALSE:
		jsonout_lit(b, "false");
		return;
	case JSON_INTEGER:
		v = json_integer_value(o);
		if (v < 0) {
			jsonout_lit(b, "-");
			jsonout_u64(b, (uint64_t) -(v + 1) + 1);
		} else {
			jsonout_u64(b, (uint64_t) v);
		}
		return;
	case JSON_REAL:
		for (int prec = 1; prec <= 17; prec++) {
			char *end;

			snprintf(num, sizeof(num), "%.*g", prec, json_real_value(o));
			if (strtod(num, &end) == json_real_value(o) && *end == '\0')
				break;
		}
		jsonout_raw(b, num);
		if (!strpbrk(num, ".e"))
			jsonout_lit(b, ".0");
		return;
	case JSON_STRING:
		jsonout_string(b, json_string_value(o), json_string_length(o));
		return;
	case JSON_OBJECT:
		jsonout_open(b, '{');
		json_object_each(o, key, val) {
			jsonout_next(b);
			jsonout_string(b, key, strlen(key));
			jsonout_colon(b);
			jsonout_json(b, val);
		}
		jsonout_close(b, '}');
		return;
	case JSON_ARRAY:
		jsonout_open(b, '[');
		n = json_array_size(o);
		for (i = 0; i < n; i++) {
			jsonout_next(b);
			jsonout_json(b, json_array_get(o, i));
		}
		jsonout_close(b, ']');
		return;
	}
}

void jsonout_pcr_banks(jsonout *o, const mb_pcr_values *v)
{
	jsonout_open(o, '{');
	for (size_t b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		const mb_digest_info *info = mb_digest_by_alg(alg);
		char name[8];

		if (!info)
			continue; /* no size to write its values with; mb_pcr_values holds none such */
		jsonout_next(o);
		jsonout_lit(o, "\"");
		jsonout_raw(o, mb_digest_alg_name(alg, name));
		jsonout_lit(o, "\"");
		jsonout_colon(o);
		jsonout_open(o, '{');
		for (uint32_t p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *value = mb_pcr_values_get(v, alg, p);

			if (!value)
				continue;
			jsonout_next(o);
			jsonout_lit(o, "\"");
			jsonout_u64(o, p);
			jsonout_lit(o, "\"");
			jsonout_colon(o);
			jsonout_lit(o, "\"");
			jsonout_hex(o, value, info->size);
			jsonout_lit(o, "\"");
		}
		jsonout_close(o, '}');
	}
	jsonout_close(o, '}');
}

json_t *json_textn(const char *s, size_t n)
{
	json_t *v;
	char *safe;

	if (!s)
		return NULL;
	v = json_stringn(s, n);
	if (v)
		return v;
	safe = text_escape(s, n);
	if (!safe)
		json_build_note_failure();
	v = safe ? json_string(safe) : NULL;
	free(safe);
	return v;
}

json_t *json_hex(const uint8_t *p, size_t n)
{
	char *s = hex_dup(p, n);
	json_t *v;

	if (!s) {
		json_build_note_failure();
		return NULL;
	}
	v = json_string(s);
	free(s);
	return v;
}

json_t *json_text(const char *s)
{
	return s ? json_textn(s, strlen(s)) : NULL;
}

char *json_write(const json_t *v, json_layout layout)
{
	jsonout b = { .pretty = layout == JSON_LAYOUT_PRETTY };

	if (!v)
		return NULL;
	jsonout_json(&b, v);
	jsonout_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static _Thread_local unsigned long json_failed_allocs;

/*
 * The allocator installed before ours, when there was one: another copy of this code (the tool
 * and the service link these helpers and libmboot.so, each with its own count) or the
 * program's. Each wrapper calls the one before it, so a failure is counted by every copy.
 * NULL: jansson's default, malloc and free.
 */
static json_malloc_t json_next_malloc;
static json_free_t json_next_free;

static void *json_counted_malloc(size_t n)
{
	void *p = json_next_malloc ? json_next_malloc(n) : malloc(n);

	if (!p)
		json_failed_allocs++;
	return p;
}

static void json_counted_free(void *p)
{
	if (json_next_free)
		json_next_free(p);
	else
		free(p);
}

/* Before any jansson call of mboot's: a constructor of the library, the tool and the service. */
__attribute__((constructor)) static void json_counted_install(void)
{
	json_malloc_t m;
	json_free_t f;

	json_get_alloc_funcs(&m, &f);
	if (f != free) {
		json_next_malloc = m;
		json_next_free = f;
	}
	json_set_alloc_funcs(json_counted_malloc, json_counted_free);
}

/* The LUKS token plugin's libmboot.so may be unloaded while jansson stays: hand back the allocator. */
__attribute__((destructor)) static void json_counted_remove(void)
{
	json_malloc_t m;
	json_free_t f;

	json_get_alloc_funcs(&m, &f);
	if (m == json_counted_malloc)
		json_set_alloc_funcs(json_next_malloc ? json_next_malloc : malloc, json_next_free ? json_next_free : free);
}

void json_build_note_failure(void)
{
	json_failed_allocs++;
}

json_build_mark json_build_begin(void)
{
	return (json_build_mark){ .failed = json_failed_allocs };
}

bool json_build_failed(json_build_mark mark)
{
	return json_failed_allocs != mark.failed;
}

char *json_write_built(const json_t *v, json_layout layout, json_build_mark mark)
{
	return json_build_failed(mark) ? NULL : json_write(v, layout);
}

/* "0x" and lowercase hex without leading zeros, as "0x%" PRIx64 prints it. */
static void address(jsonout *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	jsonout_lit(b, "\"");
	jsonout_put(b, tmp + i, sizeof(tmp) - i);
	jsonout_lit(b, "\"");
}

/*
 * A member's key: a decoder's name, short and plain, copied while it is scanned (no strlen
 * first, no escaping pass); anything else the general way.
 */
static void decoded_key(jsonout *b, const char *k)
{
	enum { SHORT = 62 };
	char *d = jsonout_room(b, SHORT + 2);
	size_t i;

	if (!d)
		return;
	*d++ = '"';
	for (i = 0; i < SHORT && k[i] && !needs_escape((unsigned char) k[i]); i++)
		d[i] = k[i];
	if (k[i]) {
		jsonout_string(b, k, strlen(k)); /* nothing was taken from the room yet */
		return;
	}
	d[i] = '"';
	b->n += i + 2;
}

void jsonout_decoded(jsonout *b, const mb_decoded_node *n)
{
	const mb_decoded_node *m;
	char guid[MB_GUID_STR];

	if (!n) {
		jsonout_lit(b, "null");
		return;
	}
	switch (n->type) {
	case MB_DECODED_OBJECT:
	case MB_DECODED_ARRAY:
		jsonout_open(b, n->type == MB_DECODED_OBJECT ? '{' : '[');
		for (m = n->v.list.first; m; m = m->next) {
			jsonout_next(b);
			if (n->type == MB_DECODED_OBJECT) {
				decoded_key(b, m->key);
				jsonout_colon(b);
			}
			jsonout_decoded(b, m);
		}
		jsonout_close(b, n->type == MB_DECODED_OBJECT ? '}' : ']');
		return;
	case MB_DECODED_STRING:
		jsonout_string(b, n->v.string.text, n->v.string.len);
		return;
	case MB_DECODED_UINT:
		jsonout_u64(b, n->v.uint);
		return;
	case MB_DECODED_BOOL:
		if (n->v.boolean)
			jsonout_lit(b, "true");
		else
			jsonout_lit(b, "false");
		return;
	case MB_DECODED_BYTES:
		jsonout_lit(b, "\"");
		jsonout_hex(b, n->v.bytes.data, n->v.bytes.len);
		jsonout_lit(b, "\"");
		return;
	case MB_DECODED_GUID:
		jsonout_lit(b, "\"");
		jsonout_put(b, guid_format(n->v.bytes.data, guid), MB_GUID_STR - 1);
		jsonout_lit(b, "\"");
		return;
	case MB_DECODED_ADDRESS:
		address(b, n->v.uint);
		return;
	}
	jsonout_lit(b, "null");
}
