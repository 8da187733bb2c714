/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot reseal: unseal under the current boot, then seal the same secret again to the
 * current PCR values, or to them OR predicted ones (docs/seal.md): the library's mb_reseal, which
 * keeps the secret in locked memory; here the options, the file and what is said.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "tool/pin.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char reseal_help[] =
	"Usage: mboot reseal -i SEALED [--values FILE ...] [-o OUT [--force]] [--log LOG] [--tcti TCTI]\n"
	"                    [--pin-file F]\n"
	"                    [--firmware-update [--nv-index INDEX] | --keep-window]\n"
	"                    [--predict-args PREDICT-OPTIONS... [--predict-args PREDICT-OPTIONS...]...]\n"
	"       mboot reseal --close-window [--nv-index INDEX] [--tcti TCTI]\n\n"
	"Unseal under the current boot, then seal the same secret again, to the same bank and\n"
	"PCRs: to the values the TPM holds now and, with --values or --predict-args, also to each\n"
	"predicted state (a TPM2_PolicyOR, so that the next boot, a fallback from its boot menu and\n"
	"this one all unseal): at most 7 predicted states (8 branches with today's; 6 with a\n"
	"firmware-update window), identical ones sealed to once. Without either, the stale branches\n"
	"of an earlier reseal are dropped. The secret is never shown.\n\n"
	"  --values FILE  predicted PCR values ('mboot predict', text or --json; tpm2_pcrread's\n"
	"                 text; SELECTION@FILE for tpm2_pcrread -o, e.g. sha256:4,8,9@pcrs.bin).\n"
	"                 Repeatable: one branch each\n"
	"  --predict-args PREDICT-OPTIONS...\n"
	"                 predict the values here: what follows, up to the next --predict-args, is\n"
	"                 'mboot predict' options (--kernel K --initrd I --cmdline S --grub-cfg F\n"
	"                 --efi OLD=NEW --grub-entry SPEC --log LOG ...), one prediction, one branch;\n"
	"                 when a sealed PCR of any of them cannot be predicted, or a change given\n"
	"                 matches no event of the log, nothing is resealed (exit 1, the PCR and the\n"
	"                 reason, or the change, named). They come last, after reseal's options\n"
	"  -o OUT         where to write (default: replace SEALED); always atomically: a\n"
	"                 temp file beside it, renamed over it. An existing OUT that is not\n"
	"                 SEALED itself is kept, exit 2, unless --force\n"
	"  --log LOG      the event log kept for explanations (default " MB_DEFAULT_LOG "\n"
	"                 when readable, else the one SEALED keeps)\n"
	"  --pin-file F   a secret sealed with a PIN: the PIN from F ('-': stdin), else asked on the\n"
	"                 terminal (one line of stdin when it is no terminal); resealed with it\n"
	"  --tcti TCTI    the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Firmware updates (docs/seal.md): the firmware measures itself into PCRs 0-3, so their next\n"
	"values cannot be predicted.\n"
	"  --firmware-update\n"
	"                 before a firmware update: also open a window, a branch that leaves PCRs\n"
	"                 0, 1, 2 and 3 unchecked (the other sealed PCRs at today's values) while\n"
	"                 mboot's TPM NV counter keeps its present value (defined when absent)\n"
	"  --nv-index INDEX\n"
	"                 the counter (default 0x01800b00, in the TPM owner range)\n"
	"  (no option)    on a SEALED with a window: seal to today's values and increment the\n"
	"                 counter, which closes the window (of every secret bound to it)\n"
	"  --keep-window  reseal a SEALED with a window without incrementing the counter (the\n"
	"                 other secrets still to reseal keep theirs; the last reseal closes it)\n"
	"  --close-window increment the counter only: every window bound to it closes\n\n"
	"Exit: 0 resealed, 1 the current boot cannot unseal SEALED, 2 usage or input error,\n"
	"3 TPM error.\n";

