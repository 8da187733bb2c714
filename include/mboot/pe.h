/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_PE_H
#define MBOOT_PE_H

/*
 * PE/COFF images (EFI applications, the Linux EFI stub, UKIs): the Authenticode
 * digest that UEFI firmware extends into PCR 4 for EV_EFI_BOOT_SERVICES_APPLICATION,
 * and the plain file digest a boot loader (GRUB: PCR 9) logs for a file it reads.
 * docs/pe.md says which bytes are hashed and why, and where tools disagree.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/digest.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_PE_MAX_FILE      (512u * 1024 * 1024) /* larger images are -E2BIG */
#define MB_PE_MAX_SECTIONS  96                   /* the PE/COFF specification's loader limit */
#define MB_PE_MAX_CERTS     64                   /* WIN_CERTIFICATE entries we list */
#define MB_PE_MAX_RANGES    (MB_PE_MAX_SECTIONS + 5)

#define MB_PE_MACHINE_I386   0x014c
#define MB_PE_MACHINE_X64    0x8664
#define MB_PE_MACHINE_ARM    0x01c2
#define MB_PE_MACHINE_ARM64  0xaa64
#define MB_PE_MACHINE_RISCV64 0x5064
#define MB_PE_MACHINE_LOONGARCH64 0x6264

#define MB_PE_SUBSYSTEM_EFI_APPLICATION         10
#define MB_PE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER 11
#define MB_PE_SUBSYSTEM_EFI_RUNTIME_DRIVER      12

/* Flags for mb_pe_parse(). */
enum {
	/*
	 * Hash an image without a certificate table as if zero-padded to a multiple
	 * of 8 bytes, as sbsign, osslsigncode and `pesign -P` do when they sign it
	 * (the signature then carries this digest). Firmware does NOT pad what it
	 * measures, so the default is off.
	 */
	MB_PE_PAD_TO_8 = 1u << 0,
};

typedef struct mb_pe_section {
	char name[9];              /* the 8-byte short name, NUL-terminated ("/4" = string-table name) */
	uint32_t virtual_size;
	uint32_t virtual_address;
	uint32_t raw_size;         /* SizeOfRawData */
	uint32_t raw_offset;       /* PointerToRawData */
	uint32_t characteristics;
} mb_pe_section;

/* One run of file bytes fed to the hash; zero_fill means zeros, not file bytes. */
typedef struct mb_pe_range {
	uint64_t offset;
	uint64_t size;
	bool zero_fill;
} mb_pe_range;

typedef struct mb_pe_cert {
	uint64_t offset;   /* of the WIN_CERTIFICATE in the file */
	uint32_t length;   /* dwLength */
	uint16_t revision; /* 0x0200 */
	uint16_t type;     /* 0x0002 = WIN_CERT_TYPE_PKCS_SIGNED_DATA */
} mb_pe_cert;

/* What mb_pe_parse found besides the lists below; a copy (mb_pe_info_summary). */
typedef struct mb_pe_summary {
	uint64_t file_size;
	uint64_t pe_offset;         /* e_lfanew: "PE\0\0" */
	bool pe32_plus;             /* optional header magic 0x20b (else 0x10b) */
	uint16_t machine;
	uint16_t subsystem;
	uint16_t characteristics;
	uint32_t size_of_headers;
	uint32_t number_of_rva_and_sizes;

	/* The Certificate Table data directory (index 4): a file offset and size. */
	bool has_cert_table;        /* directory present and size != 0 */
	uint32_t cert_offset;
	uint32_t cert_size;
	bool cert_at_end;           /* offset + size == file size (what the spec requires) */

	/* Data after the sections that is hashed (0 when none): [offset, offset+size). */
	uint64_t extra_offset;
	uint64_t extra_size;
	uint32_t pad_bytes;         /* zeros appended with MB_PE_PAD_TO_8 */

	/* Hints for a reader of the result; none changes the digest. */
	bool sections_overlap;      /* two sections share file bytes (hashed twice, as firmware does) */
	bool uki;                   /* a .linux section: a unified kernel image */
	bool has_sbat, has_osrel, has_cmdline, has_initrd;
} mb_pe_summary;

/*
 * A parsed image: its summary, sections, certificate entries and the ranges the Authenticode
 * digest covers. Opaque, so that the caps (MB_PE_MAX_SECTIONS, ...) are not part of the ABI.
 */
typedef struct mb_pe_info mb_pe_info;

/*
 * Parse a PE/COFF image held in memory and work out the byte ranges its
 * Authenticode digest covers. Reads only within data[0..size); every offset
 * and size the image declares is checked. -EBADMSG (err has the byte offset)
 * for a malformed image, -E2BIG over a cap. *ret is new (free it with mb_pe_info_free),
 * NULL on error.
 */
MB_EXPORT int mb_pe_parse(const void *data, size_t size, unsigned flags, mb_pe_info **ret,
			  mb_error *err) MB_WUR;
