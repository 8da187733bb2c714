/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recovery keys and getting back in after an update (docs/luks.md): a keyslot opened by a
 * recovery key, marked by a token; and mb_luks_rekey, which gives a token this boot cannot
 * unseal a new key, authorised by a passphrase. Keys live only in locked pages, wiped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <mboot/luks.h>
#include "shared/fail.h"
#include "shared/secret-page.h"
#include "cryptsetup-dl.h"
#include "luks-device.h"
#include "luks-internal.h"
#include "luks-seal.h"

#define KEYSLOTS_MAX 32

MB_EXPORT int mb_luks_add_recovery(const char *path, const char *passphrase, size_t passphrase_size,
				   const char *recovery_key, size_t recovery_key_size, int *ret_keyslot, int *ret_token,
				   mb_error *err)
{
	luks_device *d = NULL;
	char tok[96];
	int r, slot, id;

	if (ret_keyslot)
		*ret_keyslot = -1;
	if (ret_token)
		*ret_token = -1;
	if (!passphrase || !recovery_key || !recovery_key_size)
		return set_error(err, -EINVAL, "adding a recovery key needs it and an existing passphrase");
	r = luks_device_open(&d, path, err);
	if (r < 0)
		return r;
	/* libcryptsetup's default PBKDF (argon2id, benchmarked), as luksAddKey: a human's passphrase */
	slot = sym_crypt_keyslot_add_by_passphrase(luks_device_cd(d), CRYPT_ANY_SLOT, passphrase, passphrase_size,
					       recovery_key, recovery_key_size);
	if (slot < 0) {
		if (slot == -EPERM)
			r = set_error(err, -EPERM, "%s: the passphrase opens no keyslot", path);
		else
			r = set_error(err, slot, "%s: adding the recovery key's keyslot: %s", path,
				      luks_device_why(d, slot));
		goto out;
	}
	snprintf(tok, sizeof(tok), "{\"type\":\"" MB_LUKS_RECOVERY_TOKEN_TYPE "\",\"keyslots\":[\"%d\"]}", slot);
	id = sym_crypt_token_json_set(luks_device_cd(d), CRYPT_ANY_TOKEN, tok);
	if (id < 0) {
		r = set_error(err, id == -EINVAL ? -ENOSPC : id, "%s: storing the recovery key's token: %s", path,
			      luks_device_why(d, id));
		(void) sym_crypt_keyslot_destroy(luks_device_cd(d), slot);
		goto out;
	}
	if (ret_keyslot)
		*ret_keyslot = slot;
	if (ret_token)
		*ret_token = id;
	r = 0;
out:
	luks_device_free(d);
	return r;
}

MB_EXPORT int mb_luks_recovery_keyslots(const char *path, uint32_t *ret_mask, mb_error *err)
{
	luks_device *d = NULL;
	int r = luks_device_open(&d, path, err);

	*ret_mask = 0;
	if (r < 0)
		return r;
	for (int id = 0; id < luks_device_max_tokens(d); id++) {
		const char *type = luks_device_token_type(d, id);

		if (!type || strcmp(type, MB_LUKS_RECOVERY_TOKEN_TYPE) != 0)
			continue;
		for (int slot = 0; slot < KEYSLOTS_MAX; slot++) {
			crypt_keyslot_info st = sym_crypt_keyslot_status(luks_device_cd(d), slot);

			if ((st == CRYPT_SLOT_ACTIVE || st == CRYPT_SLOT_ACTIVE_LAST) &&
			    sym_crypt_token_is_assigned(luks_device_cd(d), id, slot) == 0)
				*ret_mask |= 1u << slot;
		}
	}
	luks_device_free(d);
	return 0;
}

/* Whether a keyslot that no token but a recovery mark is assigned to stays once `gone` is destroyed. */
static bool passphrase_slot_left(luks_device *d, int gone)
{
	for (int slot = 0; slot < KEYSLOTS_MAX; slot++) {
		crypt_keyslot_info st = sym_crypt_keyslot_status(luks_device_cd(d), slot);

		if (slot != gone && (st == CRYPT_SLOT_ACTIVE || st == CRYPT_SLOT_ACTIVE_LAST) &&
		    !luks_device_slot_has_token(d, slot, -1))
			return true;
	}
	return false;
}

