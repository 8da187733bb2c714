/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mboot/ima.h>
#include <mboot/policy.h>

#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/text-escape.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"


static const char verify_help[] =
	"Usage: mboot verify [--log LOG] [--userspace-log FILE | --no-userspace-log] [--pcrs FILE]\n"
	"                    [--bank NAME]... [--userspace-pcrs LIST] [--policy POLICY] [--ima-log LOG]\n"
	"                    [--json]\n"
	"                    [--compact] [--tcti TCTI]\n\n"
	"Replay the firmware event log, then the userspace measurement log ('mboot measure'),\n"
	"and compare with the PCRs the TPM holds now (or with PCR values from FILE: mboot's\n"
	"PCR-values JSON or the text of mboot pcrs, log replay, predict and tpm2_pcrread). For\n"
	"every PCR and bank the verdict is one of:\n"
	"  verified         the log, replayed, gives exactly this value\n"
	"  mismatch         it does not; for PCRs 0-7 also a non-reset value the log has no event for\n"
	"  bank-not-in-log  the log extends this PCR, but not every extend carries this bank\n"
	"  not-covered      the log extends nothing into this PCR and the PCR holds its reset\n"
	"                   value (any PCR; 8-23 whatever they hold): no claim either way\n"
	"  unverified       bank left out with --bank: not checked, never counted as verified\n"
	"  no-value         FILE does not give this PCR (a failure: partial values verify nothing)\n"
	"  data-mismatch    the value matches, but an event's data does not hash to its digest\n"
	"                   (the log was edited: what it says is not what was measured)\n"
	"  userspace-not-allowed  the userspace log extends a PCR userspace does not measure into\n"
	"                   (outside --userspace-pcrs, or one the firmware log extends)\n"
	"Fail closed: every bank of the TPM must verify for every PCR the log touches; a bank\n"
	"the log lacks, or an event without this bank's digest, fails unless --bank limits the\n"
	"check. A mismatch is explained where the evidence allows: events whose data does not\n"
	"hash to their digest, a known firmware quirk that would make it match (reported, never\n"
	"accepted), the last event that agreed.\n\n"
	"  --log LOG     the event log (default " MB_DEFAULT_LOG ")\n"
	"  --userspace-log FILE  the userspace measurement log (CEL-JSON records in a JSON text\n"
	"                sequence, as 'mboot measure' and systemd-pcrextend write); default\n"
	"                " MB_CEL_DEFAULT_PATH " when it exists. It is read under a shared\n"
	"                lock (flock), with the PCRs, so no measurement slips in between.\n"
	"  --no-userspace-log  the firmware log only\n"
	"  --pcrs FILE   compare with these values instead of the TPM's; SELECTION@FILE reads the\n"
	"                digests tpm2_pcrread -o wrote for that selection (e.g. sha256:0-7@pcrs.bin)\n"
	"  --bank NAME   check only this bank (may be repeated); the others are 'unverified'\n"
	"  --userspace-pcrs LIST  the PCRs userspace records may extend (default 11-15, as\n"
	"                systemd measures); never one the firmware log extends\n"
	"  --policy POLICY  then judge the events and userspace records against a policy\n"
	"                (docs/policy.md), with the digests of a bank that verified (sha256 first);\n"
	"                a PCR the policy governs must verify; exit 0 only when both hold\n"
	"  --ima-log LOG  then the kernel's IMA runtime measurement list (binary or ASCII; e.g.\n"
	"                " MB_IMA_DEFAULT_PATH "): replayed\n"
	"                against PCR 10 of the same values, its boot_aggregate against PCRs 0-9, and\n"
	"                with a policy each file judged by the policy's \"ima\" section (docs/ima.md);\n"
	"                a policy with an \"ima\" section needs it\n"
	"  --json        {\"verified\": bool (everything asked held), \"log_verified\": bool,\n"
	"                \"pcrs\": [{\"pcr\", \"bank\", \"verdict\", \"expected\", \"actual\", ...}],\n"
	"                \"policy\": {...}, \"ima\": {...}} (docs/verify.md)\n"
	"  --compact     the JSON on one line (implies --json)\n"
	"  --tcti TCTI   the TPM, e.g. swtpm:path=/tmp/sock; default $TPM2TOOLS_TCTI, else\n"
	"                " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 verified, 1 verification failed, 2 usage or input error, 3 TPM error.\n";

