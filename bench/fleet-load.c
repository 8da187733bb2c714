/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-load: a fleet of simulated machines for mboot-verifierd (docs/api.md), and the
 * software TPM they stand on. Each machine has a software EK (RSA 2048 in the shape of the TCG
 * default EK template, with a certificate from a CA of our own) and a software AK (ECC P-256,
 * restricted signing); it enrolls through the real API, answers the challenge as
 * TPM2_ActivateCredential would, and attests with a real TPMS_ATTEST signed by its AK over the
 * PCR values of a real boot, with that boot's firmware log. Only the quote changes between two
 * attestations, so the evidence is a template per machine.
 *
 *   fleet-load --make-ca DIR                    the EK CA (DIR/ca.pem for --ek-ca-file, DIR/ca.key)
 *   fleet-load --self-check --log LOG [--policy P]
 *                                               no service: the library's challenge opened by the
 *                                               software activation, a software quote judged by
 *                                               mb_attest_verify (trusted under P)
 *   fleet-load --url URL --ca DIR --log LOG --machines N (--rate R | --saturate) [...]
 *
 * The numbers (attestations/s, latency percentiles, the verifier's CPU and peak RSS) are printed
 * and, with --json FILE, written as JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include "shared/json.h"
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <mboot/mboot.h>

#include "shared/fileio.h"
#include "shared/hex.h"

/* TPM constants (TPM 2.0 Part 2) this file marshals. */
#define ALG_RSA 0x0001
#define ALG_SHA256 0x000b
#define ALG_AES 0x0006
#define ALG_NULL 0x0010
#define ALG_ECDSA 0x0018
#define ALG_ECC 0x0023
#define ALG_CFB 0x0043
#define ECC_NIST_P256 0x0003
#define GENERATED_VALUE 0xff544347u
#define ST_ATTEST_QUOTE 0x8018
/* TPMA_OBJECT of the TCG EK Credential Profile's template L-1: fixedTPM, fixedParent,
 * sensitiveDataOrigin, adminWithPolicy, restricted, decrypt. */
#define EK_ATTRIBUTES 0x000300b2u
/* An AK: fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, restricted, sign. */
#define AK_ATTRIBUTES 0x00050072u
#define NAME_SIZE 34 /* nameAlg SHA-256 + digest */

/* PolicySecret(TPM_RH_ENDORSEMENT): the authPolicy of the TCG default EK templates. */
static const uint8_t ek_policy[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
	0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fleet-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- growable bytes ---------------------------------------------------------------------- */

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void buf_add(buf *b, const void *data, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->n + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			die("out of memory");
		b->cap = cap;
	}
	if (n) /* data may be NULL then */
		memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = 0; /* always a C string too */
}

static void buf_str(buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_u8(buf *b, uint8_t v)
{
	buf_add(b, &v, 1);
}

static void buf_u16(buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t) (v >> 8), (uint8_t) v };

	buf_add(b, x, 2);
}

static void buf_u32(buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t) (v >> 24), (uint8_t) (v >> 16), (uint8_t) (v >> 8), (uint8_t) v };

	buf_add(b, x, 4);
}

static void buf_u64(buf *b, uint64_t v)
{
	buf_u32(b, (uint32_t) (v >> 32));
	buf_u32(b, (uint32_t) v);
}

static void buf_tpm2b(buf *b, const uint8_t *data, size_t n)
{
	buf_u16(b, (uint16_t) n);
	buf_add(b, data, n);
}

static char *b64(const uint8_t *data, size_t n)
{
	char *s = malloc(4 * ((n + 2) / 3) + 1);

	if (!s)
		die("out of memory");
	EVP_EncodeBlock((unsigned char *) s, data, (int) n);
	return s;
}

/* Base64 of a JSON string (the challenge's fields) to bytes; -1 when it is not base64. */
static int unb64(const char *s, buf *out)
{
	size_t len = strlen(s), pad = 0;
	int n;

	if (len % 4)
		return -1;
	if (len && s[len - 1] == '=')
		pad++;
	if (len > 1 && s[len - 2] == '=')
		pad++;
	out->n = 0;
	buf_add(out, "", 0);
	if (out->cap < len + 1) {
		out->p = realloc(out->p, len + 1);
		if (!out->p)
			die("out of memory");
		out->cap = len + 1;
	}
	n = EVP_DecodeBlock(out->p, (const unsigned char *) s, (int) len);
	if (n < 0)
		return -1;
	out->n = (size_t) n - pad;
	return 0;
}

/* ---- keys, public areas, certificates ---------------------------------------------------- */

static void bn_pad(const EVP_PKEY *k, const char *param, uint8_t *out, size_t size)
{
	BIGNUM *bn = NULL;

	if (!EVP_PKEY_get_bn_param(k, param, &bn) || BN_bn2binpad(bn, out, (int) size) != (int) size)
		die("cannot read key parameter %s", param);
	BN_free(bn);
}

/* TPM2B_PUBLIC of the EK: the TCG default template L-1 with the key's modulus as unique. */
static void ek_public(EVP_PKEY *k, buf *out)
{
	uint8_t n[256];
	buf area = { 0 };

	bn_pad(k, OSSL_PKEY_PARAM_RSA_N, n, sizeof(n));
	buf_u16(&area, ALG_RSA);
	buf_u16(&area, ALG_SHA256);
	buf_u32(&area, EK_ATTRIBUTES);
	buf_tpm2b(&area, ek_policy, sizeof(ek_policy));
	buf_u16(&area, ALG_AES);
	buf_u16(&area, 128);
	buf_u16(&area, ALG_CFB);
	buf_u16(&area, ALG_NULL); /* scheme */
	buf_u16(&area, 2048);
	buf_u32(&area, 0); /* exponent 0: 65537 */
	buf_tpm2b(&area, n, sizeof(n));
	out->n = 0;
	buf_tpm2b(out, area.p, area.n);
	free(area.p);
}

/* TPM2B_PUBLIC of the AK and its Name (nameAlg || SHA-256 of the TPMT_PUBLIC). */
static void ak_public(EVP_PKEY *k, buf *out, uint8_t name[NAME_SIZE])
{
	uint8_t x[32], y[32];
	buf area = { 0 };

	bn_pad(k, OSSL_PKEY_PARAM_EC_PUB_X, x, sizeof(x));
	bn_pad(k, OSSL_PKEY_PARAM_EC_PUB_Y, y, sizeof(y));
	buf_u16(&area, ALG_ECC);
	buf_u16(&area, ALG_SHA256);
	buf_u32(&area, AK_ATTRIBUTES);
	buf_u16(&area, 0); /* no authPolicy */
	buf_u16(&area, ALG_NULL); /* symmetric */
	buf_u16(&area, ALG_ECDSA);
	buf_u16(&area, ALG_SHA256);
	buf_u16(&area, ECC_NIST_P256);
	buf_u16(&area, ALG_NULL); /* kdf */
	buf_tpm2b(&area, x, sizeof(x));
	buf_tpm2b(&area, y, sizeof(y));
	name[0] = 0x00;
	name[1] = ALG_SHA256;
	if (!EVP_Digest(area.p, area.n, name + 2, NULL, EVP_sha256(), NULL))
		die("SHA-256 failed");
	out->n = 0;
	buf_tpm2b(out, area.p, area.n);
	free(area.p);
}

