/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Secure Boot variables in a prediction (MEASUREMENTS.md, PCR 7 and 14).
 *
 * The firmware measures PK, KEK, db, dbx (dbt, dbr) into PCR 7 as EV_EFI_VARIABLE_DRIVER_CONFIG,
 * the digest over the whole UEFI_VARIABLE_DATA (GUID, name length, data length, UTF-16 name,
 * data); the log carries today's value, so an append is today's value plus the new lists.
 * shim measures its SbatLevel the same way as an EV_EFI_VARIABLE_AUTHORITY, and logs the MOK
 * variables into PCR 14 as EV_IPL "NAME\0" with the digest over the contents (rhboot/shim
 * mok.c, mirror_one_mok_variable). An authority event names the db (or MokList) entry that
 * verified a binary: when the new value lacks it, or dbx revokes it, the event is unknown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include <mboot/digest.h>
#include "lib/events/decode-internal.h"
#include "lib/events/event-data.h"
#include "lib/predict/efivar.h"
#include "shared/fail.h"
#include "shared/fileio.h"

#define EFIVAR_MAX_FILE (1u << 22)
#define EV_EFI_VARIABLE_DRIVER_CONFIG 0x80000001u
#define EV_EFI_VARIABLE_AUTHORITY 0x800000E0u
#define EV_IPL 0x0000000Du

/* WIN_CERT_TYPE_EFI_GUID with EFI_CERT_TYPE_PKCS7_GUID (UEFI spec §8.2.2, §32.2.4). */
static const uint8_t guid_cert_pkcs7[16] = {
	0x9d, 0xd2, 0xaf, 0x4a, 0xdf, 0x68, 0xee, 0x49, 0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7 };

static const struct {
	const char *name;
	efivar_kind kind;
	const uint8_t *guid;
	bool esl; /* the value is a sequence of EFI_SIGNATURE_LISTs */
} known_vars[] = {
	{ "PK", EFIVAR_SECDB, guid_efi_global, true },
	{ "KEK", EFIVAR_SECDB, guid_efi_global, true },
	{ "db", EFIVAR_SECDB, guid_image_security_db, true },
	{ "dbx", EFIVAR_SECDB, guid_image_security_db, true },
	{ "dbt", EFIVAR_SECDB, guid_image_security_db, true },
	{ "dbr", EFIVAR_SECDB, guid_image_security_db, true },
	{ "SbatLevel", EFIVAR_SBAT, guid_shim_lock, false },
	{ "MokList", EFIVAR_MOK, guid_shim_lock, true },
	{ "MokListX", EFIVAR_MOK, guid_shim_lock, true },
	{ "MokListTrusted", EFIVAR_MOK, guid_shim_lock, false },
	{ "MokSBState", EFIVAR_MOK, guid_shim_lock, false },
	{ "MokPolicy", EFIVAR_MOK, guid_shim_lock, false },
};

/* The next list of r (lib/events' parser): 1, 0 at the end, or -EINVAL with "what: reason". */
static int esl_next(byte_reader *r, efi_siglist *l, const char *what, mb_error *err)
{
	dec_why why = { "" };
	int rc = efi_siglist_next(r, l, &why);

	if (rc < 0)
		return set_error_at(err, -EINVAL, l->at, "%s: %s", what, why.text);
	return rc;
}

/* The same, offsets in the messages counted from base (the value's place in its file). */
static int efivar_check_esl_at(const uint8_t *data, size_t size, size_t base, const char *what, mb_error *err)
{
	byte_reader r;
	efi_siglist l;
	int rc;

	reader_init(&r, data, size, base);
	while ((rc = esl_next(&r, &l, what, err)) > 0)
		;
	return rc;
}

int efivar_check_esl(const uint8_t *data, size_t size, const char *what, mb_error *err)
{
	return efivar_check_esl_at(data, size, 0, what, err);
}

/*
 * Whether the value holds an entry of n bytes equal to entry (owner GUID + data), in a list of
 * this type (NULL: any; EDK2's duplicate test names one); with any_owner, an entry whose data
 * (after the owner) equals entry's data.
 */
