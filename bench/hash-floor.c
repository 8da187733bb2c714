/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash-floor N: the hashing a replay of gen-log's N-event SHA-1 + SHA-256 log cannot avoid,
 * done with OpenSSL alone and nothing else: one extend (H(pcr || digest)) per event and bank.
 * The bench divides mboot's replay time by this to show what parsing and bookkeeping cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

int main(int argc, char **argv)
{
	unsigned char pcr1[20] = { 0 }, pcr256[32] = { 0 }, d1[20] = { 1 }, d256[32] = { 2 }, buf[64];
	EVP_MD *sha1 = EVP_MD_fetch(NULL, "SHA1", NULL), *sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	long n = argc > 1 ? atol(argv[1]) : 0, i;
	unsigned len;

	for (i = 0; i < n; i++) {
		memcpy(buf, pcr1, 20);
		memcpy(buf + 20, d1, 20);
		EVP_DigestInit_ex2(ctx, sha1, NULL);
		EVP_DigestUpdate(ctx, buf, 40);
		EVP_DigestFinal_ex(ctx, pcr1, &len);
		memcpy(buf, pcr256, 32);
		memcpy(buf + 32, d256, 32);
		EVP_DigestInit_ex2(ctx, sha256, NULL);
		EVP_DigestUpdate(ctx, buf, 64);
		EVP_DigestFinal_ex(ctx, pcr256, &len);
		d1[0] = pcr1[0];
		d256[0] = pcr256[0];
	}
	printf("%02x%02x\n", pcr1[0], pcr256[0]);
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(sha1);
	EVP_MD_free(sha256);
	return 0;
}
