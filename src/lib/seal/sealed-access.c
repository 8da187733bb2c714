/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading an mb_sealed: the accessors of mboot/seal.h over the layout of sealed-internal.h. */
#include <stddef.h>

#include <mboot/seal.h>
#include "sealed-internal.h"

static const uint8_t *bytes(const uint8_t *p, size_t n, size_t *ret_size)
{
	if (ret_size)
		*ret_size = p ? n : 0;
	return p;
}

MB_EXPORT unsigned mb_sealed_version(const mb_sealed *s)
{
	return s->version;
}

MB_EXPORT mb_seal_policy mb_sealed_policy_kind(const mb_sealed *s)
{
	return s->authorized ? MB_SEAL_POLICY_AUTHORIZE : s->n_branches ? MB_SEAL_POLICY_OR : MB_SEAL_POLICY_PCR;
}

MB_EXPORT bool mb_sealed_pin(const mb_sealed *s)
{
	return s->pin;
}

MB_EXPORT const uint8_t *mb_sealed_policy_digest(const mb_sealed *s)
{
	return s->policy;
}

MB_EXPORT const mb_pcr_bank *mb_sealed_pcrs(const mb_sealed *s)
{
	return s->authorized ? NULL : &s->pcrs;
}

MB_EXPORT uint16_t mb_sealed_bank(const mb_sealed *s)
{
	return s->authorized ? 0 : s->pcrs.alg;
}

MB_EXPORT uint32_t mb_sealed_mask(const mb_sealed *s)
{
	return s->authorized ? 0 : s->mask;
}

MB_EXPORT size_t mb_sealed_n_branches(const mb_sealed *s)
{
	return s->n_branches;
}

MB_EXPORT bool mb_sealed_window(const mb_sealed *s, uint32_t *ret_index, uint64_t *ret_counter)
{
	if (ret_index)
		*ret_index = s->window ? s->window_index : 0;
	if (ret_counter)
		*ret_counter = s->window ? s->window_counter : 0;
	return s->window;
}

MB_EXPORT const mb_pcr_bank *mb_sealed_branch(const mb_sealed *s, size_t i)
{
	return i < s->n_branches ? &s->branch[i] : NULL;
}

MB_EXPORT uint32_t mb_sealed_branch_mask(const mb_sealed *s, size_t i)
{
	return i < s->n_branches ? s->branch_mask[i] : 0;
}

MB_EXPORT const uint8_t *mb_sealed_auth_key(const mb_sealed *s, size_t *ret_size)
{
	return bytes(s->authorized ? s->auth_key : NULL, s->auth_key_size, ret_size);
}

MB_EXPORT const uint8_t *mb_sealed_auth_key_name(const mb_sealed *s)
{
	return s->authorized ? s->auth_key_name : NULL;
}

MB_EXPORT bool mb_sealed_parent_persistent(const mb_sealed *s, uint32_t *ret_handle)
{
	if (ret_handle)
		*ret_handle = s->parent_persistent ? s->parent_handle : 0;
	return s->parent_persistent;
}

MB_EXPORT bool mb_sealed_parent_fallback(const mb_sealed *s)
{
	return s->parent_fallback;
}

MB_EXPORT const uint8_t *mb_sealed_public(const mb_sealed *s, size_t *ret_size)
{
	return bytes(s->pub, s->pub_size, ret_size);
}

MB_EXPORT const uint8_t *mb_sealed_private(const mb_sealed *s, size_t *ret_size)
{
	return bytes(s->priv, s->priv_size, ret_size);
}

MB_EXPORT const uint8_t *mb_sealed_eventlog(const mb_sealed *s, size_t *ret_size)
{
	return bytes(s->eventlog, s->eventlog_size, ret_size);
}
