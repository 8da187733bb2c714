/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Nettle's hashes, not OpenSSL's: libcrypto costs a process about 0.75 ms of CPU to map and
 * relocate, and its provider machinery (openssl.cnf, the default provider's algorithm store on
 * the first EVP_MD_fetch) 0.7 to 1.1 ms more, which is more than 'mboot hash' of a small file or
 * 'log replay' of a 200-event log spend on their work. Nettle has all five TPM banks (SM3
 * too), with the same SHA-NI code paths, no initialisation and a small library; libcrypto is
 * now loaded only by what needs more than a digest (src/lib/crypto/crypto-dl.h).
 */
#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sm3.h>

#include <mboot/digest.h>
#include "lib/crypto/crypto-dl.h"
#include "lib/digest/digest-internal.h"
#include "shared/fail.h"
#include "shared/fileio.h"

static const mb_digest_info digests[] = {
	{ MB_ALG_SHA1, 20, "sha1" },
	{ MB_ALG_SHA256, 32, "sha256" },
	{ MB_ALG_SHA384, 48, "sha384" },
	{ MB_ALG_SHA512, 64, "sha512" },
	{ MB_ALG_SM3_256, 32, "sm3_256" },
};

#define N_DIGESTS (sizeof(digests) / sizeof(digests[0]))

/* digests[i] is computed by hashes[i]. */
static const struct nettle_hash *const hashes[N_DIGESTS] = {
	&nettle_sha1, &nettle_sha256, &nettle_sha384, &nettle_sha512, &nettle_sm3,
};

/* Room for any of their contexts (SHA-384 uses SHA-512's). */
typedef union hash_ctx {
	struct sha1_ctx sha1;
	struct sha256_ctx sha256;
	struct sha512_ctx sha512;
	struct sm3_ctx sm3;
} hash_ctx;

static const struct nettle_hash *hash_for(uint16_t alg)
{
	size_t i;

	for (i = 0; i < N_DIGESTS; i++)
		if (digests[i].alg == alg)
			return hashes[i];
	return NULL;
}

MB_EXPORT const mb_digest_info *mb_digest_by_alg(uint16_t alg)
{
	size_t i;

	for (i = 0; i < N_DIGESTS; i++)
		if (digests[i].alg == alg)
			return &digests[i];
	return NULL;
}

MB_EXPORT const char *mb_digest_alg_name(uint16_t alg, char buf[8])
{
	const mb_digest_info *d = mb_digest_by_alg(alg);

	if (d)
		return d->name;
	snprintf(buf, 8, "0x%04x", alg);
	return buf;
}

const mb_digest_info *mb_digest_by_name(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < N_DIGESTS; i++)
		if (strcasecmp(digests[i].name, name) == 0)
			return &digests[i];
	if (strcasecmp(name, "sm3") == 0 || strcasecmp(name, "sm3-256") == 0)
		return mb_digest_by_alg(MB_ALG_SM3_256);
	return NULL;
}

MB_EXPORT size_t mb_digest_count(void)
{
	return N_DIGESTS;
}

MB_EXPORT const mb_digest_info *mb_digest_at(size_t i)
{
	return i < N_DIGESTS ? &digests[i] : NULL;
}

MB_EXPORT int mb_digest(uint16_t alg, const void *data, size_t size, uint8_t *out)
{
	const struct nettle_hash *h = hash_for(alg);
	hash_ctx c;

	if (!h)
		return -EOPNOTSUPP;
	/* Digests of public data: nothing to wipe. */
	h->init(&c);
	h->update(&c, size, data);
	h->digest(&c, h->digest_size, out);
	return 0;
}

MB_EXPORT int mb_digest_extend(uint16_t alg, uint8_t *pcr, const uint8_t *digest)
{
	const mb_digest_info *info = mb_digest_by_alg(alg);
	uint8_t buf[2 * MB_DIGEST_MAX];

	if (!info)
		return -EOPNOTSUPP;
	memcpy(buf, pcr, info->size);
	memcpy(buf + info->size, digest, info->size);
	return mb_digest(alg, buf, 2u * info->size, pcr);
}

struct mb_digest_ctx {
	const struct nettle_hash *hash; /* NULL: OpenSSL's SHA-384/512 in ossl */
	uint16_t alg;
	union {
		hash_ctx nettle;
		SHA512_CTX ossl;
	} u;
};

/*
 * Nettle's SHA-384 and SHA-512 run at about 500 MB/s here, OpenSSL's (AVX2) at about 720 MB/s;
 * SHA-1, SHA-256 (SHA-NI in both) and SM3 are within 10 %. From BULK_MIN bytes on, OpenSSL's
 * SHA-384/512 win back what loading libcrypto costs (~0.75 ms, once per process). Its direct
 * functions, deprecated since 3.0 but the same code as its provider's, skip the provider
 * start-up (openssl.cnf, the algorithm store: 0.7 to 1.1 ms more).
 */
