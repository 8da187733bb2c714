/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_ATTEST_H
#define MBOOT_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/policy.h>
#include <mboot/replay.h>
#include <mboot/tpm.h>
#include <mboot/verify.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Remote attestation (docs/attest.md): a machine proves its boot to a verifier that does
 * not trust it. Every file that crosses between the two is versioned JSON text, produced
 * and consumed here, so that the tool, the fleet service and tests share one format.
 *
 *   machine (has the TPM)                      verifier (no TPM)
 *   mb_tpm_attest_enroll  -> request  ------>  mb_attest_challenge_make  -> challenge + state
 *   mb_tpm_attest_activate <- challenge        (state stays with the verifier)
 *                         -> response ------>  mb_attest_challenge_check -> machine record
 *   mb_tpm_quote          -> evidence ------>  mb_attest_verify(evidence, machine record, nonce)
 *
 * On the verifier every input is untrusted: read through the bounded reader and the strict
 * JSON reader, under size caps. A malformed input is an error (-EBADMSG, -E2BIG, ...: exit 2
 * in the tool); well-formed evidence that does not prove a good boot is a verdict with
 * named reasons (exit 1), never an error.
 */

/* Largest file of any kind here the library reads (evidence carries the logs). */
#define MB_ATTEST_FILE_MAX (64u << 20)
/*
 * Nonces a verifier makes: at least 16 bytes (128 bits of freshness), at most 32 (a SHA-256
 * digest); the fleet service makes 32 and takes back only what it made, and `attest push` takes
 * only such a nonce from it.
 */
#define MB_ATTEST_NONCE_MIN 16
#define MB_ATTEST_NONCE_MAX 32
/*
 * What a quote's extraData (TPM2B_DATA qualifyingData) may hold, and so the nonce sizes
 * mb_tpm_quote and mb_attest_verify accept: 0 to 64 bytes, evidence made elsewhere included
 * (tpm2_quote, Keylime and others send nonces of 0 to 2 bytes too). docs/attest.md.
 */
#define MB_ATTEST_EXTRA_DATA_MAX 64

/* ---- on the machine (src/lib/tpm/attest-*.c) ------------------------------------------ */

typedef enum mb_attest_key_alg {
	MB_ATTEST_KEY_ECC = 0, /* ECC NIST P-256, ECDSA with SHA-256 (the default) */
	MB_ATTEST_KEY_RSA = 1, /* RSA 2048, RSASSA-PKCS1-v1_5 with SHA-256 */
} mb_attest_key_alg;

/*
 * Create the EK (TCG EK Credential Profile default templates; the one whose certificate is in
 * NV is preferred: RSA 2048 low range, then ECC P-256, then the high range), read its
 * certificate, and create an AK (restricted signing key) with ak_alg. Writes the AK file
 * (its private part wrapped by the TPM) and the enrollment request, both JSON; caller frees.
 */
MB_EXPORT int mb_tpm_attest_enroll(mb_tpm *t, mb_attest_key_alg ak_alg, char **ret_ak_file,
				   char **ret_request, mb_error *err) MB_WUR;

/*
 * TPM2_ActivateCredential of a challenge with the AK of ak_file and the EK (its policy session:
 * PolicySecret on the endorsement hierarchy). Writes the response; caller frees. A challenge
 * for another AK, or a credential the TPM cannot open (made for another AK name or another EK),
 * is MB_ERR_ATTEST_REFUSED; a malformed challenge or AK file -EBADMSG (or -E2BIG).
 */
MB_EXPORT int mb_tpm_attest_activate(mb_tpm *t, const char *ak_file, size_t ak_file_size,
				     const char *challenge, size_t challenge_size, char **ret_response,
				     mb_error *err) MB_WUR;

