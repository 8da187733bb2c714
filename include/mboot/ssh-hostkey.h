/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_SSH_HOSTKEY_H
#define MBOOT_SSH_HOSTKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <mboot/envelope.h>
#include <mboot/error.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * SSH host keys that only a good boot has (docs/ssh.md, `mboot ssh-hostkey`). A folder's
 * clear keys DIR/ssh_host_<type>_key (<type> lowercase letters and digits) are each put into
 * an envelope (mboot/envelope.h) DIR/ssh_host_<type>_key.mboot, labelled with the first line
 * of the .pub file; unsealing puts them into a tmpfs folder for sshd.
 */
#define MB_SSH_HOSTKEY_SUFFIX ".mboot"
#define MB_SSH_HOSTKEYS_MAX 16          /* host keys in a folder */
#define MB_SSH_HOSTKEY_MAX (64u << 10)  /* a clear key file: OpenSSH's are under 4 KiB (RSA 4096) */

/* Called after each key: from (the clear key, or the sealed file) went to to. */
typedef void (*mb_ssh_hostkey_done)(const char *from, const char *to, void *userdata);

typedef struct mb_ssh_hostkey_seal_options {
	size_t size;                  /* sizeof(mb_ssh_hostkey_seal_options): the fields that fit are read */
	const mb_seal_options *seal;  /* how each data key is sealed (PCR values, or an authority) */
	const mb_unseal_options *unseal; /* the round trip's (the signatures of an authority-sealed key) */
	bool force;                   /* replace an existing .mboot file */
	mb_ssh_hostkey_done done;     /* may be NULL */
	void *userdata;
} mb_ssh_hostkey_seal_options;

/*
 * Seal every clear host key of dir through the TPM at tcti (as mb_tpm_open): write the
 * .mboot file (0600, atomically), read it back and unseal it, and only when that gives the
 * key back overwrite (zeros, fsync) and remove the clear key; the .pub files stay. Nothing is
 * sealed (and the TPM not opened) when dir has no clear key (-ENOENT), more than
 * MB_SSH_HOSTKEYS_MAX, or a .mboot file already there without force (-EEXIST). A key that
 * does not unseal on this boot (values of another boot) is kept: MB_ERR_TPM_POLICY. Keys
 * done before a failure stay done. Errors of the files: -EINVAL and errno values, the TPM's.
 */
MB_EXPORT int mb_ssh_hostkey_seal(const char *tcti, const char *dir, const mb_ssh_hostkey_seal_options *opts,
				  mb_error *err) MB_WUR;

typedef struct mb_ssh_hostkey_unseal_options {
	size_t size;                  /* sizeof(mb_ssh_hostkey_unseal_options): the fields that fit are read */
	const mb_unseal_options *unseal; /* today's log (the explanation), the signatures */
	mb_ssh_hostkey_done done;     /* may be NULL */
	void *userdata;
	/* when not NULL, on MB_ERR_TPM_POLICY: why the PCRs are not a sealed state (caller frees) */
	mb_unseal_explanation **explanation;
} mb_ssh_hostkey_unseal_options;

/*
 * Unseal every DIR/ssh_host_*_key.mboot through the TPM at tcti into the folder to (made
 * 0700 when missing; it must be ours, closed to others, not a link, on tmpfs or ramfs:
 * -EINVAL otherwise, before the TPM is opened), each key a new file 0600. On any failure the
 * folder holds none of the keys. MB_ERR_TPM_POLICY: this boot is not the sealed one; -EBADMSG:
 * a changed or malformed sealed file; -EINVAL: a key sealed to signed policies without
 * signatures, or signatures for one sealed to values; -ENOENT: no sealed key.
 */
MB_EXPORT int mb_ssh_hostkey_unseal(const char *tcti, const char *dir, const char *to,
				    const mb_ssh_hostkey_unseal_options *opts, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