MB_EXPORT void mb_pe_info_free(mb_pe_info *pe);
MB_EXPORT void mb_pe_info_summary(const mb_pe_info *pe, mb_pe_summary *ret);
/* Sections in the order of the section table; i < mb_pe_info_n_sections (else NULL). */
MB_EXPORT size_t mb_pe_info_n_sections(const mb_pe_info *pe);
MB_EXPORT const mb_pe_section *mb_pe_info_section(const mb_pe_info *pe, size_t i);
/* WIN_CERTIFICATE entries of the certificate table, in file order. */
MB_EXPORT size_t mb_pe_info_n_certs(const mb_pe_info *pe);
MB_EXPORT const mb_pe_cert *mb_pe_info_cert(const mb_pe_info *pe, size_t i);
/* What the Authenticode digest covers, in order. */
MB_EXPORT size_t mb_pe_info_n_ranges(const mb_pe_info *pe);
MB_EXPORT const mb_pe_range *mb_pe_info_range(const mb_pe_info *pe, size_t i);

/* Hash the ranges of a parsed image (same data and size) with one algorithm. */
MB_EXPORT int mb_pe_hash(const mb_pe_info *pe, const void *data, size_t size, uint16_t alg,
			 uint8_t *out) MB_WUR;

/* Read an image file ("-": stdin) into a malloc'd buffer; larger than MB_PE_MAX_FILE is
 * -E2BIG (a regular file is refused before it is read). */
MB_EXPORT int mb_pe_read_file(const char *path, uint8_t **ret, size_t *ret_size, mb_error *err) MB_WUR;

/* Both steps on a file: read (at most MB_PE_MAX_FILE), parse, hash with each of algs. */
MB_EXPORT int mb_pe_authenticode_file(const char *path, unsigned flags, const uint16_t *algs,
				      size_t n_algs, uint8_t (*out)[MB_DIGEST_MAX], mb_error *err) MB_WUR;

/*
 * Unified kernel images (UKI): what systemd-stub measures into PCR 11 before it starts the
 * kernel. systemd 252 (Debian 12) measures, in this order, each of .linux .osrel .cmdline
 * .initrd .splash .dtb .pcrpkey the image has (not .pcrsig: it signs the result) as two EV_IPL
 * events: the section name with its NUL, then the section's bytes as loaded (VirtualSize
 * bytes). PCR 11 starts at zero (no firmware extends it); systemd-pcrphase extends boot phase
 * strings later, in userspace, which these values do not include. docs/pe.md, "UKI".
 */
#define MB_UKI_MAX_SECTIONS 7

typedef struct mb_uki_section {
	const char *name;      /* ".linux", ...: a static string */
	uint32_t table_index;  /* its entry in the section table (the last of that name, as the stub finds it) */
	uint32_t raw_offset;   /* PointerToRawData */
	uint32_t size;         /* bytes measured: VirtualSize */
} mb_uki_section;

/*
 * The sections systemd-stub measures, in its order, into out[MB_UKI_MAX_SECTIONS]; *ret_n of
 * them. -EBADMSG (err names the section table entry's offset) when the image has no .linux
 * (not a UKI), a measured section is larger in memory than in the file (the loader's zero fill
 * is not computed), or overlaps another section in memory (the loaded bytes are not the file's).
 */
MB_EXPORT int mb_uki_sections(const mb_pe_info *pe, mb_uki_section *out, size_t *ret_n, mb_error *err) MB_WUR;

/* The digests of a section's two events with alg: its name with NUL, and its bytes. data and
 * size are the parsed image's. */
MB_EXPORT int mb_uki_section_digests(const mb_uki_section *s, const void *data, size_t size, uint16_t alg,
				     uint8_t *name_digest, uint8_t *content_digest) MB_WUR;

/* PCR 11 when systemd-stub hands over to the kernel, in each of algs; errors as mb_uki_sections. */
MB_EXPORT int mb_uki_pcr11(const mb_pe_info *pe, const void *data, size_t size, const uint16_t *algs,
			   size_t n_algs, uint8_t (*out)[MB_DIGEST_MAX], mb_error *err) MB_WUR;

/*
 * systemd-stub's drop-ins: the files of <UKI path>.extra.d/ on the ESP. systemd 252 packs the
 * credentials (*.cred) into one cpio archive (.extra/credentials/), measured into PCR 12 as an
 * EV_IPL "Credentials initrd", and the system extensions (*.raw) into another (.extra/sysext/),
 * measured into PCR 13 as "System extension initrd"; the kernel's initrd is .initrd followed by
 * the archives. Names are picked by suffix (any case), sorted, and skipped when they start with
 * '.', are not ASCII or are longer than 255 characters. docs/pe.md, "UKI drop-ins".
 */