typedef struct ca {
	EVP_PKEY *key;
	X509 *cert;
} ca;

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e || !X509_add_ext(cert, e, -1))
		die("cannot add extension %d", nid);
	X509_EXTENSION_free(e);
}

/* A certificate for key, signed by issuer (or self-signed when issuer is NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, const ca *issuer, long serial)
{
	X509 *c = X509_new();
	X509_NAME *name = X509_NAME_new();

	if (!c || !name || !X509_set_version(c, 2) || !ASN1_INTEGER_set(X509_get_serialNumber(c), serial) ||
	    !X509_gmtime_adj(X509_getm_notBefore(c), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(c), 10L * 365 * 86400) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *) cn, -1, -1, 0) ||
	    !X509_set_subject_name(c, name) || !X509_set_pubkey(c, key) ||
	    !X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer->cert) : name))
		die("cannot make the certificate %s", cn);
	if (!issuer) {
		add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE");
		add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign");
		add_ext(c, c, NID_subject_key_identifier, "hash");
	} else {
		add_ext(c, issuer->cert, NID_basic_constraints, "critical,CA:FALSE");
		add_ext(c, issuer->cert, NID_key_usage, "critical,keyEncipherment");
		add_ext(c, issuer->cert, NID_authority_key_identifier, "keyid");
	}
	if (!X509_sign(c, issuer ? issuer->key : key, EVP_sha256()))
		die("cannot sign the certificate %s", cn);
	X509_NAME_free(name);
	return c;
}

static void ca_make(const char *dir)
{
	char path[4096];
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "prime256v1");
	X509 *cert;
	FILE *f;

	if (!key)
		die("cannot make the CA key");
	cert = make_cert(key, "fleet-load EK CA", NULL, 1);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		die("mkdir %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	if (!(f = fopen(path, "w")) || !PEM_write_X509(f, cert) || fclose(f) != 0)
		die("cannot write %s", path);
	snprintf(path, sizeof(path), "%s/ca.key", dir);
	umask(077);
	if (!(f = fopen(path, "w")) || !PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) || fclose(f) != 0)
		die("cannot write %s", path);
	X509_free(cert);
	EVP_PKEY_free(key);
}

static void ca_load(const char *dir, ca *c)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	if (!(f = fopen(path, "r")) || !(c->cert = PEM_read_X509(f, NULL, NULL, NULL)))
		die("cannot read %s (make it with --make-ca)", path);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ca.key", dir);
	if (!(f = fopen(path, "r")) || !(c->key = PEM_read_PrivateKey(f, NULL, NULL, NULL)))
		die("cannot read %s", path);
	fclose(f);
}

/* An EK: the RSA key, its TPM2B_PUBLIC and its DER certificate from the CA. */
typedef struct ek {
	EVP_PKEY *key;
	buf pub, cert;
} ek;

static void ek_make(ek *e, const ca *issuer, long serial)
{
	uint8_t *der = NULL;
	char cn[64];
	X509 *cert;
	int n;

	memset(e, 0, sizeof(*e));
	e->key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 2048);
	if (!e->key)
		die("cannot make an EK");
	ek_public(e->key, &e->pub);
	snprintf(cn, sizeof(cn), "fleet-load EK %ld", serial);
	cert = make_cert(e->key, cn, issuer, serial);
	n = i2d_X509(cert, &der);
	if (n <= 0)
		die("cannot encode the EK certificate");
	buf_add(&e->cert, der, (size_t) n);
	OPENSSL_free(der);
	X509_free(cert);
}

static void ek_free(ek *e)
{
	EVP_PKEY_free(e->key);
	free(e->pub.p);
	free(e->cert.p);
}

/* ---- TPM2_ActivateCredential in software (TPM 2.0 Part 1 §24) --------------------------- */

/* KDFa with SHA-256 (Part 1 §11.4.10.2): HMAC(key, [i]32 || label || 00 || context || [bits]32). */
static void kdfa_sha256(const uint8_t *key, size_t key_size, const char *label, const uint8_t *context,
			size_t context_size, uint8_t *out, size_t out_size)
{
	uint8_t block[32];
	uint32_t i;
	size_t done;

	for (i = 1, done = 0; done < out_size; i++, done += 32) {
		buf in = { 0 };
		unsigned len = 0;

		buf_u32(&in, i);
		buf_add(&in, label, strlen(label) + 1);
		buf_add(&in, context, context_size);
		buf_u32(&in, (uint32_t) (out_size * 8));
		if (!HMAC(EVP_sha256(), key, (int) key_size, in.p, in.n, block, &len) || len != 32)
			die("HMAC failed");
		memcpy(out + done, block, out_size - done < 32 ? out_size - done : 32);
		free(in.p);
	}
}

/*
 * Open a credential made for the AK name with the EK's private key: the seed RSA-OAEP
 * decrypted (SHA-256, label "IDENTITY" and its NUL), the outer HMAC checked under
 * KDFa(seed, "INTEGRITY"), the identity AES-128-CFB decrypted under KDFa(seed, "STORAGE", name).
 * -1 when the credential does not open (another EK, another name, altered bytes).
 */
static int activate(EVP_PKEY *ek_key, const uint8_t name[NAME_SIZE], const uint8_t *id, size_t id_size,
		    const uint8_t *secret, size_t secret_size, buf *cred)
{
	static const char label[] = "IDENTITY";
	/* OpenSSL wants room for a whole modulus even for a 32-byte seed */
	uint8_t seed[512], hmac_key[32], sym_key[16], mac[32], plain[2 + 64];
	size_t seed_size = sizeof(seed), mac_size, enc_size;
	const uint8_t *enc;
	EVP_PKEY_CTX *ctx;
	EVP_CIPHER_CTX *cctx;
	unsigned mac_len = 0;
	int ok, len = 0, fin = 0;
	buf mac_in = { 0 };

	/* TPM2B_ENCRYPTED_SECRET, then TPM2B_ID_OBJECT { TPM2B_DIGEST integrityHMAC, encIdentity } */
	if (secret_size < 2 || (size_t) ((secret[0] << 8) | secret[1]) != secret_size - 2 || id_size < 4 ||
	    (size_t) ((id[0] << 8) | id[1]) != id_size - 2)
		return -1;
	mac_size = (size_t) ((id[2] << 8) | id[3]);
	if (mac_size != 32 || id_size < 4 + mac_size + 2)
		return -1;
	enc = id + 4 + mac_size;
	enc_size = id_size - 4 - mac_size;
	if (enc_size > sizeof(plain))
		return -1;

	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, ek_key, NULL);
	ok = ctx && EVP_PKEY_decrypt_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
	     EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) > 0 && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) > 0;
	if (ok) {
		void *lab = OPENSSL_memdup(label, sizeof(label));

		ok = lab && EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, lab, (int) sizeof(label)) > 0;
		if (!ok)
			OPENSSL_free(lab);
	}
	ok = ok && EVP_PKEY_decrypt(ctx, seed, &seed_size, secret + 2, secret_size - 2) > 0 && seed_size == 32;
	EVP_PKEY_CTX_free(ctx);
	if (!ok)
		return -1;

	kdfa_sha256(seed, seed_size, "INTEGRITY", NULL, 0, hmac_key, sizeof(hmac_key));
	buf_add(&mac_in, enc, enc_size);
	buf_add(&mac_in, name, NAME_SIZE);
	ok = HMAC(EVP_sha256(), hmac_key, sizeof(hmac_key), mac_in.p, mac_in.n, mac, &mac_len) && mac_len == 32 &&
	     CRYPTO_memcmp(mac, id + 4, 32) == 0;
	free(mac_in.p);
	if (!ok)
		return -1;

	kdfa_sha256(seed, seed_size, "STORAGE", name, NAME_SIZE, sym_key, sizeof(sym_key));
	cctx = EVP_CIPHER_CTX_new();
	ok = cctx && EVP_DecryptInit_ex(cctx, EVP_aes_128_cfb128(), NULL, sym_key, (const uint8_t[16]) { 0 }) &&
	     EVP_DecryptUpdate(cctx, plain, &len, enc, (int) enc_size) && EVP_DecryptFinal_ex(cctx, plain + len, &fin) &&
	     (size_t) (len + fin) == enc_size;
	EVP_CIPHER_CTX_free(cctx);
	/* the plaintext is a TPM2B_DIGEST */
	if (!ok || (size_t) ((plain[0] << 8) | plain[1]) != enc_size - 2)
		return -1;
	cred->n = 0;
	buf_add(cred, plain + 2, enc_size - 2);
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(plain, sizeof(plain));
	return 0;
}

