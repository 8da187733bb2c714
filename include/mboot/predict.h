/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_PREDICT_H
#define MBOOT_PREDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The PCR values of the next boot: walk today's log and recompute each event whose source is
 * being replaced; carry everything else over. What cannot be predicted is said per PCR.
 */
typedef struct mb_predict_efi {
	/* An EFI application being replaced: its Authenticode digests today and after. */
	size_t n;
	uint16_t algs[MB_MAX_BANKS];
	uint8_t old_digest[MB_MAX_BANKS][MB_DIGEST_MAX];
	uint8_t new_digest[MB_MAX_BANKS][MB_DIGEST_MAX];
	const char *description;
} mb_predict_efi;

typedef struct mb_predict_input {
	const mb_event_log *log;   /* today's boot */
	const char *kernel;        /* the new kernel file (host path), or NULL: unchanged */
	const char *initrd;        /* the new initrd, or NULL */
	const char *grub_cfg;      /* the new grub.cfg, or NULL */
	const char *cmdline;       /* the new kernel arguments (without the path), or NULL */
	const char *kernel_path;   /* the new kernel's path as GRUB names it, or NULL (from grub_cfg, else today's) */
	const char *initrd_path;   /* likewise */
	const mb_predict_efi *efi;
	size_t n_efi;
} mb_predict_input;

typedef struct mb_predict_result {
	mb_pcr_values *values;         /* predicted, every bank of the log mboot can compute */
	uint32_t touched;              /* PCRs the log extends */
	uint32_t changed;              /* PCRs whose predicted value differs from today's replay */
	uint32_t unpredictable;        /* PCRs mboot cannot predict (values[] then holds a guess) */
	char *why[MB_PCR_COUNT];       /* for unpredictable PCRs: the reason; for changed: what changed */
	uint32_t events_rewritten;
	mb_event_log *next_log;        /* the predicted log */
} mb_predict_result;

MB_EXPORT int mb_predict(const mb_predict_input *in, mb_predict_result *ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_predict_result_done(mb_predict_result *r);

#ifdef __cplusplus
}
#endif
#endif
