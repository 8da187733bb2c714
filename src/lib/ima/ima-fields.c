/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An IMA entry's fields decoded by its template, its template hash checked
 * (ima_calc_field_array_hash: each field as u32 length and bytes; legacy "ima": the SHA-1
 * digest and the name padded to 256 bytes), the list replayed per bank, and boot_aggregate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/ima.h>
#include "lib/ima/ima-internal.h"
#include "lib/replay/pcr-values.h" /* the fresh set swapped into the caller's */
#include "shared/fail.h"

static const struct {
	const char *name;
	mb_ima_template kind;
	size_t n_fields;
} templates[] = {
	{ "ima", MB_IMA_TEMPLATE_IMA, 2 },
	{ "ima-ng", MB_IMA_TEMPLATE_IMA_NG, 2 },
	{ "ima-sig", MB_IMA_TEMPLATE_IMA_SIG, 3 },
	{ "ima-modsig", MB_IMA_TEMPLATE_IMA_MODSIG, 5 },
	{ "ima-buf", MB_IMA_TEMPLATE_IMA_BUF, 3 },
};

MB_EXPORT const char *mb_ima_template_label(mb_ima_template t)
{
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		if (templates[i].kind == t)
			return templates[i].name;
	return "unknown";
}

MB_EXPORT const char *mb_ima_check_label(mb_ima_check c)
{
	switch (c) {
	case MB_IMA_CHECK_OK: return "ok";
	case MB_IMA_CHECK_BAD: return "bad";
	case MB_IMA_CHECK_VIOLATION: return "violation";
	case MB_IMA_CHECK_UNCHECKED: return "unchecked";
	}
	return "unknown";
}

/* d-ng: "algo:" NUL digest; the algorithm's name is copied, without its colon, into name. */
static int decode_dng(const mb_ima_field *f, char name[33], const char **algo, const uint8_t **digest, size_t *size)
{
	const uint8_t *colon;
	size_t alen;

	if (f->size == 0) {
		*algo = NULL;
		*digest = NULL;
		*size = 0;
		return 0;
	}
	colon = memchr(f->data, ':', f->size);
	if (!colon || colon == f->data || (size_t) (colon - f->data) + 2 > f->size || colon[1] != 0 ||
	    memchr(f->data, 0, (size_t) (colon - f->data)) || (size_t) (colon - f->data) > 32)
		return -EBADMSG;
	alen = (size_t) (colon - f->data);
	memcpy(name, f->data, alen);
	name[alen] = 0;
	*algo = name;
	*digest = colon + 2;
	*size = f->size - (size_t) (colon - f->data) - 2;
	return 0;
}

int ima_template_hash(const mb_ima_log *log, size_t i, uint16_t alg, uint8_t *out)
{
	const ima_entry_store *s = &log->store[i];

	if (!s->hashed)
		return -EOPNOTSUPP;
	return mb_digest(alg, s->hashed, s->hashed_size, out);
}