static bool esl_has(const uint8_t *value, size_t size, const uint8_t *type, const uint8_t *entry, size_t n,
		    bool any_owner)
{
	byte_reader r;
	efi_siglist l;
	mb_error err = { 0 };
	size_t i;

	reader_init(&r, value, size, 0);
	while (esl_next(&r, &l, "", &err) > 0) {
		if (l.sig_size != n || n < 16 || (type && memcmp(l.type, type, 16) != 0))
			continue;
		for (i = 0; i < l.count; i++) {
			const uint8_t *e = l.entries + i * l.sig_size;

			if (any_owner ? memcmp(e + 16, entry + 16, n - 16) == 0 : memcmp(e, entry, n) == 0)
				return true;
		}
	}
	return false;
}

static void put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

static void put_u64le(uint8_t *p, uint64_t v)
{
	put_u32le(p, (uint32_t) v);
	put_u32le(p + 4, (uint32_t) (v >> 32));
}

/*
 * An append (EFI_VARIABLE_APPEND_WRITE) of the lists add to today's value: UEFI spec §8.2
 * (SetVariable) says the entries already in the variable are not appended again. Done as EDK2's
 * FilterSignatureList does: an entry is dropped when today's value has a list of the same type
 * and SignatureSize with an identical entry (owner GUID included); a list left without entries
 * is dropped; the others are appended in order with their header. Both values are checked.
 */
int efivar_append(const uint8_t *today, size_t today_size, const uint8_t *add, size_t add_size,
		  uint8_t **ret, size_t *ret_size, size_t *dropped)
{
	uint8_t *out = malloc(today_size + add_size + 1), *p;
	byte_reader r;
	efi_siglist l;
	mb_error err = { 0 };
	size_t i;
	int rc;

	if (!out)
		return -ENOMEM;
	if (today_size)
		memcpy(out, today, today_size);
	p = out + today_size;
	*dropped = 0;
	reader_init(&r, add, add_size, 0);
	while ((rc = esl_next(&r, &l, "", &err)) > 0) {
		uint8_t *list = p;
		size_t kept = 0;

		p += EFI_SIGLIST_HEADER;
		memcpy(p, l.header, l.header_size);
		p += l.header_size;
		for (i = 0; i < l.count; i++) {
			const uint8_t *e = l.entries + i * l.sig_size;

			if (esl_has(today, today_size, l.type, e, l.sig_size, false)) {
				(*dropped)++;
				continue;
			}
			memcpy(p, e, l.sig_size);
			p += l.sig_size;
			kept++;
		}
		if (kept == 0) {
			p = list;
			continue;
		}
		memcpy(list, l.type, 16);
		put_u32le(list + 16, (uint32_t) (p - list));
		put_u32le(list + 20, l.header_size);
		put_u32le(list + 24, l.sig_size);
	}
	if (rc < 0) {
		free(out);
		return rc;
	}
	*ret = out;
	*ret_size = (size_t) (p - out);
	return 0;
}

/*
 * What fwupd and dbxtool apply is an EFI_VARIABLE_AUTHENTICATION_2 (EFI_TIME, then a
 * WIN_CERTIFICATE_UEFI_GUID of type PKCS7 whose dwLength covers itself) before the value. An
 * ESL cannot be taken for one: its bytes 20-23 are SignatureHeaderSize, where the header has
 * wRevision 0x0200 and wCertificateType 0x0EF1. The offset of the value, or -EINVAL.
 */
static int auth2_skip(const uint8_t *data, size_t size, const char *what, size_t *ret, mb_error *err)
{
	byte_reader r;
	uint32_t len;
	uint16_t rev, type;
	const uint8_t *guid;

	*ret = 0;
	reader_init(&r, data, size, 0);
	if (read_skip(&r, 16) < 0 || read_u32le(&r, &len) < 0 || read_u16le(&r, &rev) < 0 || read_u16le(&r, &type) < 0)
		return 0; /* too short for a header: an ESL (checked next) or nothing */
	if (rev != 0x0200 || type != 0x0EF1)
		return 0;
	if (read_bytes(&r, 16, &guid) < 0 || memcmp(guid, guid_cert_pkcs7, 16) != 0)
		return set_error(err, -EINVAL, "%s: EFI_VARIABLE_AUTHENTICATION_2 with a certificate type other than PKCS7", what);
	if (len < 24 || len > size - 16)
		return set_error(err, -EINVAL, "%s: EFI_VARIABLE_AUTHENTICATION_2 dwLength %" PRIu32
				 " is below its header or overruns the file (%zu bytes)", what, len, size);
	*ret = 16 + (size_t) len;
	return 0;
}

