/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What mboot seal, unseal and reseal share: their options, the secret's buffer, file reading. */
#ifndef MB_TOOL_SEAL_COMMON_H
#define MB_TOOL_SEAL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/mboot.h>
#include "shared/secret-page.h"
#include "tool/tool.h"

#define MAX_SIGNATURES 8
#define SEAL_MAX_VALUES 7 /* reseal: predicted states beside today's, a TPM2_PolicyOR's 8 branches */

/* The options of seal, unseal and reseal, parsed by one function; each verb takes a subset. */
typedef struct seal_args {
	const char *tcti, *in, *out, *log, *values, *authority;
	const mb_digest_info *bank;       /* NULL: not given */
	bool have_pcrs, force;
	tool_json json;
	uint32_t mask;
	char *sigs[MAX_SIGNATURES];
	size_t n_sigs;
	/* reseal's firmware-update window: --firmware-update, --keep-window, --close-window, --nv-index */
	bool firmware_update, keep_window, close_window;
	uint32_t nv_index;                /* 0: not given */
	/* --values, repeatable where the verb takes several (reseal): values is the first */
	const char *values_list[SEAL_MAX_VALUES];
	size_t n_values;
	/* TPM + PIN: --pin (seal: with a PIN; unseal: ask for it, which a PIN file does anyway), --pin-file F */
	bool pin;
	const char *pin_file;
} seal_args;

enum {
	TAKES_PCRS = 1u << 0, TAKES_BANK = 1u << 1, TAKES_VALUES = 1u << 2, TAKES_FORCE = 1u << 3,
	TAKES_AUTHORIZED_BY = 1u << 4, TAKES_SIGNATURE = 1u << 5, TAKES_JSON = 1u << 6, TAKES_WINDOW = 1u << 7,
	TAKES_PIN = 1u << 8,
};

/* --nv-index HANDLE: an NV index of the owner range (0x01800000-0x01bfffff), into the uint32_t at target. */
int nv_index_option(void *target, const char *arg, const char *verb);

/* --values FILE, repeatable: appended to list (*n entries, at most SEAL_MAX_VALUES, else a usage
 * error); *first keeps the first one. */
int seal_values_append(const char **list, size_t *n, const char **first, const char *arg, const char *verb);

/* Returns -1 when --help was shown, EXIT_OK, or a usage error's exit code. */
int parse_seal_args(int argc, char **argv, const char *verb, const char *help, unsigned takes, seal_args *a);

/* One page, locked when the system lets us: the only place the secret is kept. */
typedef secret_page secret_buf;

/* EXIT_OK, or EXIT_USAGE said ("out of memory"). */
int secret_alloc(secret_buf *s);
/* Wipes the page, then frees it. */
void secret_free(secret_buf *s);
/* The secret from path ("-": stdin), 1 to MB_SEAL_MAX_SECRET bytes; reports, EXIT_USAGE. */
int secret_read(const char *path, secret_buf *s);

/* file_read; reports and returns EXIT_USAGE on failure. */
int read_whole(const char *path, size_t max, uint8_t **buf, size_t *size);
/*
 * The TPM public area (mb_tpm_key_public) of the policy-signing key in PEM file path, public or
 * private (the file's bytes are wiped after use): *ret, which the caller frees. Reports and
 * returns EXIT_USAGE on failure.
 */
int read_authority_key(const char *path, uint8_t **ret, size_t *ret_size);
/*
 * The event log to keep in a sealed file, to explain a later failed unseal: log_path
 * (which must parse), else the system log when it is readable and parses (else none:
 * it is an extra). *ret is NULL when there is none.
 */
int read_kept_log(const char *log_path, uint8_t **ret, size_t *ret_size);
/* Why an unseal was refused, on stderr; with only_errors, only the errors met explaining it. */
void show_explanation(const mb_unseal_explanation *e, bool only_errors);
/* Read and check a sealed file (untrusted input) into *s; reports and returns EXIT_USAGE on failure. */
int load_sealed(const char *path, mb_sealed **s);
/* A TPM error, said as dictionary-attack lockout when it is one; exit 3. */
int tpm_error_exit(const mb_error *err);
/*
 * Seal the secret as opt says (mb_seal_secret) and write the sealed file to out (0600,
 * atomically; an existing out only when replace). The secret is wiped and freed either
 * way. ret (may be NULL) gets the sealed secret on success; the caller frees it.
 */
int seal_write(mb_tpm *tpm, secret_buf *secret, const mb_seal_options *opt, const char *out, bool replace,
	       const char *verb, mb_sealed **ret);

/*
 * mboot seal with args already parsed, sealing secret (filled by the caller; wiped and freed
 * here) instead of reading args->in: what totp init does with its seed (verb-seal.c).
 */
int seal_with_secret(const seal_args *args, secret_buf *secret);

/* What `unseal --json` reports of a refusal (mb_unseal_explanation_to_json): kept, not said. */
typedef struct unseal_report {
	mb_unseal_explanation *e; /* the caller frees it */
	bool wrong_pin;
} unseal_report;

/*
 * Unseal s into secret (verb-unseal.c); a refusal is explained on stderr, or kept in
 * report (`unseal --json`) when not NULL. sig_paths: the signature files of a secret
 * sealed to signed policies. pin: the PIN of a secret sealed with one (NULL: asked here when
 * s needs one, pin_read). A wrong PIN is exit 1. Returns the exit code.
 */
/* A refused unseal's explanation, said on stderr as `unseal` says it. */
void unseal_explain(const mb_unseal_explanation *e);
int unseal_to_secret(mb_tpm *tpm, const mb_sealed *s, const char *log_path, char **sig_paths, size_t n_sigs,
		     const secret_buf *pin, secret_buf *secret, unseal_report *report);
/*
 * The same into a new locked page (*secret) through the TPM of tcti, opened here and left in
 * *tpm; the caller frees both, whatever the exit code.
 */
int unseal_new_secret(const char *tcti, const mb_sealed *s, const char *log_path, char **sig_paths, size_t n_sigs,
		      const secret_buf *pin, mb_tpm **tpm, secret_buf *secret, unseal_report *report);

#endif
