/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TPM manufacturers' CAs an EK certificate must chain to, and that check. The request
 * carries the EK certificate alone (what the TPM keeps in NV), so intermediate CAs, like the
 * roots, come from the verifier's own files: the chain is built only from certificates the
 * verifier chose, and must end at a self-signed one among them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <mboot/attest.h>
#include "shared/fail.h"
#include "shared/fileio.h"
#include "ek-roots.h"
#include "lib/attest/der-size.h"

/* A CA file is a few certificates; a directory a vendor's bundle, not a system store. */
#define CA_FILE_MAX (1u << 20)
#define CA_DIR_MAX_FILES 4096

struct mb_ek_roots {
	X509_STORE *store;
	size_t n_certs;
};

MB_EXPORT int mb_ek_roots_new(mb_ek_roots **ret, mb_error *err)
{
	mb_ek_roots *r = calloc(1, sizeof(*r));

	*ret = NULL;
	if (!r || !(r->store = X509_STORE_new())) {
		free(r);
		return set_error(err, -ENOMEM, "out of memory");
	}
	*ret = r;
	return 0;
}

MB_EXPORT void mb_ek_roots_free(mb_ek_roots *r)
{
	if (!r)
		return;
	X509_STORE_free(r->store);
	free(r);
}

size_t ek_roots_count(const mb_ek_roots *r)
{
	return r ? r->n_certs : 0;
}

static int add_cert(mb_ek_roots *r, X509 *c, const char *path, mb_error *err)
{
	/* X509_STORE_add_cert takes its own reference; a duplicate is no error in OpenSSL 3. */
	if (!X509_STORE_add_cert(r->store, c)) {
		ERR_clear_error();
		return set_error(err, -ENOMEM, "%s: cannot add the certificate", path);
	}
	r->n_certs++;
	return 0;
}

/*
 * Every certificate of one file: PEM (one or more) or a single DER certificate. In a directory
 * (in_dir) a file that holds no certificate at all (a key, a README, a serial number) is
 * skipped: that can only mean fewer CAs, never more trust. A certificate that does not decode
 * is an error everywhere.
 */
