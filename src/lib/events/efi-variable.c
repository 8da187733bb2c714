/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EV_EFI_VARIABLE_DRIVER_CONFIG / _BOOT / _BOOT2 / _AUTHORITY: UEFI_VARIABLE_DATA
 * (TCG PFP §10.4.3.1: EFI_GUID VariableName; u64 UnicodeNameLength (characters);
 * u64 VariableDataLength; CHAR16 UnicodeName[]; u8 VariableData[]), and inside it
 * the contents of the variables boot policy is made of: SecureBoot, BootOrder,
 * Boot#### (EFI_LOAD_OPTION, UEFI spec §3.1.3), PK/KEK/db/dbx (EFI_SIGNATURE_LIST,
 * UEFI spec §32.4.1), and for authority events the EFI_SIGNATURE_DATA that
 * verified an image.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "decode-internal.h"
#include "event-data.h"


/* "CN=...,O=..." of a DER certificate, or NULL when it is not one; its commonName into cn
 * (empty when it has none). */
static char *x509_subject(const uint8_t *der, size_t n, char *cn, size_t cn_size)
{
	const unsigned char *p = der;
	X509 *x;
	BIO *bio;
	char *s = NULL, *mem;
	long len;

	cn[0] = 0;
	if (n > 1u << 20)
		return NULL;
	x = d2i_X509(NULL, &p, (long) n);
	if (!x)
		return NULL;
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, (int) cn_size) < 0)
		cn[0] = 0;
	utf8_sanitize(cn, strlen(cn));
	bio = BIO_new(BIO_s_mem());
	if (bio && X509_NAME_print_ex(bio, X509_get_subject_name(x), 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0) {
		len = BIO_get_mem_data(bio, &mem);
		if (len >= 0) {
			s = malloc((size_t) len + 1);
			if (s) {
				memcpy(s, mem, (size_t) len);
				s[len] = 0;
			}
		}
	}
	BIO_free(bio);
	X509_free(x);
	return s;
}

/* Certificate subject into o ("subject", "subject_cn"); returns the malloc'd subject or NULL,
 * the commonName in cn. */
static char *add_cert(mb_decoded_node *o, const uint8_t *der, size_t n, char *cn, size_t cn_size)
{
	char *subject;

	subject = x509_subject(der, n, cn, cn_size);
	if (subject) {
		dec_add_str(o, "subject", subject);
		if (cn[0])
			dec_add_str(o, "subject_cn", cn);
	} else
		dec_add_str(o, "x509_error", "not a DER X.509 certificate");
	return subject;
}

/*
 * A sequence of EFI_SIGNATURE_LISTs filling the variable (UEFI spec §32.4.1).
 * Strict (PITFALLS #11): any list that does not fit exactly makes the whole value
 * malformed, and nothing of it is shown as entries.
 */
