/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot hash: a file's digest as a measuring stage computes it. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include <mboot/replay.h>

#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char hash_help[] =
	"Usage: mboot hash [--authenticode [--pad]] [--alg NAME ...] [--info] [--json [--compact]] FILE...\n"
	"       mboot hash --uki [--bank NAME ...] [--json [--compact]] FILE\n\n"
	"Print the digest of each FILE as a measuring stage computes it.\n\n"
	"Without --authenticode: the digest of the whole file, as GRUB extends it into PCR 9\n"
	"for the kernel, initrd and configuration files it reads ('-' reads stdin).\n\n"
	"With --authenticode: the PE/COFF Authenticode digest of an EFI binary, as UEFI firmware\n"
	"extends it into PCR 4 (EV_EFI_BOOT_SERVICES_APPLICATION) for shim, GRUB, systemd-boot,\n"
	"a kernel's EFI stub or a UKI: the image without its CheckSum, its Certificate Table\n"
	"entry and its attribute certificate table, sections in file order (see docs/pe.md).\n\n"
	"  --authenticode  PE/COFF Authenticode digest instead of the plain file digest\n"
	"  --pad           with --authenticode: hash an unsigned image zero-padded to a multiple\n"
	"                  of 8 bytes, as sbsign, osslsigncode and 'pesign -P' do when signing\n"
	"                  (the digest inside its future signature); firmware does not pad\n"
	"  --alg NAME      only this bank (sha1, sha256, sha384, sha512); repeatable;\n"
	"                  --bank is the same. Default: all four\n"
	"  --info          with --authenticode: also machine, subsystem, sections, signatures\n"
	"  --json          {\"files\": [{\"path\", \"authenticode\", \"digests\": {\"sha256\": \"...\"}}]}\n"
	"  --compact       the JSON on one line (implies --json)\n\n"
	"With --uki: PCR 11 of the unified kernel image FILE as systemd-stub (systemd 252) leaves it\n"
	"when it starts the kernel: its .linux .osrel .cmdline .initrd .splash .dtb .pcrpkey sections,\n"
	"each as its name and its bytes, from zero; what 'systemd-measure calculate --phase=' prints.\n"
	"systemd-pcrphase's later boot phase strings are not included (docs/pe.md). Printed as\n"
	"'mboot pcrs' prints values (--json: {\"banks\": {\"sha256\": {\"11\": \"<hex>\"}}}); default bank\n"
	"sha256; --bank (or --alg) repeatable.\n\n"
	"Exit: 0 hashed, 2 usage error, unreadable file, or malformed PE image (the message\n"
	"names the byte offset).\n";

#define MAX_ALGS 4

typedef struct hash_args {
	tool_json json;
	bool authenticode, pad, info, uki;
	size_t n_algs;
	uint16_t algs[MAX_ALGS];
} hash_args;

static void print_info(const mb_pe_info *pe)
{
	mb_pe_summary sum;
	const char *m, *s;

	mb_pe_info_summary(pe, &sum);
	m = mb_pe_machine_name(sum.machine);
	s = mb_pe_subsystem_name(sum.subsystem);
	printf("  format    %s, machine %s (0x%04x), subsystem %u%s%s%s\n", sum.pe32_plus ? "PE32+" : "PE32",
	       m ? m : "?", sum.machine, sum.subsystem, s ? " (" : "", s ? s : "", s ? ")" : "");
	printf("  sections ");
	for (size_t i = 0; i < mb_pe_info_n_sections(pe); i++)
		printf(" %s", mb_pe_info_section(pe, i)->name);
	printf("%s\n", sum.uki ? "  (unified kernel image)" : "");
	if (sum.has_cert_table)
		printf("  signed    %zu certificate entr%s in %u bytes at %u%s\n", mb_pe_info_n_certs(pe),
		       mb_pe_info_n_certs(pe) == 1 ? "y" : "ies", sum.cert_size, sum.cert_offset,
		       sum.cert_at_end ? "" : " (NOT at the end of the file)");
	else
		printf("  signed    no\n");
	if (sum.extra_size)
		printf("  extra     %llu bytes after the sections hashed\n", (unsigned long long) sum.extra_size);
	if (sum.pad_bytes)
		printf("  padding   %u zero bytes hashed\n", sum.pad_bytes);
	if (sum.sections_overlap)
		printf("  note      sections overlap in the file (shared bytes hashed twice)\n");
}

