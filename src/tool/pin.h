/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PIN of a secret sealed with TPM + PIN (docs/seal.md, "TPM + PIN"): read, never from argv. */
#ifndef MB_TOOL_PIN_H
#define MB_TOOL_PIN_H

#include <stdbool.h>

#include <mboot/mboot.h>
#include "shared/secret-page.h"

/*
 * The PIN into a new locked page (*pin; the caller frees it with secret_page_free): from
 * pin_file when given ("-": stdin; its content, one trailing newline dropped), else asked on
 * the terminal with no echo when stdin is one (twice when confirm: both must match), else one
 * line of stdin. 1 to MB_PIN_MAX bytes. Reports and returns EXIT_USAGE on failure.
 */
int pin_read(const char *verb, const char *pin_file, bool confirm, secret_page *pin);
/* Whether pin_read would read stdin (no pin_file, or "-"; and stdin is no terminal). */
bool pin_reads_stdin(const char *pin_file);
/*
 * A wrong PIN (MB_ERR_TPM_AUTH), said with the tries left before the TPM's dictionary-attack
 * lockout when the TPM tells them. Returns EXIT_FAILED.
 */
int pin_wrong(mb_tpm *tpm);

/*
 * unlock and reseal of LUKS2 device: when one of its "mboot" tokens they may use (token, or
 * -1: any) needs a PIN, read it into *pin (pin_read; pin stays zeroed otherwise: a note when
 * --pin was given). EXIT_USAGE (said) when the device cannot be read.
 */
int pin_for_luks(const char *device, const char *verb, int token, bool asked, const char *pin_file, secret_page *pin);

#endif
