/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tpmtotp on TPM 2.0: a random seed sealed to the PCRs of a good boot; the code it gives is the
 * code the user's phone shows only when the machine booted as it should. Sealing and unsealing
 * are `mboot seal`'s and `mboot unseal`'s own code (seal_with_secret, unseal_to_secret), called
 * with the seed in their locked page: it never reaches argv, a pipe, a file or a stdio buffer.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>


#include <mboot/seal.h>
#include <mboot/totp.h>
#include "tool/options.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define TOTP_DEFAULT_FILE "/var/lib/mboot/totp.sealed"

static const char totp_help[] =
	"Usage: mboot totp init (--pcrs LIST [--bank NAME] | --authorized-by PUBKEY) [-o SEALED [--force]]\n"
	"                       [--account NAME] [--issuer NAME] [--digits N] [--log LOG] [--tcti TCTI]\n"
	"       mboot totp show [-i SEALED] [--signature SIG ...] [--digits N] [--watch] [--log LOG]\n"
	"                       [--tcti TCTI]\n\n"
	"init: a random 160-bit seed is sealed to the current values of the PCRs in LIST (as\n"
	"'mboot seal' does), and shown once, as an otpauth:// URI and a QR code, for a phone's\n"
	"authenticator. show: the seed is unsealed (only on a boot with the same PCR values) and the\n"
	"current RFC 6238 code printed (HMAC-SHA-1, 30 s); compare it with the phone's before typing\n"
	"a password into this machine. --watch prints a new code every step until interrupted.\n"
	"--digits (6, 7 or 8; default 6) is sealed with the seed by init, so show prints codes of\n"
	"that length; show --digits overrides it.\n"
	"The seed reseals with 'mboot reseal' like any sealed secret; with --authorized-by it is\n"
	"sealed to signed policies instead (see 'mboot seal --help'), and show needs --signature.\n"
	"SEALED defaults to\n"
	TOTP_DEFAULT_FILE "; init keeps an existing one (exit 2: the seed a phone\n"
	"already holds would be lost) unless --force, and writes it atomically, 0600.\n\n"
	"Exit: 0 shown, 1 the seed does not unseal (the boot differs: the PCRs and events are named),\n"
	"2 usage or input error, 3 TPM error.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void) sig;
	stop = 1;
}

static int totp_init(int argc, char **argv)
{
	const char *pcrs = NULL, *bank = NULL, *out = TOTP_DEFAULT_FILE, *log = NULL, *tcti = NULL, *authority = NULL;
	const char *issuer = "mboot", *account = NULL;
	char host[256] = "", *uri = NULL;
	unsigned digits = 6;
	bool force = false;
	const tool_option opts[] = {
		TOOL_OPT_STR("pcrs", 'p', &pcrs),
		TOOL_OPT_STR("bank", 'b', &bank),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_STR("account", 'a', &account),
		TOOL_OPT_STR("issuer", 'I', &issuer),
		TOOL_OPT_NUMBER("digits", 'd', &digits, 6, 8),
		TOOL_OPT_STR("log", 'l', &log),
		TOOL_OPT_STR("tcti", 't', &tcti),
		TOOL_OPT_STR("authorized-by", 'A', &authority),
		TOOL_OPT_BOOL("force", 'f', &force),
		TOOL_OPT_END,
	};
	uint8_t seed[MB_TOTP_SEED_SIZE];
	seal_args sa = { 0 };
	secret_buf secret = { 0 };
	int rc;

	rc = tool_parse_options("totp init", totp_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (account)
		snprintf(host, sizeof(host), "%s", account);
	if (!pcrs == !authority)
		return tool_usage_error("totp init", "needs --pcrs LIST (the PCRs of a good boot, e.g. 0,2,4,7) or "
					"--authorized-by PUBKEY");
	if (authority && bank)
		return tool_usage_error("totp init", "--bank goes with --pcrs, not --authorized-by");
	/* seal's --force also allows --pcrs none; a code from a seed sealed to nothing proves nothing */
	if (pcrs && strcmp(pcrs, "none") == 0)
		return tool_usage_error("totp init", "--pcrs none: a TOTP seed must be sealed to the PCRs of a good boot");
	rc = tool_check_output("totp init", out, force);
	if (rc)
		return rc;
	if (!host[0] && gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "this machine");

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void) mlock(seed, sizeof(seed));
	/* The kernel's generator, which OpenSSL's own draws from; 20 bytes come whole. */
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t) sizeof(seed)) {
		tool_errorf("totp init: no random bytes");
		return EXIT_USAGE;
	}
	/* seal itself, with the seed in its locked page: never in argv, a pipe or a stdio buffer */
	sa.tcti = tcti;
	sa.out = out;
	sa.log = log;
	sa.authority = authority;
	sa.force = force;
	if (!authority) {
		sa.have_pcrs = true;
		if (tool_parse_pcr_list(pcrs, &sa.mask) < 0) {
			rc = tool_usage_error("totp init", "bad PCR list '%s' (e.g. 0,2,4-7)", pcrs);
			goto fail;
		}
	}
	if (bank && tool_bank_arg("totp init", bank, &sa.bank) != EXIT_OK) {
		rc = EXIT_USAGE;
		goto fail;
	}
	rc = secret_alloc(&secret);
	if (rc)
		goto fail;
	/* the settings are sealed with the seed: `totp show` gives the codes the phone was told of */
	if (mb_totp_secret_pack(seed, sizeof(seed), &(mb_totp_settings) { .digits = digits, .period = 30 },
				(uint8_t *) secret.p, &secret.size) < 0) {
		rc = EXIT_USAGE;
		goto fail;
	}
	rc = seal_with_secret(&sa, &secret);
	if (rc != EXIT_OK)
		goto fail;
	uri = mb_totp_uri(seed, sizeof(seed), issuer, host, digits, 30, MB_ALG_SHA1);
	explicit_bzero(seed, sizeof(seed));
	if (!uri) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	if (authority)
		printf("The TOTP seed is sealed in %s to policies signed by the key of %s.\n", out, authority);
	else
		printf("The TOTP seed is sealed in %s to PCRs %s.\n", out, pcrs);
	printf("Add it to an authenticator now; it is shown this once:\n\n%s\n\n", uri);
	if (tool_print_qr(stdout, uri) < 0)
		printf("(the URI is too long for a QR code)\n");
	printf("\nOn each boot, 'mboot totp show' must give the code the phone shows.\n");
	fflush(stdout);
	explicit_bzero(uri, strlen(uri));
	free(uri);
	return EXIT_OK;