typedef enum mb_uki_dropin_kind {
	MB_UKI_DROPIN_CREDENTIALS = 0,
	MB_UKI_DROPIN_SYSEXTS = 1,
} mb_uki_dropin_kind;

typedef struct mb_uki_dropin {
	const char *name; /* the file's name in the folder, without a path */
	const void *data;
	size_t size;
} mb_uki_dropin;

/* The kind the stub takes a file name for; -ENOENT (err says why) for one it skips, -EINVAL
 * for a name with a '/' or empty. */
MB_EXPORT int mb_uki_dropin_kind_of(const char *name, mb_error *err) MB_WUR;
/* The PCR and the event text of a kind's archive (UINT32_MAX / NULL for an unknown kind). */
MB_EXPORT uint32_t mb_uki_dropin_pcr(mb_uki_dropin_kind kind);
MB_EXPORT const char *mb_uki_dropin_description(mb_uki_dropin_kind kind);
/*
 * The archive the stub builds from the files of that kind among files[n] (the others are not
 * its kind, or skipped: see mb_uki_dropin_kind_of), byte for byte: *ret (malloc'd) and
 * *ret_size, or NULL and 0 when there is none, and then the stub measures nothing. -EINVAL for
 * a bad name or one given twice, -E2BIG past cpio's 32-bit sizes. A credentials archive holds
 * the credentials: the caller wipes it before freeing it.
 */
MB_EXPORT int mb_uki_dropin_cpio(mb_uki_dropin_kind kind, const mb_uki_dropin *files, size_t n, uint8_t **ret,
				 size_t *ret_size, mb_error *err) MB_WUR;
/* The same from a folder as the stub reads it (its regular files; at most 64 of the kind). */
MB_EXPORT int mb_uki_dropin_dir_cpio(const char *dir, mb_uki_dropin_kind kind, uint8_t **ret, size_t *ret_size,
				     mb_error *err) MB_WUR;
/*
 * The archives the stub appends to the UKI's .initrd, from the drop-in folder dir (NULL: none),
 * as bits (1u << kind) in *ret_kinds: 0 when the kernel gets, and its EFI stub tags into PCR 9,
 * the .initrd section alone. Predict and policy generate both ask this (mboot computes no
 * concatenation). Errors of mb_uki_dropin_dir_cpio.
 */
MB_EXPORT int mb_uki_dropin_appended(const char *dir, unsigned *ret_kinds, mb_error *err) MB_WUR;

/*
 * A GRUB EFI core image (grub-mkimage; the signed GRUB of distributions): the modules of its
 * "mods" section that decide what GRUB runs and measures before it reads /boot: the built-in
 * config (-c), the prefix (-p: where it reads grub.cfg) and the memdisk (-m). Pointers into
 * the image's bytes; the texts without their NUL padding, NULL when the image has none.
 */
typedef struct mb_grub_image {
	const uint8_t *config, *prefix, *memdisk;
	size_t config_size, prefix_size, memdisk_size;
	size_t n_modules;
} mb_grub_image;

/* -ENOENT (no "mods" section: not GRUB), -EBADMSG (err has the offset) for a malformed area. */
MB_EXPORT int mb_grub_image_parse(const mb_pe_info *pe, const void *data, size_t size, mb_grub_image *ret,
				  mb_error *err) MB_WUR;
/* NULL when both run the same way before reading files, else what differs: "prefix",
 * "built-in config" or "memdisk". */
MB_EXPORT const char *mb_grub_image_difference(const mb_grub_image *a, const mb_grub_image *b);

/* "x64", "aa64", "ia32", ... (as EFI names the boot file), or NULL. */
MB_EXPORT const char *mb_pe_machine_name(uint16_t machine);
/* "efi-application", "efi-boot-service-driver", "efi-runtime-driver", or NULL. */
MB_EXPORT const char *mb_pe_subsystem_name(uint16_t subsystem);

/*
 * `mboot hash --json`'s document (docs/pe.md), pretty or compact (docs/json.md), no final
 * newline: {"files": [{"path", "authenticode", "digests": {bank name: hex, in the order of
 * algs}, "pe" (pe[i]'s layout, when pe and pe[i] are not NULL: "format", "machine",
 * "machine_value", "subsystem", "subsystem_name", "sections", "uki", "sbat", "signed",
 * "cert_table_*", "certificates", "extra_data_size", "pad_bytes", "sections_overlap")}]} for
 * n_files files; file i's digest in algs[j] is digests[i * n_algs + j]. Authenticode says
 * whether they are Authenticode digests (else of the whole file). Caller frees; NULL when out
 * of memory or an alg is unknown.
 */
MB_EXPORT char *mb_file_hashes_to_json(const char *const *paths, const mb_pe_info *const *pe, size_t n_files,
				       bool authenticode, const uint16_t *algs, size_t n_algs,
				       const uint8_t (*digests)[MB_DIGEST_MAX], bool pretty);

#ifdef __cplusplus
}
#endif
#endif