/* A mapped image that shrinks while it is hashed: its lost pages raise SIGBUS. */
static void on_sigbus(int sig)
{
	static const char msg[] = "mboot hash: a file was truncated while it was read\n";

	(void) sig;
	(void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_USAGE);
}

/* The hashed files for --json: their digests (MAX_ALGS slots each), and their layouts with --info. */
typedef struct hashed {
	size_t n;
	const char **paths;
	const mb_pe_info **pe;
	uint8_t (*digests)[MB_DIGEST_MAX];
} hashed;

/* One file: 0 or an exit code; with --json (done not NULL) kept in done. */
static int hash_one(const hash_args *a, const char *path, hashed *done)
{
	uint8_t local[MAX_ALGS][MB_DIGEST_MAX], (*out)[MB_DIGEST_MAX] = done ? done->digests + done->n * a->n_algs : local;
	char hex[2 * MB_DIGEST_MAX + 1];
	mb_error err = { 0 };
	mb_pe_info *pe = NULL;
	int rc;

	if (a->authenticode) {
		uint8_t *buf = NULL;
		size_t size = 0;
		bool mapped = false;

		/* mapped: read from the page cache, not copied into fresh memory (pesign maps too) */
		rc = file_map(path, MB_PE_MAX_FILE, &buf, &size, &mapped, &err);
		if (rc >= 0) {
			rc = mb_pe_parse(buf, size, a->pad ? MB_PE_PAD_TO_8 : 0, &pe, &err);
		}
		for (size_t i = 0; rc >= 0 && i < a->n_algs; i++)
			rc = mb_pe_hash(pe, buf, size, a->algs[i], out[i]);
		file_unmap(buf, size, mapped);
		if (rc < 0 && !err.code) {
			err.code = rc;
			snprintf(err.message, sizeof(err.message), "%s", mb_strerror(rc));
		}
	} else {
		rc = mb_digest_file(path, a->algs, a->n_algs, out, &err);
	}
	if (rc < 0) {
		tool_report(path, &err);
		mb_pe_info_free(pe);
		return EXIT_USAGE;
	}
	if (done) {
		done->paths[done->n] = path;
		done->pe[done->n++] = a->info ? pe : NULL; /* the document is written after the last file */
		if (a->info)
			return EXIT_OK;
	} else {
		printf("%s%s\n", path, a->authenticode ? " (authenticode)" : "");
		for (size_t i = 0; i < a->n_algs; i++) {
			const mb_digest_info *di = mb_digest_by_alg(a->algs[i]);

			printf("  %-7s %s\n", di->name, hex_format(out[i], di->size, hex));
		}
		if (pe && a->info)
			print_info(pe);
	}
	mb_pe_info_free(pe);
	return EXIT_OK;
}

/* --uki FILE: PCR 11 as systemd-stub measures the UKI's sections. */
static int hash_uki(const hash_args *a, const char *path)
{
	uint8_t out[MAX_ALGS][MB_DIGEST_MAX];
	mb_pcr_values *v = NULL;
	mb_error err = { 0 };
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	bool mapped = false;
	int rc;

	rc = file_map(path, MB_PE_MAX_FILE, &buf, &size, &mapped, &err);
	if (rc >= 0)
		rc = mb_pe_parse(buf, size, 0, &pe, &err);
	if (rc >= 0)
		rc = mb_uki_pcr11(pe, buf, size, a->algs, a->n_algs, out, &err);
	file_unmap(buf, size, mapped);
	mb_pe_info_free(pe);
	if (rc >= 0 && !(v = mb_pcr_values_new()))
		rc = -ENOMEM;
	for (size_t i = 0; rc >= 0 && i < a->n_algs; i++)
		rc = mb_pcr_values_set(v, a->algs[i], 11, out[i], mb_digest_by_alg(a->algs[i])->size, &err);
	if (rc < 0) {
		if (!err.code) {
			err.code = rc;
			snprintf(err.message, sizeof(err.message), "%s", mb_strerror(rc));
		}
		tool_report(path, &err);
		mb_pcr_values_free(v);
		return EXIT_USAGE;
	}
	rc = a->json ? tool_json_text_print(mb_pcr_values_to_json(v, a->json != TOOL_JSON_COMPACT)) :
		       tool_print_pcr_values(v);
	mb_pcr_values_free(v);
	return rc;
}

