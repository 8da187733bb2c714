/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot log extend: replay a recorded boot into a (software) TPM, event by event. */
#include <stdlib.h>
#include <string.h>

#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char extend_help[] =
	"Usage: mboot log extend LOG [--bank NAME]... [--force] [--tcti TCTI]\n\n"
	"Replay a recorded boot log into a TPM: every event that a replay extends (not\n"
	"EV_NO_ACTION, PCR 0-23) becomes a TPM2_PCR_Extend with the event's own digests, in\n"
	"log order. On a fresh software TPM this rebuilds the PCRs of the machine that wrote\n"
	"the log. It never changes a real machine's boot evidence unless forced.\n\n"
	"Checks before the first extend (each failure exits 1 and extends nothing):\n"
	"  - every active bank of the TPM must be in the log: a bank the log does not carry\n"
	"    could not be rebuilt. --bank limits the extends to the banks named (the other\n"
	"    TPM banks are left in reset state). Log banks the TPM lacks are skipped.\n"
	"  - the TPM's PCRs must be in reset state (0-16 and 23 zero, 17-22 all ones; PCR 0\n"
	"    0...0L for a log whose StartupLocality event says L); --force skips this check.\n"
	"  - a log with an H-CRTM start (EV_EFI_HCRTM_EVENT) cannot be rebuilt: its PCR 0\n"
	"    begins with a hash sequence at locality 4 whose input the log does not hold.\n\n"
	"A TPM that waits for TPM2_Startup (a swtpm after 'swtpm_ioctl -i', or started\n"
	"without startup-clear) is started here, at the log's StartupLocality (0 unless the\n"
	"log says otherwise); this needs a TCTI that carries a locality (swtpm, mssim).\n\n"
	"  --bank NAME   extend only this bank (sha1, sha256, sha384, sha512); may be repeated\n"
	"  --force       extend even if the PCRs are not in reset state\n"
	"  --tcti TCTI   the TPM, e.g. swtpm:path=/tmp/sock; default $TPM2TOOLS_TCTI, else\n"
	"                " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 every event extended, 1 refused (see above), 2 usage or unreadable log,\n"
	"3 TPM error.\n";

static bool alg_in(uint16_t alg, const uint16_t *algs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (algs[i] == alg)
			return true;
	return false;
}

/* Any PCR not in its reset value for the log's start: a boot already happened. */
static int check_reset_state(const mb_pcr_values *v, uint8_t locality)
{
	size_t b;
	int bad = 0;

	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		size_t size = mb_digest_by_alg(alg)->size;
		uint32_t p;

		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *value = mb_pcr_values_get(v, alg, p);
			uint8_t want[MB_DIGEST_MAX];
			char name[8];

			if (!value)
				continue;
			mb_pcr_initial(alg, p, locality, false, want);
			if (memcmp(want, value, size) == 0)
				continue;
			if (p == 0 && locality != 0) {
				uint8_t zero[MB_DIGEST_MAX] = { 0 };

				if (memcmp(zero, value, size) == 0) {
					tool_errorf("log extend: the log starts at locality %u (StartupLocality event) but "
						    "the TPM was started at locality 0: %s PCR 0 would not match. Reset the TPM "
						    "(swtpm: 'swtpm_ioctl --unix SOCK.ctrl -i') and run 'mboot log extend' "
						    "again: it then starts the TPM at locality %u.",
						    locality, mb_digest_alg_name(alg, name), locality);
					return -1;
				}
			}
			if (!bad)
				tool_errorf("log extend: %s PCR %u is not in reset state: this TPM has already "
					    "measured something (a real boot?); refusing without --force",
					    mb_digest_alg_name(alg, name), p);
			bad = -1;
		}
	}
	return bad;
}

