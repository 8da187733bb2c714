/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot luks: disk keys sealed into LUKS2 tokens (docs/luks.md). The library does the work
 * (mb_luks_*: libcryptsetup and the sealing); this parses options, reads the existing
 * passphrase (from a terminal with no echo, or --key-file) into a locked page, and prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>


#include "tool/luks-passphrase.h"
#include "tool/luks-recovery.h"
#include "tool/options.h"
#include "tool/pin.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

/* The largest key file read: cryptsetup's own key files are a few KiB; the page is locked. */

static const char luks_help[] =
	"Usage: mboot luks enroll DEVICE (--pcrs LIST [--bank NAME] [--values current|FILE] [--log LOG|none]\n"
	"                                 [--pin [--pin-file F]] | --authorized-by PUBKEY) [--key-file FILE]\n"
	"                                 [--recovery-key] [--tcti TCTI]\n"
	"       mboot luks add-recovery DEVICE [--key-file FILE]\n"
	"       mboot luks list DEVICE [--json]\n"
	"       mboot luks remove DEVICE --token N\n"
	"       mboot luks unlock DEVICE (NAME | --test) [--token N] [--signature SIG ...] [--log LOG]\n"
	"                         [--pin-file F] [--tcti TCTI]\n"
	"       mboot luks reseal DEVICE [--token N] [--values FILE ...] [--predict-args PREDICT-OPTIONS... ...]\n"
	"                         [--log LOG] [--passphrase | --key-file FILE] [--tcti TCTI]\n\n"
	"Disk keys sealed into LUKS2 tokens. DEVICE is a LUKS2 block device or image file.\n\n"
	"enroll: add a keyslot with a new random 32-byte key, authorised by an existing passphrase\n"
	"  (asked on the terminal, or the bytes of --key-file; '-' is stdin), seal the key as\n"
	"  'mboot seal' does, and store the sealed key in a LUKS2 token of type \"mboot\" bound to\n"
	"  that keyslot. The key itself is never written anywhere. With the token plugin\n"
	"  installed, 'cryptsetup open DEVICE NAME' unseals it; on a boot whose PCRs differ it says\n"
	"  which, and asks for a passphrase.\n"
	"  --pcrs LIST       the PCRs to seal to, e.g. 0,2,4,7\n"
	"  --bank NAME       their bank (default sha256)\n"
	"  --values current  the values the TPM holds now (default); FILE: predicted values\n"
	"  --authorized-by PUBKEY  instead: any PCR values the key's owner signs ('mboot seal --help')\n"
	"  --log LOG         the event log of the boot sealed to: a summary of its events in the\n"
	"                    sealed PCRs is kept in the token, so that a refused unlock names the\n"
	"                    events that changed; it must replay to the values sealed to (default\n"
	"                    " MB_DEFAULT_LOG "\n"
	"                    when readable and not --values FILE; none: keep no summary)\n"
	"  --pin             TPM + PIN: the key is released only with a PIN too (as 'mboot seal --pin');\n"
	"                    asked twice on the terminal, no echo; 'cryptsetup open' asks \"Enter token\n"
	"                    PIN:\", unlock and reseal ask too; wrong PINs count toward the TPM's lockout\n"
	"  --pin-file F      (enroll, unlock, reseal) the PIN from F ('-': stdin) instead\n"
	"  --recovery-key    also add a recovery key (as add-recovery)\n"
	"add-recovery: add a recovery key: 256 random bits as 64 letters in 8 groups (the same keys on\n"
	"  every keyboard layout), in a keyslot of its own (argon2id, as cryptsetup luksAddKey)\n"
	"  authorised by an existing passphrase; printed once on stdout (and as a QR code on a\n"
	"  terminal), never stored: write it down. Typed at the passphrase prompt, it opens the disk.\n"
	"list: the device's mboot tokens, their keyslots and what they are sealed to.\n"
	"remove: token N and its keyslot; refused when no keyslot opened by a passphrase would remain.\n"
	"unlock: unseal the key (of token N, else of each mboot token in turn) and activate the\n"
	"  device as /dev/mapper/NAME; --test only checks that the key opens its keyslot.\n"
	"  --signature SIG   for a key sealed --authorized-by: a signed policy ('mboot policy\n"
	"                    sign'); up to 8, the one whose values the PCRs hold is used\n"
	"reseal: before an upgrade, as 'mboot reseal' does for a sealed file: unseal each token's key\n"
	"  (of token N's keyslot only, with --token) on this boot and seal it again to the same PCRs,\n"
	"  to the values the TPM holds now OR each predicted state (TPM2_PolicyOR; at most 7 predicted,\n"
	"  identical ones once): a NEW token for the\n"
	"  same keyslot, checked, and only then the keyslot's old mboot tokens removed, so that a\n"
	"  crash never leaves the disk without a token a good boot opens (one left over from a crash\n"
	"  is removed by the next reseal). Without --values or --predict-args: the current values\n"
	"  only (the stale branch of an earlier reseal dropped). Tokens sealed --authorized-by are\n"
	"  skipped (a release ships a signature).\n"
	"  --values FILE     predicted PCR values ('mboot predict' text or --json; tpm2_pcrread's text);\n"
	"                    repeatable, one state each\n"
	"  --predict-args PREDICT-OPTIONS...\n"
	"                    predict them here: what follows, up to the next --predict-args, is 'mboot\n"
	"                    predict' options (--kernel K --initrd I --grub-cfg F --grub-entry SPEC --log\n"
	"                    LOG ...), one state; a sealed PCR that cannot be predicted reseals nothing\n"
	"                    (exit 1). They come last\n"
	"  --log LOG         today's event log, to name the events that changed (default\n"
	"                    " MB_DEFAULT_LOG ")\n"
	"  --passphrase, --key-file FILE\n"
	"                    locked out after an update (this boot cannot unseal the key): unseal\n"
	"                    nothing; a NEW key, sealed the same way, in a new keyslot authorised by\n"
	"                    this passphrase or recovery key (--passphrase: asked on the terminal, or\n"
	"                    a line of stdin; --key-file: all its bytes, '-' stdin); the new token\n"
	"                    stored and checked, then the old token and keyslot removed\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 done; 1 (unlock, reseal) the key is not released on this boot (the PCRs and events\n"
	"are named), or a wrong PIN, or it does not open its keyslot, or (reseal) a sealed PCR cannot be predicted;\n"
	"2 usage or input error (not LUKS2, a wrong passphrase, a malformed token, no room in the\n"
	"LUKS2 header); 3 TPM error.\n";

