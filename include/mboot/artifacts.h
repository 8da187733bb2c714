/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_ARTIFACTS_H
#define MBOOT_ARTIFACTS_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/digest.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What a release ships for the boot: the files GRUB reads, the kernel's command line, the EFI
 * applications. One type for the two places that take them: a policy generated from them
 * (mb_policy_generate_from_artifacts) and the next boot predicted from them (mb_predict).
 */

/*
 * An EFI application of the boot chain, by its Authenticode digests (mb_pe_authenticode_file
 * fills arrays of this shape). The arrays are the caller's, n entries each, read during the call.
 */
typedef struct mb_efi_binary {
	const char *description;                    /* "shimx64.efi" */
	size_t n;
	const uint16_t *algs;                       /* the algorithm of each digest */
	const uint8_t (*digest)[MB_DIGEST_MAX];     /* the one that will boot */
	const uint8_t (*old_digest)[MB_DIGEST_MAX]; /* the one it replaces (predict only; NULL: none) */
	/* Host paths of the two images (NULL: not known). With both, mb_predict reads them to tell a
	 * GRUB update that runs as before (the same prefix, built-in config and memdisk: PCRs 8 and
	 * 9 carried over) from one that does not (they become unpredictable). */
	const char *file;
	const char *old_file;
} mb_efi_binary;

/*
 * A GRUB config file of the next boot. GRUB measures each config it reads into PCR 9 under the
 * path it opened ("(hd0,gpt1)/EFI/debian/grub.cfg"), so that path is what tells two configs
 * apart (Debian's ESP stub that loads /boot/grub/grub.cfg).
 */
typedef struct mb_grub_config {
	const char *measured_path; /* as today's log names it; NULL: the one config the log measured */
	const char *file;          /* host path of the new config */
} mb_grub_config;

/*
 * Options that grow (mboot/error.h): callers write
 *
 *     mb_boot_artifacts b = MB_OPTIONS_INIT(mb_boot_artifacts);
 *
 * and point mb_predict_input.boot or mb_policy_artifacts.boot at it. The outer structs hold a
 * pointer, not the struct, so that a field added here moves none of theirs.
 */
typedef struct mb_boot_artifacts {
	size_t size;               /* MB_OPTIONS_INIT(mb_boot_artifacts): its sizeof (mboot/error.h) */
	const char *kernel;        /* host path of the kernel image GRUB will read, or NULL */
	const char *initrd;        /* host path of the initrd, or NULL */
	/* The configs that change: their digests, and the linux/initrd lines of the first that has
	 * a menu entry. */
	const mb_grub_config *grub_cfg;
	size_t n_grub_cfg;
	const char *cmdline;       /* kernel arguments as the boot entry gives them, without the path */
	const char *kernel_path;   /* the kernel's path as GRUB names it (else from grub_cfg) */
	const char *initrd_path;   /* likewise for the initrd */
	const mb_efi_binary *efi;  /* PCR 4 applications */
	size_t n_efi;
	/* A unified kernel image booted by systemd-boot (host path): its sections in PCR 11 as
	 * systemd-stub measures them, its Authenticode digest in PCR 4. It carries the kernel,
	 * initrd and command line, so kernel, initrd and cmdline stay NULL with it. */
	const char *uki;
	/* The folder that will be the UKI's <name>.extra.d/ on the ESP (host path; NULL: today's drop-ins
	 * stay): systemd-stub packs its *.raw (system extensions) into the archive it measures into
	 * PCR 13, and *.cred into PCR 12's (mb_uki_dropin_cpio). */
	const char *uki_extra_dir;
	/* Today's UKI, the one that booted (host path; NULL: the file of an efi[] whose old_digest
	 * is today's UKI event's, else unknown). mb_predict checks it against today's PCR 4 event and
	 * explains today's command line events (PCR 12, the kernel's LoadOptions tag in PCR 9) from its
	 * .cmdline before it computes the new UKI's. */
	const char *uki_today;
} mb_boot_artifacts;

#ifdef __cplusplus
}
#endif
#endif