/*
 * reseal --predict-args (and luks reseal's): the next boot's PCR values, predicted from
 * today's log and the given updates. A PCR of mask that cannot be predicted stops the
 * reseal: a guess would lock the secret out of the next boot.
 */
int reseal_predict(predict_args *pa, uint32_t mask, mb_predict_result **res)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	uint32_t bad;
	int rc = tool_load_log(pa->log_path, &log);

	*res = NULL;
	if (rc)
		return rc;
	pa->in.log = log;
	rc = predict_add_installed(pa, log);
	if (rc)
		return rc;
	*res = calloc(1, sizeof(**res));
	if (!*res || mb_predict(&pa->in, *res, &err) < 0) {
		tool_report("predict", &err);
		return EXIT_USAGE;
	}
	/* A change that applied to nothing: its effect on any PCR is unknown. */
	if (predict_report_unmatched(pa, *res)) {
		fprintf(stderr, "Nothing resealed: a change asked for matched no event of today's log, so the next "
			"boot's values are unknown.\n");
		return EXIT_FAILED;
	}
	bad = (*res)->unpredictable & mask;
	if (bad) {
		for (unsigned p = 0; p < MB_PCR_COUNT; p++)
			if (bad & (1u << p))
				fprintf(stderr, "PCR %u cannot be predicted: %s\n", p,
					(*res)->why[p] ? (*res)->why[p] : "unknown");
		fprintf(stderr, "Nothing resealed: the secret is sealed to a PCR the next boot's value of which "
			"is unknown.\n");
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

void reseal_predict_free(predict_args *pa, mb_predict_result *res)
{
	mb_event_log_free((mb_event_log *) pa->in.log);
	pa->in.log = NULL;
	predict_args_done(pa);
	if (res) {
		mb_predict_result_done(res);
		free(res);
	}
}

/* The predicted values of s's bank and PCRs. */
static int predict_sealed(const mb_sealed *s, predict_args *pa, mb_predict_result **res, mb_pcr_bank *pred)
{
	int rc = reseal_predict(pa, mb_sealed_mask(s), res);

	if (rc)
		return rc;
	if (!(*res)->values || mb_pcr_values_get_bank((*res)->values, mb_sealed_bank(s), pred) < 0 ||
	    (pred->present & mb_sealed_mask(s)) != mb_sealed_mask(s)) {
		tool_errorf("%s: the log has no %s values for some of the sealed PCRs: they cannot be predicted",
			    pa->log_path, mb_digest_by_alg(mb_sealed_bank(s))->name);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* mboot reseal --close-window: the counter moves on, every window bound to it closes. */
static int close_window(const seal_args *args)
{
	uint32_t index = args->nv_index ? args->nv_index : MB_NV_COUNTER_DEFAULT;
	mb_tpm *tpm = NULL;
	mb_error err = { 0 };
	uint64_t v = 0;
	int rc = tool_tpm_open(args->tcti, &tpm);

	if (rc)
		return rc;
	if (mb_tpm_counter_increment(tpm, index, &v, &err) < 0)
		rc = err.code == -ENOENT ? (tool_report("reseal", &err), EXIT_USAGE) : tpm_error_exit(&err);
	else
		printf("Closed the firmware-update windows of NV counter 0x%08x: it is now at %llu.\n", index,
		       (unsigned long long) v);
	mb_tpm_free(tpm);
	return rc;
}

/*
 * After resealing s (which had a window) without --keep-window: close the window (the library's
 * mb_reseal_close_window), once the new file is written.
 */
static int close_window_after(mb_tpm *tpm, const mb_sealed *s)
{
	uint32_t index;
	uint64_t now = 0;
	bool closed = false;
	mb_error err = { 0 };

	if (!mb_sealed_window(s, &index, NULL))
		return EXIT_OK;
	if (mb_reseal_close_window(tpm, s, &closed, &now, &err) < 0)
		return tpm_error_exit(&err);
	if (closed)
		printf("Closed the firmware-update window: NV counter 0x%08x is now at %llu.\n", index,
		       (unsigned long long) now);
	else
		printf("The firmware-update window was closed already (NV counter 0x%08x at %llu).\n", index,
		       (unsigned long long) now);
	return EXIT_OK;
}

/* mb_reseal's failure: said, and its exit code (as unseal's for a refused unseal). */
static int reseal_failed(mb_tpm *tpm, int r, const mb_error *err)
{
	if (r == MB_ERR_TPM_POLICY)
		return EXIT_FAILED;
	if (r == MB_ERR_TPM_AUTH)
		return pin_wrong(tpm);
	/* -EEXIST: the NV index of a firmware-update window is not mboot's counter */
	if (mb_error_is_tpm(r) || r == -EEXIST)
		return tpm_error_exit(err);
	tool_report("reseal", err);
	return EXIT_USAGE;
}

int verb_reseal(int argc, char **argv)
{
	const char *in, *out, *log_path;
	seal_args args;
	secret_buf pin = { 0 };
	mb_sealed *s = NULL, *resealed = NULL;
	mb_reseal_options ro = MB_OPTIONS_INIT(mb_reseal_options);
	mb_unseal_explanation *e = NULL;
	char *json;
	mb_pcr_bank predicted[SEAL_MAX_VALUES];
	size_t n_pred = 0, k, n_split = 0;
	uint8_t *log = NULL;
	size_t log_size = 0;
	mb_tpm *tpm = NULL;
	static predict_args pa[SEAL_MAX_VALUES];
	mb_predict_result *res[SEAL_MAX_VALUES] = { 0 };
	int splits[SEAL_MAX_VALUES + 1];
	mb_error err = { 0 };
	int rc, r, i, split = 0, full_argc = argc;
	bool replace = false;
	char *own_path = NULL;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* everything after a --predict-args up to the next is predict's (argv[split] stands as its
	 * argv[0]) */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--predict-args") == 0) {
			if (n_split == SEAL_MAX_VALUES)
				return tool_usage_error("reseal", "at most %d predicted states (--values, --predict-args): a "
							"TPM2_PolicyOR has 8 branches, one today's", SEAL_MAX_VALUES);
			splits[n_split++] = i;
		}
	splits[n_split] = argc;
	split = n_split ? splits[0] : 0;
	if (split)
		argc = split;
	rc = parse_seal_args(argc, argv, "reseal", reseal_help, TAKES_VALUES | TAKES_FORCE | TAKES_WINDOW | TAKES_PIN,
			     &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (args.close_window) {
		if (args.in || args.out || args.values || args.firmware_update || args.keep_window || split)
			return tool_usage_error("reseal", "--close-window takes only --nv-index and --tcti");
		return close_window(&args);
	}
	if (args.firmware_update && args.keep_window)
		return tool_usage_error("reseal", "--firmware-update and --keep-window: give one");
	if (args.nv_index && !args.firmware_update)
		return tool_usage_error("reseal", "--nv-index goes with --firmware-update or --close-window");
	in = args.in;
	out = args.out;
	log_path = args.log;
	if (args.n_values + n_split > SEAL_MAX_VALUES)
		return tool_usage_error("reseal", "at most %d predicted states (--values, --predict-args): a TPM2_PolicyOR "
					"has 8 branches, one today's", SEAL_MAX_VALUES);
	for (k = 0; k < n_split; k++) {
		rc = predict_parse_args(splits[k + 1] - splits[k], argv + splits[k], "reseal --predict-args", &pa[k]);
		if (rc)
			return rc < 0 ? EXIT_OK : rc;
		if (pa[k].json || pa[k].write_log)
			return tool_usage_error("reseal", "--predict-args takes no --json, --compact or --write-log");
	}
	(void) full_argc;
	if (!in)
		return tool_usage_error("reseal", "needs -i SEALED");
	if (!out)
		out = in;
	if (out == in || same_file(in, out)) {
		/* Its own input, which is what reseal is for; through a symlink, the file it points at. */
		replace = true;
		if (strcmp(in, "-") != 0 && !(own_path = realpath(in, NULL))) {
			tool_errorf("%s: %s", in, strerror(errno));
			return EXIT_USAGE;
		}
	} else {
		rc = tool_check_output("reseal", out, args.force);
		if (rc)
			return rc;
		replace = args.force;
	}

	rc = load_sealed(in, &s);
	if (rc)
		return rc;
	if (mb_sealed_policy_kind(s) == MB_SEAL_POLICY_AUTHORIZE) {
		rc = tool_usage_error("reseal", "%s is sealed to signed policies: nothing to reseal, a new release "
				      "ships a new signature ('mboot policy sign')", in);
		goto out;
	}
	for (k = 0; k < args.n_values; k++) {
		rc = tool_load_pcr_bank(args.values_list[k], mb_sealed_bank(s), mb_sealed_mask(s), "sealed PCRs",
					&predicted[n_pred]);
		if (rc)
			goto out;
		n_pred++;
	}
	for (k = 0; k < n_split; k++) {
		rc = predict_sealed(s, &pa[k], &res[k], &predicted[n_pred]);
		if (rc) {
			if (n_split > 1)
				fprintf(stderr, "(in --predict-args number %zu)\n", k + 1);
			goto out;
		}
		n_pred++;
	}
	/* a secret sealed with a PIN: unsealed with it, and sealed again with the same PIN */
	if (mb_sealed_pin(s)) {
		rc = pin_read("reseal", args.pin_file, false, &pin);
		if (rc)
			goto out;
	}
	/* the event log kept with the new object (a refused unseal is explained against the one
	 * kept at sealing time, as `unseal` explains it, not today's against itself) */
	rc = read_kept_log(log_path, &log, &log_size);
	if (rc)
		goto out;
	rc = tool_tpm_open(args.tcti, &tpm);
	if (rc)
		goto out;
	ro.predicted = predicted;
	ro.n_predicted = n_pred;
	ro.log_path = log_path ? log_path : MB_DEFAULT_LOG;
	ro.pin = pin.p;
	ro.pin_size = pin.size;
	ro.eventlog = log;
	ro.eventlog_size = log_size;
	ro.firmware_update = args.firmware_update;
	ro.window_index = args.nv_index;
	r = mb_reseal(tpm, s, &ro, &resealed, &e, &err);
	if (e)
		show_explanation(e, false);
	if (r < 0) {
		rc = reseal_failed(tpm, r, &err);
		goto out;
	}
	json = mb_sealed_to_json(resealed);
	if (!json) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_write_output("reseal", own_path ? own_path : out, json, strlen(json), 0600, replace);
	free(json);
	if (rc == EXIT_OK) {
		uint32_t index;
		uint64_t counter;

		size_t nb = mb_sealed_n_branches(resealed) - (mb_sealed_window(resealed, NULL, NULL) ? 1u : 0u);

		if (nb > 2)
			printf("Resealed to %s: the current values or %zu predicted states (PolicyOR of %zu).\n", out,
			       nb - 1, mb_sealed_n_branches(resealed));
		else
			printf("Resealed to %s: %s.\n", out, nb == 2 ? "the current values or the predicted ones (PolicyOR)" :
			       "the current values");
		if (mb_sealed_window(resealed, &index, &counter))
			printf("Firmware-update window open: PCRs 0-3 are not checked while NV counter 0x%08x stays at "
			       "%llu; after the first boot on the new firmware, 'mboot reseal' closes it.\n", index,
			       (unsigned long long) counter);
		else if (!args.keep_window)
			rc = close_window_after(tpm, s);
	}
out:
	free(own_path);
	mb_unseal_explanation_free(e);
	secret_free(&pin);
	free(log);
	mb_sealed_free(resealed);
	mb_sealed_free(s);
	mb_tpm_free(tpm);
	for (k = 0; k < n_split; k++)
		reseal_predict_free(&pa[k], res[k]);
	return rc;
}