/* ---- the boot every machine reports ------------------------------------------------------ */

/* The log and the PCR values of its replay, as a TPM after that boot holds them. */
typedef struct boot {
	uint8_t *log;
	size_t log_size;
	uint16_t algs[MB_MAX_BANKS];
	size_t n_algs;
	uint8_t values[MB_MAX_BANKS][MB_PCR_COUNT][MB_DIGEST_MAX];
	uint8_t pcr_digest[32]; /* SHA-256 of every value, banks in order, PCRs ascending */
	char *evidence_tail;    /* the evidence JSON from "pcrs" on, up to ak_public's value */
	char *evidence_tail_named; /* the same with the log named by its SHA-256 instead */
	char log_sha256[65];
} boot;

/* The evidence JSON from "pcrs" on, the firmware log given as field log_key, up to ak_public's value. */
static char *evidence_tail(const char *pcrs_json, const char *log_key, const char *log_value)
{
	buf t = { 0 };

	buf_str(&t, "\"pcrs\":");
	buf_str(&t, pcrs_json);
	buf_str(&t, ",\"");
	buf_str(&t, log_key);
	buf_str(&t, "\":\"");
	buf_str(&t, log_value);
	buf_str(&t, "\",\"userspace_log\":null,\"created\":\"2026-01-01T00:00:00Z\",\"ak_public\":\"");
	return (char *) t.p;
}

static void boot_load(const char *path, boot *b)
{
	mb_pcr_values *v = mb_pcr_values_new();
	mb_replay_info info = { 0 };
	mb_error err = { 0 };
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *log64, *json;
	uint8_t digest[32];
	size_t i, p;

	if (!v || !md || file_read(path, MB_ATTEST_FILE_MAX, &b->log, &b->log_size, &err) < 0 ||
	    mb_replay_log_data(b->log, b->log_size, v, &info, &err) < 0)
		die("%s: %s", path, err.message);
	b->n_algs = mb_pcr_values_n_banks(v);
	if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		die("SHA-256 failed");
	for (i = 0; i < b->n_algs; i++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, i);
		size_t size = mb_digest_by_alg(alg)->size;

		b->algs[i] = alg;
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *val = mb_pcr_values_get(v, alg, (uint32_t) p);

			/* a PCR the log never extends keeps its reset value */
			if (val)
				memcpy(b->values[i][p], val, size);
			else
				mb_pcr_initial(alg, (uint32_t) p, info.startup_locality_seen ? info.startup_locality : 0,
					       info.hcrtm, b->values[i][p]);
			if (!val && mb_pcr_values_set(v, alg, (uint32_t) p, b->values[i][p], size, &err) < 0)
				die("%s", err.message);
			if (!EVP_DigestUpdate(md, b->values[i][p], size))
				die("SHA-256 failed");
		}
	}
	if (!EVP_DigestFinal_ex(md, b->pcr_digest, NULL))
		die("SHA-256 failed");
	EVP_MD_CTX_free(md);
	json = mb_pcr_values_to_json(v, false);
	log64 = b64(b->log, b->log_size);
	if (!json)
		die("out of memory");
	if (mb_digest(MB_ALG_SHA256, b->log, b->log_size, digest) < 0)
		die("SHA-256 failed");
	hex_format(digest, sizeof(digest), b->log_sha256);
	b->evidence_tail = evidence_tail(json, "eventlog", log64);
	/* as mboot quote writes it when the verifier's nonce answer names this log */
	b->evidence_tail_named = evidence_tail(json, "eventlog_sha256", b->log_sha256);
	free(json);
	free(log64);
	mb_pcr_values_free(v);
}

static void boot_free(boot *b)
{
	free(b->log);
	free(b->evidence_tail);
	free(b->evidence_tail_named);
}

/* ---- a machine --------------------------------------------------------------------------- */

typedef struct machine {
	char id[72];
	ek *ek;
	EVP_PKEY *ak;
	buf ak_pub;
	uint8_t name[NAME_SIZE];
	char *ak_pub64;
	uint64_t clock;
	bool enrolled;
} machine;

static void machine_make(machine *m, const char *prefix, size_t i, ek *e)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s%06zu", prefix, i);
	m->ek = e;
	m->ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "prime256v1");
	if (!m->ak)
		die("cannot make an AK");
	ak_public(m->ak, &m->ak_pub, m->name);
	m->ak_pub64 = b64(m->ak_pub.p, m->ak_pub.n);
	m->clock = 1000000 + i;
}

static void machine_free(machine *m)
{
	EVP_PKEY_free(m->ak);
	free(m->ak_pub.p);
	free(m->ak_pub64);
}

/* The enrollment request of docs/attest.md. */
static char *machine_request(const machine *m)
{
	char *ekp = b64(m->ek->pub.p, m->ek->pub.n), *cert = b64(m->ek->cert.p, m->ek->cert.n);
	char name[2 * NAME_SIZE + 1];
	buf out = { 0 };

	hex_format(m->name, NAME_SIZE, name);
	buf_str(&out, "{\"version\":1,\"kind\":\"mboot-attest-request\",\"ek\":{\"public\":\"");
	buf_str(&out, ekp);
	buf_str(&out, "\",\"certificate\":\"");
	buf_str(&out, cert);
	buf_str(&out, "\",\"nv_index\":null},\"ak\":{\"public\":\"");
	buf_str(&out, m->ak_pub64);
	buf_str(&out, "\",\"name\":\"");
	buf_str(&out, name);
	buf_str(&out, "\"}}");
	free(ekp);
	free(cert);
	return (char *) out.p;
}