/* The new token id, read back from the disk (the device loaded again), unseals to key. */
static int check_new(mb_tpm *tpm, luks_device **d, const char *path, int id, const secret_page *key, mb_error *err)
{
	static const mb_unseal_options none = MB_OPTIONS_INIT(mb_unseal_options);
	mb_unseal_explanation *e = NULL;
	mb_luks_token *t = NULL;
	secret_page again = { 0 };
	int r;

	luks_device_free(*d);
	*d = NULL;
	r = luks_device_open(d, path, err);
	if (r < 0)
		return r;
	if (!luks_device_is_mboot_token(*d, id))
		return set_error(err, -EIO, "the new token %d is not on the disk", id);
	r = luks_device_token_read(*d, id, &t, err);
	if (r == 0 && secret_page_alloc(&again, 0) < 0)
		r = set_error(err, -ENOMEM, "out of memory");
	if (r == 0)
		r = mb_luks_token_unseal(tpm, t, &none, again.p, &again.size, &e, err);
	if (r == 0 && (again.size != key->size || CRYPTO_memcmp(again.p, key->p, key->size) != 0))
		r = set_error(err, -EIO, "the new token %d does not unseal to its keyslot's key", id);
	mb_unseal_explanation_free(e);
	secret_page_free(&again);
	mb_luks_token_free(t);
	return r;
}

/* Steps 4 and 5 of mb_luks_rekey: the old keyslot's mboot tokens, then the keyslot. */
static int remove_old(luks_device *d, const char *path, int old_slot, int new_token, mb_luks_rekey_result *ret,
		      mb_error *err)
{
	int r = 0;

	for (int id = 0; id < luks_device_max_tokens(d) && id < 32; id++) {
		int rr;

		if (id == new_token || !luks_device_is_mboot_token(d, id) ||
		    sym_crypt_token_is_assigned(luks_device_cd(d), id, old_slot) != 0)
			continue;
		rr = sym_crypt_token_json_set(luks_device_cd(d), id, NULL);
		if (rr < 0)
			return set_error(err, rr, "%s: the new token %d is stored, but the old token %d could not be "
					 "removed: %s", path, new_token, id, luks_device_why(d, rr));
		ret->removed |= 1u << id;
	}
	/* a keyslot another token still opens, or the last one a passphrase opens, stays */
	if (luks_device_slot_has_token(d, old_slot, -1) || !passphrase_slot_left(d, old_slot))
		return 0;
	r = sym_crypt_keyslot_destroy(luks_device_cd(d), old_slot);
	if (r < 0)
		return set_error(err, r, "%s: the new token %d is stored, but the old keyslot %d could not be "
				 "removed: %s", path, new_token, old_slot, luks_device_why(d, r));
	ret->old_keyslot_removed = true;
	return 0;
}

