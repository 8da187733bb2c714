/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/attest/quote-decode.h"
#include "shared/fail.h"
#include "shared/reader.h"

static int truncated(byte_reader *r, mb_error *err, const char *what)
{
	return set_error_at(err, -EBADMSG, reader_offset(r), "%s: truncated", what);
}

/* A TPM2B: u16 size, then that many bytes, at most max. */
static int read_tpm2b(byte_reader *r, size_t max, uint8_t *out, uint16_t *ret_size, const char *what, mb_error *err)
{
	uint64_t at = reader_offset(r);
	uint16_t n;

	if (read_u16be(r, &n) < 0)
		return truncated(r, err, what);
	if (n > max)
		return set_error_at(err, -E2BIG, at, "%s: %u bytes, more than %zu", what, n, max);
	if (read_copy(r, out, n) < 0)
		return truncated(r, err, what);
	*ret_size = n;
	return 0;
}

/* TPML_PCR_SELECTION (Part 2 §10.9.7) of TPMS_PCR_SELECTION (§10.6.2). */
static int read_selection(byte_reader *r, quote_attest *a, mb_error *err)
{
	uint64_t at = reader_offset(r);
	uint32_t count, i;

	if (read_u32be(r, &count) < 0)
		return truncated(r, err, "TPML_PCR_SELECTION");
	if (count > QUOTE_SELECTIONS_MAX)
		return set_error_at(err, -E2BIG, at, "TPML_PCR_SELECTION: %u banks, more than %d", count,
				  QUOTE_SELECTIONS_MAX);
	for (i = 0; i < count; i++) {
		quote_selection *s = &a->selections[i];
		const uint8_t *bits;
		uint8_t k;

		at = reader_offset(r);
		if (read_u16be(r, &s->hash) < 0 || read_u8(r, &s->size_of_select) < 0)
			return truncated(r, err, "TPMS_PCR_SELECTION");
		if (s->size_of_select > QUOTE_SELECT_MAX)
			return set_error_at(err, -E2BIG, at, "TPMS_PCR_SELECTION: sizeofSelect %u, more than %d",
					  s->size_of_select, QUOTE_SELECT_MAX);
		if (read_bytes(r, s->size_of_select, &bits) < 0)
			return truncated(r, err, "TPMS_PCR_SELECTION");
		s->mask = 0;
		for (k = 0; k < s->size_of_select; k++)
			s->mask |= (uint32_t) bits[k] << (8 * k);
	}
	a->n_selections = count;
	return 0;
}

int quote_attest_parse(const uint8_t *data, size_t size, quote_attest *ret, mb_error *err)
{
	byte_reader r;
	int e;

	memset(ret, 0, sizeof(*ret));
	if (size > QUOTE_ATTEST_MAX)
		return set_error(err, -E2BIG, "TPMS_ATTEST: %zu bytes, more than %d", size, QUOTE_ATTEST_MAX);
	reader_init(&r, data, size, 0);
	if (read_u32be(&r, &ret->magic) < 0 || read_u16be(&r, &ret->type) < 0)
		return truncated(&r, err, "TPMS_ATTEST");
	e = read_tpm2b(&r, QUOTE_NAME_MAX, ret->signer, &ret->signer_size, "TPMS_ATTEST qualifiedSigner", err);
	if (e < 0)
		return e;
	e = read_tpm2b(&r, QUOTE_DATA_MAX, ret->extra, &ret->extra_size, "TPMS_ATTEST extraData", err);
	if (e < 0)
		return e;
	/* TPMS_CLOCK_INFO (§10.11.1), then firmwareVersion */
	{
		uint32_t hi, lo, fhi, flo;

		if (read_u32be(&r, &hi) < 0 || read_u32be(&r, &lo) < 0 ||
		    read_u32be(&r, &ret->reset_count) < 0 || read_u32be(&r, &ret->restart_count) < 0 ||
		    read_u8(&r, &ret->safe) < 0 || read_u32be(&r, &fhi) < 0 || read_u32be(&r, &flo) < 0)
			return truncated(&r, err, "TPMS_ATTEST clockInfo");
		ret->clock = (uint64_t) hi << 32 | lo;
		ret->firmware_version = (uint64_t) fhi << 32 | flo;
	}
	if (ret->safe > 1)
		return set_error_at(err, -EBADMSG, 4 + 2 + 2 + ret->signer_size + 2 + ret->extra_size + 16,
				  "TPMS_CLOCK_INFO: safe is %u, not YES or NO", ret->safe);
	if (ret->type != TPM_ST_ATTEST_QUOTE)
		return 0;
	e = read_selection(&r, ret, err);
	if (e < 0)
		return e;
	e = read_tpm2b(&r, QUOTE_DIGEST_MAX, ret->pcr_digest, &ret->pcr_digest_size, "TPMS_QUOTE_INFO pcrDigest", err);
	if (e < 0)
		return e;
	if (reader_left(&r))
		return set_error_at(err, -EBADMSG, reader_offset(&r), "TPMS_ATTEST: %zu bytes after the quote info",
				  reader_left(&r));
	return 0;
}