/* The response to a challenge object (json-c), or NULL when the credential does not open. */
static char *machine_activate(const machine *m, json_t *challenge)
{
	json_t *blob, *secret;
	buf id = { 0 }, sec = { 0 }, cred = { 0 }, out = { 0 };
	char name[2 * NAME_SIZE + 1], *c64;
	int r = -1;

	if (((blob = json_object_get(challenge, "credential_blob")) != NULL) &&
	    ((secret = json_object_get(challenge, "encrypted_secret")) != NULL) &&
	    unb64(json_string_value(blob), &id) == 0 && unb64(json_string_value(secret), &sec) == 0)
		r = activate(m->ek->key, m->name, id.p, id.n, sec.p, sec.n, &cred);
	free(id.p);
	free(sec.p);
	if (r < 0) {
		free(cred.p);
		return NULL;
	}
	hex_format(m->name, NAME_SIZE, name);
	c64 = b64(cred.p, cred.n);
	buf_str(&out, "{\"version\":1,\"kind\":\"mboot-attest-response\",\"ak_name\":\"");
	buf_str(&out, name);
	buf_str(&out, "\",\"credential\":\"");
	buf_str(&out, c64);
	buf_str(&out, "\"}");
	free(c64);
	free(cred.p);
	return (char *) out.p;
}

/*
 * The evidence for a nonce into out: a TPMS_ATTEST as TPM2_Quote makes it (every PCR of every
 * bank of the boot) and its TPMT_SIGNATURE (ECDSA-SHA256), in front of the boot's part.
 */
static void machine_evidence(machine *m, const boot *b, const uint8_t *nonce, size_t nonce_size, bool log_named,
			     buf *out)
{
	uint8_t rs[64], *der = NULL;
	const unsigned char *p;
	size_t der_size = 0, i;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	ECDSA_SIG *sig;
	buf att = { 0 }, s = { 0 };
	char *a64, *s64;

	buf_u32(&att, GENERATED_VALUE);
	buf_u16(&att, ST_ATTEST_QUOTE);
	buf_tpm2b(&att, m->name, NAME_SIZE);
	buf_tpm2b(&att, nonce, nonce_size);
	buf_u64(&att, m->clock++); /* clockInfo: clock, resetCount, restartCount, safe */
	buf_u32(&att, 1);
	buf_u32(&att, 0);
	buf_u8(&att, 1);
	buf_u64(&att, 0x2023031600000000ull); /* firmwareVersion */
	buf_u32(&att, (uint32_t) b->n_algs);
	for (i = 0; i < b->n_algs; i++) {
		buf_u16(&att, b->algs[i]);
		buf_u8(&att, 3);
		buf_add(&att, "\xff\xff\xff", 3);
	}
	buf_tpm2b(&att, b->pcr_digest, sizeof(b->pcr_digest));

	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, m->ak) <= 0 ||
	    EVP_DigestSign(md, NULL, &der_size, att.p, att.n) <= 0 || !(der = malloc(der_size)) ||
	    EVP_DigestSign(md, der, &der_size, att.p, att.n) <= 0)
		die("ECDSA signing failed");
	p = der;
	sig = d2i_ECDSA_SIG(NULL, &p, (long) der_size);
	if (!sig || BN_bn2binpad(ECDSA_SIG_get0_r(sig), rs, 32) != 32 ||
	    BN_bn2binpad(ECDSA_SIG_get0_s(sig), rs + 32, 32) != 32)
		die("cannot decode the ECDSA signature");
	buf_u16(&s, ALG_ECDSA);
	buf_u16(&s, ALG_SHA256);
	buf_tpm2b(&s, rs, 32);
	buf_tpm2b(&s, rs + 32, 32);
	a64 = b64(att.p, att.n);
	s64 = b64(s.p, s.n);
	out->n = 0;
	buf_str(out, "{\"version\":1,\"kind\":\"mboot-evidence\",\"quote\":{\"attest\":\"");
	buf_str(out, a64);
	buf_str(out, "\",\"signature\":\"");
	buf_str(out, s64);
	buf_str(out, "\"},");
	buf_str(out, log_named ? b->evidence_tail_named : b->evidence_tail);
	buf_str(out, m->ak_pub64);
	buf_str(out, "\"}");
	free(a64);
	free(s64);
	free(att.p);
	free(s.p);
	free(der);
	ECDSA_SIG_free(sig);
	EVP_MD_CTX_free(md);
}

/* ---- the self-check: the library on both sides, no service ------------------------------- */

static void keep_file(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	mb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (file_write(path, data, size, 0644, true, &err) < 0)
		die("%s: %s", path, err.message);
}

/* The machine's EK (public area, private key) and AK name, for --activate. */
static void keep_ek(const char *dir, const machine *m)
{
	char path[4096], name[2 * NAME_SIZE + 2];
	FILE *f;

	keep_file(dir, "ek.pub", m->ek->pub.p, m->ek->pub.n);
	hex_format(m->name, NAME_SIZE, name);
	strcat(name, "\n");
	keep_file(dir, "ak.name", name, strlen(name));
	snprintf(path, sizeof(path), "%s/ek.key", dir);
	umask(077);
	if (!(f = fopen(path, "w")) || !PEM_write_PrivateKey(f, m->ek->key, NULL, NULL, 0, NULL, NULL) || fclose(f) != 0)
		die("cannot write %s", path);
}

/*
 * --activate DIR FILE: the software TPM2_ActivateCredential of a file tpm2_makecredential wrote
 * (magic, version, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET) with the EK and AK name --keep wrote;
 * prints the credential in hex. A check of this code against another implementation.
 */
static int activate_file(const char *dir, const char *file)
{
	char path[4096], hex[2 * 64 + 1];
	uint8_t name[NAME_SIZE], *in = NULL, *text = NULL;
	size_t in_size, text_size, id_size;
	EVP_PKEY *key;
	mb_error err = { 0 };
	buf cred = { 0 };
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/ek.key", dir);
	if (!(f = fopen(path, "r")) || !(key = PEM_read_PrivateKey(f, NULL, NULL, NULL)))
		die("cannot read %s", path);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ak.name", dir);
	if (file_read(path, 256, &text, &text_size, &err) < 0 || text_size < 2 * NAME_SIZE ||
	    hex_parse((const char *) text, 2 * NAME_SIZE, name, NAME_SIZE) < 0)
		die("%s: not a SHA-256 Name in hex", path);
	if (file_read(file, 4096, &in, &in_size, &err) < 0)
		die("%s: %s", file, err.message);
	if (in_size < 10 || memcmp(in, "\xba\xdc\xc0\xde\x00\x00\x00\x01", 8) != 0)
		die("%s: not a tpm2_makecredential file", file);
	id_size = 2 + (size_t) ((in[8] << 8) | in[9]);
	if (id_size > in_size - 8)
		die("%s: truncated", file);
	r = activate(key, name, in + 8, id_size, in + 8 + id_size, in_size - 8 - id_size, &cred);
	if (r == 0 && cred.n <= 64)
		printf("%s\n", hex_format(cred.p, cred.n, hex));
	else
		fprintf(stderr, "fleet-load: the credential does not open with this EK and AK name\n");
	EVP_PKEY_free(key);
	free(in);
	free(text);
	free(cred.p);
	return r == 0 ? 0 : 1;
}