typedef struct mb_quote_input {
	size_t size; /* MB_OPTIONS_INIT(mb_quote_input): its sizeof (mboot/error.h) */
	const uint8_t *nonce;        /* 0..MB_ATTEST_EXTRA_DATA_MAX bytes (NULL when 0) */
	size_t nonce_size;
	const uint16_t *algs;        /* banks to quote; NULL: every active bank */
	size_t n_algs;
	uint32_t pcr_mask;           /* 0: all 24 PCRs */
	const void *eventlog;        /* the firmware log's bytes (may be NULL) */
	size_t eventlog_size;
	const void *userspace_log;   /* the userspace (CEL-JSON) log's bytes (may be NULL) */
	size_t userspace_log_size;
	/*
	 * The kernel's IMA list (docs/ima.md), binary with SHA-1 template hashes (MB_IMA_DEFAULT_PATH),
	 * read from this path right after the quote: the kernel adds an entry to the list before it
	 * extends PCR 10, so the list read then holds every entry the quoted PCR 10 covers (a verifier
	 * leaves the later ones for the next evidence). NULL: no list carried.
	 */
	const char *ima_log_path;
	/*
	 * Entries a verifier judged already (the fleet's "ima_from"): left out, and the evidence says
	 * how many ("ima_start"), when the list has more entries than that and, with ima_last given,
	 * entry ima_start - 1's template hash is ima_last (20 bytes: the fleet's "ima_last"); else the
	 * whole list is carried (a new boot).
	 */
	uint64_t ima_start;
	const uint8_t *ima_last;
	/*
	 * The SHA-256 (32 bytes) of a firmware log whose judgment a verifier keeps (the fleet's
	 * "eventlog_sha256"): when eventlog's bytes hash to it, the evidence names the log by it
	 * ("eventlog_sha256") instead of carrying it. NULL: the log is carried.
	 */
	const uint8_t *eventlog_known;
} mb_quote_input;

/*
 * TPM2_Quote with the AK of ak_file over the selected PCRs, and the PCR values read in the same
 * consistent snapshot (the update counter checked around the quote). Writes the evidence;
 * caller frees.
 */
MB_EXPORT int mb_tpm_quote(mb_tpm *t, const char *ak_file, size_t ak_file_size, const mb_quote_input *in,
			   char **ret_evidence, mb_error *err) MB_WUR;

/* ---- on the verifier: enrollment (src/lib/attest/) ------------------------------------ */

/* Manufacturer CA certificates an EK certificate must chain to. */
typedef struct mb_ek_roots mb_ek_roots;
MB_EXPORT int mb_ek_roots_new(mb_ek_roots **ret, mb_error *err) MB_WUR;
/* Add the PEM or DER certificates of a file, or of every regular file of a directory. */
MB_EXPORT int mb_ek_roots_add_path(mb_ek_roots *r, const char *path, mb_error *err) MB_WUR;
MB_EXPORT void mb_ek_roots_free(mb_ek_roots *r);

typedef struct mb_attest_challenge_options {
	size_t size; /* MB_OPTIONS_INIT(mb_attest_challenge_options): its sizeof (mboot/error.h) */
	const mb_ek_roots *roots;    /* required unless allow_no_ek_cert */
	bool allow_no_ek_cert;       /* accept a request without an EK certificate (trust on first use) */
	/*
	 * Refuse an EK certificate outside its validity dates (or a chain certificate outside its).
	 * Default false: the chain is checked at no time (X509_V_FLAG_NO_CHECK_TIME), as an EK
	 * certificate's dates say nothing about the TPM (real ones expire while the TPM lives on);
	 * the state and machine record note "ek_certificate_expired".
	 */
	bool ek_check_validity;
} mb_attest_challenge_options;

/*
 * Check a request (EK certificate chain and that its key is the request's EK; the AK's
 * attributes: restricted, sign only, fixedTPM, fixedParent, sensitiveDataOrigin) and make the
 * credential for it (TPM2_MakeCredential in software). Writes the challenge for the machine and
 * the state the verifier keeps (which holds only a digest of the credential). A refusal is
 * MB_ERR_ATTEST_REFUSED with the reason in err.
 */
MB_EXPORT int mb_attest_challenge_make(const char *request, size_t request_size,
				       const mb_attest_challenge_options *opts, char **ret_challenge,
				       char **ret_state, mb_error *err) MB_WUR;

/* Check an activation response against the state; writes the machine record `attest verify` trusts. */
MB_EXPORT int mb_attest_challenge_check(const char *state, size_t state_size, const char *response,
					size_t response_size, char **ret_machine, mb_error *err) MB_WUR;

/* ---- on the verifier: evidence (src/lib/attest/) -------------------------------------- */

