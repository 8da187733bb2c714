/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * OpenSSL 3's digests, through EVP (the one crypto library; linked, as the field's tools link
 * it). Each algorithm is fetched once per process from the default library context
 * (EVP_MD_fetch: the provider's algorithm store is built on the first fetch) and kept.
 */
#include <openssl/evp.h>

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

/* digests[i] is OpenSSL's names[i]. */
static const char *const names[N_DIGESTS] = { "SHA1", "SHA256", "SHA384", "SHA512", "SM3" };

/* Fetched at first use, then never freed (one per algorithm for the life of the process). */
static EVP_MD *fetched[N_DIGESTS];

/* The EVP_MD of alg, or NULL: not a bank we know, or the provider lacks it (SM3 may be left out
 * of a build of OpenSSL). */
static const EVP_MD *md_for(uint16_t alg)
{
	EVP_MD *md, *expected = NULL;
	size_t i;

	for (i = 0; i < N_DIGESTS; i++)
		if (digests[i].alg == alg)
			break;
	if (i == N_DIGESTS)
		return NULL;
	md = __atomic_load_n(&fetched[i], __ATOMIC_ACQUIRE);
	if (md)
		return md;
	md = EVP_MD_fetch(NULL, names[i], NULL);
	if (!md)
		return NULL;
	/* Two threads may fetch at once: one keeps its EVP_MD, the other frees its own. */
	if (!__atomic_compare_exchange_n(&fetched[i], &expected, md, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		EVP_MD_free(md);
		md = expected;
	}
	return md;
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

/*
 * One EVP_MD_CTX per thread and algorithm, kept for the next mb_digest(): EVP_Digest makes and
 * frees a context, takes and drops a reference to the EVP_MD each call, which cost more than
 * hashing an event's few dozen bytes (a 100,000-event log is 400,000 such digests in
 * `log show --json`). The key frees a thread's contexts when it ends; the library's destructor
 * frees the calling thread's and deletes the key (a libmboot.so unloaded by cryptsetup leaves
 * no destructor of its own to run).
 */
static pthread_key_t ctx_key;
static bool ctx_key_ok;
static _Thread_local EVP_MD_CTX **thread_ctx;

static void thread_ctx_free(void *p)
{
	EVP_MD_CTX **c = p;

	for (size_t i = 0; c && i < N_DIGESTS; i++)
		EVP_MD_CTX_free(c[i]);
	free(c);
}

__attribute__((constructor)) static void ctx_key_create(void)
{
	ctx_key_ok = pthread_key_create(&ctx_key, thread_ctx_free) == 0;
}

__attribute__((destructor)) static void ctx_key_delete(void)
{
	if (!ctx_key_ok)
		return;
	thread_ctx_free(thread_ctx);
	thread_ctx = NULL;
	pthread_key_delete(ctx_key);
	ctx_key_ok = false;
}

/* This thread's context for digests[i], or NULL (none could be had: EVP_Digest instead). */
static EVP_MD_CTX *ctx_for(size_t i)
{
	if (!thread_ctx) {
		if (!ctx_key_ok)
			return NULL;
		thread_ctx = calloc(N_DIGESTS, sizeof(*thread_ctx));
		if (!thread_ctx)
			return NULL;
		if (pthread_setspecific(ctx_key, thread_ctx) != 0) {
			free(thread_ctx);
			thread_ctx = NULL;
			return NULL;
		}
	}
	if (!thread_ctx[i])
		thread_ctx[i] = EVP_MD_CTX_new();
	return thread_ctx[i];
}

MB_EXPORT int mb_digest(uint16_t alg, const void *data, size_t size, uint8_t *out)
{
	const EVP_MD *md = md_for(alg);
	EVP_MD_CTX *ctx;

	if (!md)
		return -EOPNOTSUPP;
	/* Digests of public data: nothing to wipe. md_for() found alg in digests[]. */
	ctx = ctx_for((size_t) (mb_digest_by_alg(alg) - digests));
	if (!ctx)
		return EVP_Digest(data, size, out, NULL, md, NULL) ? 0 : -EIO;
	return EVP_DigestInit_ex2(ctx, md, NULL) && EVP_DigestUpdate(ctx, data, size) &&
			       EVP_DigestFinal_ex(ctx, out, NULL)
		       ? 0
		       : -EIO;
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
	EVP_MD_CTX *evp;
};

MB_EXPORT int mb_digest_ctx_new(uint16_t alg, mb_digest_ctx **ret)
{
	const EVP_MD *md = md_for(alg);
	mb_digest_ctx *ctx;

	if (!md)
		return -EOPNOTSUPP;
	ctx = malloc(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->evp = EVP_MD_CTX_new();
	if (!ctx->evp) {
		free(ctx);
		return -ENOMEM;
	}
	if (!EVP_DigestInit_ex2(ctx->evp, md, NULL)) {
		mb_digest_ctx_free(ctx);
		return -EIO;
	}
	*ret = ctx;
	return 0;
}

MB_EXPORT int mb_digest_ctx_update(mb_digest_ctx *ctx, const void *data, size_t size)
{
	return EVP_DigestUpdate(ctx->evp, data, size) ? 0 : -EIO;
}

MB_EXPORT int mb_digest_ctx_final(mb_digest_ctx *ctx, uint8_t *out)
{
	return EVP_DigestFinal_ex(ctx->evp, out, NULL) ? 0 : -EIO;
}

MB_EXPORT void mb_digest_ctx_free(mb_digest_ctx *ctx)
{
	if (!ctx)
		return;
	/* Cleans the digest state too (a key may have been hashed). */
	EVP_MD_CTX_free(ctx->evp);
	free(ctx);
}

/* Read in pieces that stay in the L2 cache between the read and the hashing. */
#define CHUNK (128 * 1024)

MB_EXPORT int mb_digest_file(const char *path, const uint16_t *algs, size_t n_algs,
			     uint8_t (*out)[MB_DIGEST_MAX], mb_error *err)
{
	mb_digest_ctx *ctx[8] = { 0 };
	size_t buf_size = CHUNK;
	struct stat st;
	uint8_t *buf = NULL;
	int fd = -1, rc = 0;
	size_t i;

	if (n_algs > sizeof(ctx) / sizeof(ctx[0]))
		return set_error(err, -EINVAL, "too many algorithms");
	for (i = 0; i < n_algs; i++)
		if (!md_for(algs[i]))
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
		if (st.st_size < CHUNK)
			buf_size = (size_t) st.st_size + 1;
	}
	for (i = 0; i < n_algs; i++) {
		rc = mb_digest_ctx_new(algs[i], &ctx[i]);
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
