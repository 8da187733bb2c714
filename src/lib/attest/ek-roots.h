/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The EK certificate check (ek-roots.c). Internal to src/lib/attest. */
#ifndef MB_ATTEST_EK_ROOTS_H
#define MB_ATTEST_EK_ROOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/attest.h>
#include "tpm-public.h"

/* How many certificates were added (0 for NULL). */
size_t ek_roots_count(const mb_ek_roots *r);

/*
 * der must be one DER certificate (else -EBADMSG; trailing 0xff/0x00 NV padding is dropped)
 * whose public key is ek's, that is no CA, whose keyUsage (when it has one) allows key
 * encipherment (an RSA EK) or key agreement (an ECC EK), and that chains to r's certificates
 * (else MB_ERR_ATTEST_REFUSED, the reason in err); then sha256 is the certificate's SHA-256.
 * The chain is checked at no time unless check_validity (an EK certificate's dates say nothing
 * about the TPM); *ret_expired says whether the EK certificate is outside its validity now.
 * No roots: -EINVAL.
 */
int ek_cert_check(const mb_ek_roots *r, const uint8_t *der, size_t der_size, const tpm_public *ek,
		  bool check_validity, uint8_t sha256[32], bool *ret_expired, mb_error *err);

#endif
