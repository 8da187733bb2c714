/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ATTEST_DER_SIZE_H
#define MB_ATTEST_DER_SIZE_H
/*
 * EK certificates read from NV (by mboot on the machine, or by tpm2_nvread for a request made
 * elsewhere) may carry the index's padding after the DER: the size of the one DER SEQUENCE the
 * bytes start with (its header and content), 0 when they do not start with one that fits.
 */
#include <stddef.h>
#include <stdint.h>

size_t ek_der_size(const uint8_t *p, size_t n);

#endif
