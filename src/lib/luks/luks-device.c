/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "mboot" tokens on a LUKS2 device, through libcryptsetup (docs/luks.md): enroll, list,
 * remove, unlock. The disk key lives only in one locked page of ours (and libcryptsetup's
 * own buffers while it uses it), and is wiped on every path; it is never written anywhere
 * but, sealed, into the token. libcryptsetup's messages are caught (a log callback on the
 * device), never printed: the last error it gave goes into the mb_error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <mboot/luks.h>
#include "shared/fail.h"
#include "shared/secret-page.h"
#include "cryptsetup-dl.h"
#include "luks-device.h"
#include "luks-internal.h"
#include "luks-seal.h"
#include "shared/base64.h"
#include "shared/options.h"

/* LUKS2_KEYSLOTS_MAX; crypt_token_max(CRYPT_LUKS2) gives the tokens' */
#define KEYSLOTS_MAX 32

typedef struct device {
	struct crypt_device *cd;
	int max_tokens;            /* sym_crypt_token_max(CRYPT_LUKS2), asked once libcryptsetup is loaded */
	char last_error[256];      /* libcryptsetup's last error message, for ours */
} device;

static void on_log(int level, const char *msg, void *usrptr)
{
	device *d = usrptr;
	size_t n;

	if (level != CRYPT_LOG_ERROR || !msg)
		return;
	snprintf(d->last_error, sizeof(d->last_error), "%s", msg);
	n = strlen(d->last_error);
	while (n && d->last_error[n - 1] == '\n')
		d->last_error[--n] = '\0';
}

/* libcryptsetup's words when it gave some, else strerror's. */
static const char *why(const device *d, int r)
{
	return d->last_error[0] ? d->last_error : strerror(-r);
}

static int device_open(device *d, const char *path, mb_error *err)
{
	int r;

	memset(d, 0, sizeof(*d));
	if (!path)
		return set_error(err, -EINVAL, "no device given");
	r = dlopen_cryptsetup(err);
	if (r < 0)
		return r;
	r = sym_crypt_init(&d->cd, path);
	if (r < 0)
		return set_error(err, r, "%s: %s", path, strerror(-r));
	sym_crypt_set_log_callback(d->cd, on_log, d);
	r = sym_crypt_load(d->cd, CRYPT_LUKS2, NULL);
	if (r < 0) {
		sym_crypt_free(d->cd);
		d->cd = NULL;
		return set_error(err, r == -ENOMEM ? r : -EINVAL, "%s: not a LUKS2 device", path);
	}
	d->max_tokens = sym_crypt_token_max(CRYPT_LUKS2);
	return 0;
}

static void device_close(device *d)
{
	sym_crypt_free(d->cd);
	d->cd = NULL;
}

