/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_CRYPTO_DL_H
#define MB_CRYPTO_DL_H

/*
 * libcrypto (OpenSSL 3), loaded at its first use, not linked: see src/shared/dl-lib.h. Mapping
 * and relocating it costs every process about 0.75 ms of CPU, which is more than 'mboot hash'
 * of a small file or 'log replay' spend on their work, and those need only digests (Nettle,
 * src/lib/digest). Sealing, attestation, signatures, X.509 and the like use it.
 *
 * Every library file that calls OpenSSL includes this header instead of <openssl/...>, and
 * no OpenSSL header after it: it includes them all, then makes each function F below mean
 * "load libcrypto if not loaded yet, then sym_F" (dl_lib_ensure), so no call can reach an
 * empty slot, whatever path leads to it. Entry points that can report errors call
 * dlopen_crypto() first, so that a missing libcrypto is an error naming the package.
 */

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <mboot/error.h>
#include "shared/dl-lib.h"

/* A function called but not listed here is an undefined symbol when libmboot.so links
 * (-Wl,--no-undefined): add it to the list, and its #define below. */
#define CRYPTO_DL(X) \
	X(BIO_ctrl) \
	X(BIO_free) \
	X(BIO_new) \
	X(BIO_new_mem_buf) \
	X(BIO_s_mem) \
	X(BN_bin2bn) \
	X(BN_bn2binpad) \
	X(BN_free) \
	X(BN_new) \
	X(BN_num_bits) \
	X(BN_set_word) \
	X(CRYPTO_clear_free) \
	X(CRYPTO_free) \
	X(CRYPTO_memcmp) \
	X(CRYPTO_memdup) \
	X(ECDSA_SIG_free) \
	X(ECDSA_SIG_get0) \
	X(ECDSA_SIG_new) \
	X(ECDSA_SIG_set0) \
	X(ERR_clear_error) \
	X(ERR_peek_last_error) \
	X(EVP_CIPHER_CTX_ctrl) \
	X(EVP_CIPHER_CTX_free) \
	X(EVP_CIPHER_CTX_new) \
	X(EVP_CipherFinal_ex) \
	X(EVP_CipherInit_ex) \
	X(EVP_CipherUpdate) \
	X(EVP_Digest) \
	X(EVP_DigestSign) \
	X(EVP_DigestSignInit) \
	X(EVP_DigestVerify) \
	X(EVP_DigestVerifyInit) \
	X(EVP_EncryptFinal_ex) \
	X(EVP_EncryptInit_ex) \
	X(EVP_EncryptUpdate) \
	X(EVP_MD_CTX_free) \
	X(EVP_MD_CTX_new) \
	X(EVP_MD_fetch) \
	X(EVP_MD_get_size) \
	X(EVP_PKEY_CTX_free) \
	X(EVP_PKEY_CTX_new_from_name) \
	X(EVP_PKEY_CTX_new_from_pkey) \
	X(EVP_PKEY_CTX_set0_rsa_oaep_label) \
	X(EVP_PKEY_CTX_set_rsa_mgf1_md) \
	X(EVP_PKEY_CTX_set_rsa_oaep_md) \
	X(EVP_PKEY_CTX_set_rsa_padding) \
	X(EVP_PKEY_CTX_set_rsa_pss_saltlen) \
	X(EVP_PKEY_Q_keygen) \
	X(EVP_PKEY_derive) \
	X(EVP_PKEY_derive_init) \
	X(EVP_PKEY_derive_set_peer) \
	X(EVP_PKEY_encrypt) \
	X(EVP_PKEY_encrypt_init) \
	X(EVP_PKEY_eq) \
	X(EVP_PKEY_free) \
	X(EVP_PKEY_fromdata) \
	X(EVP_PKEY_fromdata_init) \
	X(EVP_PKEY_get_bits) \
	X(EVP_PKEY_get_bn_param) \
	X(EVP_PKEY_get_utf8_string_param) \
	X(EVP_PKEY_is_a) \
	X(EVP_PKEY_public_check) \
	X(EVP_aes_128_cfb128) \
	X(EVP_aes_192_cfb128) \
	X(EVP_aes_256_cfb128) \
	X(EVP_aes_256_gcm) \
	X(EVP_get_digestbyname) \
	X(EVP_sha1) \
	X(EVP_sha256) \
	X(EVP_sha384) \
	X(EVP_sha512) \
	X(HMAC) \
	X(OBJ_obj2txt) \
	X(OPENSSL_cleanse) \
	X(OSSL_PARAM_BLD_free) \
	X(OSSL_PARAM_BLD_new) \
	X(OSSL_PARAM_BLD_push_BN) \
	X(OSSL_PARAM_BLD_push_octet_string) \
	X(OSSL_PARAM_BLD_push_utf8_string) \
	X(OSSL_PARAM_BLD_to_param) \
	X(OSSL_PARAM_free) \
	X(PEM_read_bio_PUBKEY) \
	X(PEM_read_bio_PrivateKey) \
	X(PEM_read_bio_X509) \
	X(RAND_bytes) \
	X(RAND_priv_bytes) \
	X(SHA256) \
	X(SHA384_Final) \
	X(SHA384_Init) \
	X(SHA384_Update) \
	X(SHA512_Final) \
	X(SHA512_Init) \
	X(SHA512_Update) \
	X(X509_EXTENSION_get_critical) \
	X(X509_EXTENSION_get_object) \
	X(X509_NAME_get_text_by_NID) \
	X(X509_NAME_oneline) \
	X(X509_NAME_print_ex) \
	X(X509_STORE_CTX_free) \
	X(X509_STORE_CTX_get_current_cert) \
	X(X509_STORE_CTX_get_error) \
	X(X509_STORE_CTX_get_error_depth) \
	X(X509_STORE_CTX_init) \
	X(X509_STORE_CTX_new) \
	X(X509_STORE_CTX_set_verify_cb) \
	X(X509_STORE_add_cert) \
	X(X509_STORE_free) \
	X(X509_STORE_new) \
	X(X509_free) \
	X(X509_get0_pubkey) \
	X(X509_get_ext) \
	X(X509_get_ext_count) \
	X(X509_STORE_CTX_get0_param) \
	X(X509_VERIFY_PARAM_set_flags) \
	X(X509_get_extension_flags) \
	X(X509_get_key_usage) \
	X(X509_cmp_current_time) \
	X(X509_get0_notAfter) \
	X(X509_get0_notBefore) \
	X(X509_get_subject_name) \
	X(X509_supported_extension) \
	X(X509_verify_cert) \
	X(X509_verify_cert_error_string) \
	X(d2i_ECDSA_SIG) \
	X(d2i_X509) \
	X(i2d_ECDSA_SIG)