static int self_check(const char *log_path, const char *policy_path, const char *keep)
{
	char dir[] = "/tmp/fleet-load-check.XXXXXX", path[4096];
	mb_attest_challenge_options co = MB_OPTIONS_INIT(mb_attest_challenge_options);
	mb_attest_verify_options vo = MB_OPTIONS_INIT(mb_attest_verify_options);
	mb_attest_verdict *v = NULL;
	mb_policy *policy = NULL;
	mb_ek_roots *roots = NULL;
	mb_error err = { 0 };
	json_t *ch;
	char *req, *challenge = NULL, *state = NULL, *resp, *record = NULL;
	uint8_t nonce[32], *pol = NULL;
	size_t pol_size;
	machine m, other;
	boot b = { 0 };
	buf ev = { 0 };
	ca c = { 0 };
	ek e;
	int rc = 1;

	if (!mkdtemp(dir))
		die("mkdtemp: %s", strerror(errno));
	ca_make(dir);
	ca_load(dir, &c);
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	if (mb_ek_roots_new(&roots, &err) < 0 || mb_ek_roots_add_path(roots, path, &err) < 0)
		die("EK roots: %s", err.message);
	boot_load(log_path, &b);
	ek_make(&e, &c, 2);
	machine_make(&m, "check-", 0, &e);
	machine_make(&other, "check-", 1, &e);

	req = machine_request(&m);
	co.roots = roots;
	if (mb_attest_challenge_make(req, strlen(req), &co, &challenge, &state, &err) < 0) {
		fprintf(stderr, "FAIL: the verifier refuses the software machine's request: %s\n", err.message);
		goto out;
	}
	ch = json_from_text(challenge);
	/* the same EK, another AK: the credential is bound to the first AK's name */
	resp = machine_activate(&other, ch);
	if (resp) {
		fprintf(stderr, "FAIL: a credential made for one AK opened for another\n");
		free(resp);
		json_decref(ch);
		goto out;
	}
	resp = machine_activate(&m, ch);
	json_decref(ch);
	if (!resp) {
		fprintf(stderr, "FAIL: the software activation does not open the library's credential\n");
		goto out;
	}
	if (mb_attest_challenge_check(state, strlen(state), resp, strlen(resp), &record, &err) < 0) {
		fprintf(stderr, "FAIL: the verifier refuses the activation: %s\n", err.message);
		free(resp);
		goto out;
	}
	free(resp);
	printf("ok: enrollment (EK certificate chain, credential activated in software)\n");

	if (RAND_bytes(nonce, sizeof(nonce)) != 1)
		die("no random bytes");
	machine_evidence(&m, &b, nonce, sizeof(nonce), false, &ev);
	if (policy_path && (file_read(policy_path, MB_POLICY_MAX_SIZE, &pol, &pol_size, &err) < 0 ||
			    mb_policy_parse((const char *) pol, pol_size, &policy, &err) < 0))
		die("%s: %s", policy_path, err.message);
	vo.nonce = nonce;
	vo.nonce_size = sizeof(nonce);
	vo.policy = policy;
	if (mb_attest_verify((const char *) ev.p, ev.n, record, strlen(record), &vo, &v, &err) < 0) {
		fprintf(stderr, "FAIL: the software evidence is malformed: %s\n", err.message);
		goto out;
	}
	if (!mb_attest_verdict_trusted(v)) {
		char *j = mb_attest_verdict_to_json(v, true);

		fprintf(stderr, "FAIL: the software evidence is not trusted:\n%s\n", j ? j : "");
		free(j);
		goto out;
	}
	mb_attest_verdict_free(v);
	v = NULL;
	printf("ok: a software quote of the boot is trusted%s (%zu bytes of evidence)\n",
	       policy ? " under the policy" : "", ev.n);
	if (keep) {
		char hex[2 * sizeof(nonce) + 2];

		hex_format(nonce, sizeof(nonce), hex);
		strcat(hex, "\n");
		keep_file(keep, "evidence.json", ev.p, ev.n);
		keep_file(keep, "machine.json", record, strlen(record));
		keep_file(keep, "nonce", hex, strlen(hex));
		keep_ek(keep, &m);
	}

	/* and another nonce is not: the quote names the nonce it answers */
	nonce[0] ^= 1;
	if (mb_attest_verify((const char *) ev.p, ev.n, record, strlen(record), &vo, &v, &err) < 0 ||
	    mb_attest_verdict_trusted(v)) {
		fprintf(stderr, "FAIL: the evidence passes for another nonce\n");
		goto out;
	}
	printf("ok: the same evidence for another nonce is not trusted\n");
	rc = 0;
out:
	mb_attest_verdict_free(v);
	mb_policy_free(policy);
	mb_ek_roots_free(roots);
	machine_free(&m);
	machine_free(&other);
	ek_free(&e);
	boot_free(&b);
	EVP_PKEY_free(c.key);
	X509_free(c.cert);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(req);
	free(challenge);
	free(state);
	free(record);
	free(pol);
	free(ev.p);
	return rc;
}

/* ---- HTTP -------------------------------------------------------------------------------- */

typedef struct client {
	CURL *curl;
	struct curl_slist *headers;
	buf resp;
	char url[512];
} client;

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	buf_add(ctx, data, size * n);
	return size * n;
}

static void client_init(client *c)
{
	memset(c, 0, sizeof(*c));
	c->curl = curl_easy_init();
	c->headers = curl_slist_append(NULL, "Content-Type: application/json");
	/* no "Expect: 100-continue" round trip before the evidence */
	c->headers = curl_slist_append(c->headers, "Expect:");
	if (!c->curl || !c->headers)
		die("out of memory");
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &c->resp);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
}

static void client_done(client *c)
{
	curl_slist_free_all(c->headers);
	curl_easy_cleanup(c->curl);
	free(c->resp.p);
}

/* POST body to base + path; the status, or 0 when the request did not get an answer. */
static long post(client *c, const char *base, const char *path, const char *body, size_t size)
{
	long status = 0;

	snprintf(c->url, sizeof(c->url), "%s%s", base, path);
	c->resp.n = 0;
	buf_add(&c->resp, "", 0);
	curl_easy_setopt(c->curl, CURLOPT_URL, c->url);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) size);
	if (curl_easy_perform(c->curl) != CURLE_OK)
		return 0;
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* ---- the run ----------------------------------------------------------------------------- */

/* Outcomes counted: 0 transport failure, else the HTTP status of the step that ended it. */
#define N_STATUS 600

#define MAX_URLS 8

typedef struct run {
	/* the verifiers: thread t talks to urls[t % n_urls] (any verifier answers for any machine) */
	char *urls[MAX_URLS];
	size_t n_urls;
	atomic_size_t thread_seq;
	machine *machines;
	size_t n_machines;
	boot *boot;
	double rate, duration, t0;
	bool saturate;
	bool send_log; /* the log carried always, even when the verifier's nonce answer names it */
	atomic_size_t next;
	atomic_size_t logs_named, logs_asked; /* evidences that named the log; 409s asking for it */
	/* results, under lock */
	pthread_mutex_t lock;
	double *lat, *lat_ev;
	size_t n_lat, cap_lat;
	size_t by_status[N_STATUS], trusted, untrusted, late;
	char first_error[256];
} run;