#define BULK_MIN ((uint64_t) 1 << 20)

int digest_ctx_new_sized(uint16_t alg, uint64_t size, mb_digest_ctx **ret)
{
	mb_digest_ctx *ctx;

	/* Without libcrypto Nettle computes the same digest. */
	if (size < BULK_MIN || (alg != MB_ALG_SHA384 && alg != MB_ALG_SHA512) || dlopen_crypto(NULL) < 0)
		return mb_digest_ctx_new(alg, ret);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->alg = alg;
	if (!(alg == MB_ALG_SHA384 ? SHA384_Init(&ctx->u.ossl) : SHA512_Init(&ctx->u.ossl))) {
		mb_digest_ctx_free(ctx);
		return -EIO;
	}
	*ret = ctx;
	return 0;
}

MB_EXPORT int mb_digest_ctx_new(uint16_t alg, mb_digest_ctx **ret)
{
	const struct nettle_hash *h = hash_for(alg);
	mb_digest_ctx *ctx;

	if (!h)
		return -EOPNOTSUPP;
	ctx = malloc(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->hash = h;
	ctx->alg = alg;
	h->init(&ctx->u.nettle);
	*ret = ctx;
	return 0;
}

MB_EXPORT int mb_digest_ctx_update(mb_digest_ctx *ctx, const void *data, size_t size)
{
	if (!ctx->hash)
		return (ctx->alg == MB_ALG_SHA384 ? SHA384_Update(&ctx->u.ossl, data, size)
						  : SHA512_Update(&ctx->u.ossl, data, size)) ? 0 : -EIO;
	ctx->hash->update(&ctx->u.nettle, size, data);
	return 0;
}

MB_EXPORT int mb_digest_ctx_final(mb_digest_ctx *ctx, uint8_t *out)
{
	if (!ctx->hash)
		return (ctx->alg == MB_ALG_SHA384 ? SHA384_Final(out, &ctx->u.ossl)
						  : SHA512_Final(out, &ctx->u.ossl)) ? 0 : -EIO;
	ctx->hash->digest(&ctx->u.nettle, ctx->hash->digest_size, out);
	return 0;
}

MB_EXPORT void mb_digest_ctx_free(mb_digest_ctx *ctx)
{
	if (!ctx)
		return;
	explicit_bzero(ctx, sizeof(*ctx));
	free(ctx);
}

/* Read in pieces that stay in the L2 cache between the read and the hashing. */
#define CHUNK (128 * 1024)

MB_EXPORT int mb_digest_file(const char *path, const uint16_t *algs, size_t n_algs,
			     uint8_t (*out)[MB_DIGEST_MAX], mb_error *err)
{
	mb_digest_ctx *ctx[8] = { 0 };
	size_t buf_size = CHUNK;
	uint64_t size_hint = 0; /* unknown: a pipe */
	struct stat st;
	uint8_t *buf = NULL;
	int fd = -1, rc = 0;
	size_t i;

	if (n_algs > sizeof(ctx) / sizeof(ctx[0]))
		return set_error(err, -EINVAL, "too many algorithms");
	for (i = 0; i < n_algs; i++)
		if (!hash_for(algs[i]))
			return set_error(err, -EOPNOTSUPP, "cannot compute algorithm 0x%04x", algs[i]);
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			rc = set_error(err, -errno, "cannot open: %s", strerror(errno));
			goto out;
		}
		(void) posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	/* A small file gets a buffer its size (+1 to see the end in one read): a CHUNK-sized
	 * one is mmap()ed and unmapped by malloc, which costs more than hashing a few KiB. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size_hint = (uint64_t) st.st_size;
		if (st.st_size < CHUNK)
			buf_size = (size_t) st.st_size + 1;
	}
	for (i = 0; i < n_algs; i++) {
		rc = digest_ctx_new_sized(algs[i], size_hint, &ctx[i]);
		if (rc < 0) {
			set_error(err, rc, "cannot start hashing: %s", strerror(-rc));
			goto out;
		}
	}
	buf = malloc(buf_size);
	if (!buf) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = fd_read_some(fd, buf, buf_size);

		if (n < 0) {
			rc = set_error(err, (int) n, "read error: %s", strerror((int) -n));
			goto out;
		}
		if (n == 0)
			break;
		for (i = 0; i < n_algs; i++) {
			rc = mb_digest_ctx_update(ctx[i], buf, (size_t) n);
			if (rc < 0) {
				set_error(err, rc, "hashing failed");
				goto out;
			}
		}
	}
	for (i = 0; i < n_algs; i++) {
		rc = mb_digest_ctx_final(ctx[i], out[i]);
		if (rc < 0) {
			set_error(err, rc, "hashing failed");
			goto out;
		}
	}
out:
	if (fd > STDIN_FILENO)
		close(fd);
	free(buf);
	for (i = 0; i < n_algs; i++)
		mb_digest_ctx_free(ctx[i]);
	return rc;
}