/* The key's page (shared/secret-page.h): locked, out of core dumps, wiped when freed. */
static int key_alloc(secret_page *k, mb_error *err)
{
	if (secret_page_alloc(k, 0) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	return 0;
}

/* Token id's type when it is an active token; NULL when it is free. */
static const char *token_type(device *d, int id)
{
	const char *type = NULL;
	crypt_token_info st = sym_crypt_token_status(d->cd, id, &type);

	if (st == CRYPT_TOKEN_INVALID || st == CRYPT_TOKEN_INACTIVE)
		return NULL;
	return type;
}

static bool is_mboot_token(device *d, int id)
{
	const char *type = token_type(d, id);

	return type && strcmp(type, MB_LUKS_TOKEN_TYPE) == 0;
}

static int token_read(device *d, int id, mb_luks_token **ret, mb_error *err)
{
	const char *json = NULL;
	int r = sym_crypt_token_json_get(d->cd, id, &json);
	char what[32];

	*ret = NULL;
	if (r < 0)
		return set_error(err, r, "token %d: %s", id, why(d, r));
	r = mb_luks_token_parse(json, strlen(json), ret, err);
	if (r < 0) {
		snprintf(what, sizeof(what), "token %d", id);
		prefix_error(err, r, what);
	}
	return r;
}

MB_EXPORT int mb_luks_enroll(mb_tpm *tpm, const char *path, const mb_luks_enroll_options *opt_in, int *ret_token,
			     int *ret_keyslot, mb_error *err)
{
	mb_luks_enroll_options o;
	const mb_luks_enroll_options *opt = &o;
	/* the key is random: stretching it adds nothing, and PBKDF2 at its minimum opens it at once */
	struct crypt_pbkdf_type fast = {
		.type = CRYPT_KDF_PBKDF2, .hash = "sha512", .iterations = 1000, .flags = CRYPT_PBKDF_NO_BENCHMARK,
	};
	uint64_t metadata_size = 0, keyslots_size = 0;
	size_t token_size;
	char *sealed = NULL, *events = NULL, *tok = NULL;
	secret_page key = { 0 };
	device d = { 0 };
	int r, slot = -1, id = -1;

	if (ret_token)
		*ret_token = -1;
	if (ret_keyslot)
		*ret_keyslot = -1;
	r = opt_in ? OPTIONS_TAKE(o, opt_in, err) : 0;
	if (r < 0)
		return r;
	if (!opt_in || !opt->passphrase)
		return set_error(err, -EINVAL, "enrolling needs an existing passphrase of the device");
	if (!opt->authority_public == !opt->pcr_mask)
		return set_error(err, -EINVAL, "enrolling needs PCRs or a signing key to seal to (one of them)");
	r = device_open(&d, path, err);
	if (r < 0)
		return r;
	r = key_alloc(&key, err);
	if (r < 0)
		goto out;
	if (RAND_priv_bytes(key.p, MB_LUKS_KEY_SIZE) != 1) {
		r = set_error(err, -EIO, "no random bytes for the key");
		goto out;
	}
	key.size = MB_LUKS_KEY_SIZE;
	r = luks_seal_key(tpm, key.p, key.size, opt, &sealed, &events, err);
	if (r < 0)
		goto out;
	/* the widest keyslot number, to refuse a token too large before a keyslot is added */
	r = luks_token_build(KEYSLOTS_MAX - 1, sealed, events, &tok, err);
	if (r < 0)
		goto out;
	if (sym_crypt_get_metadata_size(d.cd, &metadata_size, &keyslots_size) == 0 && metadata_size > 4096 &&
	    strlen(tok) >= metadata_size - 4096) {
		r = set_error(err, -ENOSPC, "%s: the token (%zu bytes) does not fit in the LUKS2 JSON metadata area "
			      "(%llu bytes)", path, strlen(tok), (unsigned long long) (metadata_size - 4096));
		goto out;
	}
	token_size = strlen(tok);
	free(tok);
	tok = NULL;

	r = sym_crypt_set_pbkdf_type(d.cd, &fast);
	if (r < 0) {
		r = set_error(err, r, "%s: %s", path, why(&d, r));
		goto out;
	}
	d.last_error[0] = '\0';
	slot = sym_crypt_keyslot_add_by_passphrase(d.cd, CRYPT_ANY_SLOT, opt->passphrase, opt->passphrase_size,
					       (const char *) key.p, key.size);
	if (slot < 0) {
		if (slot == -EPERM)
			r = set_error(err, -EPERM, "%s: the passphrase opens no keyslot", path);
		else if (slot == -ENOSPC)
			r = set_error(err, -ENOSPC, "%s: the LUKS2 JSON metadata area (%llu bytes) has no room for another "
				      "keyslot and a token of %zu bytes", path,
				      (unsigned long long) (metadata_size > 4096 ? metadata_size - 4096 : 0), token_size);
		else
			r = set_error(err, slot, "%s: adding a keyslot: %s", path, why(&d, slot));
		slot = -1;
		goto out;
	}
	r = luks_token_build(slot, sealed, events, &tok, err);
	if (r == 0) {
		d.last_error[0] = '\0';
		id = sym_crypt_token_json_set(d.cd, CRYPT_ANY_TOKEN, tok);
		if (id < 0)
			r = id == -ENOSPC || id == -EINVAL ?
				    set_error(err, -ENOSPC, "%s: the token (%zu bytes) does not fit in the LUKS2 JSON "
					      "metadata area (%llu bytes, %s)", path, strlen(tok),
					      (unsigned long long) (metadata_size > 4096 ? metadata_size - 4096 : 0),
					      why(&d, id)) :
				    set_error(err, id, "%s: storing the token: %s", path, why(&d, id));
	}
	if (r < 0) {
		/* no keyslot without its token: nothing could open it */
		(void) sym_crypt_keyslot_destroy(d.cd, slot);
		goto out;
	}
	if (ret_token)
		*ret_token = id;
	if (ret_keyslot)
		*ret_keyslot = slot;
	r = 0;
out:
	secret_page_free(&key);
	free(sealed);
	free(events);
	free(tok);
	device_close(&d);
	return r;
}

MB_EXPORT void mb_luks_list_free(mb_luks_entry *entries, size_t n)
{
	for (size_t i = 0; entries && i < n; i++)
		mb_luks_token_free(entries[i].parsed);
	free(entries);
}

MB_EXPORT int mb_luks_list(const char *path, mb_luks_entry **ret, size_t *ret_n, mb_error *err)
{
	int max;
	mb_luks_entry *e = NULL;
	size_t n = 0;
	device d;
	int r;

	*ret = NULL;
	*ret_n = 0;
	r = device_open(&d, path, err);
	if (r < 0)
		return r;
	max = d.max_tokens;
	if (max > 0 && !(e = calloc((size_t) max, sizeof(*e)))) {
		device_close(&d);
		return set_error(err, -ENOMEM, "out of memory");
	}
	for (int id = 0; id < max; id++) {
		if (!is_mboot_token(&d, id))
			continue;
		e[n].token = id;
		r = token_read(&d, id, &e[n].parsed, &e[n].error);
		if (r == -ENOMEM) {
			mb_luks_list_free(e, n + 1);
			device_close(&d);
			return set_error(err, r, "out of memory");
		}
		n++;
	}
	device_close(&d);
	*ret = e;
	*ret_n = n;
	return 0;
}

/*
 * Whether any token of the device (of any type but a recovery key's mark: that keyslot is
 * opened by a passphrase) is assigned to keyslot.
 */
static bool slot_has_token(device *d, int max_tokens, int slot, int except)
{
	for (int id = 0; id < max_tokens; id++) {
		const char *type = id != except ? token_type(d, id) : NULL;

		if (type && strcmp(type, MB_LUKS_RECOVERY_TOKEN_TYPE) != 0 && sym_crypt_token_is_assigned(d->cd, id, slot) == 0)
			return true;
	}
	return false;
}

MB_EXPORT int mb_luks_remove(const char *path, int token, int *ret_keyslot, mb_error *err)
{
	int max, destroy = -1, others = 0, r;
	const char *type;
	device d;

	if (ret_keyslot)
		*ret_keyslot = -1;
	r = device_open(&d, path, err);
	if (r < 0)
		return r;
	max = d.max_tokens;
	if (token < 0 || token >= max || !(type = token_type(&d, token))) {
		r = set_error(err, -ENOENT, "%s: no token %d", path, token);
		goto out;
	}
	if (strcmp(type, MB_LUKS_TOKEN_TYPE) != 0) {
		r = set_error(err, -EINVAL, "%s: token %d is of type \"%.64s\", not \"" MB_LUKS_TOKEN_TYPE "\"", path,
			      token, type);
		goto out;
	}
	/*
	 * What LUKS2 says is assigned, not what the token's JSON claims (which may be corrupt);
	 * and a way in must remain that needs no TPM: a keyslot no token is assigned to.
	 */
	for (int slot = 0; slot < KEYSLOTS_MAX; slot++) {
		crypt_keyslot_info st = sym_crypt_keyslot_status(d.cd, slot);

		if (st != CRYPT_SLOT_ACTIVE && st != CRYPT_SLOT_ACTIVE_LAST)
			continue;
		if (sym_crypt_token_is_assigned(d.cd, token, slot) == 0) {
			if (!slot_has_token(&d, max, slot, token))
				destroy = slot;
		} else if (!slot_has_token(&d, max, slot, -1))
			others++;
	}
	if (!others) {
		r = set_error(err, -EBUSY, "%s: refusing to remove token %d: no keyslot opened by a passphrase would "
			      "remain (add one first: cryptsetup luksAddKey)", path, token);
		goto out;
	}
	d.last_error[0] = '\0';
	r = sym_crypt_token_json_set(d.cd, token, NULL);
	if (r < 0) {
		r = set_error(err, r, "%s: removing token %d: %s", path, token, why(&d, r));
		goto out;
	}
	if (destroy >= 0) {
		r = sym_crypt_keyslot_destroy(d.cd, destroy);
		if (r < 0) {
			r = set_error(err, r, "%s: token %d removed, but not its keyslot %d: %s", path, token, destroy,
				      why(&d, r));
			goto out;
		}
		if (ret_keyslot)
			*ret_keyslot = destroy;
	}
	r = 0;
out:
	device_close(&d);
	return r;
}

/* Unseal token id's key and open its keyslot (activate as name, or only check with name NULL). */
static int unlock_one(mb_tpm *tpm, device *d, const char *path, const char *name, int id,
		      const mb_unseal_options *opt, mb_unseal_explanation **explanation, mb_error *err)
{
	mb_luks_token *t = NULL;
	secret_page key = { 0 };
	int r = token_read(d, id, &t, err), slot;

	if (r < 0)
		return r;
	r = key_alloc(&key, err);
	if (r == 0)
		r = mb_luks_token_unseal(tpm, t, opt, key.p, &key.size, explanation, err);
	if (r < 0)
		goto out;
	slot = mb_luks_token_keyslot(t);
	d->last_error[0] = '\0';
	r = sym_crypt_activate_by_passphrase(d->cd, name, slot, (const char *) key.p, key.size, 0);
	if (r == -EPERM || r == -ENOENT)
		r = set_error(err, -EPERM, "%s: token %d's key does not open keyslot %d", path, id, slot);
	else if (r < 0)
		r = set_error(err, r, "%s: %s keyslot %d: %s", path, name ? "activating with" : "checking", slot,
			      why(d, r));
out:
	secret_page_free(&key);
	mb_luks_token_free(t);
	return r;
}

/*
 * Of several tokens' failures, the one to report: a refusal of this boot (its explanation
 * kept) over any other error. True when trying more tokens is pointless (the TPM failed).
 */
static bool note_failure(int r, const mb_error *one, mb_unseal_explanation *e, int *best, mb_error *err,
			 mb_unseal_explanation **explanation)
{
	/* a wrong PIN says more than a refusal: the PCRs were right (the TPM checks them first) */
	if (r == MB_ERR_TPM_AUTH || (*best != MB_ERR_TPM_AUTH && (r == MB_ERR_TPM_POLICY || *best != MB_ERR_TPM_POLICY))) {
		*best = r;
		if (err)
			*err = *one;
		mb_unseal_explanation_free(*explanation);
		*explanation = e;
	} else
		mb_unseal_explanation_free(e);
	/* a wrong PIN is not tried on the next token: the TPM would count it again */
	return r == MB_ERR_TPM || r == MB_ERR_TPM_LOCKOUT || r == MB_ERR_TPM_AUTH || r == -ENOMEM;
}

MB_EXPORT int mb_luks_unlock(mb_tpm *tpm, const char *path, const char *name, int token,
			     const mb_unseal_options *opt, int *ret_token, mb_unseal_explanation **explanation,
			     mb_error *err)
{
	int max, r = 0, found = 0;
	device d;

	*explanation = NULL;
	if (ret_token)
		*ret_token = -1;
	r = device_open(&d, path, err);
	if (r < 0)
		return r;
	max = d.max_tokens;
	if (token >= 0) {
		if (token >= max || !is_mboot_token(&d, token))
			r = set_error(err, -ENOENT, "%s: no \"" MB_LUKS_TOKEN_TYPE "\" token %d", path, token);
		else if ((r = unlock_one(tpm, &d, path, name, token, opt, explanation, err)) >= 0 && ret_token)
			*ret_token = token;
		goto out;
	}
	/*
	 * Each token in turn until one opens. What is said when none does: a refusal of this
	 * boot (with its explanation) before another token's error, else the last error. A
	 * token of the other kind (PCRs, signed policies) than the signatures given is no error
	 * to stop at; a TPM that does not answer will not answer for the next token either.
	 */
	int best = 0;

	for (int id = 0; id < max; id++) {
		mb_unseal_explanation *e = NULL;
		mb_error one = { 0 };

		if (!is_mboot_token(&d, id))
			continue;
		found++;
		r = unlock_one(tpm, &d, path, name, id, opt, &e, &one);
		if (r >= 0) {
			mb_unseal_explanation_free(e);
			if (ret_token)
				*ret_token = id;
			goto out;
		}
		if (note_failure(r, &one, e, &best, err, explanation))
			goto out;
	}
	r = best;
	if (!found)
		r = set_error(err, -ENOENT, "%s: no \"" MB_LUKS_TOKEN_TYPE "\" token (mboot luks enroll adds one)", path);
out:
	device_close(&d);
	return r;
}

/* LUKS2_TOKENS_MAX: a token id fits a bit of uint32_t (mb_luks_reseal_result) */
#define TOKENS_MAX 32

/* The "mboot" tokens of one keyslot that a reseal replaces: parsed, sealed to PCR values. */
typedef struct slot_tokens {
	int ids[TOKENS_MAX];
	mb_luks_token *parsed[TOKENS_MAX];
	int n;
} slot_tokens;

static void slot_tokens_free(slot_tokens *g)
{
	for (int i = 0; i < g->n; i++)
		mb_luks_token_free(g->parsed[i]);
	g->n = 0;
}

/*
 * Every "mboot" token assigned to keyslot slot (as LUKS2 records it, and as the token says)
 * that parses and is sealed to PCR values, token `first` first. Malformed ones and those
 * sealed to signed policies are not the reseal's: they are left alone.
 */
static int slot_tokens_get(device *d, int max, int slot, int first, slot_tokens *g, mb_error *err)
{
	g->n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int id = 0; id < max; id++) {
			mb_luks_token *t = NULL;
			mb_error ignored = { 0 };
			int r;

			if ((pass == 0) != (id == first) || !is_mboot_token(d, id) ||
			    sym_crypt_token_is_assigned(d->cd, id, slot) != 0)
				continue;
			r = token_read(d, id, &t, &ignored);
			if (r == -ENOMEM) {
				slot_tokens_free(g);
				return set_error(err, r, "out of memory");
			}
			if (r < 0)
				continue;
			if (mb_luks_token_keyslot(t) != slot || strcmp(mb_luks_token_policy(t), "authorize") == 0) {
				mb_luks_token_free(t);
				continue;
			}
			g->ids[g->n] = id;
			g->parsed[g->n++] = t;
		}
	return 0;
}