static void note_error(run *r, const char *what, const machine *m, long status, const client *c)
{
	pthread_mutex_lock(&r->lock);
	if (!r->first_error[0])
		snprintf(r->first_error, sizeof(r->first_error), "%s %s: %ld %.160s", what, m->id, status,
			 c->resp.p ? (const char *) c->resp.p : "");
	r->by_status[status > 0 && status < N_STATUS ? status : 0]++;
	pthread_mutex_unlock(&r->lock);
}

static void *enroll_worker(void *arg)
{
	run *r = arg;
	const char *url = r->urls[atomic_fetch_add(&r->thread_seq, 1) % r->n_urls];
	client c;
	size_t i;

	client_init(&c);
	while ((i = atomic_fetch_add(&r->next, 1)) < r->n_machines) {
		machine *m = &r->machines[i];
		char *req = machine_request(m), *resp = NULL, path[128];
		json_t *root = NULL, *ch;
		buf body = { 0 };
		long st;

		buf_str(&body, "{\"machine_id\":\"");
		buf_str(&body, m->id);
		buf_str(&body, "\",\"interval\":60,\"request\":");
		buf_str(&body, req);
		buf_str(&body, "}");
		st = post(&c, url, "/v1/enroll", (const char *) body.p, body.n);
		if (st != 201 || !(root = json_from_text((const char *) c.resp.p)) ||
		    !(ch = json_object_get(root, "challenge")) || !(resp = machine_activate(m, ch))) {
			note_error(r, "enroll", m, st, &c);
		} else {
			snprintf(path, sizeof(path), "/v1/enroll/%s/activate", m->id);
			st = post(&c, url, path, resp, strlen(resp));
			if (st == 200)
				m->enrolled = true;
			else
				note_error(r, "activate", m, st, &c);
		}
		json_decref(root);
		free(resp);
		free(req);
		free(body.p);
	}
	client_done(&c);
	return NULL;
}

/* One attestation: a nonce, then the evidence for it. The status of the step that ended it. */
static long attest_once(run *r, const char *url, client *c, machine *m, buf *ev, bool *trusted, double *t_evidence)
{
	char path[192], nonce_hex[2 * MB_ATTEST_NONCE_MAX + 1];
	uint8_t nonce[MB_ATTEST_NONCE_MAX];
	json_t *root, *v;
	size_t len = 0;
	bool named;
	long st;
	double t;

	snprintf(path, sizeof(path), "/v1/machines/%s/nonce", m->id);
	st = post(c, url, path, "", 0);
	if (st != 200)
		return st;
	root = json_from_text((const char *) c->resp.p);
	if (root && ((v = json_object_get(root, "nonce")) != NULL) && json_is_string(v))
		len = (size_t) json_string_length(v);
	if (len < 2 * MB_ATTEST_NONCE_MIN || len > 2 * MB_ATTEST_NONCE_MAX || len % 2 ||
	    hex_parse(json_string_value(v), len, nonce, len / 2) < 0) {
		json_decref(root);
		return 0;
	}
	memcpy(nonce_hex, json_string_value(v), len + 1);
	/* the log named instead of sent when the verifier keeps its judgment, as mboot attest push does */
	v = json_object_get(root, "eventlog_sha256");
	named = !r->send_log && json_is_string(v) && strcmp(json_string_value(v), r->boot->log_sha256) == 0;
	json_decref(root);
	snprintf(path, sizeof(path), "/v1/machines/%s/evidence?nonce=%s", m->id, nonce_hex);
	t = now();
	for (;;) {
		machine_evidence(m, r->boot, nonce, len / 2, named, ev);
		st = post(c, url, path, (const char *) ev->p, ev->n);
		/* that verifier keeps no judgment of it: once more with the log, the same nonce */
		if (st == 409 && named && strstr((const char *) c->resp.p, "\"send\":\"eventlog\"")) {
			named = false;
			atomic_fetch_add(&r->logs_asked, 1);
			continue;
		}
		break;
	}
	if (named && st == 200)
		atomic_fetch_add(&r->logs_named, 1);
	*t_evidence = now() - t;
	if (st == 200) {
		/* The verdict (some KB) comes last: a machine that only wants the status need not
		 * read it (as many machines would not on the verifier's cores). */
		char *verdict = strstr((char *) c->resp.p, ",\"verdict\":");

		if (verdict) {
			verdict[0] = '}';
			verdict[1] = '\0';
		}
		root = json_from_text((const char *) c->resp.p);
		*trusted = root && ((v = json_object_get(root, "status")) != NULL) &&
			   strcmp(json_string_value(v), "trusted") == 0;
		json_decref(root);
	}
	return st;
}

static void sleep_until(double t)
{
	double d = t - now();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t) d;
	ts.tv_nsec = (long) ((d - (double) ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void *attest_worker(void *arg)
{
	run *r = arg;
	const char *url = r->urls[atomic_fetch_add(&r->thread_seq, 1) % r->n_urls];
	client c;
	buf ev = { 0 };

	client_init(&c);
	for (;;) {
		size_t k = atomic_fetch_add(&r->next, 1);
		double start, lat, lat_ev = 0;
		bool trusted = false;
		machine *m;
		long st;

		/* open loop: attestation k starts at t0 + k/rate whether the others are done or not */
		start = r->saturate ? now() : r->t0 + (double) k / r->rate;
		if (start - r->t0 >= r->duration || (r->saturate && now() - r->t0 >= r->duration))
			break;
		if (!r->saturate)
			sleep_until(start);
		m = &r->machines[k % r->n_machines];
		if (!r->saturate && now() - start > 0.010) {
			pthread_mutex_lock(&r->lock);
			r->late++;
			pthread_mutex_unlock(&r->lock);
		}
		st = attest_once(r, url, &c, m, &ev, &trusted, &lat_ev);
		/* from the scheduled start: a generator that falls behind shows as latency */
		lat = now() - start;
		if (st != 200) {
			note_error(r, "attest", m, st, &c);
			continue;
		}
		pthread_mutex_lock(&r->lock);
		if (r->n_lat == r->cap_lat) {
			r->cap_lat = r->cap_lat ? 2 * r->cap_lat : 4096;
			r->lat = realloc(r->lat, r->cap_lat * sizeof(double));
			r->lat_ev = realloc(r->lat_ev, r->cap_lat * sizeof(double));
			if (!r->lat || !r->lat_ev)
				die("out of memory");
		}
		r->lat[r->n_lat] = lat;
		r->lat_ev[r->n_lat++] = lat_ev;
		r->by_status[200]++;
		if (trusted)
			r->trusted++;
		else
			r->untrusted++;
		pthread_mutex_unlock(&r->lock);
	}
	client_done(&c);
	free(ev.p);
	return NULL;
}

static void run_threads(run *r, size_t n, void *(*fn)(void *))
{
	pthread_t *t = calloc(n, sizeof(*t));
	size_t i;

	if (!t)
		die("out of memory");
	atomic_store(&r->next, 0);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, r) != 0)
			die("cannot start a thread");
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return NAN;
	i = (size_t) ceil(p / 100.0 * (double) n);
	return v[i ? i - 1 : 0];
}

