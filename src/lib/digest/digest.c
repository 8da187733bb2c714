/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

/*
 * SHA-1 and SHA-2 through OpenSSL's direct functions (SHA256_Init...), deprecated since 3.0 but
 * the same code (SHA-NI, AVX2) as its default provider's: the provider machinery (library
 * init, openssl.cnf, the default provider's algorithm store on the first EVP_MD_fetch) costs a
 * process 1.5 to 3 ms of CPU, more than 'mboot hash' of a small file or 'log replay' of a
 * 200-event log spend on their work. The digests are the same bits. SM3, and every digest
 * with an OpenSSL built without the deprecated API, go through EVP.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
#if !defined(OPENSSL_NO_DEPRECATED_3_0)
#define MB_DIRECT_SHA 1
#endif

#include <mboot/digest.h>
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

/* Fetched once per algorithm: EVP_MD_fetch is costly next to hashing 32 bytes. */
static const EVP_MD *md_for(uint16_t alg)
{
	static EVP_MD *cache[N_DIGESTS];
	static const char *const names[N_DIGESTS] = { "SHA1", "SHA256", "SHA384", "SHA512", "SM3" };
	size_t i;

	for (i = 0; i < N_DIGESTS; i++) {
		if (digests[i].alg != alg)
			continue;
		if (!cache[i]) {
			EVP_MD *md = EVP_MD_fetch(NULL, names[i], NULL);
			EVP_MD *expected = NULL;

			if (!md)
				return NULL;
			if (!__atomic_compare_exchange_n(&cache[i], &expected, md, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				EVP_MD_free(md);
		}
		return cache[i];
	}
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

/* One context per thread, reused: EVP_Digest() allocates a context per call, which costs
 * more than hashing the 64 bytes of an extend. It holds no secret (digests of public data).
 * A thread-specific key frees it when its thread ends: a server's worker threads would
 * otherwise leave one context each behind (the main thread's lives until the process ends). */
static _Thread_local EVP_MD_CTX *thread_ctx;
static tss_t thread_ctx_key;
static once_flag thread_ctx_once = ONCE_FLAG_INIT;
static bool thread_ctx_key_ok;

static void thread_ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void thread_ctx_key_init(void)
{
	thread_ctx_key_ok = tss_create(&thread_ctx_key, thread_ctx_free) == thrd_success;
}

#ifdef MB_DIRECT_SHA
/* The direct functions' contexts, for the algorithms that have them. */
typedef union direct_ctx {
	SHA_CTX sha1;
	SHA256_CTX sha256;
	SHA512_CTX sha512; /* SHA-384 too */
} direct_ctx;

static bool direct_init(uint16_t alg, direct_ctx *c)
{
	switch (alg) {
	case MB_ALG_SHA1:
		return SHA1_Init(&c->sha1);
	case MB_ALG_SHA256:
		return SHA256_Init(&c->sha256);
	case MB_ALG_SHA384:
		return SHA384_Init(&c->sha512);
	case MB_ALG_SHA512:
		return SHA512_Init(&c->sha512);
	default:
		return false;
	}
}

static bool direct_update(uint16_t alg, direct_ctx *c, const void *data, size_t size)
{
	switch (alg) {
	case MB_ALG_SHA1:
		return SHA1_Update(&c->sha1, data, size);
	case MB_ALG_SHA256:
		return SHA256_Update(&c->sha256, data, size);
	case MB_ALG_SHA384:
		return SHA384_Update(&c->sha512, data, size);
	default:
		return SHA512_Update(&c->sha512, data, size);
	}
}

static bool direct_final(uint16_t alg, direct_ctx *c, uint8_t *out)
{
	switch (alg) {
	case MB_ALG_SHA1:
		return SHA1_Final(out, &c->sha1);
	case MB_ALG_SHA256:
		return SHA256_Final(out, &c->sha256);
	case MB_ALG_SHA384:
		return SHA384_Final(out, &c->sha512);
	default:
		return SHA512_Final(out, &c->sha512);
	}
}
#endif

MB_EXPORT int mb_digest(uint16_t alg, const void *data, size_t size, uint8_t *out)
{
	const EVP_MD *md;
	unsigned int len = 0;

#ifdef MB_DIRECT_SHA
	direct_ctx dc;

	if (direct_init(alg, &dc)) {
		bool done = direct_update(alg, &dc, data, size) && direct_final(alg, &dc, out);

		OPENSSL_cleanse(&dc, sizeof(dc));
		return done ? 0 : -EIO;
	}
#endif
	md = md_for(alg);
	if (!md)
		return -EOPNOTSUPP;
	if (!thread_ctx) {
		call_once(&thread_ctx_once, thread_ctx_key_init);
		thread_ctx = EVP_MD_CTX_new();
		if (!thread_ctx)
			return -ENOMEM;
		if (thread_ctx_key_ok)
			(void) tss_set(thread_ctx_key, thread_ctx);
	}
	if (!EVP_DigestInit_ex2(thread_ctx, md, NULL) || !EVP_DigestUpdate(thread_ctx, data, size) ||
	    !EVP_DigestFinal_ex(thread_ctx, out, &len))
		return -EIO;
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
	EVP_MD_CTX *md; /* NULL: the direct functions */
#ifdef MB_DIRECT_SHA
	uint16_t alg;
	direct_ctx direct;
#endif
};

MB_EXPORT int mb_digest_ctx_new(uint16_t alg, mb_digest_ctx **ret)
{
	const EVP_MD *md;
	mb_digest_ctx *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
#ifdef MB_DIRECT_SHA
	if (direct_init(alg, &ctx->direct)) {
		ctx->alg = alg;
		*ret = ctx;
		return 0;
	}
#endif
	md = md_for(alg);
	if (!md) {
		free(ctx);
		return -EOPNOTSUPP;
	}
	ctx->md = EVP_MD_CTX_new();
	if (!ctx->md || !EVP_DigestInit_ex(ctx->md, md, NULL)) {
		mb_digest_ctx_free(ctx);
		return -ENOMEM;
	}
	*ret = ctx;
	return 0;
}

MB_EXPORT int mb_digest_ctx_update(mb_digest_ctx *ctx, const void *data, size_t size)
{
#ifdef MB_DIRECT_SHA
	if (!ctx->md)
		return direct_update(ctx->alg, &ctx->direct, data, size) ? 0 : -EIO;
#endif
	return EVP_DigestUpdate(ctx->md, data, size) ? 0 : -EIO;
}

MB_EXPORT int mb_digest_ctx_final(mb_digest_ctx *ctx, uint8_t *out)
{
	unsigned int len = 0;

#ifdef MB_DIRECT_SHA
	if (!ctx->md)
		return direct_final(ctx->alg, &ctx->direct, out) ? 0 : -EIO;
#endif
	return EVP_DigestFinal_ex(ctx->md, out, &len) ? 0 : -EIO;
}

MB_EXPORT void mb_digest_ctx_free(mb_digest_ctx *ctx)
{
	if (!ctx)
		return;
	EVP_MD_CTX_free(ctx->md);
	free(ctx);
}

/* Read in pieces that stay in the L2 cache between the read and the hashing. */
#define CHUNK (128 * 1024)

MB_EXPORT int mb_digest_file(const char *path, const uint16_t *algs, size_t n_algs,
			     uint8_t (*out)[MB_DIGEST_MAX], mb_error *err)
{
	mb_digest_ctx *ctx[8] = { 0 };
	uint8_t *buf = NULL;
	int fd = -1, rc = 0;
	size_t i;

	if (n_algs > sizeof(ctx) / sizeof(ctx[0]))
		return set_error(err, -EINVAL, "too many algorithms");
	for (i = 0; i < n_algs; i++) {
		rc = mb_digest_ctx_new(algs[i], &ctx[i]);
		if (rc < 0) {
			set_error(err, rc, "cannot compute algorithm 0x%04x", algs[i]);
			goto out;
		}
	}
	buf = malloc(CHUNK);
	if (!buf) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
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
	for (;;) {
		ssize_t n = fd_read_some(fd, buf, CHUNK);

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