int efivar_secdb_value(const uint8_t *file, size_t size, const char *what, size_t *offset, mb_error *err)
{
	int rc = auth2_skip(file, size, what, offset, err);

	return rc < 0 ? rc : efivar_check_esl_at(file + *offset, size - *offset, *offset, what, err);
}

int efivar_plan(const mb_predict_input *in, efivar_set *s, mb_error *err)
{
	size_t i, k, skip;
	int rc;

	memset(s, 0, sizeof(*s));
	if (in->n_efi_vars > EFIVAR_MAX)
		return set_error(err, -EINVAL, "at most %d EFI variables", EFIVAR_MAX);
	for (i = 0; i < in->n_efi_vars; i++) {
		const mb_efi_var_update *u = &in->efi_vars[i];
		efivar_change *c = &s->ch[i];
		uint8_t *bytes = NULL;
		size_t size = 0;

		for (k = 0; k < sizeof(known_vars) / sizeof(known_vars[0]); k++)
			if (u->name && strcmp(u->name, known_vars[k].name) == 0)
				break;
		if (k == sizeof(known_vars) / sizeof(known_vars[0]))
			return set_error(err, -EINVAL, "EFI variable \"%s\": not one mboot predicts (PK, KEK, db, dbx, dbt, dbr, "
					 "SbatLevel, MokList, MokListX, MokListTrusted, MokSBState, MokPolicy)", u->name ? u->name : "");
		if (u->append && known_vars[k].kind != EFIVAR_SECDB)
			return set_error(err, -EINVAL, "EFI variable %s: an append applies to PK, KEK, db, dbx, dbt, dbr only", u->name);
		c->u = u;
		c->kind = known_vars[k].kind;
		c->guid = known_vars[k].guid;
		s->n = i + 1;
		rc = file_read(u->file, EFIVAR_MAX_FILE, &bytes, &size, err);
		if (rc < 0)
			return prefix_error(err, rc, u->file);
		c->content = bytes;
		c->size = size;
		if (c->kind != EFIVAR_SECDB) {
			if (known_vars[k].esl && (rc = efivar_check_esl(c->content, c->size, u->file, err)) < 0)
				return rc;
			continue;
		}
		rc = efivar_secdb_value(bytes, size, u->file, &skip, err);
		if (rc < 0)
			return rc;
		memmove(c->content, c->content + skip, size - skip);
		c->size = size - skip;
		for (k = 0; k < i; k++)
			if (strcmp(s->ch[k].u->name, u->name) == 0)
				return set_error(err, -EINVAL, "EFI variable %s given twice", u->name);
	}
	return 0;
}

void efivar_done(efivar_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->ch[i].content);
		free(s->ch[i].next);
	}
	memset(s, 0, sizeof(*s));
}

void efivar_action_done(efivar_action *a)
{
	free(a->data);
	free(a->unpredictable);
	free(a->changed);
	memset(a, 0, sizeof(*a));
}

static efivar_change *find_change(efivar_set *s, const efi_variable_data *v, efivar_kind kind)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->ch[i].kind == kind && memcmp(v->guid, s->ch[i].guid, 16) == 0 &&
		    efi_variable_data_named(v, s->ch[i].u->name))
			return &s->ch[i];
	return NULL;
}

static efivar_change *find_by_name(efivar_set *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->ch[i].u->name, name) == 0)
			return &s->ch[i];
	return NULL;
}

/* Today's digests are H(event data) in every bank mboot computes, or how this firmware hashes is unknown. */
static bool hashes_to_digests(const mb_event *ev)
{
	uint8_t d[MB_DIGEST_MAX];
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++) {
		if (!mb_digest_by_alg(ev->digests[i].alg))
			continue;
		if (mb_digest(ev->digests[i].alg, ev->data, ev->data_size, d) < 0 || memcmp(d, ev->digests[i].bytes, ev->digests[i].size) != 0)
			return false;
	}
	return true;
}