static int signature_lists(const uint8_t *data, size_t size, mb_decoded_node *o, dec_why *why, char *summary, size_t summary_size)
{
	mb_decoded_node *lists = dec_new_array(o), *by_type = dec_new_object(o);
	byte_reader r;
	efi_siglist esl;
	unsigned n_lists = 0, shown = 0, n_types = 0, n_cns = 0;
	uint64_t n_sigs = 0, type_count[8] = { 0 };
	const uint8_t *type_guid[8];
	char cns[200] = "";
	size_t cns_len = 0, t, sl;
	int rc = 0;

	if (!lists || !by_type)
		return -ENOMEM;
	reader_init(&r, data, size, 0);
	while ((rc = efi_siglist_next(&r, &esl, why)) > 0) {
		const uint8_t *type = esl.type;
		uint32_t sig_size = esl.sig_size;
		size_t count = esl.count, i;
		const char *tname = esl.type_name;
		mb_decoded_node *l, *sigs;
		byte_reader list;

		reader_init(&list, esl.entries, count * sig_size, 0);
		l = dec_new_object(o);
		sigs = dec_new_array(o);
		if (!l || !sigs) {
			rc = -ENOMEM;
			goto out;
		}
		dec_append(lists, l);
		dec_add_guid(l, "type_guid", type);
		if (tname)
			dec_add_str(l, "type", tname);
		dec_add_u64(l, "list_size", esl.list_size);
		dec_add_u64(l, "header_size", esl.header_size);
		dec_add_u64(l, "signature_size", sig_size);
		dec_add_u64(l, "count", count);
		dec_add(l, "signatures", sigs);
		/* entries per signature type, the same type's lists counted together */
		for (t = 0; t < n_types && memcmp(type_guid[t], type, 16) != 0; t++)
			;
		if (t == n_types && n_types < sizeof(type_guid) / sizeof(type_guid[0]))
			type_guid[n_types++] = type;
		if (t < n_types)
			type_count[t] += count;
		for (i = 0; i < count; i++) {
			const uint8_t *owner, *sd;
			mb_decoded_node *s;
			char cn[128];

			if (read_bytes(&list, 16, &owner) < 0 || read_bytes(&list, sig_size - 16u, &sd) < 0) {
				rc = dec_fail(why, "EFI_SIGNATURE_DATA %zu: truncated", i);
				goto out;
			}
			if (shown >= MB_DEC_MAX_LIST_ITEMS)
				continue;
			s = dec_new_object(o);
			if (!s) {
				rc = -ENOMEM;
				goto out;
			}
			dec_append(sigs, s);
			shown++;
			dec_add_guid(s, "owner", owner);
			if (guid_name(owner))
				dec_add_str(s, "owner_name", guid_name(owner));
			if (tname && strcmp(tname, "x509") == 0) {
				free(add_cert(s, sd, sig_size - 16u, cn, sizeof(cn)));
				/* the first certificates' names for the description */
				if (cn[0] && n_cns < 3 && cns_len + strlen(cn) + 3 < sizeof(cns))
					cns_len += (size_t) snprintf(cns + cns_len, sizeof(cns) - cns_len, "%s%s", n_cns ? ", " : "", cn);
				n_cns++;
			} else if (tname && strncmp(tname, "sha", 3) == 0) {
				dec_add_hex(s, tname, sd, sig_size - 16u);
			} else {
				dec_add_hex(s, "data", sd, sig_size - 16u);
			}
		}
		n_lists++;
		n_sigs += count;
	}
	if (rc < 0)
		goto out;
	rc = 0;
	sl = (size_t) snprintf(summary, summary_size, "%u list%s, %" PRIu64 " signature%s", n_lists, n_lists == 1 ? "" : "s",
			       n_sigs, n_sigs == 1 ? "" : "s");
	for (t = 0; t < n_types; t++) {
		char gtext[MB_GUID_STR];
		const char *tn = efi_sig_type_name(type_guid[t]);
		bool x509 = tn && strcmp(tn, "x509") == 0;

		if (!tn) {
			guid_format(type_guid[t], gtext);
			tn = gtext;
		}
		dec_add_u64(by_type, dec_key_copy(o, tn), type_count[t]);
		if (sl < summary_size)
			sl += (size_t) snprintf(summary + sl, summary_size - sl, "%s%" PRIu64 " %s%s%s%s%s", t ? ", " : ": ",
						type_count[t], tn, x509 && cns_len ? " (" : "", x509 ? cns : "",
						x509 && n_cns > 3 ? ", ..." : "", x509 && cns_len ? ")" : "");
	}
	if (shown < n_sigs)
		dec_add_bool(o, "signatures_truncated", true);
	dec_add(o, "signatures_by_type", by_type);
	dec_add(o, "signature_lists", lists);
out:
	return rc;
}

/* EFI_LOAD_OPTION (UEFI spec §3.1.3): u32 Attributes; u16 FilePathListLength;
 * CHAR16 Description[] (NUL-terminated); FilePathList; OptionalData. */
static int load_option(const uint8_t *data, size_t size, mb_decoded_node *o, dec_why *why, const char *name)
{
	mb_decoded_node *lo = dec_new_object(o);
	byte_reader r;
	uint32_t attr;
	uint16_t fp_len;
	size_t units = 0;
	const uint8_t *desc, *fp;
	char *d = NULL, *path = NULL;
	int rc;

	if (!lo)
		return -ENOMEM;
	reader_init(&r, data, size, 0);
	if (read_u32le(&r, &attr) < 0 || read_u16le(&r, &fp_len) < 0) {
		rc = dec_fail(why, "%s: EFI_LOAD_OPTION shorter than its header (%zu bytes)", name, size);
		goto out;
	}
	desc = reader_cur(&r);
	for (;;) {
		uint16_t c;

		if (read_u16le(&r, &c) < 0) {
			rc = dec_fail(why, "%s: EFI_LOAD_OPTION description has no NUL terminator", name);
			goto out;
		}
		if (c == 0)
			break;
		units++;
	}
	if (read_bytes(&r, fp_len, &fp) < 0) {
		rc = dec_fail(why, "%s: FilePathListLength %u overruns the option (%zu bytes left)", name, fp_len,
				 reader_left(&r));
		goto out;
	}
	rc = devpath_to_text(fp, fp_len, &path, why);
	if (rc < 0)
		goto out;
	d = utf16le_to_utf8(desc, units * 2);
	if (!d) {
		rc = -ENOMEM;
		goto out;
	}
	dec_add_u64(lo, "attributes", attr);
	dec_add_bool(lo, "active", attr & 1);
	dec_add_str(lo, "description", d);
	dec_add_u64(lo, "file_path_list_length", fp_len);
	dec_add_str(lo, "device_path", path);
	dec_add_u64(lo, "optional_data_size", reader_left(&r));
	dec_add(o, "load_option", lo);
	dec_set_desc(o, "%s: \"%s\" %s%s", name, d, path, attr & 1 ? "" : " (inactive)");
out:
	free(d);
	free(path);
	return rc;
}