typedef enum mb_attest_reason {
	MB_ATTEST_AK_NOT_ENROLLED = 0,   /* the evidence's AK is not the machine record's */
	MB_ATTEST_SIGNATURE_INVALID,     /* the quote's signature does not verify with the AK */
	MB_ATTEST_SIGNATURE_SCHEME,      /* a signature of another kind than the AK signs with */
	MB_ATTEST_NOT_TPM_GENERATED,     /* TPMS_ATTEST without TPM_GENERATED_VALUE */
	MB_ATTEST_NOT_QUOTE,             /* TPMS_ATTEST of another type than TPM_ST_ATTEST_QUOTE */
	MB_ATTEST_NONCE_MISMATCH,        /* extraData is not the verifier's nonce */
	MB_ATTEST_SELECTION_MISMATCH,    /* the PCRs carried are not exactly the PCRs quoted */
	MB_ATTEST_PCR_DIGEST_MISMATCH,   /* pcrDigest is not the hash of the PCR values carried */
	MB_ATTEST_LOG_NOT_VERIFIED,      /* the logs do not replay to the quoted values (fail closed) */
	MB_ATTEST_POLICY_VIOLATED,       /* the policy refuses the boot */
	MB_ATTEST_BANK_TOO_WEAK,         /* no quoted bank that verified is as strong as the one required */
	_MB_ATTEST_REASON_MAX,
} mb_attest_reason;

/* Short stable name ("nonce-mismatch"), for JSON and scripts. */
MB_EXPORT const char *mb_attest_reason_name(mb_attest_reason r);

typedef struct mb_attest_verify_options {
	size_t size; /* MB_OPTIONS_INIT(mb_attest_verify_options): its sizeof (mboot/error.h) */
	const uint8_t *nonce;          /* the nonce the verifier sent, 0..MB_ATTEST_EXTRA_DATA_MAX bytes */
	size_t nonce_size;             /* (nonce may be NULL when 0: an empty extraData) */
	const mb_policy *policy;       /* NULL: logs against quoted values only */
	const char *baseline;          /* an earlier good evidence of the same machine, or NULL */
	size_t baseline_size;
	uint32_t userspace_pcrs;       /* as mb_verify_options; 0: MB_USERSPACE_PCRS_DEFAULT */
	/*
	 * The weakest bank the quote may be judged in (a TCG algorithm id, MB_ALG_SHA256...): a quoted
	 * bank of at least its digest size must verify. Always required as well, whatever this says:
	 * the strongest bank the firmware log's Spec ID header lists (sha1 for a TPM 1.2-format log).
	 * 0: that rule alone. The policy's "min_bank" (mb_policy_min_bank) applies too; the
	 * strongest requirement wins. Otherwise BANK_TOO_WEAK. An id mboot does not compute: -EINVAL.
	 */
	uint16_t min_bank;
	/*
	 * Judge each boot once (a fleet verifier: a machine attests many times per boot). Given,
	 * judged_lookup is called with this evidence's boot key (mb_attest_verdict_boot_key) and
	 * may return the verdict of earlier evidence with that key, judged under the same policy:
	 * when this evidence's quote passes every check, that verdict's judgment of the logs (its
	 * reasons, per-PCR results, policy result and violations) is taken instead of replaying
	 * and judging the logs again. The quote is always checked in full. It must stay valid until
	 * mb_attest_verify returns; NULL: judged in full.
	 */
	const struct mb_attest_verdict *(*judged_lookup)(const uint8_t key[32], void *ctx);
	void *judged_ctx;
	/* The machine record parsed once (mb_attest_machine_parse), used instead of parsing the
	 * machine argument (which may then be NULL): a verifier judging a machine's evidence again
	 * and again decodes and imports its AK once. NULL: the machine argument is parsed. */
	const struct mb_attest_machine *machine_parsed;
	/*
	 * The IMA state of this machine's boot after its last evidence (mb_attest_verdict_ima_state,
	 * kept by the verifier for the next): evidence whose IMA list starts past entry 0
	 * ("ima_start", docs/attest.md) is judged on top of it, from PCR 10's value there. It holds
	 * a judgment under one policy: the caller drops it when the machine's policy changes. NULL:
	 * only a whole list can be judged.
	 */
	const char *ima_state;
	size_t ima_state_size;
} mb_attest_verify_options;