static int say(char **where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int say(char **where, const char *fmt, ...)
{
	va_list ap;
	int n;

	free(*where);
	va_start(ap, fmt);
	n = vasprintf(where, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*where = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* A new UEFI_VARIABLE_DATA: today's GUID and name, the next value. */
static int rebuild_var(const efi_variable_data *v, const uint8_t *value, size_t size, efivar_action *a)
{
	size_t name_bytes = (size_t) v->name_len * 2, n = 32 + name_bytes + size;
	uint8_t *p = malloc(n ? n : 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, v->guid, 16);
	put_u64le(p + 16, v->name_len);
	put_u64le(p + 24, size);
	memcpy(p + 32, v->name, name_bytes);
	if (size)
		memcpy(p + 32 + name_bytes, value, size);
	a->rewrite = true;
	a->data = p;
	a->data_size = n;
	a->hashed = p;
	a->hashed_size = n;
	return 0;
}

static int driver_config(efivar_set *s, const mb_event *ev, const efi_variable_data *v, efivar_action *a)
{
	efivar_change *c = find_change(s, v, EFIVAR_SECDB);
	mb_error err = { 0 };
	size_t dropped = 0;
	int rc;

	if (!c || c->matched)
		return 0;
	c->matched = true;
	if (v->trailing > 0 || !hashes_to_digests(ev))
		return say(&a->unpredictable, "event %u (%s): today's event does not hash to its digest as a "
			   "UEFI_VARIABLE_DATA, so how this firmware measures it is unknown", ev->number, c->u->name);
	if (c->u->append) {
		if (efivar_check_esl(v->data, (size_t) v->data_len, c->u->name, &err) < 0)
			return say(&a->unpredictable, "event %u: today's %s is not a well-formed signature list (%s): what "
				   "an append makes of it is unknown", ev->number, c->u->name, err.message);
		rc = efivar_append(v->data, (size_t) v->data_len, c->content, c->size, &c->next, &c->next_size, &dropped);
		if (rc < 0)
			return rc;
	} else {
		c->next = malloc(c->size ? c->size : 1);
		if (!c->next)
			return -ENOMEM;
		if (c->size)
			memcpy(c->next, c->content, c->size);
		c->next_size = c->size;
	}
	c->have_next = true;
	if (strcmp(c->u->name, "PK") == 0 && c->next_size == 0)
		return say(&a->unpredictable, "event %u: PK deleted: the firmware enters setup mode and SecureBoot changes, "
			   "which mboot does not compute", ev->number);
	rc = rebuild_var(v, c->next, c->next_size, a);
	if (rc == 0 && dropped)
		rc = say(&a->changed, "%s (%s; %zu entries already there not appended again, as UEFI SetVariable says)",
			 c->u->name, "appended", dropped);
	else if (rc == 0)
		rc = say(&a->changed, "%s (%s)", c->u->name, c->u->append ? "appended" : "replaced");
	return rc;
}

/* A subject for messages: the certificate of an EFI_SIGNATURE_DATA, or its size. */
static void entry_name(const uint8_t *p, size_t n, char *buf, size_t size)
{
	snprintf(buf, size, "a %zu-byte entry", n);
	if (n > 16 + 4 && p[16] == 0x30) {
		const unsigned char *der = p + 16;
		X509 *x = d2i_X509(NULL, &der, (long) (n - 16));

		if (x) {
			X509_NAME_oneline(X509_get_subject_name(x), buf, (int) size);
			X509_free(x);
		}
	}
}

static int authority(efivar_set *s, const mb_event *ev, const efi_variable_data *v, efivar_action *a)
{
	efivar_change *c, *dbx = find_by_name(s, "dbx");
	char who[256];

	if ((c = find_change(s, v, EFIVAR_SBAT)) && !c->matched) {
		c->matched = true;
		if (v->trailing > 0 || !hashes_to_digests(ev))
			return say(&a->unpredictable, "event %u (SbatLevel): today's event does not hash to its digest as a "
				   "UEFI_VARIABLE_DATA, so how this shim measures it is unknown", ev->number);
		if (rebuild_var(v, c->content, c->size, a) < 0 || say(&a->changed, "SbatLevel") < 0)
			return -ENOMEM;
		return 0;
	}
	if (v->data_len < 16)
		return 0;
	entry_name(v->data, (size_t) v->data_len, who, sizeof(who));
	/* The firmware (or shim) found the binary's signer in db; appended entries come after it,
	 * and a new entry is assumed not to verify what today's boot verified (docs/predict.md). */
	if (memcmp(v->guid, guid_image_security_db, 16) == 0 && efi_variable_data_named(v, "db") &&
	    (c = find_by_name(s, "db")) && c->have_next && !esl_has(c->next, c->next_size, NULL, v->data, (size_t) v->data_len, false))
		return say(&a->unpredictable, "event %u: the db entry that verified a boot binary (%s) is not in the new db: "
			   "which entry verifies it next boot, and whether it boots, is unknown", ev->number, who);
	if (memcmp(v->guid, guid_shim_lock, 16) == 0 &&
	    (efi_variable_data_named(v, "MokList") || efi_variable_data_named(v, "MokListRT")) &&
	    (c = find_by_name(s, "MokList")) && !esl_has(c->content, c->size, NULL, v->data, (size_t) v->data_len, false))
		return say(&a->unpredictable, "event %u: the MokList entry that verified a boot binary (%s) is not in the new "
			   "MokList: which key verifies it next boot is unknown", ev->number, who);
	if (dbx && dbx->have_next && esl_has(dbx->next, dbx->next_size, NULL, v->data, (size_t) v->data_len, true))
		return say(&a->unpredictable, "event %u: the new dbx revokes the certificate that verified a boot binary (%s): "
			   "that binary will not boot", ev->number, who);
	return 0;
}

char *efivar_revoked_app(const efivar_set *s, const mb_event *ev)
{
	const mb_event_digest *d = mb_event_digest_for(ev, MB_ALG_SHA256);
	uint8_t entry[16 + 32] = { 0 };
	char *why = NULL;
	size_t i;

	if (!d || d->size != 32)
		return NULL;
	memcpy(entry + 16, d->bytes, 32);
	for (i = 0; i < s->n; i++) {
		const efivar_change *c = &s->ch[i];

		/* an Authenticode hash in dbx: the firmware (and shim) refuse the image */
		if (c->have_next && strcmp(c->u->name, "dbx") == 0 &&
		    esl_has(c->next, c->next_size, NULL, entry, sizeof(entry), true) &&
		    asprintf(&why, "event %u: the new dbx holds this EFI application's Authenticode SHA-256: it will not boot",
			     ev->number) < 0)
			why = NULL;
	}
	return why;
}

int efivar_event(efivar_set *s, const mb_event *ev, efivar_action *a)
{
	efi_variable_data v;
	size_t i;

	memset(a, 0, sizeof(*a));
	if (s->n == 0)
		return 0;
	if (ev->pcr == 14 && ev->type == EV_IPL) {
		for (i = 0; i < s->n; i++) {
			efivar_change *c = &s->ch[i];
			size_t n = strlen(c->u->name);

			if (c->kind != EFIVAR_MOK || c->matched)
				continue;
			/* shim logs the name with its NUL (tpm_log_event: strlen + 1) */
			if ((ev->data_size == n + 1 && ev->data[n] == 0 && memcmp(ev->data, c->u->name, n) == 0) ||
			    (ev->data_size == n && memcmp(ev->data, c->u->name, n) == 0)) {
				c->matched = true;
				a->rewrite = true;
				a->hashed = c->content;
				a->hashed_size = c->size;
				return say(&a->changed, "%s", c->u->name);
			}
		}
		return 0;
	}
	if (ev->pcr != 7 || efi_variable_data_parse(ev->data, ev->data_size, &v, NULL) < 0)
		return 0;
	if (ev->type == EV_EFI_VARIABLE_DRIVER_CONFIG)
		return driver_config(s, ev, &v, a);
	if (ev->type == EV_EFI_VARIABLE_AUTHORITY)
		return authority(s, ev, &v, a);
	return 0;
}
