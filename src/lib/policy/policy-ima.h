/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_POLICY_IMA_H
#define MB_POLICY_IMA_H
/* The policy's "ima" section as loaded (policy-ima.c): what the check and the generator share. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy-internal.h"

#define IMA_ALG_NAME_MAX 15 /* IMA's hash names ("sha256", "streebog512", ...) */

typedef struct ima_digest {
	char alg[IMA_ALG_NAME_MAX + 1];
	uint8_t size;
	uint8_t bytes[MB_DIGEST_MAX];
} ima_digest;

/* A path (or an ima-buf name) and the digests allowed for it. */
typedef struct ima_name {
	char *name;
	uint64_t hash;
	uint32_t n;
	ima_digest *d;
} ima_name;

/* Open addressing over names[]: slots hold an index + 1, 0 is empty; cap a power of two. */
typedef struct ima_table {
	size_t n;
	ima_name *names;
	size_t cap;
	uint32_t *slots;
} ima_table;

typedef struct ima_exclude {
	char *pattern;
	pcre2_code *re;
	char *literal; /* plain text: compared as text */
	size_t literal_len;
} ima_exclude;

typedef struct ima_key {
	uint8_t id[4];        /* the last 4 bytes of the certificate's subject key identifier */
	struct evp_pkey_st *pkey;
	struct x509_st *cert; /* an appended signature's signer is named by issuer and serial or key id */
} ima_key;

struct policy_ima {
	uint64_t seed;
	size_t n_keys;
	ima_key *keys;
	ima_table files;
	ima_table bufs;
	size_t n_excludes;
	ima_exclude *excludes;
	bool unlisted_ignore;
};

/* "alg:hex" or bare hex (20, 32, 48 or 64 bytes: sha1, sha256, sha384, sha512); false when it
 * is neither (or an algorithm mboot knows with another size). */
bool ima_digest_parse(const char *s, ima_digest *d);
/* The name's entry or NULL. */
const ima_name *ima_table_find(const struct policy_ima *ima, const ima_table *t, const char *name, size_t len);
uint64_t ima_name_hash(uint64_t seed, const char *s, size_t len);

/* "keys" (policy-ima-sig.c) */
int policy_ima_parse_keys(const load_ctx *c, struct policy_ima *ima, json_t *arr);
void policy_ima_free_keys(struct policy_ima *ima);
typedef enum ima_sig_check {
	IMA_SIG_VERIFIED,
	IMA_SIG_BAD,          /* a key of the policy's, and the signature does not verify */
	IMA_SIG_UNKNOWN_KEY,  /* *ret_keyid names no key of the policy's */
	IMA_SIG_MALFORMED,    /* not a version-2 IMA signature of a digest of this size */
} ima_sig_check;
ima_sig_check policy_ima_check_sig(const struct policy_ima *ima, const uint8_t *sig, size_t sig_size,
				   const uint8_t *digest, size_t digest_size, uint32_t *ret_keyid);
/* An ima-modsig entry's appended signature (modsig: PKCS#7/CMS SignedData, DER, as a kernel
 * module's) over the file without it, whose digest is d-modsig (algo, digest). VERIFIED, BAD (a
 * key of the policy's signed it and it does not verify), UNKNOWN_KEY (no key of the policy's is
 * its signer) or MALFORMED; who (at least 160 bytes): the signer as the signature names it. */
ima_sig_check policy_ima_check_modsig(const struct policy_ima *ima, const uint8_t *modsig, size_t size,
				      const char *algo, const uint8_t *digest, size_t digest_size, char *who,
				      size_t who_size);

#endif