/*
 * Into key: the key of the first token of g that unseals on this boot and opens keyslot
 * slot (checked with libcryptsetup: a token that unseals to another key must not be
 * resealed). Returns its index in g; when none does, the error of the most telling one
 * (a refusal of this boot first, with its explanation), as mb_luks_unlock says it.
 */
static int slot_key(mb_tpm *tpm, device *d, const char *path, int slot, const slot_tokens *g,
		    const mb_unseal_options *opt, secret_page *key, mb_unseal_explanation **explanation, mb_error *err)
{
	int best = -ENOENT;

	set_error(err, best, "%s: keyslot %d has no \"" MB_LUKS_TOKEN_TYPE "\" token sealed to PCR values", path, slot);
	for (int i = 0; i < g->n; i++) {
		mb_unseal_explanation *e = NULL;
		mb_error one = { 0 };
		char what[64];
		int r = mb_luks_token_unseal(tpm, g->parsed[i], opt, key->p, &key->size, &e, &one);

		if (r == 0) {
			d->last_error[0] = '\0';
			r = sym_crypt_activate_by_passphrase(d->cd, NULL, slot, (const char *) key->p, key->size, 0);
			if (r >= 0) {
				mb_unseal_explanation_free(e);
				mb_unseal_explanation_free(*explanation);
				*explanation = NULL;
				return i;
			}
			OPENSSL_cleanse(key->p, key->cap);
			key->size = 0;
			if (r == -EPERM || r == -ENOENT)
				r = set_error(&one, -EPERM, "token %d's key does not open keyslot %d", g->ids[i], slot);
			else
				r = set_error(&one, r, "checking keyslot %d: %s", slot, why(d, r));
		} else {
			snprintf(what, sizeof(what), "token %d", g->ids[i]);
			prefix_error(&one, r, what);
		}
		prefix_error(&one, r, path);
		if (note_failure(r, &one, e, &best, err, explanation))
			break;
	}
	return best;
}