/* --alg / --bank: the four banks firmware measures PE images and files with. */
static int alg_option(void *target, const char *arg, const char *verb)
{
	hash_args *a = target;
	const mb_digest_info *d = mb_digest_by_name(arg);

	if (!d || (d->alg != MB_ALG_SHA1 && d->alg != MB_ALG_SHA256 && d->alg != MB_ALG_SHA384 &&
		   d->alg != MB_ALG_SHA512))
		return tool_usage_error(verb, "unknown algorithm '%s' (sha1, sha256, sha384, sha512)", arg);
	for (size_t i = 0; i < a->n_algs; i++)
		if (a->algs[i] == d->alg)
			return EXIT_OK;
	a->algs[a->n_algs++] = d->alg;
	return EXIT_OK;
}

int verb_hash(int argc, char **argv)
{
	hash_args a = { 0 };
	const tool_option options[] = {
		TOOL_OPT_BOOL("authenticode", 0, &a.authenticode),
		TOOL_OPT_FN("alg", 0, &a, alg_option),
		TOOL_OPT_FN("bank", 0, &a, alg_option),
		TOOL_OPT_BOOL("pad", 0, &a.pad),
		TOOL_OPT_BOOL("info", 0, &a.info),
		TOOL_OPT_BOOL("uki", 0, &a.uki),
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_END,
	};
	hashed done = { 0 };
	int ret = EXIT_OK;

	ret = tool_parse_options("hash", hash_help, options, argc, argv, INT_MAX);
	if (ret != TOOL_OPTS_GO_ON)
		return ret;
	ret = EXIT_OK;
	if (optind >= argc)
		return tool_usage_error("hash", "needs at least one FILE");
	if (a.pad && !a.authenticode)
		return tool_usage_error("hash", "--pad only applies with --authenticode");
	if (a.info && !a.authenticode)
		return tool_usage_error("hash", "--info only applies with --authenticode");
	if (a.uki) {
		if (a.authenticode || a.pad || a.info)
			return tool_usage_error("hash", "--uki computes PCR 11, not a file digest: no --authenticode, --pad, --info");
		if (optind + 1 != argc)
			return tool_usage_error("hash", "--uki takes one FILE");
		if (!a.n_algs)
			a.algs[a.n_algs++] = MB_ALG_SHA256; /* as pcrs, seal and predict default */
		signal(SIGBUS, on_sigbus);
		return hash_uki(&a, argv[optind]);
	}
	if (!a.n_algs) {
		a.algs[a.n_algs++] = MB_ALG_SHA1;
		a.algs[a.n_algs++] = MB_ALG_SHA256;
		a.algs[a.n_algs++] = MB_ALG_SHA384;
		a.algs[a.n_algs++] = MB_ALG_SHA512;
	}
	if (a.authenticode)
		signal(SIGBUS, on_sigbus);
	if (a.json) {
		size_t n = (size_t) (argc - optind);

		done.paths = calloc(n, sizeof(*done.paths));
		done.pe = calloc(n, sizeof(*done.pe));
		done.digests = calloc(n * a.n_algs, sizeof(*done.digests));
		if (!done.paths || !done.pe || !done.digests) {
			tool_errorf("out of memory");
			ret = EXIT_USAGE;
			goto out;
		}
	}
	/* Every file is tried; one bad file makes the exit code 2 but others still print. */
	for (int i = optind; i < argc; i++)
		if (hash_one(&a, argv[i], a.json ? &done : NULL) != EXIT_OK)
			ret = EXIT_USAGE;
	if (a.json && tool_json_text_print(mb_file_hashes_to_json(done.paths, done.pe, done.n, a.authenticode, a.algs,
								  a.n_algs, (const uint8_t (*)[MB_DIGEST_MAX]) done.digests,
								  a.json == TOOL_JSON_PRETTY)) != EXIT_OK)
		ret = EXIT_USAGE;
	if (fflush(stdout) != 0)
		ret = EXIT_USAGE;
out:
	for (size_t i = 0; i < done.n; i++)
		mb_pe_info_free((mb_pe_info *) done.pe[i]);
	free(done.paths);
	free(done.pe);
	free(done.digests);
	return ret;
}
