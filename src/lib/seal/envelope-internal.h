/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_SEAL_ENVELOPE_INTERNAL_H
#define MB_LIB_SEAL_ENVELOPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/envelope.h>

/*
 * AES-256-GCM of n bytes in -> out (encrypt: tag is written; else tag is checked, and out
 * wiped on a mismatch). The AAD is aad when not NULL (the unit tests' known answers), else
 * the envelope's: "mboot-envelope\0", the version byte 1, the label. 0, -EBADMSG, -ENOMEM.
 */
int envelope_gcm(bool encrypt, const uint8_t key[MB_ENVELOPE_KEY_SIZE], const uint8_t nonce[MB_ENVELOPE_NONCE_SIZE],
		 const uint8_t *aad, size_t aad_len, const char *label, size_t label_len, const uint8_t *in, size_t n,
		 uint8_t *out, uint8_t tag[MB_ENVELOPE_TAG_SIZE]);

/*
 * An envelope of data (1 to MB_ENVELOPE_MAX_DATA bytes) under key and nonce, with label
 * (NULL: ""), around the sealed data key *sealed, which it takes (*sealed is NULL after,
 * also on failure, where it is freed). What mb_envelope_seal does after the TPM's part;
 * the unit tests make envelopes with it without a TPM.
 */
int envelope_make(mb_sealed **sealed, const uint8_t key[MB_ENVELOPE_KEY_SIZE],
		  const uint8_t nonce[MB_ENVELOPE_NONCE_SIZE], const uint8_t *data, size_t size, const char *label,
		  mb_envelope **ret, mb_error *err);

#endif