static int add_file(mb_ek_roots *r, const char *path, bool in_dir, mb_error *err)
{
	uint8_t *data = NULL;
	size_t size = 0, n = 0;
	int ret;

	ret = file_read(path, CA_FILE_MAX, &data, &size, err);
	if (ret < 0)
		return prefix_error(err, ret, path);
	if (memmem(data, size, "-----BEGIN", 10)) {
		BIO *bio = BIO_new_mem_buf(data, (int) size);
		X509 *c;

		if (!bio) {
			free(data);
			return set_error(err, -ENOMEM, "out of memory");
		}
		ERR_clear_error();
		while ((c = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
			ret = add_cert(r, c, path, err);
			X509_free(c);
			if (ret < 0)
				break;
			n++;
		}
		/* The loop ends at the end of the file (no start line) or at a broken certificate. */
		if (ret >= 0 && ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE)
			ret = set_error(err, -EBADMSG, "%s: a PEM certificate does not decode", path);
		BIO_free(bio);
		ERR_clear_error();
	} else {
		const unsigned char *p = data;
		X509 *c = size <= LONG_MAX ? d2i_X509(NULL, &p, (long) size) : NULL;

		if (!c || p != data + size)
			ret = in_dir ? 0 : set_error(err, -EBADMSG, "%s: neither a PEM nor a DER certificate", path);
		else if ((ret = add_cert(r, c, path, err)) >= 0)
			n++;
		X509_free(c);
		ERR_clear_error();
	}
	free(data);
	if (ret >= 0 && n == 0 && !in_dir)
		ret = set_error(err, -EBADMSG, "%s: no certificate in it", path);
	return ret;
}

static int add_dir(mb_ek_roots *r, const char *path, mb_error *err)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n_files = 0, before = r->n_certs;
	int ret = 0;

	if (!d)
		return set_error(err, -errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		char *file;
		struct stat st;

		if (de->d_name[0] == '.')
			continue; /* ".", "..", and hidden files are no one's CA */
		if (asprintf(&file, "%s/%s", path, de->d_name) < 0) {
			ret = set_error(err, -ENOMEM, "out of memory");
			break;
		}
		/* stat, not lstat: c_rehash directories are symbolic links to the certificates */
		if (stat(file, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(file);
			continue;
		}
		if (++n_files > CA_DIR_MAX_FILES) {
			free(file);
			ret = set_error(err, -E2BIG, "%s: more than %u files", path, CA_DIR_MAX_FILES);
			break;
		}
		ret = add_file(r, file, true, err);
		free(file);
		if (ret < 0)
			break;
	}
	closedir(d);
	if (ret >= 0 && r->n_certs == before)
		ret = set_error(err, -ENOENT, "%s: no certificate in any file of it", path);
	return ret;
}

MB_EXPORT int mb_ek_roots_add_path(mb_ek_roots *r, const char *path, mb_error *err)
{
	struct stat st;

	if (!r || !path)
		return set_error(err, -EINVAL, "no roots or no path");
	if (stat(path, &st) < 0)
		return set_error(err, -errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return add_dir(r, path, err);
	return add_file(r, path, false, err);
}

/*
 * EK certificates carry extensions OpenSSL has no code for: the TCG's subjectAltName holds a
 * directoryName of TPM manufacturer, model and version (OpenSSL parses that), and the
 * certificate may hold subjectDirectoryAttributes (TPM specification) and the TCG's
 * certificate policies. None of them changes what the chain proves, so an unknown critical
 * extension of one of these OIDs is let through on the EK certificate only; any other unknown
 * critical extension still fails the chain.
 */
static bool known_tcg_extension(const ASN1_OBJECT *obj)
{
	static const char *const oids[] = {
		"2.5.29.9",  /* subjectDirectoryAttributes: TPM specification, security assertions */
		"2.5.29.17", /* subjectAltName with the TPM's directoryName */
	};
	char buf[64];
	size_t i;

	if (OBJ_obj2txt(buf, sizeof(buf), obj, 1) <= 0)
		return false;
	for (i = 0; i < sizeof(oids) / sizeof(oids[0]); i++)
		if (strcmp(buf, oids[i]) == 0)
			return true;
	return false;
}

static int verify_cb(int ok, X509_STORE_CTX *ctx)
{
	X509 *c;
	int i;

	if (ok || X509_STORE_CTX_get_error(ctx) != X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION ||
	    X509_STORE_CTX_get_error_depth(ctx) != 0)
		return ok;
	c = X509_STORE_CTX_get_current_cert(ctx);
	for (i = 0; i < X509_get_ext_count(c); i++) {
		X509_EXTENSION *e = X509_get_ext(c, i);

		if (X509_EXTENSION_get_critical(e) && !X509_supported_extension(e) &&
		    !known_tcg_extension(X509_EXTENSION_get_object(e)))
			return 0;
	}
	return 1;
}

/* Whether der[0..n) is one DER structure followed by nothing but 0xff or 0x00 bytes: *ret_size is its size. */
static bool nv_padded(const uint8_t *der, size_t n, size_t *ret_size)
{
	size_t d = ek_der_size(der, n), i;

	if (!d || d == n)
		return false;
	for (i = d; i < n; i++)
		if (der[i] != 0xff && der[i] != 0x00)
			return false;
	*ret_size = d;
	return true;
}

/* The leaf is an EK: no CA, and a key usage that fits the key (TCG EK Credential Profile). */
static int check_leaf(X509 *cert, const tpm_public *ek, mb_error *err)
{
	uint32_t ku, need = ek->type == TPM_ALG_ECC ? KU_KEY_AGREEMENT : KU_KEY_ENCIPHERMENT;

	if (X509_get_extension_flags(cert) & EXFLAG_CA)
		return set_error(err, MB_ERR_ATTEST_REFUSED,
				 "the EK certificate is a CA certificate (basicConstraints CA:TRUE), not an EK's");
	ku = X509_get_key_usage(cert);
	if (ku != UINT32_MAX && !(ku & need))
		return set_error(err, MB_ERR_ATTEST_REFUSED, "the EK certificate's keyUsage does not allow %s, as an "
				 "%s EK's must (a signing certificate?)",
				 ek->type == TPM_ALG_ECC ? "keyAgreement" : "keyEncipherment",
				 ek->type == TPM_ALG_ECC ? "ECC" : "RSA");
	return 0;
}

int ek_cert_check(const mb_ek_roots *r, const uint8_t *der, size_t der_size, const tpm_public *ek,
		  bool check_validity, uint8_t sha256[32], bool *ret_expired, mb_error *err)
{
	const unsigned char *p = der;
	X509 *cert;
	X509_STORE_CTX *ctx = NULL;
	EVP_PKEY *key;
	int ret;

	*ret_expired = false;
	/* As read from NV by tpm2_nvread: the index may be larger than the certificate, padded. */
	nv_padded(der, der_size, &der_size);
	cert = der_size <= LONG_MAX ? d2i_X509(NULL, &p, (long) der_size) : NULL;

	if (!cert || p != der + der_size) {
		X509_free(cert);
		ERR_clear_error();
		return set_error(err, -EBADMSG, "ek.certificate is not one DER X.509 certificate");
	}
	key = X509_get0_pubkey(cert);
	if (!key) {
		ret = set_error(err, MB_ERR_ATTEST_REFUSED,
			      "the EK certificate's public key cannot be read (an algorithm OpenSSL does not know)");
		goto out;
	}
	/* The key first: a certificate for another key is refused whatever its chain. */
	if (!tpm_public_matches_pkey(ek, key)) {
		ret = set_error(err, MB_ERR_ATTEST_REFUSED, "the EK certificate is for another key than the request's EK");
		goto out;
	}
	ret = check_leaf(cert, ek, err);
	if (ret < 0)
		goto out;
	if (!r || r->n_certs == 0) {
		ret = set_error(err, -EINVAL, "no EK CA certificates to check the EK certificate against");
		goto out;
	}
	ctx = X509_STORE_CTX_new();
	if (!ctx || !X509_STORE_CTX_init(ctx, r->store, cert, NULL)) {
		ret = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	X509_STORE_CTX_set_verify_cb(ctx, verify_cb);
	/* Real EK certificates expire (2028 for some) while the TPM lives on: dates only when asked. */
	if (!check_validity)
		X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(ctx), X509_V_FLAG_NO_CHECK_TIME);
	if (X509_verify_cert(ctx) != 1) {
		int e = X509_STORE_CTX_get_error(ctx);

		ret = set_error(err, MB_ERR_ATTEST_REFUSED, "the EK certificate does not chain to the EK CAs given: %s",
			      X509_verify_cert_error_string(e));
		goto out;
	}
	SHA256(der, der_size, sha256);
	*ret_expired = X509_cmp_current_time(X509_get0_notAfter(cert)) < 0 ||
		       X509_cmp_current_time(X509_get0_notBefore(cert)) > 0;
	ret = 0;
out:
	X509_STORE_CTX_free(ctx);
	X509_free(cert);
	ERR_clear_error();
	return ret;
}