static const char ebs_names[4][96] = {
	"",
	"\"Exit Boot Services Invocation\"",
	"\"Exit Boot Services Returned with Success\"",
	"\"Exit Boot Services Invocation\" and \"Exit Boot Services Returned with Success\"",
};

static void explain_text(const mb_event_log *log, const mb_verify_pcr *r, const mb_verify_result *res)
{
	uint32_t i;

	if (r->n_events == 0 && r->pcr <= 7)
		printf("      the log has no event for PCR %u, but the value is not its reset value: "
		       "measurements are missing from the log\n", r->pcr);
	for (i = 0; i < r->n_bad_listed; i++) {
		const mb_event *ev = mb_event_log_event(log, r->bad_digest_events[i]);
		char tbuf[MB_EVENT_TYPE_LABEL_SIZE];

		printf("      event %u (%s): its data does not hash to its digest: the data was changed or the "
		       "firmware hashed something else\n", r->bad_digest_events[i],
		       ev ? mb_event_type_label(ev->type, tbuf) : "?");
	}
	if (r->n_bad_digest > r->n_bad_listed)
		printf("      ... and %u more such events\n", r->n_bad_digest - r->n_bad_listed);
	if (r->prefix_match) {
		if (r->last_good_event < 0)
			printf("      the TPM's value is this PCR's start value: none of the log's %u events for it "
			       "reached the TPM\n", r->n_events);
		else if (r->last_good_userspace)
			printf("      the TPM's value equals the logs replayed up to userspace record %lld: the later "
			       "records of PCR %u never reached the TPM (added to the log?)\n",
			       (long long) r->last_good_event, r->pcr);
		else
			printf("      the TPM's value equals the log replayed up to event %lld: the later events of "
			       "PCR %u in the log never reached the TPM (added to the log?)\n",
			       (long long) r->last_good_event, r->pcr);
	}
	if (r->extra_event >= 0)
		printf("      the value matches without event %lld: that event never reached the TPM (added to the "
		       "log, or measured elsewhere)\n", (long long) r->extra_event);
	if (r->swapped_event >= 0)
		printf("      the value matches with events %lld and %lld in the other order: the log was reordered\n",
		       (long long) r->swapped_event, (long long) r->swapped_next);
	if (r->edit_search_capped)
		printf("      (the search for one added or reordered event stopped at its limit of %u steps)\n",
		       MB_VERIFY_EDIT_BUDGET);
	if (r->quirk == MB_QUIRK_EXIT_BOOT_SERVICES)
		printf("      known firmware quirk: the value matches if EV_EFI_ACTION %s %s appended: the "
		       "firmware measured but did not log %s (not accepted: verify the firmware)\n",
		       ebs_names[r->quirk_events & 3], r->quirk_events == 3 ? "are" : "is",
		       r->quirk_events == 3 ? "them" : "it");
	if (r->quirk == MB_QUIRK_STARTUP_LOCALITY)
		printf("      the value matches if PCR 0 started at locality %u (the log %s): a missing or wrong "
		       "StartupLocality event, or a TPM started differently (not accepted)\n",
		       r->quirk_locality,
		       mb_verify_result_replay_info(res)->startup_locality_seen ? "says another locality" : "has no StartupLocality event");
	if (r->verdict == MB_PCR_MISMATCH && !r->prefix_match && r->quirk == MB_QUIRK_NONE && !r->n_bad_digest &&
	    r->n_events && r->extra_event < 0 && r->swapped_event < 0)
		printf("      no prefix of the log's events for this PCR gives the TPM's value: an event is "
		       "missing, changed, reordered or forged\n");
}