/* This process's CPU seconds so far: the generator shares the machine with the verifier. */
static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec +
	       ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) / 1e6;
}

/* The verifier's CPU seconds so far (utime + stime) and its peak RSS in KiB (VmHWM). */
static double proc_cpu(long pid)
{
	char path[64], line[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return NAN;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* after the command name: state, then fields 4..13, then utime and stime (proc(5)) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return NAN;
	return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

static long proc_hwm_kib(long pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

#define MAX_PIDS 8

static void usage(FILE *f)
{
	fputs("usage: fleet-load --make-ca DIR\n"
	      "       fleet-load --self-check --log LOG [--policy POLICY] [--keep DIR]\n"
	      "       fleet-load --activate DIR CREDENTIAL_FILE\n"
	      "       fleet-load --url URL[,URL] --ca DIR --log LOG [--machines N] [--ek-pool K]\n"
	      "                  (--rate R | --saturate [--concurrency C]) [--duration S]\n"
	      "                  [--enroll-jobs J] [--id-prefix P] [--pid PID[,PID]] [--json FILE]\n"
	      "  --keep DIR       --self-check: write DIR/evidence.json, machine.json and nonce\n"
	      "                   (the evidence of one attestation, for bench-attest), and the\n"
	      "                   machine's EK (ek.pub, ek.key) and AK name (ak.name)\n"
	      "  --activate DIR F the software TPM2_ActivateCredential of tpm2_makecredential's\n"
	      "                   file F with --keep DIR's EK and AK name; prints the credential\n"
	      "  --url URL,...    the verifiers (thread t uses the URL t modulo their number)\n"
	      "  --machines N     simulated machines, enrolled before the timed phase (default 100)\n"
	      "  --ek-pool K      the machines share K software EKs (RSA key generation is slow;\n"
	      "                   every machine has its own AK), default min(N, 32); 0: one EK each\n"
	      "  --rate R         open loop: R attestations per second in total (a nonce and an\n"
	      "                   evidence each), latency counted from the scheduled start\n"
	      "  --saturate       as fast as C concurrent machines get answers (default C 8)\n"
	      "  --concurrency C  threads, each with its own connection (--rate: default 64)\n"
	      "  --duration S     seconds of the timed phase (default 10)\n"
	      "  --pid PID,...    the verifier processes: their CPU over the timed phase, peak RSS\n"
	      "  --send-log       carry the firmware log in every evidence, even when the verifier\n"
	      "                   keeps its judgment (by default the log is then named by SHA-256)\n"
	      "exit: 0 every attestation answered 200 and trusted, 1 otherwise, 2 usage or setup\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "make-ca", required_argument, NULL, 'A' }, { "self-check", no_argument, NULL, 'K' },
		{ "policy", required_argument, NULL, 'P' },  { "url", required_argument, NULL, 'u' },
		{ "ca", required_argument, NULL, 'c' },      { "log", required_argument, NULL, 'l' },
		{ "machines", required_argument, NULL, 'n' }, { "ek-pool", required_argument, NULL, 'e' },
		{ "rate", required_argument, NULL, 'r' },    { "saturate", no_argument, NULL, 's' },
		{ "concurrency", required_argument, NULL, 'C' }, { "duration", required_argument, NULL, 'd' },
		{ "enroll-jobs", required_argument, NULL, 'j' }, { "id-prefix", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },     { "json", required_argument, NULL, 'J' },
		{ "send-log", no_argument, NULL, 'S' },
		{ "keep", required_argument, NULL, 'k' }, { "activate", required_argument, NULL, 'a' }, { "help", no_argument, NULL, 'h' },          { 0 },
	};
	const char *make_ca = NULL, *policy = NULL, *ca_dir = NULL, *log_path = NULL, *json_path = NULL;
	const char *prefix = "load-", *keep = NULL, *activate_dir = NULL;
	size_t n_machines = 100, concurrency = 0, enroll_jobs = 8, n_pids = 0, i, enrolled = 0;
	long ek_pool = -1, pids[MAX_PIDS];
	double cpu0[MAX_PIDS], cpu1[MAX_PIDS], t_enroll, wall, self0, self1;
	bool check = false;
	machine *machines;
	boot b = { 0 };
	ek *eks;
	ca c = { 0 };
	run r = { 0 };
	int o;

	/* Freed memory kept for the next attestation, as the verifier keeps it: glibc's defaults
	 * give libcurl's freed buffers back to the kernel each time (madvise, and a TLB flush on
	 * every core: the verifier's and PostgreSQL's too) and fault them in again. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'A': make_ca = optarg; break;
		case 'K': check = true; break;
		case 'k': keep = optarg; break;
		case 'a': activate_dir = optarg; break;
		case 'P': policy = optarg; break;
		case 'u':
			for (char *u = strtok(optarg, ","); u && r.n_urls < MAX_URLS; u = strtok(NULL, ","))
				r.urls[r.n_urls++] = u;
			break;
		case 'c': ca_dir = optarg; break;
		case 'l': log_path = optarg; break;
		case 'n': n_machines = strtoul(optarg, NULL, 10); break;
		case 'e': ek_pool = strtol(optarg, NULL, 10); break;
		case 'r': r.rate = atof(optarg); break;
		case 's': r.saturate = true; break;
		case 'S': r.send_log = true; break;
		case 'C': concurrency = strtoul(optarg, NULL, 10); break;
		case 'd': r.duration = atof(optarg); break;
		case 'j': enroll_jobs = strtoul(optarg, NULL, 10); break;
		case 'i': prefix = optarg; break;
		case 'J': json_path = optarg; break;
		case 'p':
			for (char *s = optarg, *end; *s && n_pids < MAX_PIDS; s = *end ? end + 1 : end) {
				pids[n_pids++] = strtol(s, &end, 10);
				if (end == s)
					die("--pid: a list of process ids");
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (make_ca) {
		ca_make(make_ca);
		return 0;
	}
	if (activate_dir) {
		if (optind != argc - 1)
			die("--activate DIR FILE");
		return activate_file(activate_dir, argv[optind]);
	}
	if (check) {
		if (!log_path)
			die("--self-check needs --log");
		return self_check(log_path, policy, keep);
	}
	if (!r.n_urls || !ca_dir || !log_path || n_machines == 0 || (r.rate <= 0) == !r.saturate || strlen(prefix) > 40) {
		usage(stderr);
		return 2;
	}
	if (r.duration <= 0)
		r.duration = 10;
	if (concurrency == 0)
		concurrency = r.saturate ? 8 : 64;
	if (enroll_jobs == 0)
		enroll_jobs = 1;
	if (ek_pool < 0)
		ek_pool = n_machines < 32 ? (long) n_machines : 32;
	if (ek_pool == 0 || (size_t) ek_pool > n_machines)
		ek_pool = (long) n_machines;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ca_load(ca_dir, &c);
	boot_load(log_path, &b);

	/* the machines: keys first (not timed), then enrollment through the service */
	eks = calloc((size_t) ek_pool, sizeof(*eks));
	machines = calloc(n_machines, sizeof(*machines));
	if (!eks || !machines)
		die("out of memory");
	for (i = 0; i < (size_t) ek_pool; i++)
		ek_make(&eks[i], &c, (long) i + 2);
	for (i = 0; i < n_machines; i++)
		machine_make(&machines[i], prefix, i, &eks[i % (size_t) ek_pool]);
	pthread_mutex_init(&r.lock, NULL);
	r.machines = machines;
	r.n_machines = n_machines;
	r.boot = &b;
	t_enroll = now();
	run_threads(&r, enroll_jobs, enroll_worker);
	t_enroll = now() - t_enroll;
	for (i = 0; i < n_machines; i++)
		enrolled += machines[i].enrolled;
	fprintf(stderr, "enrolled %zu of %zu machines in %.1f s (%zu EKs, %zu jobs)\n", enrolled, n_machines, t_enroll,
		(size_t) ek_pool, enroll_jobs);
	if (enrolled != n_machines)
		die("enrollment failed: %s", r.first_error);
	memset(r.by_status, 0, sizeof(r.by_status));

	for (i = 0; i < n_pids; i++)
		cpu0[i] = proc_cpu(pids[i]);
	self0 = self_cpu();
	r.t0 = now();
	run_threads(&r, concurrency, attest_worker);
	wall = now() - r.t0;
	self1 = self_cpu();
	for (i = 0; i < n_pids; i++)
		cpu1[i] = proc_cpu(pids[i]);

	/* the report */
	{
		double per_sec = (double) r.n_lat / wall, p50, p99, max, e50, e99;
		size_t errors = 0, s;
		json_t *j = json_object(), *errs = json_object(), *vs = json_array();

		qsort(r.lat, r.n_lat, sizeof(double), cmp_double);
		qsort(r.lat_ev, r.n_lat, sizeof(double), cmp_double);
		p50 = pct(r.lat, r.n_lat, 50);
		p99 = pct(r.lat, r.n_lat, 99);
		max = r.n_lat ? r.lat[r.n_lat - 1] : NAN;
		e50 = pct(r.lat_ev, r.n_lat, 50);
		e99 = pct(r.lat_ev, r.n_lat, 99);
		printf("mode %s, %zu machines, %zu threads, %.1f s\n", r.saturate ? "saturate" : "rate", n_machines,
		       concurrency, wall);
		if (!r.saturate)
			printf("offered %.1f/s, started late (>10 ms): %zu\n", r.rate, r.late);
		printf("attestations/s %.1f (%zu answered 200: %zu trusted, %zu untrusted)\n", per_sec, r.n_lat,
		       r.trusted, r.untrusted);
		printf("latency ms (nonce + evidence): p50 %.1f p99 %.1f max %.1f; evidence alone p50 %.1f p99 %.1f\n",
		       p50 * 1e3, p99 * 1e3, max * 1e3, e50 * 1e3, e99 * 1e3);
		for (s = 0; s < N_STATUS; s++) {
			char key[16];

			if (s == 200 || !r.by_status[s])
				continue;
			snprintf(key, sizeof(key), "%zu", s);
			printf("errors: %zu with status %s\n", r.by_status[s], s ? key : "none (transport)");
			json_object_set_new(errs, s ? key : "transport", json_integer((int64_t) r.by_status[s]));
			errors += r.by_status[s];
		}
		printf("firmware log named by its SHA-256 in %zu evidences, asked for %zu times\n",
		       atomic_load(&r.logs_named), atomic_load(&r.logs_asked));
		if (r.first_error[0])
			printf("first error: %s\n", r.first_error);
		printf("fleet-load itself: CPU %.0f %% of one core\n", (self1 - self0) / wall * 100.0);
		for (i = 0; i < n_pids; i++) {
			json_t *pv = json_object();
			double cpu = (cpu1[i] - cpu0[i]) / wall * 100.0;
			long hwm = proc_hwm_kib(pids[i]);

			printf("verifier %ld: CPU %.0f %% of one core, peak RSS %.1f MiB\n", pids[i], cpu, (double) hwm / 1024);
			json_object_set_new(pv, "pid", json_integer(pids[i]));
			json_object_set_new(pv, "cpu_percent", json_real(round(cpu * 10) / 10));
			json_object_set_new(pv, "peak_rss_kib", json_integer(hwm));
			json_array_append_new(vs, pv);
		}
		json_object_set_new(j, "mode", json_string_nocheck(r.saturate ? "saturate" : "rate"));
		json_object_set_new(j, "machines", json_integer((int64_t) n_machines));
		json_object_set_new(j, "threads", json_integer((int64_t) concurrency));
		json_object_set_new(j, "enroll_seconds", json_real(round(t_enroll * 100) / 100));
		json_object_set_new(j, "offered_per_second", r.saturate ? json_null() : json_real(r.rate));
		json_object_set_new(j, "seconds", json_real(round(wall * 100) / 100));
		json_object_set_new(j, "attestations", json_integer((int64_t) r.n_lat));
		json_object_set_new(j, "per_second", json_real(round(per_sec * 10) / 10));
		json_object_set_new(j, "trusted", json_integer((int64_t) r.trusted));
		json_object_set_new(j, "untrusted", json_integer((int64_t) r.untrusted));
		json_object_set_new(j, "late_starts", json_integer((int64_t) r.late));
		json_object_set_new(j, "p50_ms", json_real(round(p50 * 1e4) / 10));
		json_object_set_new(j, "p99_ms", json_real(round(p99 * 1e4) / 10));
		json_object_set_new(j, "max_ms", json_real(round(max * 1e4) / 10));
		json_object_set_new(j, "evidence_p50_ms", json_real(round(e50 * 1e4) / 10));
		json_object_set_new(j, "evidence_p99_ms", json_real(round(e99 * 1e4) / 10));
		json_object_set_new(j, "errors", errs);
		json_object_set_new(j, "log_named", json_integer((int64_t) atomic_load(&r.logs_named)));
		json_object_set_new(j, "log_asked", json_integer((int64_t) atomic_load(&r.logs_asked)));
		json_object_set_new(j, "generator_cpu_percent",
				       json_real(round((self1 - self0) / wall * 1000) / 10));
		json_object_set_new(j, "verifiers", vs);
		if (json_path) {
			char *text = json_write(j, JSON_LAYOUT_COMPACT);
			mb_error err = { 0 };

			if (!text || file_write(json_path, text, strlen(text), 0644, true, &err) < 0)
				die("%s: %s", json_path, text ? err.message : "out of memory");
			free(text);
		}
		json_decref(j);
		o = errors || r.untrusted || !r.n_lat ? 1 : 0;
	}
	for (i = 0; i < n_machines; i++)
		machine_free(&machines[i]);
	for (i = 0; i < (size_t) ek_pool; i++)
		ek_free(&eks[i]);
	free(machines);
	free(eks);
	free(r.lat);
	free(r.lat_ev);
	boot_free(&b);
	EVP_PKEY_free(c.key);
	X509_free(c.cert);
	pthread_mutex_destroy(&r.lock);
	curl_global_cleanup();
	return o;
}
