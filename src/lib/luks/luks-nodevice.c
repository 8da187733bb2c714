/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A libmboot built without libcryptsetup (-Dluks=disabled): the same exports, no device. */
#include <errno.h>
#include <stdlib.h>

#include <mboot/luks.h>
#include "shared/fail.h"

static int no_luks(mb_error *err)
{
	return set_error(err, -EOPNOTSUPP, "this mboot was built without LUKS support (libcryptsetup)");
}

MB_EXPORT int mb_luks_enroll(mb_tpm *tpm, const char *path, const mb_luks_enroll_options *opt, int *ret_token,
			     int *ret_keyslot, mb_error *err)
{
	return no_luks(err);
}

MB_EXPORT int mb_luks_list(const char *path, mb_luks_entry **ret, size_t *ret_n, mb_error *err)
{
	*ret = NULL;
	*ret_n = 0;
	return no_luks(err);
}

MB_EXPORT void mb_luks_list_free(mb_luks_entry *entries, size_t n)
{
	free(entries);
}

MB_EXPORT int mb_luks_remove(const char *path, int token, int *ret_keyslot, mb_error *err)
{
	return no_luks(err);
}

MB_EXPORT int mb_luks_unlock(mb_tpm *tpm, const char *device, const char *name, int token,
			     const mb_unseal_options *opt, int *ret_token, mb_unseal_explanation **explanation,
			     mb_error *err)
{
	*explanation = NULL;
	return no_luks(err);
}

MB_EXPORT int mb_luks_reseal(mb_tpm *tpm, const char *device, int token, const mb_pcr_values *const *predicted,
			     size_t n_predicted, const mb_unseal_options *opt, mb_luks_reseal_result *ret,
			     mb_unseal_explanation **explanation, mb_error *err)
{
	*explanation = NULL;
	ret->keyslot = ret->token = -1;
	ret->removed = ret->left = 0;
	ret->or_policy = false;
	return no_luks(err);
}

MB_EXPORT int mb_luks_add_recovery(const char *device, const char *passphrase, size_t passphrase_size,
				   const char *recovery_key, size_t recovery_key_size, int *ret_keyslot, int *ret_token,
				   mb_error *err)
{
	if (ret_keyslot)
		*ret_keyslot = -1;
	if (ret_token)
		*ret_token = -1;
	return no_luks(err);
}

MB_EXPORT int mb_luks_recovery_keyslots(const char *device, uint32_t *ret_mask, mb_error *err)
{
	*ret_mask = 0;
	return no_luks(err);
}

MB_EXPORT int mb_luks_rekey(mb_tpm *tpm, const char *device, int token, const char *passphrase,
			    size_t passphrase_size, const mb_pcr_values *const *predicted, size_t n_predicted,
			    mb_luks_rekey_result *ret, mb_error *err)
{
	ret->old_keyslot = ret->keyslot = ret->token = -1;
	ret->removed = 0;
	ret->old_keyslot_removed = ret->or_policy = false;
	return no_luks(err);
}