int ima_entry_finish(mb_ima_log *log, size_t i, mb_error *err)
{
	mb_ima_entry *e = &log->entries[i];
	const mb_ima_field *f = e->fields;
	uint8_t h[MB_DIGEST_MAX];
	bool zero = true;
	int rc;

	e->template_kind = MB_IMA_TEMPLATE_UNKNOWN;
	for (size_t k = 0; k < sizeof(templates) / sizeof(templates[0]); k++)
		if (strcmp(e->template_name, templates[k].name) == 0) {
			if (e->n_fields != templates[k].n_fields)
				return set_error_at(err, -EBADMSG, e->offset, "entry %zu: template %s with %zu fields, not %zu",
						    i, templates[k].name, e->n_fields, templates[k].n_fields);
			e->template_kind = templates[k].kind;
		}
	switch (e->template_kind) {
	case MB_IMA_TEMPLATE_IMA:
		e->digest_algo = "sha1";
		e->digest = f[0].data;
		e->digest_size = f[0].size;
		break; /* path set by the parser: the name has no NUL of its own */
	case MB_IMA_TEMPLATE_IMA_NG:
	case MB_IMA_TEMPLATE_IMA_SIG:
	case MB_IMA_TEMPLATE_IMA_MODSIG:
	case MB_IMA_TEMPLATE_IMA_BUF:
		if (decode_dng(&f[0], log->store[i].algo, &e->digest_algo, &e->digest, &e->digest_size) < 0)
			return set_error_at(err, -EBADMSG, e->offset, "entry %zu: digest field is not \"algo:\" NUL digest", i);
		/* n-ng: the name and its NUL, no NUL before it */
		if (f[1].size == 0 || f[1].data[f[1].size - 1] != 0 || memchr(f[1].data, 0, f[1].size - 1))
			return set_error_at(err, -EBADMSG, e->offset, "entry %zu: name field is not one NUL-ended string", i);
		e->path = (const char *) f[1].data;
		if (e->template_kind == MB_IMA_TEMPLATE_IMA_BUF) {
			e->buf = f[2].data;
			e->buf_size = f[2].size;
		} else if (e->template_kind != MB_IMA_TEMPLATE_IMA_NG) {
			e->sig = f[2].size ? f[2].data : NULL;
			e->sig_size = f[2].size;
		}
		if (e->template_kind == MB_IMA_TEMPLATE_IMA_MODSIG) {
			if (decode_dng(&f[3], log->store[i].modsig_algo, &e->modsig_digest_algo, &e->modsig_digest, &e->modsig_digest_size) < 0)
				return set_error_at(err, -EBADMSG, e->offset, "entry %zu: d-modsig is not \"algo:\" NUL digest", i);
			e->modsig = f[4].size ? f[4].data : NULL;
			e->modsig_size = f[4].size;
		}
		break;
	case MB_IMA_TEMPLATE_UNKNOWN:
		break;
	}

	for (size_t k = 0; k < e->template_hash_size; k++)
		zero = zero && e->template_hash[k] == 0;
	if (zero) {
		e->check = MB_IMA_CHECK_VIOLATION;
		return 0;
	}
	if (!log->store[i].hashed) {
		e->check = MB_IMA_CHECK_UNCHECKED;
		return 0;
	}
	if (!e->template_hash_alg)
		return set_error_at(err, -EOPNOTSUPP, e->offset, "entry %zu: no algorithm for a %u-byte template hash", i,
				    e->template_hash_size);
	rc = ima_template_hash(log, i, e->template_hash_alg, h);
	if (rc < 0)
		return set_error(err, rc, "entry %zu: template hash: cannot compute algorithm 0x%04x", i,
				 e->template_hash_alg);
	if (memcmp(h, e->template_hash, e->template_hash_size) == 0) {
		e->check = MB_IMA_CHECK_OK;
	} else {
		e->check = MB_IMA_CHECK_BAD;
		log->n_bad++;
	}
	return 0;
}

/* The error a replay of d's bank meets first when recomputing: an entry whose fields cannot be
 * hashed (an unknown template of an ASCII list), not a violation, of another algorithm. */
static int unhashable(const mb_ima_log *log, const mb_digest_info *d, mb_error *err)
{
	for (size_t i = 0; i < log->n; i++) {
		const mb_ima_entry *e = &log->entries[i];

		if (!log->store[i].hashed && e->check != MB_IMA_CHECK_VIOLATION && e->template_hash_alg != d->alg)
			return set_error_at(err, -EOPNOTSUPP, e->offset, "entry %zu: template %s cannot be hashed again for %s",
					    i, e->template_name, d->name);
	}
	return 0;
}

/* One bank, both ways in one pass. Where an entry extends both the same (a violation, the
 * template hash's own bank) and the two PCRs are still equal, one extend serves both. */
static int replay_bank(const mb_ima_log *log, const mb_digest_info *d, uint8_t (*rec)[MB_DIGEST_MAX],
		       uint8_t (*pad)[MB_DIGEST_MAX], mb_error *err)
{
	uint32_t same = ~0u; /* PCRs whose two values are equal */

	for (size_t i = 0; i < log->n; i++) {
		const mb_ima_entry *e = &log->entries[i];
		uint8_t ext[MB_DIGEST_MAX], re[MB_DIGEST_MAX];
		uint32_t p = e->pcr, bit = 1u << p;
		bool both;
		int rc;

		memset(ext, 0, sizeof(ext));
		if (e->check == MB_IMA_CHECK_VIOLATION)
			memset(ext, 0xff, d->size);
		else
			memcpy(ext, e->template_hash, e->template_hash_size < d->size ? e->template_hash_size : d->size);
		both = e->check == MB_IMA_CHECK_VIOLATION || d->alg == e->template_hash_alg;
		if (rec && !both && ima_template_hash(log, i, d->alg, re) < 0)
			return set_error_at(err, -EOPNOTSUPP, e->offset, "entry %zu: template %s cannot be hashed again for %s",
					    i, e->template_name, d->name);
		if (rec && pad && both && (same & bit)) {
			rc = mb_digest_extend(d->alg, rec[p], ext);
			memcpy(pad[p], rec[p], d->size);
		} else {
			rc = rec ? mb_digest_extend(d->alg, rec[p], both ? ext : re) : 0;
			if (rc == 0 && pad)
				rc = mb_digest_extend(d->alg, pad[p], ext);
			if (!both)
				same &= ~bit;
		}
		if (rc < 0)
			return set_error(err, rc, "cannot compute %s", d->name);
	}
	return 0;
}

