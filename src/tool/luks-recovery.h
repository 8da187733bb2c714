/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot luks: recovery keys and reseal with a passphrase (luks-recovery.c; docs/luks.md). */
#ifndef MB_TOOL_LUKS_RECOVERY_H
#define MB_TOOL_LUKS_RECOVERY_H

#include "tool/seal-common.h"


/* A passphrase from stdin (not a terminal): one line, its newline dropped; EXIT_USAGE said. */
int luks_read_stdin_line(const char *verb, secret_buf *pw);
/* A new recovery key for device, added with the existing passphrase pw, printed once on stdout. */
int luks_recovery_add(const char *verb, const char *device, const secret_buf *pw);
/* list: the keyslots a recovery key opens, as text, or into *ret_mask (--json) when not NULL. */
int luks_recovery_list(const char *device, uint32_t *ret_mask);
/* reseal --passphrase/--key-file: token's keyslot gets a new key (mb_luks_rekey); said. */
int luks_rekey_keyslot(mb_tpm *tpm, const char *device, int token, const secret_buf *pw,
		       const mb_pcr_values *const *pred, size_t n_pred);

#endif