/*
 * The new token id, read back from the disk (a fresh crypt_load, not libcryptsetup's memory
 * of what it wrote), unseals on this boot to key. d is reopened.
 */
static int check_stored(mb_tpm *tpm, device *d, const char *path, int id, const mb_unseal_options *opt,
			const secret_page *key, mb_error *err)
{
	mb_unseal_explanation *e = NULL;
	mb_luks_token *t = NULL;
	secret_page again = { 0 };
	int r;

	device_close(d);
	r = device_open(d, path, err);
	if (r < 0)
		return r;
	if (!is_mboot_token(d, id))
		return set_error(err, -EIO, "%s: the new token %d is not on the disk", path, id);
	r = token_read(d, id, &t, err);
	if (r == 0)
		r = key_alloc(&again, err);
	if (r == 0)
		r = mb_luks_token_unseal(tpm, t, opt, again.p, &again.size, &e, err);
	if (r == 0 && (again.size != key->size || CRYPTO_memcmp(again.p, key->p, key->size) != 0))
		r = set_error(err, -EIO, "%s: the new token %d does not unseal to the keyslot's key", path, id);
	mb_unseal_explanation_free(e);
	secret_page_free(&again);
	mb_luks_token_free(t);
	return r;
}

MB_EXPORT int mb_luks_reseal(mb_tpm *tpm, const char *path, int token, const mb_pcr_values *const *predicted,
			     size_t n_predicted, const mb_unseal_options *opt_in, mb_luks_reseal_result *ret,
			     mb_unseal_explanation **explanation, mb_error *err)
{
	mb_unseal_options o;
	const mb_unseal_options *opt = &o;
	slot_tokens g = { 0 };
	secret_page key = { 0 };
	mb_luks_token *t = NULL;
	char *sealed = NULL, *tok = NULL, *events = NULL;
	const uint8_t *summary;
	const char *old;
	size_t old_size, summary_size;
	int max, r, slot, src, id;
	device d;

	*explanation = NULL;
	memset(ret, 0, sizeof(*ret));
	ret->keyslot = -1;
	ret->token = -1;
	r = OPTIONS_TAKE(o, opt_in, err);
	if (r < 0)
		return r;
	r = device_open(&d, path, err);
	if (r < 0)
		return r;
	max = d.max_tokens;
	if (max > TOKENS_MAX)
		max = TOKENS_MAX;
	if (token < 0 || token >= max || !is_mboot_token(&d, token)) {
		r = set_error(err, -ENOENT, "%s: no \"" MB_LUKS_TOKEN_TYPE "\" token %d", path, token);
		goto out;
	}
	r = token_read(&d, token, &t, err);
	if (r < 0) {
		prefix_error(err, r, path);
		goto out;
	}
	slot = ret->keyslot = mb_luks_token_keyslot(t);
	if (strcmp(mb_luks_token_policy(t), "authorize") == 0) {
		r = set_error(err, -EINVAL, "%s: token %d is sealed to signed policies: nothing to reseal (a new release "
			      "ships a new signature)", path, token);
		goto out;
	}
	r = slot_tokens_get(&d, max, slot, token, &g, err);
	if (r == 0)
		r = key_alloc(&key, err);
	if (r < 0)
		goto out;
	src = slot_key(tpm, &d, path, slot, &g, opt, &key, explanation, err);
	if (src < 0) {
		r = src;
		goto out;
	}
	old = luks_token_sealed(g.parsed[src], &old_size);
	r = luks_reseal_key(tpm, old, old_size, key.p, key.size, predicted, n_predicted, opt, &sealed, &ret->or_policy,
			    err);
	/* The enrolled boot's event summary goes along: the new token explains a refusal as the old one did. */
	summary = luks_token_events(g.parsed[src], &summary_size);
	if (r == 0 && summary && !(events = base64_encode(summary, summary_size)))
		r = set_error(err, -ENOMEM, "out of memory");
	if (r == 0)
		r = luks_token_build(slot, sealed, events, &tok, err);
	if (r < 0) {
		prefix_error(err, r, path);
		goto out;
	}

	/*
	 * One header write adds the new token beside the old ones (LUKS2 lets tokens share a
	 * keyslot; libcryptsetup tries each in turn): a crash before it leaves the old tokens,
	 * after it both, and each opens the keyslot on the boot it is sealed to. The header's
	 * two copies carry a sequence id and a checksum, so a crash between writing them leaves
	 * the one or the other whole.
	 */
	d.last_error[0] = '\0';
	id = sym_crypt_token_json_set(d.cd, CRYPT_ANY_TOKEN, tok);
	if (id < 0) {
		r = id == -ENOSPC || id == -EINVAL ?
			    set_error(err, -ENOSPC, "%s: no room in the LUKS2 JSON metadata area for the new token (%zu "
				      "bytes) beside the old one (%s); nothing changed", path, strlen(tok), why(&d, id)) :
			    set_error(err, id, "%s: storing the new token: %s; nothing changed", path, why(&d, id));
		goto out;
	}
	ret->token = id;
	r = check_stored(tpm, &d, path, id, opt, &key, err);
	if (r < 0) {
		/* a new token that cannot be shown to work goes again; the old ones stay */
		if (d.cd && is_mboot_token(&d, id) && sym_crypt_token_json_set(d.cd, id, NULL) >= 0)
			ret->token = -1;
		prefix_error(err, r, ret->token < 0 ? "the new token failed its check and was removed again; nothing "
			     "changed" : "the new token failed its check and stays beside the old ones");
		goto out;
	}
	/* Only now the old ones, each in a header write of its own. */
	for (int i = 0; i < g.n; i++) {
		int oid = g.ids[i], rr;

		if (oid == id || !is_mboot_token(&d, oid) || sym_crypt_token_is_assigned(d.cd, oid, slot) != 0)
			continue; /* gone meanwhile */
		d.last_error[0] = '\0';
		rr = sym_crypt_token_json_set(d.cd, oid, NULL);
		if (rr < 0) {
			ret->left |= 1u << oid;
			if (r == 0)
				r = set_error(err, rr, "%s: the new token %d is stored, but the old token %d could not be "
					      "removed (%s): the next reseal removes it", path, id, oid, why(&d, rr));
		} else
			ret->removed |= 1u << oid;
	}
out:
	secret_page_free(&key);
	slot_tokens_free(&g);
	mb_luks_token_free(t);
	free(sealed);
	free(events);
	free(tok);
	device_close(&d);
	return r;
}

