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
typedef struct mb_predict_input {
	const mb_event_log *log;   /* today's boot */
	/* what changes: each field NULL (or n_efi 0) when unchanged; an EFI application is
	 * replaced where today's log has its old_digest, by its digest */
	mb_boot_artifacts boot;
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