typedef struct luks_args {
	const char *pcrs, *values, *authority, *key_file, *tcti, *log;
	const mb_digest_info *bank;
	bool json, test, have_token, passphrase, recovery_key;
	unsigned token;
	char *sigs[MAX_SIGNATURES];
	size_t n_sigs;
	char *pos[2];
	int n_pos;
	const char *values_list[SEAL_MAX_VALUES]; /* --values, repeatable for reseal; values is the first */
	size_t n_values;
	bool pin;                                 /* TPM + PIN: --pin, --pin-file F */
	const char *pin_file;
} luks_args;

/* What each command takes: the bits of the options in luks_option_table. */
enum {
	LUKS_TAKES_PCRS = 1u << 0, LUKS_TAKES_BANK = 1u << 1, LUKS_TAKES_VALUES = 1u << 2, LUKS_TAKES_AUTHORIZED_BY = 1u << 3,
	LUKS_TAKES_KEY_FILE = 1u << 4, LUKS_TAKES_TCTI = 1u << 5, LUKS_TAKES_JSON = 1u << 6, LUKS_TAKES_TOKEN = 1u << 7,
	LUKS_TAKES_TEST = 1u << 8, LUKS_TAKES_LOG = 1u << 9, LUKS_TAKES_SIGNATURE = 1u << 10,
	LUKS_TAKES_PASSPHRASE = 1u << 11, LUKS_TAKES_RECOVERY_KEY = 1u << 12,
	LUKS_TAKES_PIN = 1u << 13, LUKS_TAKES_PIN_FILE = 1u << 14,
};
#define N_LUKS_OPTIONS 15