int ima_replay_banks(const mb_ima_log *log, const uint16_t *algs, size_t n_algs, mb_pcr_values *recomputed,
		     mb_pcr_values *padded, mb_error *err)
{
	mb_pcr_values *sets[2] = { recomputed, padded }, *fresh[2] = { NULL, NULL };
	uint32_t named = 0;
	bool any_unhashable = false;
	int rc = 0;

	if (!log)
		return set_error(err, -EINVAL, "no list");
	for (size_t i = 0; i < log->n; i++) {
		named |= 1u << log->entries[i].pcr;
		any_unhashable = any_unhashable || (!log->store[i].hashed && log->entries[i].check != MB_IMA_CHECK_VIOLATION);
	}
	for (size_t w = 0; w < 2; w++)
		if (sets[w] && !(fresh[w] = mb_pcr_values_new())) {
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
	for (size_t b = 0; b < mb_digest_count() && rc == 0; b++) {
		const mb_digest_info *d = mb_digest_at(b);
		uint8_t pcr[2][MB_PCR_COUNT][MB_DIGEST_MAX], probe[MB_DIGEST_MAX];
		bool asked = !algs;

		if (mb_digest(d->alg, "", 0, probe) < 0)
			continue; /* SM3 without OpenSSL support: no bank */
		for (size_t k = 0; algs && k < n_algs; k++)
			asked = asked || algs[k] == d->alg;
		/* a bank not asked for fails as the whole replay would have: the same answer either way */
		if (!asked) {
			if (recomputed && any_unhashable)
				rc = unhashable(log, d, err);
			continue;
		}
		memset(pcr, 0, sizeof(pcr));
		rc = replay_bank(log, d, recomputed ? pcr[0] : NULL, padded ? pcr[1] : NULL, err);
		for (size_t w = 0; w < 2 && rc == 0; w++)
			for (uint32_t p = 0; fresh[w] && p < MB_PCR_COUNT && rc == 0; p++)
				if (named & (1u << p))
					rc = mb_pcr_values_set(fresh[w], d->alg, p, pcr[w][p], d->size, err);
	}
	for (size_t w = 0; w < 2 && rc == 0; w++) {
		/* swap fresh's contents into the caller's set */
		mb_pcr_values tmp;

		if (!sets[w])
			continue;
		tmp = *sets[w];
		*sets[w] = *fresh[w];
		*fresh[w] = tmp;
	}
out:
	mb_pcr_values_free(fresh[0]);
	mb_pcr_values_free(fresh[1]);
	return rc;
}

MB_EXPORT int mb_ima_replay(const mb_ima_log *log, mb_pcr_values *recomputed, mb_pcr_values *padded, mb_error *err)
{
	return ima_replay_banks(log, NULL, 0, recomputed, padded, err);
}

MB_EXPORT int mb_ima_boot_aggregate(const mb_pcr_values *v, uint16_t alg, bool pcrs_0_7, uint8_t *out,
				    mb_error *err)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);
	uint32_t last = alg == MB_ALG_SHA1 || pcrs_0_7 ? 7 : 9;
	mb_digest_ctx *ctx = NULL;
	int rc;

	if (!v)
		return set_error(err, -EINVAL, "no PCR values");
	if (!d)
		return set_error(err, -EOPNOTSUPP, "algorithm 0x%04x unknown", alg);
	rc = mb_digest_ctx_new(alg, &ctx);
	if (rc < 0)
		return set_error(err, rc, "cannot compute %s", d->name);
	for (uint32_t p = 0; p <= last && rc == 0; p++) {
		const uint8_t *val = mb_pcr_values_get(v, alg, p);

		if (!val)
			rc = set_error(err, -ENOENT, "boot_aggregate needs PCR %u of the %s bank", p, d->name);
		else
			rc = mb_digest_ctx_update(ctx, val, d->size);
	}
	if (rc == 0)
		rc = mb_digest_ctx_final(ctx, out);
	mb_digest_ctx_free(ctx);
	return rc;
}

MB_EXPORT int mb_ima_entry_template_hash(const mb_ima_log *log, size_t i, uint16_t alg, uint8_t *out, mb_error *err)
{
	const mb_ima_entry *e;

	if (!log || i >= log->n || !mb_digest_by_alg(alg))
		return set_error(err, -EINVAL, "no such entry or algorithm");
	e = &log->entries[i];
	if (ima_template_hash(log, i, alg, out) < 0)
		return set_error_at(err, -EOPNOTSUPP, e->offset, "entry %zu: template %s cannot be hashed again", i,
				    e->template_name);
	return 0;
}
