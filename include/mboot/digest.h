/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_DIGEST_H
#define MBOOT_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TCG algorithm identifiers (TCG Algorithm Registry). */
#define MB_ALG_SHA1     0x0004
#define MB_ALG_SHA256   0x000B
#define MB_ALG_SHA384   0x000C
#define MB_ALG_SHA512   0x000D
#define MB_ALG_SM3_256  0x0012

/* SHA-512's size, the largest digest of the TCG algorithm registry's PCR banks: fixed by the specs,
 * so public structs may hold MB_DIGEST_MAX bytes. */
#define MB_DIGEST_MAX 64

typedef struct mb_digest_info {
	uint16_t alg;
	uint16_t size;
	const char *name; /* "sha256", as tpm2-tools spells it */
} mb_digest_info;

/* NULL when the algorithm is not one we can compute. */
MB_EXPORT const mb_digest_info *mb_digest_by_alg(uint16_t alg);
MB_EXPORT const mb_digest_info *mb_digest_by_name(const char *name);
/* alg's name ("sha256"), or for an algorithm mboot cannot compute its number ("0x0012") written into buf. */
MB_EXPORT const char *mb_digest_alg_name(uint16_t alg, char buf[8]);

/* Known algorithms, in the order mboot prints banks. */
MB_EXPORT size_t mb_digest_count(void);
MB_EXPORT const mb_digest_info *mb_digest_at(size_t i);

/* out must hold info->size bytes. Returns 0 or -EOPNOTSUPP (sm3 without OpenSSL support). */
MB_EXPORT int mb_digest(uint16_t alg, const void *data, size_t size, uint8_t *out) MB_WUR;

/* pcr = H(pcr || digest); both of the algorithm's size. */
MB_EXPORT int mb_digest_extend(uint16_t alg, uint8_t *pcr, const uint8_t *digest) MB_WUR;

/* Incremental hashing for large inputs (files). */
typedef struct mb_digest_ctx mb_digest_ctx;
MB_EXPORT int mb_digest_ctx_new(uint16_t alg, mb_digest_ctx **ret) MB_WUR;
MB_EXPORT int mb_digest_ctx_update(mb_digest_ctx *ctx, const void *data, size_t size) MB_WUR;
MB_EXPORT int mb_digest_ctx_final(mb_digest_ctx *ctx, uint8_t *out) MB_WUR;
MB_EXPORT void mb_digest_ctx_free(mb_digest_ctx *ctx);

/* Digests of a whole file ("-": stdin) in each of algs, streamed: what GRUB extends into PCR 9
 * for a kernel, initrd or config file it reads. out[i] receives algs[i]'s digest. */
MB_EXPORT int mb_digest_file(const char *path, const uint16_t *algs, size_t n_algs, uint8_t (*out)[MB_DIGEST_MAX],
			     mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
