/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot luks: recovery keys (enroll --recovery-key, add-recovery, list) and reseal with a
 * passphrase, the way back in after an update (docs/luks.md). The recovery key is made in a
 * locked page and leaves it only for stdout (write(2), no stdio buffer) and, on a terminal,
 * its QR code; never a file, argv or a pipe of ours.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


#include "tool/luks-recovery.h"

int luks_read_stdin_line(const char *verb, secret_buf *pw)
{
	for (;;) {
		char c;
		ssize_t n = read(STDIN_FILENO, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_errorf("%s: reading the passphrase from stdin: %s", verb, strerror(errno));
			return EXIT_USAGE;
		}
		if (n == 0 || c == '\n')
			break;
		if (pw->size == pw->cap) {
			tool_errorf("%s: the passphrase is longer than %zu bytes", verb, pw->cap);
			return EXIT_USAGE;
		}
		pw->p[pw->size++] = (uint8_t) c;
	}
	if (pw->size == 0) {
		tool_errorf("%s: no passphrase given on stdin", verb);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t) w;
	}
	return 0;
}

int luks_recovery_add(const char *verb, const char *device, const secret_buf *pw)
{
	secret_buf key = { 0 };
	mb_error err = { 0 };
	int rc, slot = -1, token = -1;

	rc = secret_alloc(&key);
	if (rc)
		return rc;
	if (mb_luks_recovery_key_new((char *) key.p, key.cap, &err) < 0 ||
	    mb_luks_add_recovery(device, (const char *) pw->p, pw->size, (const char *) key.p, MB_LUKS_RECOVERY_KEY_LEN,
				 &slot, &token, &err) < 0) {
		tool_report(verb, &err);
		rc = err.code == MB_ERR_TPM ? EXIT_TPM : EXIT_USAGE;
		goto out;
	}
	printf("%s: keyslot %d: a recovery key (token %d marks it). It is shown only this once: write it down\n"
	       "now and keep it away from this machine. Typed at the passphrase prompt, it opens the disk\n"
	       "when the TPM does not (docs: 'Locked out after an update').\n", device, slot, token);
	fflush(stdout);
	if (write_all("Recovery key: ", 14) < 0 || write_all((const char *) key.p, MB_LUKS_RECOVERY_KEY_LEN) < 0 ||
	    write_all("\n", 1) < 0) {
		tool_errorf("%s: the recovery key could not be shown (%s): nobody knows it; remove its keyslot: "
			    "cryptsetup luksKillSlot %s %d; cryptsetup token remove --token-id %d %s", verb, strerror(errno),
			    device, slot, token, device);
		rc = EXIT_USAGE;
		goto out;
	}
	if (isatty(STDOUT_FILENO)) {
		(void) tool_print_qr(stdout, (const char *) key.p);
		fflush(stdout);
	}
	rc = EXIT_OK;
out:
	secret_free(&key);
	return rc;
}

int luks_recovery_list(const char *device, uint32_t *ret_mask)
{
	mb_error err = { 0 };
	uint32_t mask = 0;

	if (mb_luks_recovery_keyslots(device, &mask, &err) < 0) {
		tool_report("luks list", &err);
		return EXIT_USAGE;
	}
	if (ret_mask) {
		*ret_mask = mask;
		return EXIT_OK;
	}
	for (int s = 0; s < 32; s++)
		if (mask & (1u << s))
			printf("Recovery key: keyslot %d\n", s);
	return EXIT_OK;
}

int luks_rekey_keyslot(mb_tpm *tpm, const char *device, int token, const secret_buf *pw,
		       const mb_pcr_values *const *pred, size_t n_pred)
{
	mb_luks_rekey_result res;
	mb_error err = { 0 };
	int r = mb_luks_rekey(tpm, device, token, (const char *) pw->p, pw->size, pred, n_pred, &res, &err), rc = EXIT_OK;

	if (r == MB_ERR_TPM || r == MB_ERR_TPM_LOCKOUT || r == MB_ERR_TPM_SIGNATURE)
		rc = tpm_error_exit(&err);
	else if (r < 0) {
		/* a wrong passphrase is an input error (2); a check of this boot that fails, 1 */
		tool_report("luks reseal", &err);
		rc = r == MB_ERR_TPM_POLICY ? EXIT_FAILED : EXIT_USAGE;
	}
	if (res.token < 0)
		return rc;
	printf("%s: a new key in keyslot %d, sealed to %s: token %d", device, res.keyslot,
	       res.or_policy ? "the current values or the predicted ones (PolicyOR)" : "the current values", res.token);
	if (res.removed || res.old_keyslot_removed) {
		printf(" (removed:");
		for (int id = 0; id < 32; id++)
			if (res.removed & (1u << id))
				printf(" token %d", id);
		if (res.old_keyslot_removed)
			printf(" keyslot %d", res.old_keyslot);
		printf(")");
	} else if (rc == EXIT_OK)
		printf(" (keyslot %d stays: another token or the last passphrase uses it)", res.old_keyslot);
	printf("\n");
	return rc;
}