static void print_text(const mb_event_log *log, const mb_verify_result *res, const char *source)
{
	size_t i;

	for (i = 0; i < mb_verify_result_count(res); i++) {
		const mb_verify_pcr *r = mb_verify_result_entry(res, i);
		char buf[8], hex[2 * MB_DIGEST_MAX + 1];
		const char *name = mb_digest_alg_name(r->alg, buf);

		if (r->verdict == MB_PCR_NOT_COVERED || r->verdict == MB_PCR_UNVERIFIED)
			continue;
		printf("PCR %2u %-7s %-16s", r->pcr, name, mb_pcr_verdict_name(r->verdict));
		switch (r->verdict) {
		case MB_PCR_VERIFIED:
			printf(" %u event%s", r->n_events, r->n_events == 1 ? "" : "s");
			if (r->n_userspace)
				printf(" + %u userspace record%s", r->n_userspace, r->n_userspace == 1 ? "" : "s");
			printf("\n");
			if (r->n_untrusted_data)
				printf("      note: %u event%s (%s) whose data does not hash to the digest, as some "
				       "firmware does: the value verifies, that data must not be trusted\n",
				       r->n_untrusted_data, r->n_untrusted_data == 1 ? "" : "s",
				       "EV_EFI_VARIABLE_AUTHORITY or EV_S_CRTM_VERSION");
			break;
		case MB_PCR_DATA_MISMATCH:
			printf(" the value matches the log, but the log's data was changed:\n");
			explain_text(log, r, res);
			break;
		case MB_PCR_MISMATCH:
			printf("\n      log replay %s\n", hex_format(r->expected, r->size, hex));
			printf("      %-10s %s\n", source, hex_format(r->actual, r->size, hex));
			explain_text(log, r, res);
			break;
		case MB_PCR_BANK_NOT_IN_LOG:
			printf(" the log extends PCR %u but carries no %s digests (limit with --bank to check the "
			       "other banks)\n", r->pcr, name);
			break;
		case MB_PCR_NO_VALUE:
			printf(" the values given have no %s PCR %u, which the log extends\n", name, r->pcr);
			break;
		case MB_PCR_USERSPACE_NOT_ALLOWED:
			if (r->n_events)
				printf(" %u userspace record%s extend%s PCR %u on top of the firmware's %u events: "
				       "userspace does not measure there\n", r->n_userspace, r->n_userspace == 1 ? "" : "s",
				       r->n_userspace == 1 ? "s" : "", r->pcr, r->n_events);
			else
				printf(" %u userspace record%s extend%s PCR %u, outside the PCRs userspace measures into "
				       "(--userspace-pcrs)\n", r->n_userspace, r->n_userspace == 1 ? "" : "s",
				       r->n_userspace == 1 ? "s" : "", r->pcr);
			break;
		default:
			printf("\n");
		}
	}
	{
		uint32_t nc = 0, nu[MB_MAX_BANKS] = { 0 };
		uint16_t ua[MB_MAX_BANKS];
		size_t n_ua = 0, k;

		/* Banks left out by --bank: one line each, never a PCR-by-PCR list that looks checked. */
		for (i = 0; i < mb_verify_result_count(res); i++) {
			const mb_verify_pcr *r = mb_verify_result_entry(res, i);

			if (r->verdict == MB_PCR_NOT_COVERED)
				nc++;
			if (r->verdict != MB_PCR_UNVERIFIED)
				continue;
			for (k = 0; k < n_ua; k++)
				if (ua[k] == r->alg)
					break;
			if (k == n_ua && n_ua < MB_MAX_BANKS)
				ua[n_ua++] = r->alg;
			if (k < MB_MAX_BANKS && (r->n_events || (mb_verify_result_log_pcrs(res) & (1u << r->pcr))))
				nu[k]++;
		}
		for (k = 0; k < n_ua; k++) {
			char buf[8];

			printf("bank %s UNVERIFIED (left out by --bank): %u PCR%s the log extends not checked\n",
			       mb_digest_alg_name(ua[k], buf), nu[k], nu[k] == 1 ? "" : "s");
		}
		if (nc)
			printf("(%u PCR values not covered by the log, not shown: no claim about them)\n", nc);
	}
	if (mb_verify_result_ok(res))
		printf("verified: %u PCR values match the log\n", mb_verify_result_n_verified(res));
	else if (mb_verify_result_n_failed(res))
		printf("FAILED: %u PCR value%s not verify\n", mb_verify_result_n_failed(res), mb_verify_result_n_failed(res) == 1 ? " does" : "s do");
	else
		printf("FAILED: nothing was verified\n");
}