fail:
	secret_free(&secret);
	explicit_bzero(seed, sizeof(seed));
	return rc;
}

/* --signature SIG, repeatable: the signed policies a secret sealed --authorized-by needs. */
struct signatures {
	const char *list[MAX_SIGNATURES];
	size_t n;
};

static int signature_option(void *target, const char *arg, const char *verb)
{
	struct signatures *s = target;

	if (s->n == MAX_SIGNATURES)
		return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
	s->list[s->n++] = arg;
	return EXIT_OK;
}

static int totp_show(int argc, char **argv)
{
	const char *in = TOTP_DEFAULT_FILE, *log = NULL, *tcti = NULL;
	struct signatures sigs = { 0 };
	unsigned digits = 0; /* 0: as sealed */
	bool watch = false;
	const tool_option opts[] = {
		TOOL_OPT_STR("input", 'i', &in),
		TOOL_OPT_NUMBER("digits", 'd', &digits, 6, 8),
		TOOL_OPT_BOOL("watch", 'w', &watch),
		TOOL_OPT_STR("log", 'l', &log),
		TOOL_OPT_STR("tcti", 't', &tcti),
		TOOL_OPT_FN("signature", 's', &sigs, signature_option),
		TOOL_OPT_END,
	};
	size_t n_sigs;
	mb_totp_settings set;
	const uint8_t *seed;
	size_t seed_len;
	secret_buf secret = { 0 };
	mb_sealed *s = NULL;
	mb_tpm *tpm = NULL;
	bool authorized;
	int rc;

	rc = tool_parse_options("totp show", totp_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	n_sigs = sigs.n;
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* unseal itself: a refusal is explained on stderr, as `mboot unseal` explains it */
	rc = load_sealed(in, &s);
	if (rc)
		return rc;
	authorized = mb_sealed_policy_kind(s) == MB_SEAL_POLICY_AUTHORIZE;
	if (authorized != (n_sigs > 0)) {
		rc = tool_usage_error("totp show", authorized ? "%s is sealed to signed policies: give --signature SIG" :
					   "%s is sealed to PCR values: --signature does not apply", in);
		goto out;
	}
	rc = unseal_new_secret(tcti, s, log ? log : MB_DEFAULT_LOG, (char **) sigs.list, n_sigs, NULL, &tpm, &secret, NULL);
	if (rc != EXIT_OK)
		goto out;
	if (mb_totp_secret_unpack(secret.p, secret.size, &seed, &seed_len, &set) < 0) {
		tool_errorf("totp show: %s does not hold a TOTP seed", in);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!digits)
		digits = set.digits;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	do {
		time_t now = time(NULL);
		uint32_t code;

		if (mb_totp(seed, seed_len, (uint64_t) now, set.period, 0, digits, MB_ALG_SHA1, &code) < 0) {
			rc = EXIT_USAGE;
			break;
		}
		printf("%0*u  (valid for %d s)\n", (int) digits, code, (int) (set.period - (uint64_t) now % set.period));
		fflush(stdout);
		if (watch)
			while (!stop && (uint64_t) time(NULL) / set.period == (uint64_t) now / set.period)
				sleep(1);
	} while (watch && !stop);
out:
	secret_free(&secret);
	mb_sealed_free(s);
	mb_tpm_free(tpm);
	return rc;
}

static const tool_command totp_commands[] = {
	{ "init", totp_init },
	{ "show", totp_show },
	{ NULL, NULL },
};

int verb_totp(int argc, char **argv)
{
	return tool_dispatch("totp", totp_help, totp_commands, argc, argv);
}
