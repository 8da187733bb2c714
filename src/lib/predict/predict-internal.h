/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_PREDICT_INTERNAL_H
#define MB_PREDICT_INTERNAL_H

/*
 * What the parts of mb_predict share (predict.c plans, then walks today's log): the state of
 * one prediction, and the functions of each part the plan and the walk call.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/digest.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>
#include <mboot/pe.h>
#include <mboot/predict.h>
#include "lib/grub/grub.h"
#include "lib/grub/grub-script.h"
#include "lib/predict/efivar.h"

#define MAX_CONFIGS 32

typedef struct file_digests {
	bool have;
	uint8_t d[MB_MAX_BANKS][MB_DIGEST_MAX]; /* indexed like the log's banks */
} file_digests;

/* A grub.cfg of the next boot and the config event(s) of today's it replaces. */
typedef struct new_config {
	char *measured_path; /* as the log names it */
	char *text;
	file_digests d;
	bool changed;        /* today's digest differs (seen at its event) */
	bool matched;        /* an event was replaced */
} new_config;

/* A UKI's command line as systemd-boot passes it (UTF-16LE with its NUL) and its digests. */
typedef struct uki_cmdline {
	uint8_t *data; /* NULL: not computed */
	size_t size;
	file_digests d;
} uki_cmdline;

typedef struct predict_ctx {
	const mb_predict_input *in;
	mb_predict_result *res;
	const mb_spec_id_alg *banks;
	size_t n_banks;
	file_digests kernel, initrd;
	new_config cfg[MAX_CONFIGS];
	size_t n_cfg;
	grub_entry entry;
	/* Today's loader commands, read from the log (the first of each), and every kernel path
	 * a linux command loaded (GRUB may run several). */
	grub_words old_linux, old_initrd, old_kernel_paths;
	bool kernel_path_given;
	/* The next boot's. */
	char *linux_cmd, *initrd_cmd, *kernel_path;
	grub_words args, initrd_paths;
	bool loader_changed;
	/* Today's PCR 8 commands a changed grub.cfg no longer has: the first is named, the rest counted. */
	unsigned commands_missing;
	/* What the walk found: the changes that applied (MB_PREDICT_*), and the measurements of
	 * systemd-boot/systemd-stub (its command line in PCR 12 or 8, a UKI's sections in PCR 11). */
	uint32_t matched;
	bool efi_applied, systemd_cmdline, uki;
	bool first_app, efi_after_first; /* a PCR 4 EFI application; an --efi replaced one after the first */
	/* PCR 8 by running the configs (grub-script.c): not used (today's line by line check),
	 * refused (PCR 8 unpredictable, the reason noted) or the model's strings replace today's */
	enum { MODEL_OFF, MODEL_REFUSED, MODEL_ON } model;
	grub_model_run model_run;
	bool model_written;
	/* --uki: the new image's events, and where today's log has the UKI's */
	size_t n_uki;
	const char *uki_names[MB_UKI_MAX_SECTIONS];
	file_digests uki_name_d[MB_UKI_MAX_SECTIONS], uki_content_d[MB_UKI_MAX_SECTIONS], uki_app;
	int uki_initrd;                  /* index of the new .initrd in uki_*, or -1 */
	file_digests today_initrd;       /* today's .initrd content event, when it has one */
	size_t uki_app_event, uki_first_pcr11; /* indices of today's events; SIZE_MAX: none */
	bool uki_written, uki_initrd_tag;
	file_digests uki_kernel_app;     /* the new .linux's Authenticode digests (the stub's LoadImage) */
	bool uki_kernel_written;
	file_digests uki_sysext;         /* the new drop-ins' PCR 13 archive (have: there is one) */
	bool uki_extra, uki_sysext_written; /* uki_extra_dir given */
	bool uki_creds;                  /* the new drop-in folder has credentials */
	unsigned uki_appended;           /* mb_uki_dropin_appended of the new drop-in folder */
	/* The command line systemd-boot passes a UKI (load options) from its .cmdline: today's UKI's,
	 * which must explain today's PCR 12 (8) events and LoadOptions tag (PCR 9), and the new one's. */
	uki_cmdline cmd_today, cmd_new;
	char *cmd_why;                   /* why today's events cannot be explained; NULL: they can */
	int uki_today_efi;               /* the --efi that named today's UKI, or -1 */
	efivar_set efivars; /* Secure Boot and MOK variables (PCR 7, 14) */
	/* --efi e replaces GRUB by one that runs differently (or a loader by GRUB): why PCRs 8 and 9
	 * are not today's (predict-efi.c); NULL when it runs as today's or is not GRUB */
	char *grub_why[MAX_CONFIGS];
	bool oom; /* a reason (pred_note) could not be allocated: mb_predict fails with -ENOMEM */
} predict_ctx;

/* predict-result.c */
void pred_note(predict_ctx *c, uint32_t pcr, bool unpredictable, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int pred_digest_file(predict_ctx *c, const char *path, file_digests *fd, mb_error *err);
int pred_bank_index(const predict_ctx *c, uint16_t alg);
int pred_write_event(predict_ctx *c, mb_log_writer *w, const mb_event *ev, const file_digests *fd,
		     const void *hashed, size_t hashed_len, const void *data, size_t data_size);

/* predict-grub.c */
bool pred_same_path(const char *logged, const char *cmd_path);
/* Does the host file have the name (last component) of GRUB's path? */
bool pred_same_file_name(const char *host_file, const char *grub_path);
void pred_check_file_names(predict_ctx *c);
bool pred_command_in_config(const new_config *cfg, const mb_event *ev);
int pred_read_today(predict_ctx *c);
int pred_plan_config(predict_ctx *c, const mb_grub_config *g, new_config *cfg, mb_error *err);
int pred_walk_file(predict_ctx *c, mb_log_writer *w, const mb_event *ev, new_config **cur_cfg);
int pred_walk_loader(predict_ctx *c, mb_log_writer *w, const mb_event *ev, grub_event_kind kind);

/* predict-grub-model.c */
int pred_plan_model(predict_ctx *c, mb_error *err);
int pred_write_model_strings(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl);

/* predict-uki.c */
int pred_plan_uki(predict_ctx *c, mb_error *err);
void pred_find_today_uki(predict_ctx *c);
int pred_write_uki_events(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl);
int pred_walk_uki_initrd_tag(predict_ctx *c, mb_log_writer *w, const mb_event *ev);
int pred_walk_uki_app(predict_ctx *c, mb_log_writer *w, const mb_event *ev);
int pred_walk_uki_sysext(predict_ctx *c, mb_log_writer *w, const mb_event *ev);
int pred_finish_uki_sysext(predict_ctx *c, mb_log_writer *w);

/* predict-uki-cmdline.c */
int pred_uki_cmdline(predict_ctx *c, const mb_uki_section *secs, size_t n, const uint8_t *buf, size_t size,
		     uki_cmdline *out, char **why);
int pred_plan_uki_today(predict_ctx *c, mb_error *err);
int pred_walk_uki_cmdline(predict_ctx *c, mb_log_writer *w, const mb_event *ev);
int pred_walk_uki_load_options(predict_ctx *c, mb_log_writer *w, const mb_event *ev);

/* predict-efi.c */
int pred_walk_efi(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *replaced, uint32_t *efi_used);
int pred_walk_efivar(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *done);
int pred_plan_efi_grub(predict_ctx *c, mb_error *err);

#endif