static bool in_only(uint16_t alg, const uint16_t *only, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (only[i] == alg)
			return true;
	return false;
}

/*
 * Open, lock (shared) and parse the userspace log. *ret_fd keeps the lock until the
 * PCRs are read. A missing default log is no log; a missing named one is an error.
 */
static int load_userspace(const char *path, bool named, int *ret_fd, mb_cel_log **ret)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;
	struct stat st;
	int fd, r;

	*ret = NULL;
	*ret_fd = -1;
	/* Never a hang: a FIFO or other non-regular file is refused, a lock held too long is an error. */
	r = file_open_locked(path, O_RDONLY, 0, LOCK_SH, TOOL_LOCK_TIMEOUT_MS, &fd, &err);
	if (r == -ENOENT && !named)
		return EXIT_OK;
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	if (fstat(fd, &st) < 0) {
		tool_errorf("%s: %s", path, strerror(errno));
		close(fd);
		return EXIT_USAGE;
	}
	/* 'mboot measure' (like systemd-pcrextend) sets the sticky bit while it extends and appends. */
	if (st.st_mode & S_ISVTX)
		tool_errorf("warning: %s is marked incomplete: a writer died between extending a PCR and logging "
			    "it; the PCR it extended cannot verify", path);
	r = file_read_fd(fd, MB_CEL_MAX_SIZE, &buf, &size, &err); /* the file locked, not the path again */
	if (r >= 0)
		r = mb_cel_log_parse(buf, size, ret, &err);
	free(buf);
	if (r < 0) {
		tool_report(path, &err);
		close(fd);
		return EXIT_USAGE;
	}
	*ret_fd = fd;
	return EXIT_OK;
}

/* One violating event, as a person reads it: number, type, text or decoded description, digest. */
static char *describe_event(const mb_event_log *log, const mb_event *ev, uint16_t bank)
{
	const mb_event_digest *d = mb_event_digest_for(ev, bank);
	char *text = mb_event_text(ev), *out = NULL, hex[2 * MB_DIGEST_MAX + 1] = "";
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE];

	if (!text)
		text = mb_event_description(log, ev);
	if (text) {
		/* the machine's text: one line, its control characters escaped (shared/text-escape.h) */
		char *safe = text_escape_str(text);

		free(text);
		text = safe;
	}
	if (d)
		hex_format(d->bytes, d->size, hex);
	if (asprintf(&out, "#%u %s \"%.300s\" %s:%s", ev->number, mb_event_type_label(ev->type, tbuf), text ? text : "",
		     mb_digest_by_alg(bank)->name, d ? hex : "(none)") < 0)
		out = NULL;
	free(text);
	return out;
}

/* Judge the log, if it verified (mb_verify_result_policy_bank): 0 with *ret filled, 1 not judged
 * (the log did not verify), or -1 after reporting the failure. */
static int check_policy(const mb_policy *policy, const char *policy_path, const mb_event_log *log,
			const mb_cel_log *us, const mb_verify_result *res, mb_policy_result *ret)
{
	uint16_t bank = mb_verify_result_ok(res) ? mb_verify_result_policy_bank(res) : 0;
	mb_error err = { 0 };

	if (!bank)
		return 1;
	if (mb_policy_check(policy, log, us, res, bank, ret, &err) < 0) {
		tool_report(policy_path, &err);
		return -1;
	}
	return 0;
}

