/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy digests computed in software, without a TPM: what a trial session would
 * give. TPM 2.0 Library Part 3 §23.7 (TPM2_PolicyPCR), Part 2 §10.6.2 (TPMS_PCR_SELECTION),
 * §10.9.7 (TPML_PCR_SELECTION). All integers are big-endian on the TPM's wire.
 */
#include <errno.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/tpm-policy.h>
#include "shared/fail.h"

#define TPM_CC_POLICY_PCR 0x0000017Fu

MB_EXPORT int mb_policy_pcr_digest(const uint8_t *old, const mb_pcr_bank *bank, uint32_t mask,
				   uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err)
{
	/* old || CC || TPML_PCR_SELECTION(count 1, hash, sizeofSelect 3, 3 bytes) || H(values) */
	uint8_t buf[MB_POLICY_DIGEST_SIZE + 4 + 4 + 2 + 1 + 3 + MB_POLICY_DIGEST_SIZE];
	uint8_t *p = buf;
	mb_digest_ctx *ctx = NULL;
	unsigned i;
	int r;

	if (!bank || !mb_digest_by_alg(bank->alg) || mb_digest_by_alg(bank->alg)->size != bank->size)
		return set_error(err, -EINVAL, "unknown PCR bank");
	if (mask >> MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR selection beyond PCR %u", MB_PCR_COUNT - 1);
	if ((bank->present & mask) != mask)
		return set_error(err, -EINVAL, "a selected PCR has no value");

	if (old)
		memcpy(p, old, MB_POLICY_DIGEST_SIZE);
	else
		memset(p, 0, MB_POLICY_DIGEST_SIZE);
	p += MB_POLICY_DIGEST_SIZE;
	*p++ = TPM_CC_POLICY_PCR >> 24;
	*p++ = (TPM_CC_POLICY_PCR >> 16) & 0xff;
	*p++ = (TPM_CC_POLICY_PCR >> 8) & 0xff;
	*p++ = TPM_CC_POLICY_PCR & 0xff;
	*p++ = 0; /* count = 1 */
	*p++ = 0;
	*p++ = 0;
	*p++ = 1;
	*p++ = bank->alg >> 8;
	*p++ = bank->alg & 0xff;
	*p++ = 3; /* sizeofSelect: PCR_SELECT_MIN for 24 PCRs */
	*p++ = mask & 0xff;          /* pcrSelect[0] bit n = PCR n (§10.6.1) */
	*p++ = (mask >> 8) & 0xff;
	*p++ = (mask >> 16) & 0xff;

	/* pcrDigest: the session's hash (SHA-256) over the selected values, in selection order. */
	r = mb_digest_ctx_new(MB_ALG_SHA256, &ctx);
	if (r < 0)
		return set_error(err, r, "cannot hash");
	for (i = 0; i < MB_PCR_COUNT && r >= 0; i++)
		if (mask & (1u << i))
			r = mb_digest_ctx_update(ctx, bank->value[i], bank->size);
	if (r >= 0)
		r = mb_digest_ctx_final(ctx, p);
	mb_digest_ctx_free(ctx);
	if (r < 0)
		return set_error(err, r, "cannot hash");
	p += MB_POLICY_DIGEST_SIZE;

	r = mb_digest(MB_ALG_SHA256, buf, (size_t) (p - buf), out);
	if (r < 0)
		return set_error(err, r, "cannot hash");
	return 0;
}

#define TPM_CC_POLICY_OR 0x00000171u

MB_EXPORT int mb_policy_or_digest(const uint8_t (*branches)[MB_POLICY_DIGEST_SIZE], size_t n,
				  uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err)
{
	/* Part 3 §23.6: H(0^32 || TPM_CC_PolicyOR || digest_1 || ... || digest_n), 2 <= n <= 8. */
	uint8_t buf[MB_POLICY_DIGEST_SIZE + 4 + MB_POLICY_OR_MAX * MB_POLICY_DIGEST_SIZE];
	size_t off = MB_POLICY_DIGEST_SIZE;
	int r;

	if (n < 2 || n > MB_POLICY_OR_MAX)
		return set_error(err, -EINVAL, "a PolicyOR needs 2 to %u branches, not %zu", MB_POLICY_OR_MAX, n);
	memset(buf, 0, MB_POLICY_DIGEST_SIZE);
	buf[off++] = TPM_CC_POLICY_OR >> 24;
	buf[off++] = (TPM_CC_POLICY_OR >> 16) & 0xff;
	buf[off++] = (TPM_CC_POLICY_OR >> 8) & 0xff;
	buf[off++] = TPM_CC_POLICY_OR & 0xff;
	memcpy(buf + off, branches, n * MB_POLICY_DIGEST_SIZE);
	off += n * MB_POLICY_DIGEST_SIZE;
	r = mb_digest(MB_ALG_SHA256, buf, off, out);
	if (r < 0)
		return set_error(err, r, "cannot hash");
	return 0;
}

#define TPM_CC_POLICY_AUTHORIZE 0x0000016Au

MB_EXPORT int mb_policy_authorize_digest(const uint8_t key_name[MB_TPM_NAME_SIZE], uint8_t out[MB_POLICY_DIGEST_SIZE],
					 mb_error *err)
{
	/*
	 * Part 3 §23.16: the digest is reset, then PolicyUpdate(TPM_CC_PolicyAuthorize,
	 * keySign, policyRef): H(H(0^32 || CC || keyName) || policyRef), policyRef empty.
	 */
	uint8_t buf[MB_POLICY_DIGEST_SIZE + 4 + MB_TPM_NAME_SIZE];
	size_t off = MB_POLICY_DIGEST_SIZE;
	uint8_t mid[MB_POLICY_DIGEST_SIZE];

	memset(buf, 0, MB_POLICY_DIGEST_SIZE);
	buf[off++] = TPM_CC_POLICY_AUTHORIZE >> 24;
	buf[off++] = (TPM_CC_POLICY_AUTHORIZE >> 16) & 0xff;
	buf[off++] = (TPM_CC_POLICY_AUTHORIZE >> 8) & 0xff;
	buf[off++] = TPM_CC_POLICY_AUTHORIZE & 0xff;
	memcpy(buf + off, key_name, MB_TPM_NAME_SIZE);
	off += MB_TPM_NAME_SIZE;
	if (mb_digest(MB_ALG_SHA256, buf, off, mid) < 0 || mb_digest(MB_ALG_SHA256, mid, sizeof(mid), out) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}

#define TPM_CC_POLICY_NV 0x00000149u
#define TPM_ALG_SHA256_ID 0x000Bu

static uint8_t *put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	while (bytes--)
		*p++ = (uint8_t) (v >> (8 * bytes));
	return p;
}

MB_EXPORT int mb_nv_counter_name(uint32_t index, uint8_t out[MB_TPM_NAME_SIZE], mb_error *err)
{
	/* TPMS_NV_PUBLIC: nvIndex, nameAlg, attributes, authPolicy (TPM2B, empty), dataSize (8) */
	uint8_t pub[4 + 2 + 4 + 2 + 2], *p = pub;

	if (index < MB_NV_OWNER_FIRST || index > MB_NV_OWNER_LAST)
		return set_error(err, -EINVAL, "NV index 0x%08x is not in the owner range 0x%08x-0x%08x", index,
				 MB_NV_OWNER_FIRST, MB_NV_OWNER_LAST);
	p = put_be(p, index, 4);
	p = put_be(p, TPM_ALG_SHA256_ID, 2);
	p = put_be(p, MB_NV_COUNTER_ATTRIBUTES, 4);
	p = put_be(p, 0, 2);
	p = put_be(p, 8, 2);
	put_be(out, TPM_ALG_SHA256_ID, 2);
	if (mb_digest(MB_ALG_SHA256, pub, (size_t) (p - pub), out + 2) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}

MB_EXPORT int mb_policy_nv_counter_digest(const uint8_t *old, const uint8_t name[MB_TPM_NAME_SIZE], uint64_t value,
					  uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err)
{
	/* args: operandB (the counter as TPM2_NV_Read gives it: 8 bytes big-endian), offset 0, TPM_EO_EQ (0) */
	uint8_t args_in[8 + 2 + 2], *a = args_in;
	uint8_t buf[MB_POLICY_DIGEST_SIZE + 4 + MB_POLICY_DIGEST_SIZE + MB_TPM_NAME_SIZE], *p = buf;

	a = put_be(a, value, 8);
	a = put_be(a, 0, 2);
	a = put_be(a, 0, 2);
	if (old)
		memcpy(p, old, MB_POLICY_DIGEST_SIZE);
	else
		memset(p, 0, MB_POLICY_DIGEST_SIZE);
	p += MB_POLICY_DIGEST_SIZE;
	p = put_be(p, TPM_CC_POLICY_NV, 4);
	if (mb_digest(MB_ALG_SHA256, args_in, (size_t) (a - args_in), p) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	p += MB_POLICY_DIGEST_SIZE;
	memcpy(p, name, MB_TPM_NAME_SIZE);
	p += MB_TPM_NAME_SIZE;
	if (mb_digest(MB_ALG_SHA256, buf, (size_t) (p - buf), out) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}

#define TPM_CC_POLICY_AUTH_VALUE 0x0000016Bu

MB_EXPORT int mb_policy_auth_value_digest(const uint8_t old[MB_POLICY_DIGEST_SIZE], uint8_t out[MB_POLICY_DIGEST_SIZE],
					  mb_error *err)
{
	/* Part 3 §23.17: policyDigest = H(old || TPM_CC_PolicyAuthValue); no parameters. */
	uint8_t buf[MB_POLICY_DIGEST_SIZE + 4];

	if (!old)
		memset(buf, 0, MB_POLICY_DIGEST_SIZE);
	else
		memcpy(buf, old, MB_POLICY_DIGEST_SIZE);
	put_be(buf + MB_POLICY_DIGEST_SIZE, TPM_CC_POLICY_AUTH_VALUE, 4);
	if (mb_digest(MB_ALG_SHA256, buf, sizeof(buf), out) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}