static int add_signature(void *target, const char *arg, const char *verb)
{
	luks_args *a = target;

	if (a->n_sigs == MAX_SIGNATURES)
		return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
	a->sigs[a->n_sigs++] = (char *) arg;
	return EXIT_OK;
}

static int add_values(void *target, const char *arg, const char *verb)
{
	luks_args *a = target;

	return seal_values_append(a->values_list, &a->n_values, &a->values, arg, verb);
}

/* Returns -1 when --help was shown, EXIT_OK, or a usage error's exit code. */
static int parse_args(int argc, char **argv, const char *verb, unsigned takes, int max_pos, luks_args *a)
{
	tool_option all[N_LUKS_OPTIONS] = {
		TOOL_OPT_STR("pcrs", 0, &a->pcrs),
		TOOL_OPT_ONE_BANK("bank", 0, &a->bank),
		TOOL_OPT_FN("values", 0, a, add_values),
		TOOL_OPT_STR("authorized-by", 0, &a->authority),
		TOOL_OPT_STR("key-file", 0, &a->key_file),
		TOOL_OPT_STR("tcti", 0, &a->tcti),
		TOOL_OPT_BOOL("json", 0, &a->json),
		TOOL_OPT_NUMBER("token", 0, &a->token, 0, 31),
		TOOL_OPT_BOOL("test", 0, &a->test),
		TOOL_OPT_STR("log", 0, &a->log),
		TOOL_OPT_FN("signature", 0, a, add_signature),
		TOOL_OPT_BOOL("passphrase", 0, &a->passphrase),
		TOOL_OPT_BOOL("recovery-key", 0, &a->recovery_key),
		TOOL_OPT_BOOL("pin", 0, &a->pin),
		TOOL_OPT_STR("pin-file", 0, &a->pin_file),
	};
	tool_option opts[N_LUKS_OPTIONS + 1];
	size_t n = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	a->token = UINT32_MAX; /* not given */
	for (size_t i = 0; i < N_LUKS_OPTIONS; i++)
		if (takes & (1u << i))
			opts[n++] = all[i];
	opts[n] = (tool_option) TOOL_OPT_END;
	rc = tool_parse_options(verb, luks_help, opts, argc, argv, max_pos);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc;
	a->have_token = a->token != UINT32_MAX;
	if (a->pin_file)
		a->pin = true;
	for (; optind < argc; optind++)
		a->pos[a->n_pos++] = argv[optind];
	if (a->n_pos == 0)
		return tool_usage_error(verb, "needs a DEVICE (a LUKS2 block device or image file)");
	return EXIT_OK;
}

/* A failed mb_luks_* call: its exit code, said. */
static int luks_exit(const char *what, const mb_error *err)
{
	switch (err->code) {
	case MB_ERR_TPM:
	case MB_ERR_TPM_LOCKOUT:
	case MB_ERR_TPM_SIGNATURE:
		return tpm_error_exit(err);
	case MB_ERR_TPM_POLICY:
	case -EPERM:
		tool_report(what, err);
		return EXIT_FAILED;
	default:
		tool_report(what, err);
		return EXIT_USAGE;
	}
}

/*
 * The event log to summarise in the token (*ret NULL: none): --log LOG, none with --log
 * none; by default the system's when readable, unless the values sealed to are not this
 * boot's (--values FILE) or there are no PCR values (--authorized-by).
 */
static int enroll_log(const luks_args *a, uint8_t **ret, size_t *ret_size)
{
	*ret = NULL;
	*ret_size = 0;
	if (a->log && strcmp(a->log, "none") == 0)
		return EXIT_OK;
	if (!a->log && (a->authority || (a->values && strcmp(a->values, "current") != 0) ||
			access(MB_DEFAULT_LOG, R_OK) != 0))
		return EXIT_OK;
	return read_whole(a->log ? a->log : MB_DEFAULT_LOG, MB_LOG_MAX_SIZE, ret, ret_size);
}