/* The policy's verdict as a person reads it; pr NULL: the log did not verify (nothing judged). */
static void print_policy_text(const mb_policy *policy, const char *policy_path, const mb_event_log *log,
			      const mb_verify_result *res, const mb_policy_result *pr)
{
	uint16_t bank;
	size_t i;
	uint32_t p;

	if (!pr) {
		printf("Policy %s: not checked: the log did not verify, so its events prove nothing.\n", policy_path);
		return;
	}
	bank = pr->bank;
	printf("\nPolicy %s, judged with the %s digests:\n", policy_path, mb_digest_by_alg(bank)->name);
	for (p = 0; p < MB_PCR_COUNT; p++)
		if (pr->pcr[p] != MB_POLICY_PCR_NOT_GOVERNED)
			printf("  PCR %2u: %s\n", p, mb_policy_verdict_name(pr->pcr[p]));
	if (pr->firmware_set)
		printf("  firmware: the values of firmware set \"%s\"\n", pr->firmware_set);
	else if (mb_policy_n_firmware_sets(policy))
		printf("  firmware: the values of none of the policy's %zu firmware sets\n",
		       mb_policy_n_firmware_sets(policy));
	{
		bool any = false;

		for (p = 0; p < MB_PCR_COUNT; p++)
			if (pr->pcr[p] == MB_POLICY_PCR_NOT_GOVERNED && (mb_verify_result_log_pcrs(res) & (1u << p))) {
				printf("%s%u", any ? ", " : "  not governed by the policy (reported, not judged): PCR ", p);
				any = true;
			}
		if (any)
			putchar('\n');
	}
	for (i = 0; i < pr->n_violations; i++) {
		const mb_policy_violation *v = &pr->violations[i];
		char *what = v->event ? describe_event(log, v->event, bank) : NULL;
		char *rtext = v->record && v->record->text ? text_escape(v->record->text, v->record->text_len) : NULL;
		char *reason = text_escape_str(v->reason);

		if (v->record)
			printf("  VIOLATION PCR %u userspace record %zu \"%.300s\": %s\n", v->pcr, v->record_index,
			       rtext ? rtext : "", reason ? reason : "");
		else
			printf("  VIOLATION PCR %u%s%s: %s\n", v->pcr, what ? " event " : "", what ? what : "",
			       reason ? reason : "");
		for (size_t k = 0; k < v->n_closest_rules; k++) {
			char *rule = text_escape_str(v->closest_rules[k]);

			printf("%s%s", k ? "; " : "      closest rules: ", rule ? rule : "");
			free(rule);
		}
		if (v->n_closest_rules)
			putchar('\n');
		free(what);
		free(rtext);
		free(reason);
	}
	printf(mb_policy_result_ok(pr) ? "The boot meets the policy.\n" : "The boot does NOT meet the policy.\n");
}