MB_EXPORT int mb_luks_rekey(mb_tpm *tpm, const char *path, int token, const char *passphrase,
			    size_t passphrase_size, const mb_pcr_values *const *predicted, size_t n_predicted,
			    mb_luks_rekey_result *ret, mb_error *err)
{
	/* the key is random: as mb_luks_enroll's keyslots, PBKDF2 at its minimum */
	struct crypt_pbkdf_type fast = {
		.type = CRYPT_KDF_PBKDF2, .hash = "sha512", .iterations = 1000, .flags = CRYPT_PBKDF_NO_BENCHMARK,
	};
	luks_device *d = NULL;
	mb_luks_token *t = NULL;
	secret_page key = { 0 };
	char *sealed = NULL, *tok = NULL;
	const char *old;
	size_t old_size;
	int r, slot, id;

	memset(ret, 0, sizeof(*ret));
	ret->old_keyslot = ret->keyslot = ret->token = -1;
	if (!passphrase || !passphrase_size)
		return set_error(err, -EINVAL, "a new key needs an existing passphrase of the device");
	r = luks_device_open(&d, path, err);
	if (r < 0)
		return r;
	if (token < 0 || token >= luks_device_max_tokens(d) || !luks_device_is_mboot_token(d, token)) {
		r = set_error(err, -ENOENT, "%s: no \"" MB_LUKS_TOKEN_TYPE "\" token %d", path, token);
		goto out;
	}
	r = luks_device_token_read(d, token, &t, err);
	if (r < 0) {
		prefix_error(err, r, path);
		goto out;
	}
	ret->old_keyslot = mb_luks_token_keyslot(t);
	if (strcmp(mb_luks_token_policy(t), "authorize") == 0) {
		r = set_error(err, -EINVAL, "%s: token %d is sealed to signed policies: a release ships a signature, "
			      "no new key is needed", path, token);
		goto out;
	}
	/* 1. A new key, sealed as the old one was (bank, PCRs, parent), to today's values [OR the predicted]. */
	if (secret_page_alloc(&key, 0) < 0) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (RAND_priv_bytes(key.p, MB_LUKS_KEY_SIZE) != 1) {
		r = set_error(err, -EIO, "no random bytes for the key");
		goto out;
	}
	key.size = MB_LUKS_KEY_SIZE;
	old = luks_token_sealed(t, &old_size);
	/* a PIN token is refused there (no PIN here): re-enroll it with --pin (docs/luks.md) */
	r = luks_reseal_key(tpm, old, old_size, key.p, key.size, predicted, n_predicted, NULL, &sealed, &ret->or_policy,
			    err);
	if (r < 0) {
		prefix_error(err, r, path);
		goto out;
	}
	/* 2. Its keyslot, authorised by the passphrase (checked here: a wrong one changes nothing). */
	r = sym_crypt_set_pbkdf_type(luks_device_cd(d), &fast);
	if (r < 0) {
		r = set_error(err, r, "%s: %s", path, luks_device_why(d, r));
		goto out;
	}
	slot = sym_crypt_keyslot_add_by_passphrase(luks_device_cd(d), CRYPT_ANY_SLOT, passphrase, passphrase_size,
					       (const char *) key.p, key.size);
	if (slot < 0) {
		r = slot == -EPERM ? set_error(err, -EPERM, "%s: the passphrase opens no keyslot; nothing changed", path) :
				     set_error(err, slot, "%s: adding a keyslot: %s; nothing changed", path,
					       luks_device_why(d, slot));
		goto out;
	}
	ret->keyslot = slot;
	/* 3. Its token: one header write; until it lands the new keyslot is an unused extra. */
	r = luks_token_build(slot, sealed, NULL, &tok, err);
	if (r == 0) {
		id = sym_crypt_token_json_set(luks_device_cd(d), CRYPT_ANY_TOKEN, tok);
		if (id < 0)
			r = set_error(err, id == -EINVAL ? -ENOSPC : id, "%s: storing the new token: %s; nothing changed",
				      path, luks_device_why(d, id));
		else
			ret->token = id;
	}
	if (r == 0) {
		r = check_new(tpm, &d, path, ret->token, &key, err);
		if (r < 0) {
			prefix_error(err, r, "the new token failed its check and was removed again; nothing changed");
			prefix_error(err, r, path);
		}
	}
	if (r < 0) {
		if (d && ret->token >= 0 && sym_crypt_token_json_set(luks_device_cd(d), ret->token, NULL) >= 0)
			ret->token = -1;
		if (d && ret->token < 0 && sym_crypt_keyslot_destroy(luks_device_cd(d), slot) >= 0)
			ret->keyslot = -1;
		goto out;
	}
	/* 4, 5. Only now the old tokens and keyslot. */
	r = remove_old(d, path, ret->old_keyslot, ret->token, ret, err);
out:
	secret_page_free(&key);
	mb_luks_token_free(t);
	free(sealed);
	free(tok);
	luks_device_free(d);
	return r;
}
