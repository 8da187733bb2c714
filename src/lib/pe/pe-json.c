/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `mboot hash --json`'s document (mb_file_hashes_to_json): files' digests and PE layouts. */
#include <stdio.h>
#include <stdlib.h>

#include <mboot/digest.h>
#include <mboot/pe.h>
#include "shared/json.h"

MB_EXPORT const char *mb_pe_subsystem_name(uint16_t subsystem)
{
	switch (subsystem) {
	case MB_PE_SUBSYSTEM_EFI_APPLICATION:
		return "efi-application";
	case MB_PE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER:
		return "efi-boot-service-driver";
	case MB_PE_SUBSYSTEM_EFI_RUNTIME_DRIVER:
		return "efi-runtime-driver";
	default:
		return NULL;
	}
}

static json_t *info_json(const mb_pe_info *pe)
{
	json_t *o = json_object(), *secs = json_array(), *certs = json_array();
	mb_pe_summary sum;
	const char *m, *s;
	char buf[16];

	mb_pe_info_summary(pe, &sum);
	m = mb_pe_machine_name(sum.machine);
	s = mb_pe_subsystem_name(sum.subsystem);

	json_object_set_new(o, "format", json_text(sum.pe32_plus ? "PE32+" : "PE32"));
	snprintf(buf, sizeof(buf), "0x%04x", sum.machine);
	json_object_set_new(o, "machine", json_text(m ? m : buf));
	json_object_set_new(o, "machine_value", json_integer(sum.machine));
	json_object_set_new(o, "subsystem", json_integer(sum.subsystem));
	if (s)
		json_object_set_new(o, "subsystem_name", json_text(s));
	for (size_t i = 0; i < mb_pe_info_n_sections(pe); i++) {
		const mb_pe_section *sec = mb_pe_info_section(pe, i);
		json_t *so = json_object();

		json_object_set_new(so, "name", json_text(sec->name));
		json_object_set_new(so, "raw_offset", json_integer(sec->raw_offset));
		json_object_set_new(so, "raw_size", json_integer(sec->raw_size));
		json_object_set_new(so, "virtual_address", json_integer(sec->virtual_address));
		json_object_set_new(so, "virtual_size", json_integer(sec->virtual_size));
		json_array_append_new(secs, so);
	}
	json_object_set_new(o, "sections", secs);
	json_object_set_new(o, "uki", json_boolean(sum.uki));
	json_object_set_new(o, "sbat", json_boolean(sum.has_sbat));
	json_object_set_new(o, "signed", json_boolean(sum.has_cert_table));
	if (sum.has_cert_table) {
		json_object_set_new(o, "cert_table_offset", json_integer(sum.cert_offset));
		json_object_set_new(o, "cert_table_size", json_integer(sum.cert_size));
		json_object_set_new(o, "cert_table_at_end", json_boolean(sum.cert_at_end));
		for (size_t i = 0; i < mb_pe_info_n_certs(pe); i++) {
			const mb_pe_cert *cert = mb_pe_info_cert(pe, i);
			json_t *c = json_object();

			json_object_set_new(c, "offset", json_integer((json_int_t) cert->offset));
			json_object_set_new(c, "length", json_integer(cert->length));
			json_object_set_new(c, "type", json_integer(cert->type));
			json_array_append_new(certs, c);
		}
	}
	json_object_set_new(o, "certificates", certs);
	json_object_set_new(o, "extra_data_size", json_integer((json_int_t) sum.extra_size));
	json_object_set_new(o, "pad_bytes", json_integer(sum.pad_bytes));
	json_object_set_new(o, "sections_overlap", json_boolean(sum.sections_overlap));
	return o;
}

MB_EXPORT char *mb_file_hashes_to_json(const char *const *paths, const mb_pe_info *const *pe, size_t n_files,
				       bool authenticode, const uint16_t *algs, size_t n_algs,
				       const uint8_t (*digests)[MB_DIGEST_MAX], bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root, *files;
	char *out;

	for (size_t j = 0; j < n_algs; j++)
		if (!mb_digest_by_alg(algs[j]))
			return NULL;
	root = json_object();
	files = json_array();
	json_object_set_new(root, "files", files);
	for (size_t i = 0; i < n_files; i++) {
		json_t *f = json_object(), *d = json_object();

		json_object_set_new(f, "path", json_text(paths[i]));
		json_object_set_new(f, "authenticode", json_boolean(authenticode));
		for (size_t j = 0; j < n_algs; j++) {
			const mb_digest_info *di = mb_digest_by_alg(algs[j]);

			json_object_set_new(d, di->name, json_hex(digests[i * n_algs + j], di->size));
		}
		json_object_set_new(f, "digests", d);
		if (pe && pe[i])
			json_object_set_new(f, "pe", info_json(pe[i]));
		json_array_append_new(files, f);
	}
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}