int quote_signature_parse(const uint8_t *data, size_t size, quote_signature *ret, mb_error *err)
{
	byte_reader r;
	int e = 0;

	memset(ret, 0, sizeof(*ret));
	if (size > QUOTE_SIGNATURE_MAX)
		return set_error(err, -E2BIG, "TPMT_SIGNATURE: %zu bytes, more than %d", size, QUOTE_SIGNATURE_MAX);
	reader_init(&r, data, size, 0);
	if (read_u16be(&r, &ret->alg) < 0)
		return truncated(&r, err, "TPMT_SIGNATURE");
	switch (ret->alg) {
	case QUOTE_SIG_RSASSA:
	case QUOTE_SIG_RSAPSS:
		/* TPMS_SIGNATURE_RSA: hash, TPM2B_PUBLIC_KEY_RSA */
		if (read_u16be(&r, &ret->hash) < 0)
			return truncated(&r, err, "TPMS_SIGNATURE_RSA");
		e = read_tpm2b(&r, QUOTE_RSA_SIG_MAX, ret->a, &ret->a_size, "TPMS_SIGNATURE_RSA sig", err);
		break;
	case QUOTE_SIG_ECDSA:
	case QUOTE_SIG_ECDAA:
	case QUOTE_SIG_SM2:
	case QUOTE_SIG_ECSCHNORR:
		/* TPMS_SIGNATURE_ECC: hash, signatureR, signatureS */
		if (read_u16be(&r, &ret->hash) < 0)
			return truncated(&r, err, "TPMS_SIGNATURE_ECC");
		e = read_tpm2b(&r, QUOTE_ECC_PARAM_MAX, ret->a, &ret->a_size, "TPMS_SIGNATURE_ECC signatureR", err);
		if (e >= 0)
			e = read_tpm2b(&r, QUOTE_ECC_PARAM_MAX, ret->b, &ret->b_size, "TPMS_SIGNATURE_ECC signatureS",
				       err);
		break;
	case QUOTE_SIG_HMAC: {
		/* TPMT_HA: hashAlg, then a digest whose size the algorithm gives */
		static const struct { uint16_t alg, size; } sizes[] = {
			{ 0x0004, 20 }, { 0x000b, 32 }, { 0x000c, 48 }, { 0x000d, 64 }, { 0x0012, 32 },
		};
		size_t i;

		if (read_u16be(&r, &ret->hash) < 0)
			return truncated(&r, err, "TPMT_HA");
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			if (sizes[i].alg == ret->hash)
				break;
		if (i == sizeof(sizes) / sizeof(sizes[0]))
			return set_error_at(err, -EOPNOTSUPP, 2, "TPMT_HA: hash algorithm 0x%04x", ret->hash);
		if (read_copy(&r, ret->a, sizes[i].size) < 0)
			return truncated(&r, err, "TPMT_HA");
		ret->a_size = sizes[i].size;
		break;
	}
	case QUOTE_SIG_NULL:
		ret->hash = QUOTE_SIG_NULL;
		break;
	default:
		return set_error_at(err, -EOPNOTSUPP, 0, "TPMT_SIGNATURE: signature algorithm 0x%04x", ret->alg);
	}
	if (e < 0)
		return e;
	if (reader_left(&r))
		return set_error_at(err, -EBADMSG, reader_offset(&r), "TPMT_SIGNATURE: %zu bytes after the signature",
				  reader_left(&r));
	return 0;
}

const char *quote_sig_alg_name(uint16_t alg, char buf[8])
{
	switch (alg) {
	case QUOTE_SIG_RSASSA: return "rsassa";
	case QUOTE_SIG_RSAPSS: return "rsapss";
	case QUOTE_SIG_ECDSA: return "ecdsa";
	case QUOTE_SIG_ECDAA: return "ecdaa";
	case QUOTE_SIG_SM2: return "sm2";
	case QUOTE_SIG_ECSCHNORR: return "ecschnorr";
	case QUOTE_SIG_HMAC: return "hmac";
	case QUOTE_SIG_NULL: return "null";
	}
	snprintf(buf, 8, "0x%04x", alg);
	return buf;
}
