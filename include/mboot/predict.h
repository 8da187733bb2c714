/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_PREDICT_H
#define MBOOT_PREDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <mboot/artifacts.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The PCR values of the next boot: walk today's log and recompute each event whose source is
 * being replaced; carry everything else over. What cannot be predicted is said per PCR.
 */
/*
 * A UEFI variable of the next boot: the Secure Boot databases (PCR 7
 * EV_EFI_VARIABLE_DRIVER_CONFIG), shim's SbatLevel (PCR 7 EV_EFI_VARIABLE_AUTHORITY) and MOK
 * state (PCR 14 EV_IPL). See docs/predict.md for what each name's file holds.
 */
typedef struct mb_efi_var_update {
	const char *name;   /* PK, KEK, db, dbx, dbt, dbr, SbatLevel, MokList, MokListX, MokListTrusted, MokSBState, MokPolicy */
	const char *file;   /* host path of the new content; for PK..dbr an EFI_SIGNATURE_LIST sequence,
			     * optionally behind an EFI_VARIABLE_AUTHENTICATION_2 header */
	bool append;        /* EFI_VARIABLE_APPEND_WRITE (PK..dbr): the file's lists are added to today's value */
} mb_efi_var_update;

typedef struct mb_predict_input {
	size_t size; /* MB_OPTIONS_INIT(mb_predict_input): its sizeof (mboot/error.h) */
	const mb_event_log *log;   /* today's boot */
	/* what changes: each field NULL (or n_efi, n_grub_cfg 0) when unchanged; an EFI
	 * application is replaced where today's log has its old_digest, by its digest; a grub.cfg
	 * where the log measured its measured_path (at most 32 of each). NULL: none of them changes
	 * (as every field unset). Read during the call; its size is checked as this struct's. */
	const mb_boot_artifacts *boot;
	/*
	 * The GRUB configs that booted today, by the path GRUB measured them under (at most 32):
	 * with a copy of each config today's log measured and a boot->grub_cfg, PCR 8 is predicted
	 * by running the configs as GRUB does (docs/predict.md), after the model reproduced today's
	 * PCR 8 from these copies. A config without one here is looked for in grub_booted_dir
	 * (a file named by the sha256 hex of the measured path); NULL: nowhere else.
	 */
	const mb_grub_config *grub_booted;
	size_t n_grub_booted;
	const char *grub_booted_dir;
	const mb_efi_var_update *efi_vars; /* n_efi_vars (at most 32) variables that change */
	size_t n_efi_vars;
	/*
	 * The boot where someone picks a menu entry instead of the default (GRUB measures no key
	 * press): grub_entry in GRUB's `default` syntax (a number, title or id per menu level, '>'
	 * between levels), or grub_entry_kernel: the first entry in menu order whose linux command
	 * loads that path (GRUB's path equal to it or to its end: /vmlinuz-V for /boot/vmlinuz-V).
	 * Needs the GRUB model (the configs that booted); an entry that loads another kernel or
	 * initrd than today's needs boot->kernel / boot->initrd. NULL: the default entry.
	 */
	const char *grub_entry;
	const char *grub_entry_kernel;
	/*
	 * The GRUB core image that booted today (its Authenticode digest must be a PCR 4 application
	 * of today's log, else an input error): the GRUB model starts as it does, its prefix, its
	 * built-in config and the memdisk config that runs (Debian's signed GRUB). NULL: the OLD of
	 * an --efi that is a GRUB image, else GRUB starts in normal mode on the first config.
	 */
	const char *grub_image;
	/*
	 * ESP mount points (at most MB_PREDICT_MAX_ESP_DIRS) searched for today's UKI when boot->uki
	 * is set and neither boot->uki_today nor an efi[] names it: the first *.efi under
	 * EFI/Linux/ (Boot Loader Spec type #2 entries), then EFI/ and its other folders, of each
	 * in turn (names sorted), whose Authenticode digest is today's UKI event's in PCR 4 in
	 * every bank. NULL: not searched.
	 */
	const char *const *esp_dirs;
	size_t n_esp_dirs;
} mb_predict_input;

#define MB_PREDICT_MAX_ESP_DIRS 8

/* The changes given in mb_predict_input.boot, as bits of mb_predict_result.unmatched. */
enum {
	MB_PREDICT_KERNEL = 1u << 0,
	MB_PREDICT_INITRD = 1u << 1,
	MB_PREDICT_CMDLINE = 1u << 2,
	MB_PREDICT_KERNEL_PATH = 1u << 3,
	MB_PREDICT_INITRD_PATH = 1u << 4,
	MB_PREDICT_UKI = 1u << 5,       /* today's log has no systemd-stub PCR 11 events after a PCR 4 application */
	MB_PREDICT_GRUB_ENTRY = 1u << 6, /* grub_entry / grub_entry_kernel names no menu entry (why[8] says why) */
};

/*
 * A prediction holds only when every requested change applied to an event of today's log
 * (else the change's effect is unknown: unmatched, unmatched_efi or unmatched_grub_cfg say
 * which, and values is NULL) and only for the PCRs not marked unpredictable (values has no
 * value for them; why[] says what mboot cannot compute).
 */
typedef struct mb_predict_result {
	mb_pcr_values *values;         /* predicted, every bank of the log mboot can compute */
	uint32_t touched;              /* PCRs the log extends */
	uint32_t changed;              /* predictable PCRs whose value differs from today's replay */
	uint32_t unpredictable;        /* PCRs mboot cannot predict: absent from values */
	char *why[MB_PCR_COUNT];       /* for unpredictable PCRs: the reason; for changed: what changed */
	uint32_t events_rewritten;
	uint32_t unmatched;            /* MB_PREDICT_* changes that applied to no event */
	uint32_t unmatched_efi;        /* bit i: boot->efi[i] replaced no event */
	uint32_t unmatched_grub_cfg;   /* bit i: boot->grub_cfg[i] replaced no event */
	uint32_t unmatched_efi_var;    /* bit i: efi_vars[i] replaced no event */
	mb_event_log *next_log;        /* the predicted log; unpredictable PCRs' events are today's */
} mb_predict_result;

/*
 * 0 with ret filled (check unmatched* and unpredictable before using values); negative errno
 * on bad input: an unreadable file, a malformed signature list or authenticated variable, a
 * variable name mboot does not predict, or a grub_cfg without measured_path when the log measured
 * several configs (the message names them).
 */
MB_EXPORT int mb_predict(const mb_predict_input *in, mb_predict_result *ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_predict_result_done(mb_predict_result *r);
/*
 * `mboot predict --json`'s document (docs/predict.md), pretty or compact (docs/json.md), no
 * final newline: {"banks" (r->values as mb_pcr_values_to_json writes them; none when NULL),
 * "changed": [PCRs] (empty when a change matched nothing), "unpredictable": {"PCR": why},
 * "unmatched": [{"option", "value", "why"}] (unmatched[i] = {option, value (NULL: ""), why},
 * the caller's names for the changes r->unmatched* flag), "notes": {"PCR": what changed}}.
 * Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_predict_result_to_json(const mb_predict_result *r, const char *const (*unmatched)[3],
					  size_t n_unmatched, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
