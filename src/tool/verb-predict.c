/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <mboot/pe.h>
#include <mboot/predict.h>
#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char predict_help[] =
	"Usage: mboot predict [--log LOG] [--kernel K] [--initrd I] [--cmdline S] [--grub-cfg F]\n"
	"                     [--kernel-path P] [--initrd-path P] [--efi OLD=NEW ...] [--json]\n"
	"                     [--compact] [--write-log FILE]\n\n"
	"The PCR values of the next boot after an update, from today's event log: each event whose\n"
	"source is replaced is recomputed (GRUB's file digests in PCR 9 for the kernel, initrd and\n"
	"grub.cfg, the EFI stub's initrd tag, GRUB's linux/initrd commands and kernel_cmdline in PCR 8);\n"
	"everything else is carried over. The values print in tpm2_pcrread's layout, as 'mboot pcrs'\n"
	"prints them, a file 'mboot seal' and 'mboot verify' read back; which PCRs change, and which\n"
	"cannot be predicted and why, go to stderr.\n\n"
	"  --kernel K, --initrd I   the files that will boot (host paths)\n"
	"  --cmdline S              the kernel arguments, without the kernel path\n"
	"  --grub-cfg F             the grub.cfg that will boot (its digest; the linux/initrd lines)\n"
	"  --kernel-path P          the kernel's path as GRUB will name it (default: from grub.cfg, else today's)\n"
	"  --initrd-path P          likewise for the initrd\n"
	"  --efi OLD=NEW            an EFI application (shim, GRUB, ...) replaced: the PCR 4 event whose\n"
	"                           digest is OLD's PE/COFF Authenticode digest gets NEW's\n"
	"  --json                   {\"banks\": {...}, \"changed\": [...], \"unpredictable\": {\"8\": \"why\"}, \"notes\": {...}}\n"
	"  --compact                the JSON on one line (implies --json)\n"
	"  --write-log FILE         also write the predicted event log\n\n"
	"LOG defaults to " MB_DEFAULT_LOG ".\n"
	"Exit: 0 every PCR predicted, 1 some PCR could not be predicted (named), 2 usage or input error.\n";

/*
 * Parse predict's options into a (also for `mboot reseal --predict-args`); verb names the
 * command in messages. Returns -1 when --help was given (and shown), else an exit code.
 */
/* --efi OLD=NEW, repeatable: the application replaced and its successor. */
static int efi_option(void *target, const char *arg, const char *verb)
{
	predict_args *a = target;
	size_t n = a->in.boot.n_efi;

	if (n >= PREDICT_MAX_EFI)
		return tool_usage_error(verb, "at most %d --efi", PREDICT_MAX_EFI);
	/* tool_efi_binary splits OLD=NEW in place: arg is an argv string, ours to change */
	if (tool_efi_binary(verb, (char *) arg, true, &a->efi[n], &a->efi_digests[n]) != EXIT_OK)
		return EXIT_USAGE;
	a->in.boot.n_efi++;
	return EXIT_OK;
}

int predict_parse_args(int argc, char **argv, const char *verb, predict_args *a)
{
	const tool_option opts[] = {
		TOOL_OPT_STR("log", 0, &a->log_path),
		TOOL_OPT_ARTIFACTS(&a->in.boot),
		TOOL_OPT_JSON_STYLE(&a->json),
		TOOL_OPT_STR("write-log", 0, &a->write_log),
		TOOL_OPT_FN("efi", 0, a, efi_option),
		TOOL_OPT_END,
	};
	int rc;

	memset(a, 0, sizeof(*a));
	a->log_path = MB_DEFAULT_LOG;
	rc = tool_parse_options(verb, predict_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc; /* -1: --help was shown */
	a->in.boot.efi = a->efi;
	return EXIT_OK;
}

int verb_predict(int argc, char **argv)
{
	static predict_args args;
	mb_predict_input in;
	mb_predict_result *res = NULL;
	const char *log_path, *write_log;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	tool_json json;
	int rc;
	uint32_t p;

	rc = predict_parse_args(argc, argv, "predict", &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	in = args.in;
	log_path = args.log_path;
	write_log = args.write_log;
	json = args.json;
	rc = tool_load_log(log_path, &log);
	if (rc)
		return rc;
	in.log = log;
	res = calloc(1, sizeof(*res));
	if (!res || mb_predict(&in, res, &err) < 0) {
		tool_report("predict", &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (write_log) {
		size_t size;
		const uint8_t *bytes = mb_event_log_bytes(res->next_log, &size);

		if (file_write(write_log, bytes, size, 0644, true, &err) < 0) {
			tool_report(write_log, &err);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (json) {
		char *s = mb_pcr_values_to_json(res->values, false);
		json_object *root = s ? json_tokener_parse(s) : NULL, *changed = json_object_new_array(),
			    *unpred = json_object_new_object(), *notes = json_object_new_object();

		free(s);
		if (!root) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		for (p = 0; p < MB_PCR_COUNT; p++) {
			char key[4];

			snprintf(key, sizeof(key), "%u", p);
			if (res->changed & (1u << p))
				json_object_array_add(changed, json_object_new_int((int) p));
			if (res->unpredictable & (1u << p))
				json_object_object_add(unpred, key, json_object_new_string(res->why[p] ? res->why[p] : "unknown"));
			else if (res->why[p])
				json_object_object_add(notes, key, json_object_new_string(res->why[p]));
		}
		json_object_object_add(root, "changed", changed);
		json_object_object_add(root, "unpredictable", unpred);
		json_object_object_add(root, "notes", notes);
		tool_json_print(json, root);
		json_object_put(root);
	} else {
		/* stdout is the PCR file (seal --values reads it back); what to know about it, on stderr */
		if (tool_print_pcr_values(res->values) != EXIT_OK) {
			rc = EXIT_USAGE;
			goto out;
		}
		for (p = 0; p < MB_PCR_COUNT; p++) {
			if (res->unpredictable & (1u << p))
				tool_errorf("PCR %u cannot be predicted (its value above is a guess): %s", p,
					    res->why[p] ? res->why[p] : "unknown");
			else if (res->why[p])
				tool_notef("PCR %u: recomputed %s", p, res->why[p]);
			else if (res->changed & (1u << p))
				tool_notef("PCR %u changes", p);
		}
	}
	rc = res->unpredictable ? EXIT_FAILED : EXIT_OK;
out:
	if (res)
		mb_predict_result_done(res);
	free(res);
	mb_event_log_free(log);
	return rc;
}