static bool is_boot_entry(const char *name)
{
	size_t i;

	if (strncmp(name, "Boot", 4) != 0 || strlen(name) != 8)
		return false;
	for (i = 4; i < 8; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'A' && name[i] <= 'F')))
			return false;
	return true;
}

/* EFI_SIGNATURE_DATA in authority events, and shim's variants of it (PITFALLS #11:
 * shim logs its vendor certificate without SignatureOwner; SbatLevel is text). */
static void authority_data(const uint8_t *p, size_t n, mb_decoded_node *o, const char *name)
{
	mb_decoded_node *s = dec_new_object(o);
	char *subject = NULL, cn[128];
	char owner_text[MB_GUID_STR];
	const char *owner_name = NULL;

	if (!s)
		return;
	if (n >= 16 + 4 && p[16] == 0x30 && p[17] == 0x82) {
		dec_add_guid(s, "owner", p);
		owner_name = guid_name(p);
		if (owner_name)
			dec_add_str(s, "owner_name", owner_name);
		guid_format(p, owner_text);
		subject = add_cert(s, p + 16, n - 16, cn, sizeof(cn));
		/* the certificate by its common name; the whole subject is in "signature" */
		dec_set_desc(o, "%s entry verified the binary: x509 %s (owner %s)", name,
			     subject ? (cn[0] ? cn : subject) : "(unparsable)", owner_name ? owner_name : owner_text);
	} else if (n >= 4 && p[0] == 0x30 && p[1] == 0x82) {
		subject = add_cert(s, p, n, cn, sizeof(cn));
		dec_set_desc(o, "%s certificate verified the binary: x509 %s", name,
			     subject ? (cn[0] ? cn : subject) : "(unparsable)");
	} else if (n == 16 + 32) {
		dec_add_guid(s, "owner", p);
		dec_add_hex(s, "sha256", p + 16, 32);
		dec_set_desc(o, "%s entry verified the binary: sha256 %02x%02x%02x%02x...", name, p[16], p[17], p[18], p[19]);
	} else {
		const char *text;

		if (dec_add_text_or_hex(o, p, n, &text))
			dec_set_desc(o, "%s: \"%.60s\"", name, text);
		else
			dec_set_desc(o, "%s: %zu bytes", name, n);
		return;
	}
	free(subject);
	dec_add(o, "signature", s);
}

/*
 * shim's SbatLevel (rhboot/shim SBAT.md, sbat_var_defs.h): CSV lines, the first
 * "sbat,VERSION,DATESTAMP", then "component,generation" revocations (a generation below it
 * does not boot). False when the text is not that; o then gets nothing.
 */