/* TPM + PIN at enroll: the PIN asked twice (or --pin-file), into opt; not with --authorized-by. */
static int enroll_pin(const luks_args *a, secret_buf *pin, mb_luks_enroll_options *opt)
{
	if (!a->pin)
		return EXIT_OK;
	if (a->authority)
		return tool_usage_error("luks enroll", "--pin is for keys sealed to PCR values, not --authorized-by");
	if (a->key_file && strcmp(a->key_file, "-") == 0 && pin_reads_stdin(a->pin_file))
		return tool_usage_error("luks enroll", "the passphrase and the PIN cannot both come from stdin: give "
					"--pin-file F");
	if (pin_read("luks enroll", a->pin_file, true, pin))
		return EXIT_USAGE;
	opt->pin = pin->p;
	opt->pin_size = pin->size;
	return EXIT_OK;
}

static int luks_enroll(int argc, char **argv)
{
	mb_luks_enroll_options opt = MB_OPTIONS_INIT(mb_luks_enroll_options);
	secret_buf pw = { 0 }, pin = { 0 };
	mb_pcr_bank values;
	uint8_t *key_public = NULL, *log = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	luks_args a;
	int rc, token = -1, slot = -1;

	rc = parse_args(argc, argv, "luks enroll", LUKS_TAKES_PCRS | LUKS_TAKES_BANK | LUKS_TAKES_VALUES |
			LUKS_TAKES_AUTHORIZED_BY | LUKS_TAKES_KEY_FILE | LUKS_TAKES_TCTI | LUKS_TAKES_LOG | LUKS_TAKES_PIN |
			LUKS_TAKES_PIN_FILE | LUKS_TAKES_RECOVERY_KEY, 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.n_values > 1)
		return tool_usage_error("luks enroll", "one --values: a key is enrolled to one PCR state ('luks reseal' "
					"adds predicted ones)");
	if (!a.pcrs == !a.authority)
		return tool_usage_error("luks enroll", "needs --pcrs LIST (e.g. 0,2,4,7) or --authorized-by PUBKEY");
	if (a.authority && (a.values || a.bank || a.log))
		return tool_usage_error("luks enroll", "--authorized-by takes no --values, --bank or --log: the "
					"signatures name the PCRs and their values");
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	opt.bank = a.bank ? a.bank->alg : MB_ALG_SHA256;
	if (a.pcrs) {
		if (tool_parse_pcr_list(a.pcrs, &opt.pcr_mask) < 0 || opt.pcr_mask == 0)
			return tool_usage_error("luks enroll", "bad PCR list '%s' (e.g. 0,2,4-7; a disk key is never "
						"sealed to no PCRs)", a.pcrs);
		if (opt.pcr_mask & ((1u << 16) | (1u << 23)))
			tool_notef("PCRs 16 and 23 can be reset by any program that can use the TPM: sealing to them "
				   "protects nothing");
		if (a.values && strcmp(a.values, "current") != 0) {
			rc = tool_load_pcr_bank(a.values, opt.bank, opt.pcr_mask, "PCRs to seal to", &values);
			if (rc)
				return rc;
			opt.values = &values;
		}
	} else {
		rc = read_authority_key(a.authority, &key_public, &opt.authority_public_size);
		if (rc)
			return rc;
		opt.authority_public = key_public;
	}
	rc = secret_alloc(&pw);
	if (rc)
		goto out;
	rc = a.key_file ? luks_read_key_file(a.key_file, &pw) : luks_read_passphrase_tty(a.pos[0], &pw);
	if (rc)
		goto out;
	opt.passphrase = (const char *) pw.p;
	opt.passphrase_size = pw.size;
	rc = enroll_pin(&a, &pin, &opt);
	if (rc)
		goto out;
	rc = enroll_log(&a, &log, &opt.eventlog_size);
	if (rc)
		goto out;
	opt.eventlog = log;
	rc = tool_tpm_open(a.tcti, &tpm);
	if (rc)
		goto out;
	if (mb_luks_enroll(tpm, a.pos[0], &opt, &token, &slot, &err) < 0) {
		rc = err.code == -EPERM ? (tool_report("luks enroll", &err), EXIT_USAGE) : luks_exit("luks enroll", &err);
		if (log && !a.log && err.code == -EINVAL && strstr(err.message, "event log"))
			tool_notef("the event log was %s: '--log none' enrolls without an event summary", MB_DEFAULT_LOG);
		goto out;
	}
	printf("%s: token %d, keyslot %d: a new key sealed to %s%s%s\n", a.pos[0], token, slot,
	       a.pcrs ? "PCRs " : "policies signed by the key of ", a.pcrs ? a.pcrs : a.authority,
	       a.pin ? " and a PIN" : "");
	rc = a.recovery_key ? luks_recovery_add("luks enroll", a.pos[0], &pw) : EXIT_OK;
out:
	secret_free(&pw);
	secret_free(&pin);
	free(log);
	free(key_public);
	mb_tpm_free(tpm);
	return rc;
}

