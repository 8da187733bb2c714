/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA runtime measurement list, binary and ASCII (docs/ima.md; the layout is in
 * mboot/ima.h). Binary bytes are read only through the bounds-checked reader; an ASCII line's
 * fields are rebuilt into the binary form the kernel hashed (d-ng: "algo:" NUL digest, n-ng:
 * name NUL), so both are checked the same way (ima-fields.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/ima.h>
#include "lib/ima/ima-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/reader.h"

#define MAX_ENTRIES (MB_IMA_MAX_SIZE / 16)

uint16_t ima_alg_of_size(size_t size)
{
	switch (size) {
	case 20: return MB_ALG_SHA1;
	case 32: return MB_ALG_SHA256;
	case 48: return MB_ALG_SHA384;
	case 64: return MB_ALG_SHA512;
	default: return 0;
	}
}

#define CHUNK_SIZE (256u << 10)

uint8_t *ima_entry_mem(mb_ima_log *log, ima_entry_store *s, size_t n)
{
	/* the names live here, not in the store: the store's array moves as it grows */
	size_t want = (n + 2 * 33 + 15) & ~(size_t) 15;
	ima_chunk *c = log->chunks;
	uint8_t *mem;

	if (!c || c->size - c->used < want) {
		size_t size = want > CHUNK_SIZE ? want : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = log->chunks;
		c->size = size;
		c->used = 0;
		log->chunks = c;
	}
	mem = c->data + c->used;
	c->used += want;
	memset(mem, 0, want);
	s->algo = (char *) mem + n;
	s->modsig_algo = (char *) mem + n + 33;
	return mem;
}

static int add_entry(mb_ima_log *log, mb_error *err)
{
	if (log->n == log->cap) {
		/* the first size from the input's (parse_binary, parse_ascii): growing an array of
		 * thousands of entries by copies, on fresh pages, was a third of judging a list */
		size_t cap = log->cap ? log->cap * 2 : log->hint > 64 ? log->hint : 64;
		mb_ima_entry *e;
		ima_entry_store *s;

		if (log->n >= MAX_ENTRIES)
			return set_error(err, -E2BIG, "more than %zu entries", (size_t) MAX_ENTRIES);
		if (cap > MAX_ENTRIES)
			cap = MAX_ENTRIES;
		e = realloc(log->entries, cap * sizeof(*e));
		if (!e)
			return set_error(err, -ENOMEM, "out of memory");
		log->entries = e;
		s = realloc(log->store, cap * sizeof(*s));
		if (!s)
			return set_error(err, -ENOMEM, "out of memory");
		log->store = s;
		log->cap = cap;
	}
	memset(&log->entries[log->n], 0, sizeof(log->entries[0]));
	memset(&log->store[log->n], 0, sizeof(log->store[0]));
	log->n++;
	return 0;
}

/* The first of 20, 32, 48, 64 after which a template name of 1-255 printable bytes follows. */
static size_t detect_hash_size(const uint8_t *p, size_t size)
{
	static const size_t sizes[] = { 20, 32, 48, 64 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		byte_reader r;
		uint32_t len;
		const uint8_t *name;
		bool printable = true;

		reader_init(&r, p, size, 0);
		if (read_skip(&r, 4 + sizes[k]) < 0 || read_u32le(&r, &len) < 0 || len == 0 ||
		    len > MB_IMA_MAX_TEMPLATE_NAME || read_bytes(&r, len, &name) < 0)
			continue;
		for (uint32_t j = 0; j < len; j++)
			printable = printable && name[j] >= 0x21 && name[j] < 0x7f;
		if (printable)
			return sizes[k];
	}
	return 0;
}

static int bad_at(mb_error *err, int code, uint64_t at, size_t entry, const char *what)
{
	return set_error_at(err, code, at, "entry %zu: %s", entry, what);
}

/* One binary entry at r. */
static int parse_binary_entry(mb_ima_log *log, byte_reader *r, size_t hs, uint16_t alg, mb_error *err)
{
	size_t idx = log->n;
	uint64_t at = reader_offset(r);
	uint32_t pcr, name_len, len;
	const uint8_t *hash, *name, *data;
	mb_ima_entry *e;
	ima_entry_store *s;
	size_t fields_mem;
	int rc;

	if (read_u32le(r, &pcr) < 0 || read_bytes(r, hs, &hash) < 0)
		return bad_at(err, -EBADMSG, at, idx, "truncated");
	if (pcr > MB_IMA_MAX_PCR)
		return set_error_at(err, -EBADMSG, at, "entry %zu: PCR %u is over 23", idx, pcr);
	at = reader_offset(r);
	if (read_u32le(r, &name_len) < 0)
		return bad_at(err, -EBADMSG, at, idx, "truncated template name length");
	if (name_len == 0 || name_len > MB_IMA_MAX_TEMPLATE_NAME)
		return set_error_at(err, name_len ? -E2BIG : -EBADMSG, at,
				    "entry %zu: template name length %u (1-%u)", idx, name_len,
				    MB_IMA_MAX_TEMPLATE_NAME);
	if (read_bytes(r, name_len, &name) < 0)
		return set_error_at(err, -EBADMSG, at, "entry %zu: template name length %u past the end", idx,
				    name_len);
	if (memchr(name, 0, name_len))
		return bad_at(err, -EBADMSG, at + 4, idx, "NUL in the template name");

	rc = add_entry(log, err);
	if (rc < 0)
		return rc;
	e = &log->entries[idx];
	s = &log->store[idx];
	e->offset = reader_offset(r) - name_len - 8 - hs;
	e->pcr = pcr;
	e->template_hash_size = (uint16_t) hs;
	e->template_hash_alg = alg ? alg : ima_alg_of_size(hs);
	memcpy(e->template_hash, hash, hs);

	at = reader_offset(r);
	if (name_len == 3 && memcmp(name, "ima", 3) == 0) {
		const uint8_t *digest, *fname;
		uint32_t flen;
		mb_ima_field *f;
		uint8_t *hashed;

		if (read_bytes(r, 20, &digest) < 0)
			return bad_at(err, -EBADMSG, at, idx, "truncated digest");
		at = reader_offset(r);
		if (read_u32le(r, &flen) < 0)
			return bad_at(err, -EBADMSG, at, idx, "truncated name length");
		if (flen > MB_IMA_MAX_FILE_NAME)
			return set_error_at(err, -E2BIG, at, "entry %zu: file name length %u over %u", idx, flen,
					    MB_IMA_MAX_FILE_NAME);
		if (read_bytes(r, flen, &fname) < 0)
			return set_error_at(err, -EBADMSG, at, "entry %zu: file name length %u past the end", idx,
					    flen);
		if (memchr(fname, 0, flen))
			return bad_at(err, -EBADMSG, at + 4, idx, "NUL in the file name");
		/* fields, name, path (NUL-ended), hashed: digest ‖ name padded to 256 */
		s->mem = ima_entry_mem(log, s, 2 * sizeof(mb_ima_field) + 4 + (flen + 1) + 20 + MB_IMA_MAX_FILE_NAME + 1);
		if (!s->mem)
			return set_error(err, -ENOMEM, "out of memory");
		f = (mb_ima_field *) s->mem;
		f[0] = (mb_ima_field) { digest, 20 };
		f[1] = (mb_ima_field) { fname, flen };
		e->fields = f;
		e->n_fields = 2;
		e->template_name = memcpy(s->mem + 2 * sizeof(*f), "ima", 4);
		e->path = memcpy(s->mem + 2 * sizeof(*f) + 4, fname, flen);
		hashed = s->mem + 2 * sizeof(*f) + 4 + flen + 1;
		memcpy(hashed, digest, 20);
		memcpy(hashed + 20, fname, flen);
		s->hashed = hashed;
		s->hashed_size = 20 + MB_IMA_MAX_FILE_NAME + 1;
		return ima_entry_finish(log, idx, err);
	}

	if (read_u32le(r, &len) < 0)
		return bad_at(err, -EBADMSG, at, idx, "truncated template data length");
	if (len > MB_IMA_MAX_TEMPLATE_DATA)
		return set_error_at(err, -E2BIG, at, "entry %zu: template data length %u over %u", idx, len,
				    MB_IMA_MAX_TEMPLATE_DATA);
	if (read_bytes(r, len, &data) < 0)
		return set_error_at(err, -EBADMSG, at, "entry %zu: template data length %u past the end", idx, len);
	{
		/* the fields counted first: memory for them alone (two or three, rarely more) */
		byte_reader fr;
		mb_ima_field *f;
		size_t n = 0;

		reader_init(&fr, data, len, at + 4);
		while (reader_left(&fr) > 0) {
			uint64_t fat = reader_offset(&fr);
			uint32_t flen;

			if (n == MB_IMA_MAX_FIELDS)
				return set_error_at(err, -E2BIG, fat, "entry %zu: more than %u fields", idx,
						    MB_IMA_MAX_FIELDS);
			if (read_u32le(&fr, &flen) < 0)
				return bad_at(err, -EBADMSG, fat, idx, "truncated field length");
			if (read_skip(&fr, flen) < 0)
				return set_error_at(err, -EBADMSG, fat, "entry %zu: field length %u past the end of its data",
						    idx, flen);
			n++;
		}
		fields_mem = n * sizeof(mb_ima_field);
		s->mem = ima_entry_mem(log, s, fields_mem + name_len + 1);
		if (!s->mem)
			return set_error(err, -ENOMEM, "out of memory");
		f = (mb_ima_field *) s->mem;
		e->fields = f;
		e->template_name = memcpy(s->mem + fields_mem, name, name_len);
		s->hashed = data;
		s->hashed_size = len;
		reader_init(&fr, data, len, at + 4);
		while (e->n_fields < n) {
			uint32_t flen;
			const uint8_t *fp;

			if (read_u32le(&fr, &flen) < 0 || read_bytes(&fr, flen, &fp) < 0)
				return set_error(err, -EBADMSG, "entry %zu: fields changed between two reads", idx);
			f[e->n_fields++] = (mb_ima_field) { fp, flen };
		}
	}
	return ima_entry_finish(log, idx, err);
}

static int parse_binary(mb_ima_log *log, const uint8_t *p, size_t size, uint16_t alg, mb_error *err)
{
	byte_reader r;
	size_t hs;

	if (alg) {
		const mb_digest_info *d = mb_digest_by_alg(alg);

		if (!d)
			return set_error(err, -EOPNOTSUPP, "template hash algorithm 0x%04x unknown", alg);
		hs = d->size;
	} else {
		hs = detect_hash_size(p, size);
		if (!hs)
			return set_error_at(err, -EBADMSG, 0, "not an IMA list: no template name after a template "
					    "hash of 20, 32, 48 or 64 bytes");
	}
	log->data = malloc(size);
	if (!log->data)
		return set_error(err, -ENOMEM, "out of memory");
	memcpy(log->data, p, size);
	log->hint = size / 96 + 1; /* an ima-ng entry of a SHA-256 digest and a short path */
	reader_init(&r, log->data, size, 0);
	while (reader_left(&r) > 0) {
		int rc;

		if (reader_left(&r) < 8 + hs && log->n > 0) {
			log->has_tail = true;
			log->tail_offset = reader_offset(&r);
			log->tail_size = reader_left(&r);
			break;
		}
		rc = parse_binary_entry(log, &r, hs, alg, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ASCII: the next token of line[*pos, end) up to a space (may be empty). */
static void next_token(const char *line, size_t end, size_t *pos, const char **tok, size_t *len)
{
	const char *sp = memchr(line + *pos, ' ', end - *pos);
	size_t stop = sp ? (size_t) (sp - line) : end;

	*tok = line + *pos;
	*len = stop - *pos;
	*pos = sp ? stop + 1 : end;
}

/* "algo:hex" rebuilt as the kernel's d-ng field ("algo:" NUL digest) into out. */
static int rebuild_dng(const char *tok, size_t len, uint8_t *out, uint32_t *ret_size)
{
	const char *colon = memchr(tok, ':', len);
	size_t alen, hlen;

	if (!colon)
		return -EBADMSG;
	alen = (size_t) (colon - tok);
	hlen = len - alen - 1;
	if (alen == 0 || alen > 32 || hlen % 2 || hlen / 2 > MB_DIGEST_MAX)
		return -EBADMSG;
	memcpy(out, tok, alen + 1);
	out[alen + 1] = 0;
	if (hex_parse(colon + 1, hlen, out + alen + 2, hlen / 2) < 0)
		return -EBADMSG;
	*ret_size = (uint32_t) (alen + 2 + hlen / 2);
	return 0;
}

static void put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

static int parse_ascii_line(mb_ima_log *log, const char *text, size_t start, size_t end, uint16_t alg,
			    mb_error *err)
{
	size_t idx = log->n, pos = start, tlen, hlen, nlen, rest, tail = 0, fields_mem, cap;
	const char *tok, *htok, *ntok;
	unsigned long pcr = 0;
	mb_ima_entry *e;
	ima_entry_store *s;
	mb_ima_field *f;
	uint8_t *w;
	int rc;

	next_token(text, end, &pos, &tok, &tlen);
	if (tlen == 0 || tlen > 2)
		return bad_at(err, -EBADMSG, start, idx, "no PCR number");
	for (size_t j = 0; j < tlen; j++) {
		if (tok[j] < '0' || tok[j] > '9')
			return bad_at(err, -EBADMSG, start, idx, "no PCR number");
		pcr = pcr * 10 + (unsigned long) (tok[j] - '0');
	}
	if (pcr > MB_IMA_MAX_PCR)
		return set_error_at(err, -EBADMSG, start, "entry %zu: PCR %lu is over 23", idx, pcr);
	next_token(text, end, &pos, &htok, &hlen);
	if (!ima_alg_of_size(hlen / 2) || hlen % 2 ||
	    (alg && mb_digest_by_alg(alg) && mb_digest_by_alg(alg)->size != hlen / 2))
		return bad_at(err, -EBADMSG, (uint64_t) (htok - text), idx, "template hash of a wrong size");
	next_token(text, end, &pos, &ntok, &nlen);
	if (nlen == 0 || nlen > MB_IMA_MAX_TEMPLATE_NAME)
		return bad_at(err, -EBADMSG, (uint64_t) (ntok - text), idx, "bad template name");
	rest = end - pos;
	if (rest > MB_IMA_MAX_TEMPLATE_DATA)
		return bad_at(err, -E2BIG, (uint64_t) pos, idx, "line too long");

	rc = add_entry(log, err);
	if (rc < 0)
		return rc;
	e = &log->entries[idx];
	s = &log->store[idx];
	e->offset = start;
	e->pcr = (uint32_t) pcr;
	e->template_hash_size = (uint16_t) (hlen / 2);
	e->template_hash_alg = alg ? alg : ima_alg_of_size(hlen / 2);
	if (hex_parse(htok, hlen, e->template_hash, hlen / 2) < 0)
		return bad_at(err, -EBADMSG, (uint64_t) (htok - text), idx, "template hash is not hex");
	/* fields, the name, and the rebuilt template data: each field's length, at most its text */
	fields_mem = MB_IMA_MAX_FIELDS * sizeof(mb_ima_field);
	cap = MB_IMA_MAX_FIELDS * 4 + rest + 8 + MB_IMA_MAX_FILE_NAME + 21;
	s->mem = ima_entry_mem(log, s, fields_mem + nlen + 1 + cap);
	if (!s->mem)
		return set_error(err, -ENOMEM, "out of memory");
	f = (mb_ima_field *) s->mem;
	e->fields = f;
	e->template_name = memcpy(s->mem + fields_mem, ntok, nlen);
	w = s->mem + fields_mem + nlen + 1;
	s->hashed = w;

#define IS(name) (nlen == strlen(name) && memcmp(ntok, name, nlen) == 0)
	if (IS("ima")) {
		next_token(text, end, &pos, &tok, &tlen);
		if (tlen != 40 || hex_parse(tok, tlen, w, 20) < 0)
			return bad_at(err, -EBADMSG, (uint64_t) (tok - text), idx, "legacy ima digest is not 40 hex");
		if (end - pos > MB_IMA_MAX_FILE_NAME)
			return bad_at(err, -E2BIG, (uint64_t) pos, idx, "file name over 255 bytes");
		memcpy(w + 20, text + pos, end - pos);
		f[0] = (mb_ima_field) { w, 20 };
		f[1] = (mb_ima_field) { w + 20, (uint32_t) (end - pos) };
		e->n_fields = 2;
		e->path = (const char *) (w + 20 + MB_IMA_MAX_FILE_NAME + 1); /* its NUL-ended copy */
		memcpy(w + 20 + MB_IMA_MAX_FILE_NAME + 1, text + pos, end - pos);
		s->hashed_size = 20 + MB_IMA_MAX_FILE_NAME + 1;
		return ima_entry_finish(log, idx, err);
	}
	if (IS("ima-ng"))
		tail = 0;
	else if (IS("ima-sig") || IS("ima-buf"))
		tail = 1;
	else if (IS("ima-modsig"))
		tail = 3;
	else {
		/* unknown: the tokens as they are; they cannot be hashed */
		while (pos < end || (pos == end && text[end - 1] == ' ' && e->n_fields == 0)) {
			if (e->n_fields == MB_IMA_MAX_FIELDS)
				return bad_at(err, -E2BIG, (uint64_t) pos, idx, "more than 16 fields");
			next_token(text, end, &pos, &tok, &tlen);
			memcpy(w, tok, tlen);
			f[e->n_fields++] = (mb_ima_field) { w, (uint32_t) tlen };
			w += tlen + 1;
			if (pos == end)
				break;
		}
		s->hashed = NULL;
		return ima_entry_finish(log, idx, err);
	}
#undef IS
	{
		/* d-ng first, then the path up to the last `tail` tokens, then those */
		size_t cut[4], n_cut = 0, pend = end;
		uint8_t *start_w = w;
		uint32_t flen;

		next_token(text, end, &pos, &tok, &tlen);
		if (rebuild_dng(tok, tlen, w + 4, &flen) < 0)
			return bad_at(err, -EBADMSG, (uint64_t) (tok - text), idx, "digest is not algo:hex");
		put_u32le(w, flen);
		f[e->n_fields++] = (mb_ima_field) { w + 4, flen };
		w += 4 + flen;
		for (size_t k = 0; k < tail; k++) {
			const char *sp = NULL;

			for (size_t j = pend; j > pos; j--)
				if (text[j - 1] == ' ') {
					sp = text + j - 1;
					break;
				}
			if (!sp)
				return bad_at(err, -EBADMSG, (uint64_t) pos, idx, "too few fields");
			cut[n_cut++] = (size_t) (sp - text);
			pend = (size_t) (sp - text);
		}
		/* n-ng: the path and its NUL */
		if (memchr(text + pos, 0, pend - pos))
			return bad_at(err, -EBADMSG, (uint64_t) pos, idx, "NUL in the path");
		put_u32le(w, (uint32_t) (pend - pos + 1));
		memcpy(w + 4, text + pos, pend - pos);
		w[4 + pend - pos] = 0;
		f[e->n_fields++] = (mb_ima_field) { w + 4, (uint32_t) (pend - pos + 1) };
		w += 4 + pend - pos + 1;
		/* the trailing fields, left to right: hex, or algo:hex for d-modsig */
		for (size_t k = n_cut; k > 0; k--) {
			size_t from = cut[k - 1] + 1, to = k > 1 ? cut[k - 2] : end, hl = to - from;

			flen = 0;
			if (hl && memchr(text + from, ':', hl)) {
				if (rebuild_dng(text + from, hl, w + 4, &flen) < 0)
					return bad_at(err, -EBADMSG, from, idx, "digest is not algo:hex");
			} else if (hl % 2 || hex_parse(text + from, hl, w + 4, hl / 2) < 0) {
				return bad_at(err, -EBADMSG, from, idx, "field is not hex");
			} else {
				flen = (uint32_t) (hl / 2);
			}
			put_u32le(w, flen);
			f[e->n_fields++] = (mb_ima_field) { w + 4, flen };
			w += 4 + flen;
		}
		s->hashed_size = (size_t) (w - start_w);
	}
	return ima_entry_finish(log, idx, err);
}

static int parse_ascii(mb_ima_log *log, const char *text, size_t size, uint16_t alg, mb_error *err)
{
	size_t pos = 0;
	const char *nul = memchr(text, 0, size);

	log->ascii = true;
	log->hint = size / 160 + 1; /* an ima-ng line of a SHA-256 digest and a short path */
	if (nul)
		return set_error_at(err, -EBADMSG, (uint64_t) (nul - text), "NUL byte in an ASCII list");
	while (pos < size) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t) (nl - text) : size;
		int rc;

		if (end > pos) {
			rc = parse_ascii_line(log, text, pos, end, alg, err);
			if (rc < 0)
				return rc;
		}
		pos = end + 1;
	}
	return 0;
}

MB_EXPORT int mb_ima_log_parse(const void *data, size_t size, uint16_t alg, mb_ima_log **ret, mb_error *err)
{
	const uint8_t *p = data;
	mb_ima_log *log;
	int rc;

	*ret = NULL;
	if (size == 0)
		return set_error_at(err, -EBADMSG, 0, "empty IMA list");
	if (size > MB_IMA_MAX_SIZE)
		return set_error(err, -E2BIG, "IMA list of %zu bytes, over %u", size, MB_IMA_MAX_SIZE);
	if (alg && !mb_digest_by_alg(alg))
		return set_error(err, -EOPNOTSUPP, "template hash algorithm 0x%04x unknown", alg);
	log = calloc(1, sizeof(*log));
	if (!log)
		return set_error(err, -ENOMEM, "out of memory");
	if (p[0] >= '0' && p[0] <= '9')
		rc = parse_ascii(log, data, size, alg, err);
	else
		rc = parse_binary(log, p, size, alg, err);
	if (rc == 0 && log->n == 0)
		rc = set_error_at(err, -EBADMSG, 0, "no entry in the IMA list");
	if (rc < 0) {
		mb_ima_log_free(log);
		return rc;
	}
	*ret = log;
	return 0;
}

MB_EXPORT void mb_ima_log_free(mb_ima_log *log)
{
	if (!log)
		return;
	while (log->chunks) {
		ima_chunk *next = log->chunks->next;

		free(log->chunks);
		log->chunks = next;
	}
	free(log->entries);
	free(log->store);
	free(log->data);
	free(log);
}

MB_EXPORT size_t mb_ima_log_count(const mb_ima_log *log) { return log ? log->n : 0; }
MB_EXPORT bool mb_ima_log_is_ascii(const mb_ima_log *log) { return log && log->ascii; }
MB_EXPORT size_t mb_ima_log_n_bad(const mb_ima_log *log) { return log ? log->n_bad : 0; }

MB_EXPORT const mb_ima_entry *mb_ima_log_entry(const mb_ima_log *log, size_t i)
{
	return log && i < log->n ? &log->entries[i] : NULL;
}

MB_EXPORT bool mb_ima_log_tail(const mb_ima_log *log, uint64_t *offset, size_t *size)
{
	if (!log || !log->has_tail)
		return false;
	if (offset)
		*offset = log->tail_offset;
	if (size)
		*size = log->tail_size;
	return true;
}