static bool sbat_level(const uint8_t *p, size_t n, mb_decoded_node *o, const char *name)
{
	mb_decoded_node *lvl = dec_new_object(o), *revs = dec_new_array(o);
	byte_reader r;
	char desc[160];
	size_t dl = 0, line_no = 0;

	if (!lvl || !revs || !looks_text(p, n))
		return false;
	reader_init(&r, p, strip_nuls(p, n), 0);
	while (reader_left(&r) > 0) {
		const uint8_t *line = reader_cur(&r), *nl = memchr(line, '\n', reader_left(&r));
		size_t len = nl ? (size_t) (nl - line) : reader_left(&r), c1, c2;
		const uint8_t *comma, *comma2;

		if (read_skip(&r, len + (nl ? 1 : 0)) < 0)
			return false;
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		if (len == 0)
			continue;
		comma = memchr(line, ',', len);
		if (!comma || comma == line || comma + 1 == line + len)
			return false;
		c1 = (size_t) (comma - line);
		comma2 = memchr(comma + 1, ',', len - c1 - 1);
		c2 = comma2 ? (size_t) (comma2 - comma - 1) : len - c1 - 1;
		if (line_no++ == 0) {
			/* the header names the policy, not a component */
			if (c1 != 4 || memcmp(line, "sbat", 4) != 0)
				return false;
			dec_add_strn(lvl, "version", (const char *) comma + 1, c2);
			if (comma2)
				dec_add_strn(lvl, "datestamp", (const char *) comma2 + 1, len - c1 - c2 - 2);
			dl = (size_t) snprintf(desc, sizeof(desc), "%s: %.*s", name, (int) len, (const char *) line);
		} else {
			mb_decoded_node *e = dec_new_object(o);
			uint64_t gen = 0;
			size_t k;

			/* a generation is a decimal number: anything else is not SBAT */
			if (!e || c2 == 0 || c2 > 9)
				return false;
			for (k = 0; k < c2; k++) {
				if (comma[1 + k] < '0' || comma[1 + k] > '9')
					return false;
				gen = gen * 10 + (uint64_t) (comma[1 + k] - '0');
			}
			dec_add_strn(e, "component", (const char *) line, c1);
			dec_add_u64(e, "generation", gen);
			dec_append(revs, e);
			if (dl < sizeof(desc))
				dl += (size_t) snprintf(desc + dl, sizeof(desc) - dl, "%s%.*s %" PRIu64,
							line_no == 2 ? "; lowest generations allowed: " : ", ", (int) c1,
							(const char *) line, gen);
		}
	}
	if (line_no == 0)
		return false;
	dec_add(lvl, "revocations", revs);
	dec_add(o, "sbat_level", lvl);
	dec_set_desc(o, "%s%s", desc, line_no > 1 ? "" : " (no revocations)");
	return true;
}

int efi_variable_data_parse(const uint8_t *p, size_t n, efi_variable_data *ret, dec_why *why)
{
	byte_reader r;
	efi_variable_data v = { 0 };

	/* The fixed header is 32 bytes; anything less is not a UEFI_VARIABLE_DATA. */
	reader_init(&r, p, n, 0);
	if (read_bytes(&r, 16, &v.guid) < 0 || read_u64le(&r, &v.name_len) < 0 || read_u64le(&r, &v.data_len) < 0)
		return dec_fail(why, "UEFI_VARIABLE_DATA: %zu bytes, shorter than its 32-byte header", n);
	if (v.name_len > reader_left(&r) / 2)
		return dec_fail(why, "UEFI_VARIABLE_DATA: UnicodeNameLength %" PRIu64 " overruns the event (%zu bytes left)",
				v.name_len, reader_left(&r));
	if (read_bytes(&r, (size_t) v.name_len * 2, &v.name) < 0)
		return dec_fail(why, "UEFI_VARIABLE_DATA: truncated name");
	if (v.data_len > reader_left(&r))
		return dec_fail(why, "UEFI_VARIABLE_DATA: VariableDataLength %" PRIu64 " overruns the event (%zu bytes left)",
				v.data_len, reader_left(&r));
	if (read_bytes(&r, (size_t) v.data_len, &v.data) < 0)
		return dec_fail(why, "UEFI_VARIABLE_DATA: truncated data");
	v.trailing = reader_left(&r);
	*ret = v;
	return 0;
}

/* No NUL counted, as firmware and shim log the name. */
bool efi_variable_data_named(const efi_variable_data *v, const char *name)
{
	size_t i, n = strlen(name);

	if (v->name_len != n)
		return false;
	for (i = 0; i < n; i++)
		if (v->name[2 * i] != (uint8_t) name[i] || v->name[2 * i + 1] != 0)
			return false;
	return true;
}