int log_extend(int argc, char **argv)
{
	const char *tcti = NULL, *path;
	tool_banks only = { 0 };
	bool force = false;
	const tool_option options[] = {
		TOOL_OPT_BANK_LIST("bank", 0, &only),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	uint16_t use[MB_MAX_BANKS];
	size_t n_use = 0, n_log_banks, n_tpm = 0, i, b;
	const mb_spec_id_alg *log_banks;
	mb_tpm_bank tpm_banks[MB_MAX_BANKS];
	mb_event_log *log = NULL;
	mb_replay_info info;
	mb_pcr_values *values = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	uint32_t extended = 0, skipped_banks = 0;
	int rc;

	rc = tool_parse_options("log extend", extend_help, options, argc, argv, 1);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (optind == argc)
		return tool_usage_error("log extend", "LOG missing");
	path = argv[optind];

	rc = tool_load_log(path, &log);
	if (rc != EXIT_OK)
		return rc;
	values = tool_pcr_values_new();
	if (!values) {
		rc = EXIT_USAGE;
		goto out;
	}
	/* Replay only to learn the start conditions (StartupLocality, H-CRTM). */
	if (mb_replay_log(log, SIZE_MAX, values, &info, &err) < 0) {
		tool_report(path, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (info.hcrtm) {
		tool_errorf("log extend: %s starts with an H-CRTM measurement (EV_EFI_HCRTM_EVENT): PCR 0 begins "
			    "at 0...04 through a hash sequence at locality 4, which extends cannot rebuild; refusing "
			    "rather than leaving a PCR 0 that silently differs", path);
		rc = EXIT_FAILED;
		goto out;
	}
	n_log_banks = mb_event_log_banks(log, &log_banks);

	rc = tool_tpm_open(tcti, &tpm);
	if (rc != EXIT_OK)
		goto out;
	if (mb_tpm_banks(tpm, tpm_banks, MB_MAX_BANKS, &n_tpm, &err) < 0) {
		if (mb_tpm_last_rc(tpm) != MB_TPM_RC_INITIALIZE) {
			rc = tool_tpm_exit(&err);
			goto out;
		}
		/* The TPM waits for TPM2_Startup: start it the way the logged boot did. */
		uint8_t loc = info.startup_locality_seen ? info.startup_locality : 0;

		/* Commands go at locality 0 unless told otherwise: only a non-zero start needs the TCTI's help. */
		if ((loc != 0 && mb_tpm_set_locality(tpm, loc, &err) < 0) || mb_tpm_startup_clear(tpm, &err) < 0 ||
		    (loc != 0 && mb_tpm_set_locality(tpm, 0, &err) < 0) ||
		    mb_tpm_banks(tpm, tpm_banks, MB_MAX_BANKS, &n_tpm, &err) < 0) {
			rc = tool_tpm_exit(&err);
			goto out;
		}
		fprintf(stderr, "mboot: log extend: started the TPM (TPM2_Startup(CLEAR)) at locality %u\n", loc);
	}

	/* Which banks to extend: every active TPM bank (fail closed), or the --bank ones. */
	for (b = 0; b < n_tpm; b++) {
		const mb_digest_info *d = mb_digest_by_alg(tpm_banks[b].alg);
		bool in_log = false;
		char name[8];

		for (i = 0; i < n_log_banks; i++)
			if (log_banks[i].alg == tpm_banks[b].alg)
				in_log = true;
		if (only.n && !alg_in(tpm_banks[b].alg, only.alg, only.n))
			continue;
		if (!in_log || !d) {
			tool_errorf("log extend: the TPM has an active %s bank that %s %s; its PCRs could not be "
				    "rebuilt. Limit the extends with --bank (the log has %zu bank%s), or allocate "
				    "only the log's banks (tpm2_pcrallocate, then a TPM reset)",
				    mb_digest_alg_name(tpm_banks[b].alg, name), d ? "the log does not carry:" : "mboot cannot hash:",
				    path, n_log_banks, n_log_banks == 1 ? "" : "s");
			rc = EXIT_FAILED;
			goto out;
		}
		use[n_use++] = tpm_banks[b].alg;
	}
	for (i = 0; i < only.n; i++)
		if (!alg_in(only.alg[i], use, n_use)) {
			char name[8];

			tool_errorf("log extend: --bank %s: the TPM has no active bank of that name",
				    mb_digest_alg_name(only.alg[i], name));
			rc = EXIT_FAILED;
			goto out;
		}
	if (n_use == 0) {
		tool_errorf("log extend: the TPM and the log have no bank in common");
		rc = EXIT_FAILED;
		goto out;
	}

	/* Every event must carry every bank being extended: check before the first extend. */
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (!mb_event_extends(ev))
			continue;
		for (b = 0; b < n_use; b++)
			if (!mb_event_digest_for(ev, use[b]))
				break;
		if (b < n_use) {
			char name[8];

			tool_errorf("log extend: %s: event %u (PCR %u) has no %s digest; nothing extended", path,
				    ev->number, ev->pcr, mb_digest_alg_name(use[b], name));
			rc = EXIT_FAILED;
			goto out;
		}
	}

	if (!force) {
		if (mb_tpm_read_pcrs(tpm, use, n_use, (1u << MB_PCR_COUNT) - 1, values, NULL, &err) < 0) {
			rc = tool_tpm_exit(&err);
			goto out;
		}
		if (check_reset_state(values, info.startup_locality_seen ? info.startup_locality : 0) < 0) {
			rc = EXIT_FAILED;
			goto out;
		}
	}

	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		mb_event_digest d[MB_MAX_BANKS];
		size_t n = 0;
		uint32_t k;

		if (!mb_event_extends(ev))
			continue;
		for (k = 0; k < ev->n_digests; k++) {
			if (alg_in(ev->digests[k].alg, use, n_use))
				d[n++] = ev->digests[k];
			else
				skipped_banks++;
		}
		if (mb_tpm_extend(tpm, ev->pcr, d, n, &err) < 0) {
			tool_errorf("log extend: event %u (PCR %u): stopped after %u events", ev->number, ev->pcr,
				    extended);
			rc = tool_tpm_exit(&err);
			goto out;
		}
		extended++;
	}
	printf("extended %u events into %zu bank%s", extended, n_use, n_use == 1 ? "" : "s");
	for (b = 0; b < n_use; b++) {
		char name[8];

		printf("%s%s", b ? ", " : " (", mb_digest_alg_name(use[b], name));
	}
	printf(")\n");
	if (skipped_banks)
		fprintf(stderr, "mboot: log extend: %u digests of banks the TPM does not have (or --bank "
			"left out) were not extended\n", skipped_banks);
	rc = EXIT_OK;
out:
	mb_pcr_values_free(values);
	mb_tpm_free(tpm);
	mb_event_log_free(log);
	return rc;
}
