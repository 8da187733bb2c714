/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_DIGEST_INTERNAL_H
#define MB_DIGEST_INTERNAL_H

#include <stdint.h>
#include <mboot/digest.h>

/* mb_digest_ctx_new for about size bytes of input: the fastest code for that much, which for a
 * large input may be OpenSSL's rather than Nettle's (digest.c says when). Same digests. */
int digest_ctx_new_sized(uint16_t alg, uint64_t size, mb_digest_ctx **ret);

#endif