/*
 * A machine record (mb_attest_challenge_check's) parsed once: its AK decoded, checked against
 * its Name and imported into OpenSSL. Never changed after; may be shared between threads.
 * -EBADMSG for a malformed record (as mb_attest_verify).
 */
typedef struct mb_attest_machine mb_attest_machine;
MB_EXPORT int mb_attest_machine_parse(const char *machine, size_t size, mb_attest_machine **ret,
				      mb_error *err) MB_WUR;
MB_EXPORT void mb_attest_machine_free(mb_attest_machine *m);

typedef struct mb_attest_verdict mb_attest_verdict;

/*
 * The boot key of v's evidence: SHA-256 over what the logs' judgment depends on besides the
 * policy (the firmware log's SHA-256, of the log carried or as the evidence names it by
 * "eventlog_sha256", so that a machine need not send a log whose judgment is kept; the
 * userspace log as carried, in base64; the PCR values carried, but PCR 10 when the
 * evidence carries an IMA list, which is judged on every evidence and moves within a boot;
 * min_bank and userspace_pcrs). True when v judged the logs (the quote passed) with judged_lookup given, so
 * that it may be handed to a later mb_attest_verify under the same policy; else false.
 */
MB_EXPORT bool mb_attest_verdict_boot_key(const mb_attest_verdict *v, uint8_t key[32]);
/*
 * The SHA-256 of the bytes of v's evidence's firmware log, and whether the evidence carried the
 * log (else it named it by "eventlog_sha256": judged only when judged_lookup returned a verdict
 * of its boot; otherwise a LOG_NOT_VERIFIED reason asks for the log). False when the evidence
 * had no firmware log, or could not be read.
 */
MB_EXPORT bool mb_attest_verdict_eventlog_sha256(const mb_attest_verdict *v, uint8_t sha256[32], bool *ret_carried);

/*
 * Judge evidence for the machine (its record from mb_attest_challenge_check): signature with the
 * enrolled AK, TPMS_ATTEST magic and type, nonce, PCR selection against the values carried and
 * pcrDigest over them; then the logs replayed against the quoted values bank by bank (as
 * mb_verify_log, failing closed), then the policy. Returns 0 with *ret set when the evidence
 * could be judged (trusted or not), a negative errno when an input is malformed.
 */
MB_EXPORT int mb_attest_verify(const char *evidence, size_t evidence_size, const char *machine,
			       size_t machine_size, const mb_attest_verify_options *opts,
			       mb_attest_verdict **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_attest_verdict_free(mb_attest_verdict *v);
MB_EXPORT bool mb_attest_verdict_trusted(const mb_attest_verdict *v);
MB_EXPORT size_t mb_attest_verdict_n_reasons(const mb_attest_verdict *v);
/* Reason i and its one-line detail (owned by v). */
MB_EXPORT mb_attest_reason mb_attest_verdict_reason(const mb_attest_verdict *v, size_t i, const char **ret_detail);
/*
 * The IMA state after v (JSON text owned by v), for the next evidence of this boot
 * (mb_attest_verify_options.ima_state): how many entries of the list the quoted PCR 10 covered,
 * PCR 10's value after them, and the boot's IMA violations so far (a file that ran stays named
 * until the machine reboots). NULL when v holds none: no list carried, or it did not replay to
 * the quoted PCR 10 (the next evidence must carry the whole list).
 */
MB_EXPORT const char *mb_attest_verdict_ima_state(const mb_attest_verdict *v);
/*
 * What a machine may leave out of its next evidence by that state: the entries judged, and the
 * last one's template hash (SHA-1, as the binary list holds it), which the machine compares with
 * its list's (mb_quote_input.ima_start, ima_last). -EBADMSG for a state that is not one.
 */
MB_EXPORT int mb_attest_ima_state_resume(const char *state, size_t size, uint64_t *ret_entries, uint8_t ret_last[20],
					 mb_error *err) MB_WUR;
/* The verdict as JSON (what `attest verify --json` prints and the fleet service stores); caller frees. */
MB_EXPORT char *mb_attest_verdict_to_json(const mb_attest_verdict *v, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