static int load_ima(const char *path, mb_ima_log **ret)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc;

	if (file_read(path, MB_IMA_MAX_SIZE, &buf, &size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	rc = mb_ima_log_parse(buf, size, 0, ret, &err);
	free(buf);
	if (rc < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void print_ima_text(const char *path, const mb_policy *policy, const mb_ima_policy_result *r)
{
	size_t i;

	printf("\nIMA list %s: %zu entries", path, r->n_entries);
	if (policy)
		printf(", %zu allowed, %zu excluded, %zu unlisted (ignored)", r->n_allowed, r->n_excluded,
		       r->n_unlisted);
	printf("\n");
	for (i = 0; i < r->n_banks; i++)
		printf("  PCR 10 (%s): %s\n", mb_digest_by_alg(r->banks[i].alg)->name,
		       r->banks[i].match == MB_IMA_MATCH_RECOMPUTED ? "the list's replay (per-bank template hashes)" :
		       r->banks[i].match == MB_IMA_MATCH_PADDED ? "the list's replay (SHA-1 template hashes padded)" :
		       "NOT the list's replay");
	printf("  boot_aggregate: %s\n", mb_ima_aggregate_label(r->aggregate));
	for (i = 0; i < r->n_violations && i < 100; i++) {
		const mb_ima_violation *v = &r->violations[i];
		char *pe = v->path ? text_escape_str(v->path) : NULL;

		if (v->entry == SIZE_MAX)
			printf("  violation: %s\n", v->reason);
		else
			printf("  violation: entry %zu (offset %llu): %s %s: %s\n", v->entry,
			       (unsigned long long) v->offset, pe ? pe : "(no path)", v->digest ? v->digest : "(no digest)",
			       v->reason);
		free(pe);
	}
	if (r->n_violations > 100)
		printf("  ... and %zu more violations (--json lists them all)\n", r->n_violations - 100);
	printf(mb_ima_policy_result_ok(r) ? "The IMA list meets the %s.\n" : "The IMA list does NOT meet the %s.\n",
	       policy ? "policy" : "PCR values");
}

int verb_verify(int argc, char **argv)
{
	const char *log_path = MB_DEFAULT_LOG, *pcrs_path = NULL, *tcti = NULL, *us_path = NULL;
	const char *policy_path = NULL, *ima_path = NULL;
	mb_policy *policy = NULL;
	mb_ima_log *ima = NULL;
	mb_ima_policy_result ir = { 0 };
	bool ima_judged = false, ima_ok = true;
	mb_policy_result pr;
	int judged = 1;
	bool policy_ok = true;
	bool us_named, us_off = false;
	mb_cel_log *us = NULL;
	int us_fd = -1;
	tool_banks only = { 0 };
	size_t i;
	mb_verify_options vopts = { .size = sizeof(mb_verify_options), .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT };
	tool_json json = TOOL_JSON_OFF;
	const tool_option options[] = {
		TOOL_OPT_STR("log", 0, &log_path),
		TOOL_OPT_STR("pcrs", 0, &pcrs_path),
		TOOL_OPT_BANK_LIST("bank", 0, &only),
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_STR("userspace-log", 0, &us_path),
		TOOL_OPT_BOOL("no-userspace-log", 0, &us_off),
		TOOL_OPT_STR("policy", 0, &policy_path),
		TOOL_OPT_STR("ima-log", 0, &ima_path),
		TOOL_OPT_PCR_LIST("userspace-pcrs", 0, &vopts.userspace_pcrs),
		TOOL_OPT_END,
	};
	mb_event_log *log = NULL;
	mb_pcr_values *actual = NULL;
	mb_verify_result *res = NULL;
	mb_error err = { 0 };
	int rc;

	rc = tool_parse_options("verify", verify_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	us_named = us_path != NULL;
	if (!us_path)
		us_path = MB_CEL_DEFAULT_PATH;
	if (pcrs_path && tcti)
		return tool_usage_error("verify", "--pcrs and --tcti exclude each other");

	if (us_off && us_named)
		return tool_usage_error("verify", "--userspace-log and --no-userspace-log exclude each other");
	if (policy_path) {
		rc = tool_load_policy(policy_path, &policy);
		if (rc != EXIT_OK)
			return rc;
		/* What ran after the boot is part of what the policy asks about: never skipped quietly. */
		if (mb_policy_has_ima(policy) && !ima_path) {
			mb_policy_free(policy);
			return tool_usage_error("verify", "the policy has an \"ima\" section: give the IMA list with "
						"--ima-log (e.g. %s)", MB_IMA_DEFAULT_PATH);
		}
	}
	if (ima_path) {
		rc = load_ima(ima_path, &ima);
		if (rc != EXIT_OK)
			goto out;
	}
	rc = tool_load_log(log_path, &log);
	if (rc != EXIT_OK)
		goto out;
	if (!us_off) {
		rc = load_userspace(us_path, us_named, &us_fd, &us);
		if (rc != EXIT_OK)
			goto out;
	}

	actual = tool_pcr_values_new();
	if (!actual) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (pcrs_path) {
		rc = tool_load_pcrs(pcrs_path, actual);
		if (rc != EXIT_OK)
			goto out;
	} else {
		mb_tpm *tpm = NULL;
		mb_tpm_bank banks[MB_MAX_BANKS];
		size_t n_banks = 0;

		rc = tool_tpm_open(tcti, &tpm);
		if (rc != EXIT_OK)
			goto out;
		if (mb_tpm_banks(tpm, banks, MB_MAX_BANKS, &n_banks, &err) < 0 ||
		    mb_tpm_read_pcrs(tpm, NULL, 0, (1u << MB_PCR_COUNT) - 1, actual, NULL, &err) < 0) {
			rc = tool_tpm_exit(&err);
			mb_tpm_free(tpm);
			goto out;
		}
		mb_tpm_free(tpm);
		/* Fail closed: an active bank mboot cannot compute is a bank nobody verified. */
		for (i = 0; i < n_banks; i++) {
			char name[8];

			if (mb_digest_by_alg(banks[i].alg) || (only.n && !in_only(banks[i].alg, only.alg, only.n)))
				continue;
			tool_errorf("verify: the TPM has an active bank %s that mboot cannot compute: it cannot be "
				    "verified (limit the check with --bank)", mb_digest_alg_name(banks[i].alg, name));
			rc = EXIT_FAILED;
			goto out;
		}
	}
	if (us_fd >= 0) {
		close(us_fd); /* drops the lock: the log and the PCRs were read together */
		us_fd = -1;
	}
	for (i = 0; i < only.n; i++)
		if (!tool_pcr_values_has_bank(actual, only.alg[i])) {
			char name[8];

			tool_errorf("verify: --bank %s: %s has no such bank", mb_digest_alg_name(only.alg[i], name),
				    pcrs_path ? pcrs_path : "the TPM");
			rc = EXIT_USAGE;
			goto out;
		}

	vopts.only_banks = only.alg;
	vopts.n_only = only.n;
	if (mb_verify_log(log, us, actual, &vopts, &res, &err) < 0) {
		tool_report(log_path, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (ima) {
		if (mb_policy_check_ima(mb_policy_has_ima(policy) ? policy : NULL, ima, actual, &ir, &err) < 0) {
			tool_report(ima_path, &err);
			rc = EXIT_USAGE;
			goto out;
		}
		ima_judged = true;
		ima_ok = mb_ima_policy_result_ok(&ir);
	}
	if (policy) {
		judged = check_policy(policy, policy_path, log, us, res, &pr);
		policy_ok = judged == 0 && mb_policy_result_ok(&pr);
	}
	rc = mb_verify_result_ok(res) && policy_ok && ima_ok ? EXIT_OK : EXIT_FAILED;
	if (json) {
		/* The library writes the document (the log's verdict and the policy's); the tool prints it. */
		if (tool_json_text_print(mb_verify_result_to_json_ima(res, pcrs_path ? pcrs_path : "tpm", policy,
								      judged == 0 ? &pr : NULL, ima != NULL,
								      ima_judged ? &ir : NULL,
								      json != TOOL_JSON_COMPACT)) != EXIT_OK)
			rc = EXIT_USAGE;
	} else {
		print_text(log, res, pcrs_path ? "values" : "TPM");
		if (policy && judged >= 0)
			print_policy_text(policy, policy_path, log, res, judged == 0 ? &pr : NULL);
		if (ima_judged)
			print_ima_text(ima_path, mb_policy_has_ima(policy) ? policy : NULL, &ir);
	}
	if (judged == 0)
		mb_policy_result_done(&pr);
out:
	mb_ima_policy_result_done(&ir);
	mb_ima_log_free(ima);
	if (us_fd >= 0)
		close(us_fd);
	mb_cel_log_free(us);
	mb_pcr_values_free(actual);
	mb_verify_result_free(res);
	mb_event_log_free(log);
	mb_policy_free(policy);
	return rc;
}