/* SHA384_Init and the like are deprecated since OpenSSL 3.0 but have no provider start-up
 * (src/lib/digest/digest.c): naming them here is not a use of the deprecated API elsewhere. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
CRYPTO_DL(DL_DECLARE)
#pragma GCC diagnostic pop

extern dl_lib crypto_dl_lib;

/* 0, or -EOPNOTSUPP: "libcrypto is needed and cannot be loaded: ..." */
int dlopen_crypto(mb_error *err);

/* crypto-dl.c defines the pointers themselves and needs the real names. */
#ifndef CRYPTO_DL_IMPL
#define BIO_ctrl (dl_lib_ensure(&crypto_dl_lib), sym_BIO_ctrl)
#define BIO_free (dl_lib_ensure(&crypto_dl_lib), sym_BIO_free)
#define BIO_new (dl_lib_ensure(&crypto_dl_lib), sym_BIO_new)
#define BIO_new_mem_buf (dl_lib_ensure(&crypto_dl_lib), sym_BIO_new_mem_buf)
#define BIO_s_mem (dl_lib_ensure(&crypto_dl_lib), sym_BIO_s_mem)
#define BN_bin2bn (dl_lib_ensure(&crypto_dl_lib), sym_BN_bin2bn)
#define BN_bn2binpad (dl_lib_ensure(&crypto_dl_lib), sym_BN_bn2binpad)
#define BN_free (dl_lib_ensure(&crypto_dl_lib), sym_BN_free)
#define BN_new (dl_lib_ensure(&crypto_dl_lib), sym_BN_new)
#define BN_num_bits (dl_lib_ensure(&crypto_dl_lib), sym_BN_num_bits)
#define BN_set_word (dl_lib_ensure(&crypto_dl_lib), sym_BN_set_word)
#define CRYPTO_clear_free (dl_lib_ensure(&crypto_dl_lib), sym_CRYPTO_clear_free)
#define CRYPTO_free (dl_lib_ensure(&crypto_dl_lib), sym_CRYPTO_free)
#define CRYPTO_memcmp (dl_lib_ensure(&crypto_dl_lib), sym_CRYPTO_memcmp)
#define CRYPTO_memdup (dl_lib_ensure(&crypto_dl_lib), sym_CRYPTO_memdup)
#define ECDSA_SIG_free (dl_lib_ensure(&crypto_dl_lib), sym_ECDSA_SIG_free)
#define ECDSA_SIG_get0 (dl_lib_ensure(&crypto_dl_lib), sym_ECDSA_SIG_get0)
#define ECDSA_SIG_new (dl_lib_ensure(&crypto_dl_lib), sym_ECDSA_SIG_new)
#define ECDSA_SIG_set0 (dl_lib_ensure(&crypto_dl_lib), sym_ECDSA_SIG_set0)
#define ERR_clear_error (dl_lib_ensure(&crypto_dl_lib), sym_ERR_clear_error)
#define ERR_peek_last_error (dl_lib_ensure(&crypto_dl_lib), sym_ERR_peek_last_error)
#define EVP_CIPHER_CTX_ctrl (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CIPHER_CTX_ctrl)
#define EVP_CIPHER_CTX_free (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CIPHER_CTX_free)
#define EVP_CIPHER_CTX_new (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CIPHER_CTX_new)
#define EVP_CipherFinal_ex (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CipherFinal_ex)
#define EVP_CipherInit_ex (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CipherInit_ex)
#define EVP_CipherUpdate (dl_lib_ensure(&crypto_dl_lib), sym_EVP_CipherUpdate)
#define EVP_Digest (dl_lib_ensure(&crypto_dl_lib), sym_EVP_Digest)
#define EVP_DigestSign (dl_lib_ensure(&crypto_dl_lib), sym_EVP_DigestSign)
#define EVP_DigestSignInit (dl_lib_ensure(&crypto_dl_lib), sym_EVP_DigestSignInit)
#define EVP_DigestVerify (dl_lib_ensure(&crypto_dl_lib), sym_EVP_DigestVerify)
#define EVP_DigestVerifyInit (dl_lib_ensure(&crypto_dl_lib), sym_EVP_DigestVerifyInit)
#define EVP_EncryptFinal_ex (dl_lib_ensure(&crypto_dl_lib), sym_EVP_EncryptFinal_ex)
#define EVP_EncryptInit_ex (dl_lib_ensure(&crypto_dl_lib), sym_EVP_EncryptInit_ex)
#define EVP_EncryptUpdate (dl_lib_ensure(&crypto_dl_lib), sym_EVP_EncryptUpdate)
#define EVP_MD_CTX_free (dl_lib_ensure(&crypto_dl_lib), sym_EVP_MD_CTX_free)
#define EVP_MD_CTX_new (dl_lib_ensure(&crypto_dl_lib), sym_EVP_MD_CTX_new)
#define EVP_MD_fetch (dl_lib_ensure(&crypto_dl_lib), sym_EVP_MD_fetch)
#define EVP_MD_get_size (dl_lib_ensure(&crypto_dl_lib), sym_EVP_MD_get_size)
#define EVP_PKEY_CTX_free (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_free)
#define EVP_PKEY_CTX_new_from_name (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_new_from_name)
#define EVP_PKEY_CTX_new_from_pkey (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_new_from_pkey)
#define EVP_PKEY_CTX_set0_rsa_oaep_label (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_set0_rsa_oaep_label)
#define EVP_PKEY_CTX_set_rsa_mgf1_md (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_set_rsa_mgf1_md)
#define EVP_PKEY_CTX_set_rsa_oaep_md (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_set_rsa_oaep_md)
#define EVP_PKEY_CTX_set_rsa_padding (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_set_rsa_padding)
#define EVP_PKEY_CTX_set_rsa_pss_saltlen (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_CTX_set_rsa_pss_saltlen)
#define EVP_PKEY_Q_keygen (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_Q_keygen)
#define EVP_PKEY_derive (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_derive)
#define EVP_PKEY_derive_init (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_derive_init)
#define EVP_PKEY_derive_set_peer (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_derive_set_peer)
#define EVP_PKEY_encrypt (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_encrypt)
#define EVP_PKEY_encrypt_init (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_encrypt_init)
#define EVP_PKEY_eq (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_eq)
#define EVP_PKEY_free (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_free)
#define EVP_PKEY_fromdata (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_fromdata)
#define EVP_PKEY_fromdata_init (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_fromdata_init)
#define EVP_PKEY_get_bits (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_get_bits)
#define EVP_PKEY_get_bn_param (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_get_bn_param)
#define EVP_PKEY_get_utf8_string_param (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_get_utf8_string_param)
#define EVP_PKEY_is_a (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_is_a)
#define EVP_PKEY_public_check (dl_lib_ensure(&crypto_dl_lib), sym_EVP_PKEY_public_check)
#define EVP_aes_128_cfb128 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_aes_128_cfb128)
#define EVP_aes_192_cfb128 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_aes_192_cfb128)
#define EVP_aes_256_cfb128 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_aes_256_cfb128)
#define EVP_aes_256_gcm (dl_lib_ensure(&crypto_dl_lib), sym_EVP_aes_256_gcm)
#define EVP_get_digestbyname (dl_lib_ensure(&crypto_dl_lib), sym_EVP_get_digestbyname)
#define EVP_sha1 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_sha1)
#define EVP_sha256 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_sha256)
#define EVP_sha384 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_sha384)
#define EVP_sha512 (dl_lib_ensure(&crypto_dl_lib), sym_EVP_sha512)
#define HMAC (dl_lib_ensure(&crypto_dl_lib), sym_HMAC)
#define OBJ_obj2txt (dl_lib_ensure(&crypto_dl_lib), sym_OBJ_obj2txt)
#define OPENSSL_cleanse (dl_lib_ensure(&crypto_dl_lib), sym_OPENSSL_cleanse)
#define OSSL_PARAM_BLD_free (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_free)
#define OSSL_PARAM_BLD_new (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_new)
#define OSSL_PARAM_BLD_push_BN (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_push_BN)
#define OSSL_PARAM_BLD_push_octet_string (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_push_octet_string)
#define OSSL_PARAM_BLD_push_utf8_string (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_push_utf8_string)
#define OSSL_PARAM_BLD_to_param (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_BLD_to_param)
#define OSSL_PARAM_free (dl_lib_ensure(&crypto_dl_lib), sym_OSSL_PARAM_free)
#define PEM_read_bio_PUBKEY (dl_lib_ensure(&crypto_dl_lib), sym_PEM_read_bio_PUBKEY)
#define PEM_read_bio_PrivateKey (dl_lib_ensure(&crypto_dl_lib), sym_PEM_read_bio_PrivateKey)
#define PEM_read_bio_X509 (dl_lib_ensure(&crypto_dl_lib), sym_PEM_read_bio_X509)
#define RAND_bytes (dl_lib_ensure(&crypto_dl_lib), sym_RAND_bytes)
#define RAND_priv_bytes (dl_lib_ensure(&crypto_dl_lib), sym_RAND_priv_bytes)
#define SHA256 (dl_lib_ensure(&crypto_dl_lib), sym_SHA256)
#define SHA384_Final (dl_lib_ensure(&crypto_dl_lib), sym_SHA384_Final)
#define SHA384_Init (dl_lib_ensure(&crypto_dl_lib), sym_SHA384_Init)
#define SHA384_Update (dl_lib_ensure(&crypto_dl_lib), sym_SHA384_Update)
#define SHA512_Final (dl_lib_ensure(&crypto_dl_lib), sym_SHA512_Final)
#define SHA512_Init (dl_lib_ensure(&crypto_dl_lib), sym_SHA512_Init)
#define SHA512_Update (dl_lib_ensure(&crypto_dl_lib), sym_SHA512_Update)
#define X509_EXTENSION_get_critical (dl_lib_ensure(&crypto_dl_lib), sym_X509_EXTENSION_get_critical)
#define X509_EXTENSION_get_object (dl_lib_ensure(&crypto_dl_lib), sym_X509_EXTENSION_get_object)
#define X509_NAME_get_text_by_NID (dl_lib_ensure(&crypto_dl_lib), sym_X509_NAME_get_text_by_NID)
#define X509_NAME_oneline (dl_lib_ensure(&crypto_dl_lib), sym_X509_NAME_oneline)
#define X509_NAME_print_ex (dl_lib_ensure(&crypto_dl_lib), sym_X509_NAME_print_ex)
#define X509_STORE_CTX_free (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_free)
#define X509_STORE_CTX_get_current_cert (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_get_current_cert)
#define X509_STORE_CTX_get_error (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_get_error)
#define X509_STORE_CTX_get_error_depth (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_get_error_depth)
#define X509_STORE_CTX_init (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_init)
#define X509_STORE_CTX_new (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_new)
#define X509_STORE_CTX_set_verify_cb (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_set_verify_cb)
#define X509_STORE_add_cert (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_add_cert)
#define X509_STORE_free (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_free)
#define X509_STORE_new (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_new)
#define X509_free (dl_lib_ensure(&crypto_dl_lib), sym_X509_free)
#define X509_get0_pubkey (dl_lib_ensure(&crypto_dl_lib), sym_X509_get0_pubkey)
#define X509_get_ext (dl_lib_ensure(&crypto_dl_lib), sym_X509_get_ext)
#define X509_get_ext_count (dl_lib_ensure(&crypto_dl_lib), sym_X509_get_ext_count)
#define X509_STORE_CTX_get0_param (dl_lib_ensure(&crypto_dl_lib), sym_X509_STORE_CTX_get0_param)
#define X509_VERIFY_PARAM_set_flags (dl_lib_ensure(&crypto_dl_lib), sym_X509_VERIFY_PARAM_set_flags)
#define X509_get_extension_flags (dl_lib_ensure(&crypto_dl_lib), sym_X509_get_extension_flags)
#define X509_get_key_usage (dl_lib_ensure(&crypto_dl_lib), sym_X509_get_key_usage)
#define X509_cmp_current_time (dl_lib_ensure(&crypto_dl_lib), sym_X509_cmp_current_time)
#define X509_get0_notAfter (dl_lib_ensure(&crypto_dl_lib), sym_X509_get0_notAfter)
#define X509_get0_notBefore (dl_lib_ensure(&crypto_dl_lib), sym_X509_get0_notBefore)
#define X509_get_subject_name (dl_lib_ensure(&crypto_dl_lib), sym_X509_get_subject_name)
#define X509_supported_extension (dl_lib_ensure(&crypto_dl_lib), sym_X509_supported_extension)
#define X509_verify_cert (dl_lib_ensure(&crypto_dl_lib), sym_X509_verify_cert)
#define X509_verify_cert_error_string (dl_lib_ensure(&crypto_dl_lib), sym_X509_verify_cert_error_string)
#define d2i_ECDSA_SIG (dl_lib_ensure(&crypto_dl_lib), sym_d2i_ECDSA_SIG)
#define d2i_X509 (dl_lib_ensure(&crypto_dl_lib), sym_d2i_X509)
#define i2d_ECDSA_SIG (dl_lib_ensure(&crypto_dl_lib), sym_i2d_ECDSA_SIG)
#endif

#endif
