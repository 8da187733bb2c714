/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Nonces that cost the verifier nothing to give: 8 random bytes, the expiry (8 bytes, big-endian
 * unix seconds) and the first 16 bytes of HMAC-SHA256 under the fleet's key over a label, the
 * machine's id and those 16 bytes. Nothing is stored when one is given, so anyone may ask for
 * as many as they like without taking one from the machine (a stored cap per machine could be
 * used up by anyone); a nonce is spent when its evidence is stored (attestations.nonce is
 * unique), and good only for the machine it was made for, until it expires.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "shared/fail.h"
#include "shared/hex.h"
#include "verifierd/fleet-internal.h"

#define NONCE_RANDOM 8
#define NONCE_EXPIRES 8
#define NONCE_MAC 16
_Static_assert(NONCE_RANDOM + NONCE_EXPIRES + NONCE_MAC == FLEET_NONCE_SIZE, "nonce layout");

static const char nonce_label[] = "mboot-verifierd nonce v1";

static int nonce_mac(const fleet *f, const char *id, const uint8_t head[NONCE_RANDOM + NONCE_EXPIRES],
		     uint8_t out[NONCE_MAC])
{
	uint8_t msg[sizeof(nonce_label) + 64 + 1 + NONCE_RANDOM + NONCE_EXPIRES], md[EVP_MAX_MD_SIZE];
	size_t id_len = strlen(id), n = 0, md_len = 0;
	EVP_MAC_CTX *c;
	int ok;

	/* The label, the id (at most 64 bytes, and NUL-terminated so that no id is a prefix of
	 * another's input), then the random bytes and the expiry. */
	if (id_len > 64 || !f->nonce_mac)
		return -EINVAL;
	memcpy(msg, nonce_label, sizeof(nonce_label));
	n += sizeof(nonce_label);
	memcpy(msg + n, id, id_len + 1);
	n += id_len + 1;
	memcpy(msg + n, head, NONCE_RANDOM + NONCE_EXPIRES);
	n += NONCE_RANDOM + NONCE_EXPIRES;
	/* a copy of the keyed context: no algorithm fetched, no key set up again */
	c = EVP_MAC_CTX_dup(f->nonce_mac);
	ok = c && EVP_MAC_update(c, msg, n) && EVP_MAC_final(c, md, &md_len, sizeof(md)) && md_len >= NONCE_MAC;
	EVP_MAC_CTX_free(c);
	if (ok)
		memcpy(out, md, NONCE_MAC);
	OPENSSL_cleanse(md, sizeof(md));
	return ok ? 0 : -EIO;
}

/* The keyed HMAC-SHA256 context the nonces' MACs start from. */
static int nonce_mac_init(fleet *f)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *) "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	int ok;

	f->nonce_mac = mac ? EVP_MAC_CTX_new(mac) : NULL;
	EVP_MAC_free(mac); /* the context holds its own reference */
	ok = f->nonce_mac && EVP_MAC_init(f->nonce_mac, f->nonce_key, sizeof(f->nonce_key), params);
	if (!ok) {
		EVP_MAC_CTX_free(f->nonce_mac);
		f->nonce_mac = NULL;
	}
	return ok ? 0 : -EIO;
}

void fleet_nonce_key_free(fleet *f)
{
	EVP_MAC_CTX_free(f->nonce_mac);
	f->nonce_mac = NULL;
	OPENSSL_cleanse(f->nonce_key, sizeof(f->nonce_key));
}

int fleet_nonce_make(const fleet *f, const char *id, int64_t expires, char hex[2 * FLEET_NONCE_SIZE + 1])
{
	uint8_t n[FLEET_NONCE_SIZE];
	uint64_t e = (uint64_t) expires;
	size_t i;

	if (RAND_bytes(n, NONCE_RANDOM) != 1)
		return -EIO;
	for (i = 0; i < NONCE_EXPIRES; i++)
		n[NONCE_RANDOM + i] = (uint8_t) (e >> (8 * (NONCE_EXPIRES - 1 - i)));
	if (nonce_mac(f, id, n, n + NONCE_RANDOM + NONCE_EXPIRES) < 0)
		return -EIO;
	hex_format(n, sizeof(n), hex);
	return 0;
}

int fleet_nonce_check(const fleet *f, const char *id, const uint8_t *nonce, size_t size, int64_t now)
{
	uint8_t mac[NONCE_MAC];
	uint64_t e = 0;
	size_t i;

	if (size != FLEET_NONCE_SIZE || nonce_mac(f, id, nonce, mac) < 0)
		return 0;
	if (CRYPTO_memcmp(mac, nonce + NONCE_RANDOM + NONCE_EXPIRES, NONCE_MAC) != 0)
		return 0;
	for (i = 0; i < NONCE_EXPIRES; i++)
		e = e << 8 | nonce[NONCE_RANDOM + i];
	return e <= INT64_MAX && (int64_t) e >= now ? 1 : 0;
}

int fleet_nonce_key_load(fleet *f, db *d, mb_error *err)
{
	uint8_t fresh[sizeof(f->nonce_key)];
	char fresh_hex[2 * sizeof(fresh) + 1], *stored = NULL;
	int r;

	if (RAND_bytes(fresh, sizeof(fresh)) != 1)
		return set_error(err, -EIO, "no random bytes from OpenSSL");
	hex_format(fresh, sizeof(fresh), fresh_hex);
	OPENSSL_cleanse(fresh, sizeof(fresh));
	r = store_secret_get(d, "nonce-key", fresh_hex, &stored, err);
	OPENSSL_cleanse(fresh_hex, sizeof(fresh_hex));
	if (r < 0)
		return prefix_error(err, r, "the nonce key");
	if (strlen(stored) != 2 * sizeof(f->nonce_key) ||
	    hex_parse(stored, strlen(stored), f->nonce_key, sizeof(f->nonce_key)) < 0)
		r = set_error(err, -EBADMSG, "the database's nonce key is not %zu bytes of hex", sizeof(f->nonce_key));
	OPENSSL_cleanse(stored, strlen(stored));
	free(stored);
	if (r >= 0 && nonce_mac_init(f) < 0)
		r = set_error(err, -EIO, "OpenSSL's HMAC-SHA256 could not be keyed with the nonce key");
	return r;
}