/* luks-device.h: the device for luks-recovery.c */
int luks_device_open(luks_device **ret, const char *path, mb_error *err)
{
	device *d = calloc(1, sizeof(*d));
	int r;

	*ret = NULL;
	if (!d)
		return set_error(err, -ENOMEM, "out of memory");
	r = device_open(d, path, err);
	if (r < 0) {
		free(d);
		return r;
	}
	*ret = d;
	return 0;
}

void luks_device_free(luks_device *d)
{
	if (d)
		device_close(d);
	free(d);
}

struct crypt_device *luks_device_cd(luks_device *d)
{
	d->last_error[0] = '\0';
	return d->cd;
}

const char *luks_device_why(const luks_device *d, int r) { return why(d, r); }
int luks_device_max_tokens(const luks_device *d) { return d->max_tokens; }
bool luks_device_is_mboot_token(luks_device *d, int id) { return is_mboot_token(d, id); }
const char *luks_device_token_type(luks_device *d, int id) { return token_type(d, id); }
int luks_device_token_read(luks_device *d, int id, mb_luks_token **ret, mb_error *err)
{
	return token_read(d, id, ret, err);
}
bool luks_device_slot_has_token(luks_device *d, int slot, int except)
{
	return slot_has_token(d, d->max_tokens, slot, except);
}