int dec_efi_variable(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	efi_variable_data v;
	const uint8_t *guid, *vdata;
	uint64_t data_len;
	char *name = NULL, gtext[MB_GUID_STR];
	const char *gname;
	bool global, secdb, shim;
	int rc;

	rc = efi_variable_data_parse(ev->data, ev->data_size, &v, why);
	if (rc < 0)
		return rc;
	guid = v.guid;
	vdata = v.data;
	data_len = v.data_len;
	name = utf16le_to_utf8(v.name, (size_t) v.name_len * 2);
	if (!name)
		return -ENOMEM;

	dec_set_kind(o, "efi_variable");
	dec_add_guid(o, "variable_guid", guid);
	gname = guid_name(guid);
	if (gname)
		dec_add_str(o, "variable_guid_name", gname);
	dec_add_str(o, "name", name);
	dec_add_u64(o, "data_size", data_len);
	if (v.trailing > 0)
		dec_add_u64(o, "trailing_bytes", v.trailing);
	guid_format(guid, gtext);
	global = memcmp(guid, guid_efi_global, 16) == 0;
	secdb = memcmp(guid, guid_image_security_db, 16) == 0;
	shim = memcmp(guid, guid_shim_lock, 16) == 0;
	/* A default line, replaced below where the contents say more. */
	dec_set_desc(o, "%s (%s), %" PRIu64 " bytes", name, gname ? gname : gtext, data_len);

	if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY && shim && data_len == 1 &&
	    (strcmp(name, "MokListTrusted") == 0 || strcmp(name, "MokSBState") == 0 || strcmp(name, "MokPolicy") == 0)) {
		/* shim's one-byte state variables (mok.c), measured into PCR 7. */
		dec_add_u64(o, "value", vdata[0]);
		dec_add_bool(o, "enabled", vdata[0] != 0);
		dec_set_desc(o, "%s = %u", name, vdata[0]);
	} else if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY && shim && strcmp(name, "SbatLevel") == 0 &&
		   sbat_level(vdata, (size_t) data_len, o, name)) {
		/* the CSV text stays under "text" too */
		dec_add_text_or_hex(o, vdata, (size_t) data_len, NULL);
	} else if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY) {
		authority_data(vdata, (size_t) data_len, o, name);
	} else if (global && strcmp(name, "SecureBoot") == 0) {
		if (data_len == 1) {
			dec_add_bool(o, "secure_boot", vdata[0] != 0);
			dec_set_desc(o, "SecureBoot = %s", vdata[0] == 1 ? "enabled" : vdata[0] == 0 ? "disabled" : "invalid");
			if (vdata[0] > 1)
				dec_add_u64(o, "secure_boot_value", vdata[0]);
		} else if (data_len == 0) {
			/* Firmware without Secure Boot support logs the absent variable empty. */
			dec_add_bool(o, "secure_boot", false);
			dec_set_desc(o, "SecureBoot = disabled (variable absent)");
		} else {
			rc = dec_fail(why, "SecureBoot: %" PRIu64 " bytes of data, 1 expected", data_len);
		}
	} else if (global && strcmp(name, "BootOrder") == 0) {
		mb_decoded_node *list = dec_new_array(o);
		char desc[200] = "BootOrder =";
		size_t i, dl = strlen(desc);

		if (!list) {
			rc = -ENOMEM;
		} else if (data_len % 2) {
			rc = dec_fail(why, "BootOrder: odd data length %" PRIu64, data_len);
		} else {
			for (i = 0; i < data_len / 2 && i < MB_DEC_MAX_LIST_ITEMS; i++) {
				char e[12];

				snprintf(e, sizeof(e), "Boot%04X", vdata[2 * i] | vdata[2 * i + 1] << 8);
				dec_append(list, dec_new_strn(list, e, strlen(e)));
				if (dl + 6 < sizeof(desc) - 4)
					dl += (size_t) snprintf(desc + dl, sizeof(desc) - dl, " %s", e + 4);
				else if (dl + 4 < sizeof(desc))
					dl += (size_t) snprintf(desc + dl, sizeof(desc) - dl, " ...");
			}
			dec_add(o, "boot_order", list);
			dec_set_desc(o, "%s", desc);
		}
	} else if (global && is_boot_entry(name) && data_len > 0) {
		rc = load_option(vdata, (size_t) data_len, o, why, name);
	} else if ((global && (strcmp(name, "PK") == 0 || strcmp(name, "KEK") == 0)) ||
		   (secdb && (strcmp(name, "db") == 0 || strcmp(name, "dbx") == 0 || strcmp(name, "dbt") == 0 ||
			      strcmp(name, "dbr") == 0)) ||
		   (shim && (strcmp(name, "MokList") == 0 || strcmp(name, "MokListX") == 0 ||
			     strcmp(name, "MokListTrusted") == 0) && data_len >= EFI_SIGLIST_HEADER)) {
		char summary[400];

		rc = signature_lists(vdata, (size_t) data_len, o, why, summary, sizeof(summary));
		if (rc == 0)
			dec_set_desc(o, "%s: %s", name, data_len ? summary : "empty");
	} else if (data_len > 0) {
		const char *text;

		if (dec_add_text_or_hex(o, vdata, (size_t) data_len, &text))
			dec_set_desc(o, "%s (%s) = \"%.60s\"", name, gname ? gname : gtext, text);
	}
	if (rc < 0 && rc != -ENOMEM && why->text[0] == 0)
		dec_fail(why, "%s: malformed", name);
	free(name);
	return rc;
}
