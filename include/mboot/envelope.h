/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_ENVELOPE_H
#define MBOOT_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An envelope: data larger than the TPM seals (an SSH host key, a LUKS key file), sealed to
 * a good boot (docs/ssh.md "The envelope file"). The data is encrypted with AES-256-GCM
 * under a fresh random 32-byte data key, and only the data key is sealed with the TPM
 * (mb_seal_secret). A label (text kept in clear, e.g. the public half of a sealed private
 * key) is authenticated with the data: changing it makes the envelope fail to open.
 */
#define MB_ENVELOPE_KEY_SIZE 32
#define MB_ENVELOPE_NONCE_SIZE 12
#define MB_ENVELOPE_TAG_SIZE 16
/* Caps (the file is untrusted input): the data, the label, and the whole file. */
#define MB_ENVELOPE_MAX_DATA (1u << 20)
#define MB_ENVELOPE_MAX_LABEL 16384
#define MB_ENVELOPE_MAX_FILE (MB_SEALED_MAX_FILE + 2 * MB_ENVELOPE_MAX_DATA + 2 * MB_ENVELOPE_MAX_LABEL)

typedef struct mb_envelope mb_envelope;

/*
 * Seal data (1 to MB_ENVELOPE_MAX_DATA bytes) as opt says (mb_seal_secret: PCR values, or
 * signed policies), with label (NULL: none; at most MB_ENVELOPE_MAX_LABEL bytes of UTF-8
 * text without NUL). The data and the data key are not kept: *ret holds the ciphertext.
 * -EINVAL for a size or label out of bounds, -EIO when no random bytes can be had, and the
 * errors of mb_seal_secret.
 */
MB_EXPORT int mb_envelope_seal(mb_tpm *t, const uint8_t *data, size_t size, const char *label,
			       const mb_seal_options *opt, mb_envelope **ret, mb_error *err) MB_WUR;

/*
 * Parse an envelope file (untrusted input): the JSON, the sizes of nonce, tag and
 * ciphertext against the caps, and the sealed object inside (mb_sealed_parse's checks).
 * -EBADMSG names the field; -E2BIG for a file over MB_ENVELOPE_MAX_FILE.
 */
MB_EXPORT int mb_envelope_parse(const char *text, size_t size, mb_envelope **ret, mb_error *err) MB_WUR;
/* The envelope file's JSON text (pretty, newline-terminated); NULL on ENOMEM. Caller frees. */
MB_EXPORT char *mb_envelope_to_json(const mb_envelope *e);
MB_EXPORT void mb_envelope_free(mb_envelope *e);

/* The sealed data key (e's; valid until mb_envelope_free). */
MB_EXPORT const mb_sealed *mb_envelope_sealed(const mb_envelope *e);
/* The label ("" when none). */
MB_EXPORT const char *mb_envelope_label(const mb_envelope *e);
/* The size of the data: what mb_envelope_open and mb_envelope_unseal need room for. */
MB_EXPORT size_t mb_envelope_data_size(const mb_envelope *e);

/*
 * No TPM: decrypt e with the data key into out (out_cap >= mb_envelope_data_size(e)).
 * -EBADMSG when the key is not e's or the ciphertext, nonce, tag or label were changed
 * (out is then wiped: nothing unauthenticated is handed out); -ENOBUFS when out is too small.
 */
MB_EXPORT int mb_envelope_open(const mb_envelope *e, const uint8_t key[MB_ENVELOPE_KEY_SIZE], uint8_t *out,
			       size_t out_cap, mb_error *err) MB_WUR;

/*
 * Unseal e's data key (mb_tpm_unseal_sealed with opt; *explanation as it says, may be NULL
 * to drop it) and open e into out. MB_ERR_TPM_POLICY when the PCRs are not a sealed state;
 * -EBADMSG when the key unsealed but does not open e (a tampered file); the data key is
 * wiped before returning.
 */
MB_EXPORT int mb_envelope_unseal(mb_tpm *t, const mb_envelope *e, const mb_unseal_options *opt, uint8_t *out,
				 size_t out_cap, mb_unseal_explanation **explanation, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
