/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A model of how GRUB 2.06 runs its configs, for what its tpm verifier measures (internal).
 *
 * GRUB measures every command line it executes, after expansion, as "grub_cmd: " + argv joined
 * by single spaces (grub_script_execute_cmdline): `set`, `export`, `[`, function calls, a
 * menuentry/submenu definition with its block's text ("{" + the raw text + "}"), the
 * `setparams` line it prepends to an entry's block, every command of the entry the menu boots.
 * Function definitions, `if`/`fi` themselves and the implicit `boot` after an entry are not
 * measured. The model runs the configs the same way and lists the strings.
 *
 * What the model cannot know by itself (the result of `[ -s FILE ]`, `insmod`, `loadfont` in a
 * condition; the device `search --set=VAR` finds) it learns from today's log in the self-check
 * (grub_model_check), keyed by the command's measured text, and reuses when the same command runs
 * in the new config (grub_model_run). A command it has no answer for stops the run with a reason:
 * never a guess.
 */
#ifndef MB_GRUB_SCRIPT_H
#define MB_GRUB_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/grub/grub.h"

/* Bounds on untrusted configs: nesting of blocks, calls and configfile, strings, output. */
#define GRUB_MODEL_MAX_DEPTH 32
#define GRUB_MODEL_MAX_STRINGS 4096
#define GRUB_MODEL_MAX_STRING (256u << 10)
#define GRUB_MODEL_MAX_STEPS 200000
/* bytes one run holds: its variables, menu entries and measured strings (a config that copies
 * a big variable in a loop stops the run, PCR 8 unpredictable, instead of exhausting memory) */
#define GRUB_MODEL_MAX_BYTES (4u << 20)
#define GRUB_MODEL_MAX_ENTRIES 256 /* entries of one menu the kernel search looks through */
#define GRUB_MODEL_MAX_TRIES 64    /* runs the kernel search makes */

typedef struct grub_model_config {
	const char *path; /* as GRUB opened it and measured it in PCR 9 */
	const char *text;
	size_t size;
} grub_model_config;

typedef struct grub_model_string {
	grub_string_kind kind; /* GRUB_STRING_CMD or GRUB_STRING_KERNEL_CMDLINE */
	char *text;            /* without the label */
} grub_model_string;

typedef struct grub_model_run {
	grub_model_string *s;
	size_t n;
	char *why; /* NULL: the run reached the boot; else why the model stops there */
	bool no_entry; /* the choice names no entry (why says so) */
	char *entry;   /* with a choice: the entry picked, by number ("1>1") */
} grub_model_run;

/*
 * Someone picks an entry from the menu instead of letting it time out (GRUB measures no key
 * press): entry in GRUB's `default` syntax (a number, title or id per menu level, '>' between
 * levels, '>>' for a '>' in a title), or kernel: the first entry in menu order (a submenu's
 * entries at its place) whose linux command loads that path (GRUB's path, without a "(device)"
 * prefix, equal to kernel or to its end: /vmlinuz-V for /boot/vmlinuz-V on a /boot partition).
 */
typedef struct grub_model_choice {
	const char *entry;
	const char *kernel;
} grub_model_choice;

/*
 * GRUB's start when its core image is known (the image that booted, checked by the caller):
 * GRUB sets $prefix (the image's prefix on the device of $cmdpath), $root (that device) and
 * $cmdpath (the folder it was loaded from, on that device: predict takes it from the device path
 * of the image's PCR 4 event, lib/predict/predict-grub-model.c), then runs the built-in config
 * in rescue mode (its commands are not measured), which may enter normal mode on a config of
 * the memdisk (`normal (memdisk)/grub.cfg`: measured in PCR 8 as any config, not in PCR 9).
 * read gives a memdisk file by path ("(memdisk)/grub.cfg"): 0 with *text (malloc()ed,
 * NUL-terminated), -ENOENT, or another negative errno. Without a start (the default), GRUB's
 * run begins in normal mode on the first config.
 */
typedef struct grub_model_start {
	const char *prefix;  /* "(hd0,gpt1)/EFI/debian" */
	const char *cmdpath; /* "(hd0,gpt1)/EFI/BOOT"; NULL: unknown (a measured command using it
			      * stops the run, with the reason) */
	const char *builtin; /* the built-in config; NULL: none */
	int (*read)(void *ctx, const char *path, char **text, size_t *size);
	void *ctx;
} grub_model_start;

typedef struct grub_model grub_model;

/* The start the next runs take (the strings are copied; NULL: none). -ENOMEM. */
int grub_model_set_start(grub_model *m, const grub_model_start *start);

grub_model *grub_model_new(void);
void grub_model_free(grub_model *m);
void grub_model_run_done(grub_model_run *r);

/*
 * The self-check: run configs[0] (the config GRUB read first; the others are what it may load
 * with configfile/source, by path) as GRUB did today and compare with today's PCR 8 strings
 * (n_today of them, in log order). 0 with run->why NULL when the model reproduced them exactly
 * (and m then holds what it learned); 0 with run->why naming the first string that differs
 * (today's and the model's) or what it could not decide. kernel_cmdline: today's linux commands
 * were followed by a kernel_cmdline string. -ENOMEM.
 */
int grub_model_check(grub_model *m, const grub_model_config *configs, size_t n_configs,
		     const grub_model_string *today, size_t n_today, bool kernel_cmdline, grub_model_run *run);

/* The next boot: run configs with what the self-check learned, the menu's default entry or the
 * one choice picks (NULL: the default). run->why says what stops it. */
int grub_model_predict(grub_model *m, const grub_model_config *configs, size_t n_configs, bool kernel_cmdline,
		       const grub_model_choice *choice, grub_model_run *run);

#endif