static int luks_list(int argc, char **argv)
{
	mb_luks_entry *e = NULL;
	mb_error err = { 0 };
	uint32_t recovery = 0;
	size_t n = 0;
	luks_args a;
	int rc;

	rc = parse_args(argc, argv, "luks list", LUKS_TAKES_JSON, 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (mb_luks_list(a.pos[0], &e, &n, &err) < 0)
		return luks_exit("luks list", &err);
	if (a.json) {
		/* a keyslot list that cannot be read is said, and left out of the document */
		bool have_recovery = luks_recovery_list(a.pos[0], &recovery) == EXIT_OK;

		if (tool_json_text_print(mb_luks_list_to_json(a.pos[0], e, n, have_recovery ? &recovery : NULL, true)) !=
		    EXIT_OK || !have_recovery)
			rc = EXIT_USAGE;
		for (size_t i = 0; i < n; i++)
			if (!e[i].parsed)
				rc = EXIT_USAGE;
		mb_luks_list_free(e, n);
		return rc;
	}
	if (!n)
		printf("%s: no mboot token\n", a.pos[0]);
	for (size_t i = 0; i < n; i++) {
		const mb_luks_token *t = e[i].parsed;

		if (!t) {
			printf("Token %d: malformed: %s\n", e[i].token, e[i].error.message);
			rc = EXIT_USAGE;
			continue;
		}
		char *text = mb_luks_token_describe(t);

		printf("Token %d:\n%s", e[i].token, text ? text : "");
		free(text);
	}
	if (luks_recovery_list(a.pos[0], NULL) != EXIT_OK)
		rc = EXIT_USAGE;
	mb_luks_list_free(e, n);
	return rc;
}

static int luks_remove(int argc, char **argv)
{
	mb_error err = { 0 };
	luks_args a;
	int rc, slot = -1;

	rc = parse_args(argc, argv, "luks remove", LUKS_TAKES_TOKEN, 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!a.have_token)
		return tool_usage_error("luks remove", "needs --token N (see 'mboot luks list')");
	if (mb_luks_remove(a.pos[0], (int) a.token, &slot, &err) < 0)
		return luks_exit("luks remove", &err);
	if (slot >= 0)
		printf("%s: token %u and keyslot %d removed\n", a.pos[0], a.token, slot);
	else
		printf("%s: token %u removed (its keyslot is another token's too, and stays)\n", a.pos[0], a.token);
	return EXIT_OK;
}

/* A refusal's explanation (which PCRs and events), to stderr; e is freed. */
static void print_explanation(mb_unseal_explanation *e)
{
	char *text = e ? mb_luks_explanation_text(e) : NULL;

	if (text)
		fputs(text, stderr);
	free(text);
	mb_unseal_explanation_free(e);
}

static int luks_unlock(int argc, char **argv)
{
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_unseal_explanation *e = NULL;
	mb_unseal_options opt = MB_OPTIONS_INIT(mb_unseal_options);
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	secret_buf pin = { 0 };
	luks_args a;
	int rc, r, token = -1;
	size_t i;

	memset(sigs, 0, sizeof(sigs));
	rc = parse_args(argc, argv, "luks unlock", LUKS_TAKES_TOKEN | LUKS_TAKES_TEST | LUKS_TAKES_TCTI | LUKS_TAKES_LOG |
			LUKS_TAKES_SIGNATURE | LUKS_TAKES_PIN | LUKS_TAKES_PIN_FILE, 2, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if ((a.n_pos == 2) == a.test)
		return tool_usage_error("luks unlock", "needs a NAME to activate the device as, or --test (not both)");
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	opt.log_path = a.log ? a.log : MB_DEFAULT_LOG;
	for (i = 0; i < a.n_sigs; i++) {
		uint8_t *text = NULL;
		size_t size = 0;

		rc = read_whole(a.sigs[i], 1u << 20, &text, &size);
		if (rc)
			goto out;
		r = mb_policy_signature_parse((const char *) text, size, &sigs[i], &err);
		free(text);
		if (r < 0) {
			tool_report(a.sigs[i], &err);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	opt.signatures = sigs;
	opt.signature_names = (const char *const *) a.sigs;
	opt.n_signatures = a.n_sigs;
	rc = pin_for_luks(a.pos[0], "luks unlock", a.have_token ? (int) a.token : -1, a.pin, a.pin_file, &pin);
	opt.pin = pin.p;
	opt.pin_size = pin.size;
	if (rc)
		goto out;
	rc = tool_tpm_open(a.tcti, &tpm);
	if (rc)
		goto out;
	r = mb_luks_unlock(tpm, a.pos[0], a.test ? NULL : a.pos[1], a.have_token ? (int) a.token : -1, &opt, &token, &e,
			   &err);
	print_explanation(e);
	if (r < 0 && err.code == MB_ERR_TPM_AUTH)
		rc = pin_wrong(tpm);
	else if (r < 0)
		rc = luks_exit("luks unlock", &err);
	else if (a.test)
		printf("%s: token %d's key opens keyslot %d\n", a.pos[0], token, r);
	else
		printf("%s: token %d's key opened keyslot %d: /dev/mapper/%s\n", a.pos[0], token, r, a.pos[1]);
out:
	for (i = 0; i < a.n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	secret_free(&pin);
	mb_tpm_free(tpm);
	return rc;
}

/* The token ids of a removed-token mask, as "tokens 0 and 3" / "token 0". */
static void print_token_set(uint32_t set)
{
	int n = __builtin_popcount(set), i = 0;

	printf("token%s", n > 1 ? "s" : "");
	for (int id = 0; id < 32; id++)
		if (set & (1u << id)) {
			i++;
			printf("%s%d", i == 1 ? " " : i == n ? " and " : ", ", id);
		}
}

static int luks_reseal_keyslot(mb_tpm *tpm, const char *device, int token, const mb_pcr_values *const *pred,
			       size_t n_pred, const mb_unseal_options *opt)
{
	mb_luks_reseal_result res;
	mb_unseal_explanation *e = NULL;
	mb_error err = { 0 };
	int r = mb_luks_reseal(tpm, device, token, pred, n_pred, opt, &res, &e, &err), rc = EXIT_OK;

	print_explanation(e);
	if (r < 0)
		rc = luks_exit("luks reseal", &err);
	if (res.token < 0)
		return rc;
	printf("%s: keyslot %d: resealed to %s: token %d", device, res.keyslot,
	       res.or_policy ? "the current values or the predicted ones (PolicyOR)" : "the current values", res.token);
	if (res.removed) {
		printf(" (");
		print_token_set(res.removed);
		printf(" removed)");
	}
	printf("\n");
	return rc;
}

/* reseal --passphrase / --key-file: the passphrase that authorises the new keyslots (pw->p NULL: none). */
static int reseal_passphrase(const luks_args *a, secret_buf *pw)
{
	int rc;

	if (!a->passphrase && !a->key_file)
		return EXIT_OK;
	rc = secret_alloc(pw);
	if (rc == EXIT_OK)
		rc = a->key_file ? luks_read_key_file(a->key_file, pw) :
		     isatty(STDIN_FILENO) ? luks_read_passphrase_tty(a->pos[0], pw) : luks_read_stdin_line("luks reseal", pw);
	return rc;
}

/* add-recovery: a recovery key alone (luks-recovery.c). */
static int luks_add_recovery(int argc, char **argv)
{
	secret_buf pw = { 0 };
	luks_args a;
	int rc;

	rc = parse_args(argc, argv, "luks add-recovery", LUKS_TAKES_KEY_FILE, 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	rc = secret_alloc(&pw);
	if (rc == EXIT_OK)
		rc = a.key_file ? luks_read_key_file(a.key_file, &pw) : luks_read_passphrase_tty(a.pos[0], &pw);
	if (rc == EXIT_OK)
		rc = luks_recovery_add("luks add-recovery", a.pos[0], &pw);
	secret_free(&pw);
	return rc;
}

static int luks_reseal(int argc, char **argv)
{
	static predict_args pa[SEAL_MAX_VALUES];
	mb_predict_result *predicted[SEAL_MAX_VALUES] = { 0 };
	mb_pcr_values *values[SEAL_MAX_VALUES] = { 0 };
	const mb_pcr_values *pred[SEAL_MAX_VALUES];
	size_t n_pred = 0, n_split = 0, k;
	int splits[SEAL_MAX_VALUES + 1];
	mb_unseal_options opt = MB_OPTIONS_INIT(mb_unseal_options);
	mb_luks_entry *e = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	secret_buf pw = { 0 }, pin = { 0 };
	luks_args a;
	size_t n = 0;
	uint32_t mask = 0, slots = 0;
	int rc, todo = 0;

	/* everything after a --predict-args up to the next is predict's (argv[split] stands as its argv[0]) */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--predict-args") == 0) {
			if (n_split == SEAL_MAX_VALUES)
				return tool_usage_error("luks reseal", "at most %d predicted states (--values, --predict-args): "
							"a TPM2_PolicyOR has 8 branches, one today's", SEAL_MAX_VALUES);
			splits[n_split++] = i;
		}
	splits[n_split] = argc;
	rc = parse_args(n_split ? splits[0] : argc, argv, "luks reseal", LUKS_TAKES_TOKEN | LUKS_TAKES_VALUES |
			LUKS_TAKES_TCTI | LUKS_TAKES_LOG | LUKS_TAKES_PASSPHRASE | LUKS_TAKES_KEY_FILE | LUKS_TAKES_PIN_FILE,
			1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.passphrase && a.key_file)
		return tool_usage_error("luks reseal", "--passphrase or --key-file, not both");
	if (a.n_values + n_split > SEAL_MAX_VALUES)
		return tool_usage_error("luks reseal", "at most %d predicted states (--values, --predict-args): a "
					"TPM2_PolicyOR has 8 branches, one today's", SEAL_MAX_VALUES);
	for (k = 0; k < n_split; k++) {
		rc = predict_parse_args(splits[k + 1] - splits[k], argv + splits[k], "luks reseal --predict-args", &pa[k]);
		if (rc)
			return rc < 0 ? EXIT_OK : rc;
		if (pa[k].json || pa[k].write_log)
			return tool_usage_error("luks reseal", "--predict-args takes no --json, --compact or --write-log");
	}
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	opt.log_path = a.log ? a.log : MB_DEFAULT_LOG;
	if (mb_luks_list(a.pos[0], &e, &n, &err) < 0)
		return luks_exit("luks reseal", &err);
	/* What is resealed: one token a keyslot (the library takes the keyslot's others along). */
	for (size_t i = 0; i < n; i++) {
		const mb_luks_token *t = e[i].parsed;

		if (a.have_token && e[i].token != (int) a.token)
			continue;
		if (!t) {
			tool_report(a.have_token ? "luks reseal" : "luks reseal: note: left alone", &e[i].error);
			if (a.have_token)
				rc = EXIT_USAGE;
			continue;
		}
		if (strcmp(mb_luks_token_policy(t), "authorize") == 0) {
			printf("%s: token %d (keyslot %d) is sealed to signed policies: nothing to reseal (a release "
			       "ships a signature)\n", a.pos[0], e[i].token, mb_luks_token_keyslot(t));
			continue;
		}
		if (slots & (1u << mb_luks_token_keyslot(t))) {
			e[i].token = -1; /* its keyslot's first token stands for it */
			continue;
		}
		slots |= 1u << mb_luks_token_keyslot(t);
		mask |= mb_luks_token_pcrs(t);
		todo++;
	}
	/* with --passphrase/--key-file nothing is unsealed: a PIN token is refused there (no PIN asked) */
	if (rc == EXIT_OK && todo && !a.passphrase && !a.key_file)
		rc = pin_for_luks(a.pos[0], "luks reseal", a.have_token ? (int) a.token : -1, a.pin, a.pin_file, &pin);
	opt.pin = pin.p;
	opt.pin_size = pin.size;
	if (rc)
		goto out;
	if (a.have_token && !todo && !slots) {
		bool found = false;

		for (size_t i = 0; i < n; i++)
			found |= e[i].token == (int) a.token;
		if (!found) {
			tool_errorf("luks reseal: %s: no \"mboot\" token %u (see 'mboot luks list')", a.pos[0], a.token);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (!n) {
		tool_errorf("luks reseal: %s: no \"mboot\" token (mboot luks enroll adds one)", a.pos[0]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!todo)
		goto out;
	for (k = 0; k < a.n_values; k++) {
		values[k] = tool_pcr_values_new();
		rc = values[k] ? tool_load_pcrs(a.values_list[k], values[k]) : EXIT_USAGE;
		if (rc)
			goto out;
		pred[n_pred++] = values[k];
	}
	for (k = 0; k < n_split; k++) {
		rc = reseal_predict(&pa[k], mask, &predicted[k]);
		if (rc) {
			if (n_split > 1)
				fprintf(stderr, "(in --predict-args number %zu)\n", k + 1);
			goto out;
		}
		if (!predicted[k]->values) { /* never "now only" by accident */
			tool_errorf("luks reseal: the prediction gave no values: nothing resealed");
			rc = EXIT_FAILED;
			goto out;
		}
		pred[n_pred++] = predicted[k]->values;
	}
	rc = reseal_passphrase(&a, &pw);
	if (rc == EXIT_OK)
		rc = tool_tpm_open(a.tcti, &tpm);
	if (rc)
		goto out;
	/* each keyslot on its own: one that cannot be resealed does not stop the others */
	for (size_t i = 0; i < n; i++) {
		int one;

		if (!e[i].parsed || e[i].token < 0 || (a.have_token && e[i].token != (int) a.token) ||
		    strcmp(mb_luks_token_policy(e[i].parsed), "authorize") == 0)
			continue;
		one = pw.p ? luks_rekey_keyslot(tpm, a.pos[0], e[i].token, &pw, pred, n_pred) :
			     luks_reseal_keyslot(tpm, a.pos[0], e[i].token, pred, n_pred, &opt);
		if (one > rc)
			rc = one;
	}
out:
	secret_free(&pw);
	secret_free(&pin);
	mb_luks_list_free(e, n);
	for (k = 0; k < SEAL_MAX_VALUES; k++)
		mb_pcr_values_free(values[k]);
	mb_tpm_free(tpm);
	for (k = 0; k < n_split; k++)
		reseal_predict_free(&pa[k], predicted[k]);
	return rc;
}

static const tool_command luks_commands[] = {
	{ "add-recovery", luks_add_recovery },
	{ "enroll", luks_enroll },
	{ "list", luks_list },
	{ "remove", luks_remove },
	{ "reseal", luks_reseal },
	{ "unlock", luks_unlock },
	{ NULL, NULL },
};

int verb_luks(int argc, char **argv)
{
	return tool_dispatch("luks", luks_help, luks_commands, argc, argv);
}
