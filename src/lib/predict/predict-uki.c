/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A new UKI (--uki): its sections as systemd-stub measures them into PCR 11, its Authenticode
 * digest in place of the PCR 4 application systemd-boot had the firmware measure, and the Linux
 * EFI stub's initrd tag (PCR 9) when it is the .initrd section.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/pe.h>
#include <mboot/policy.h>
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"

/* The device path systemd-stub gives the kernel it starts from .linux (LoadImage from memory),
 * as the event decoder writes it. */
#define STUB_KERNEL_PATH "VenMedia(55c5d1f8-04cd-46b5-8a20-e56cbb3052d0)"

static bool is_stub_kernel(predict_ctx *c, const mb_event *ev)
{
	mb_event_decoded *d = mb_event_decoded_new();
	const char *path = NULL;
	bool yes;

	if (d && mb_event_decode(c->in->log, ev, d) == 0)
		path = mb_decoded_string(mb_decoded_get(mb_event_decoded_root(d), "device_path"));
	yes = path && strcmp(path, STUB_KERNEL_PATH) == 0;
	mb_event_decoded_free(d);
	return yes;
}

/* text (ASCII) as systemd-stub logs its strings: UTF-16LE with the NUL; the bytes written. */
static size_t ascii_utf16(const char *text, uint8_t *out, size_t max)
{
	size_t n = strlen(text) + 1;

	if (2 * n > max)
		n = max / 2;
	for (size_t j = 0; j < n; j++) {
		out[2 * j] = (uint8_t) text[j];
		out[2 * j + 1] = 0;
	}
	return 2 * n;
}

/* The new drop-in folder: the archive of its system extensions, hashed in every bank (PCR 13). */
static int plan_dropins(predict_ctx *c, mb_error *err)
{
	uint8_t *cpio = NULL;
	size_t size = 0;
	int rc = mb_uki_dropin_dir_cpio(c->in->boot->uki_extra_dir, MB_UKI_DROPIN_SYSEXTS, &cpio, &size, err);

	c->uki_extra = true;
	c->uki_sysext.have = rc >= 0 && cpio;
	if (rc >= 0)
		rc = mb_uki_dropin_appended(c->in->boot->uki_extra_dir, &c->uki_appended, err);
	c->uki_creds = c->uki_appended & (1u << MB_UKI_DROPIN_CREDENTIALS);
	for (size_t b = 0; rc >= 0 && cpio && b < c->n_banks; b++)
		if (mb_digest_by_alg(c->banks[b].alg))
			rc = mb_digest(c->banks[b].alg, cpio, size, c->uki_sysext.d[b]);
	free(cpio);
	return rc;
}

/* The new UKI's digests in every bank of the log mboot computes: the PCR 11 events (name, bytes
 * of each section) and its Authenticode digest (PCR 4). */
int pred_plan_uki(predict_ctx *c, mb_error *err)
{
	const char *path = c->in->boot->uki;
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL;
	size_t size = 0, b, k;
	char *why = NULL;
	int rc = mb_pe_read_file(path, &buf, &size, err);

	c->uki_today_efi = -1;
	if (rc >= 0)
		rc = mb_pe_parse(buf, size, 0, &pe, err);
	if (rc >= 0)
		rc = mb_uki_sections(pe, secs, &c->n_uki, err);
	c->uki_initrd = -1;
	for (k = 0; rc >= 0 && k < c->n_uki; k++) {
		c->uki_names[k] = secs[k].name;
		if (strcmp(secs[k].name, ".initrd") == 0)
			c->uki_initrd = (int) k;
		c->uki_name_d[k].have = c->uki_content_d[k].have = true;
	}
	for (b = 0; rc >= 0 && b < c->n_banks; b++) {
		uint16_t alg = c->banks[b].alg;

		if (!mb_digest_by_alg(alg))
			continue; /* pred_write_event says so at each event of that bank */
		rc = mb_pe_hash(pe, buf, size, alg, c->uki_app.d[b]);
		for (k = 0; rc >= 0 && k < c->n_uki; k++)
			rc = mb_uki_section_digests(&secs[k], buf, size, alg, c->uki_name_d[k].d[b], c->uki_content_d[k].d[b]);
		if (rc < 0)
			rc = set_error(err, rc, "hashing: %s", mb_strerror(rc));
	}
	c->uki_app.have = rc >= 0;
	/* its command line, as systemd-boot will pass it (PCR 12, the kernel's LoadOptions tag) */
	if (rc >= 0 && pred_uki_cmdline(c, secs, c->n_uki, buf, size, &c->cmd_new, &why) < 0)
		rc = set_error(err, -ENOMEM, "out of memory");
	if (why && asprintf(&c->cmd_why, "the new UKI's .cmdline: %s", why) < 0)
		c->cmd_why = NULL;
	free(why);
	/* the kernel systemd-stub starts: .linux (first of the stub's order) as an image of its own */
	if (rc >= 0) {
		mb_pe_info *kpe = NULL;
		const uint8_t *kimg = buf + secs[0].raw_offset;

		/* a .linux that is not a PE image (no EFI stub) starts no application: not an error
		 * here, and a kernel event after the UKI is then unpredictable */
		int krc = mb_pe_parse(kimg, secs[0].size, 0, &kpe, NULL);

		for (b = 0; krc >= 0 && b < c->n_banks; b++)
			if (mb_digest_by_alg(c->banks[b].alg))
				krc = mb_pe_hash(kpe, kimg, secs[0].size, c->banks[b].alg, c->uki_kernel_app.d[b]);
		c->uki_kernel_app.have = krc >= 0;
		mb_pe_info_free(kpe);
	}
	free(buf);
	mb_pe_info_free(pe);
	if (rc < 0)
		return prefix_error(err, rc, path);
	return c->in->boot->uki_extra_dir ? plan_dropins(c, err) : 0;
}

/* A PCR 4 application after today's UKI: the kernel systemd-stub started from .linux gets the new
 * .linux's digest; anything else was loaded by what mboot does not model. */
int pred_walk_uki_app(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	if (!c->uki_kernel_written && c->uki_kernel_app.have && is_stub_kernel(c, ev)) {
		c->uki_kernel_written = true;
		pred_note(c, 4, false, "the kernel systemd-stub started from the UKI's .linux (its Authenticode digest)");
		return pred_write_event(c, w, ev, &c->uki_kernel_app, NULL, 0, NULL, 0);
	}
	pred_note(c, 4, true, "event %u: an EFI application started after the UKI, which mboot does not compute",
		  ev->number);
	return mb_log_writer_add_event(w, ev);
}

/* "System extension initrd" as systemd-stub logs it. */
static size_t sysext_text(uint8_t *out, size_t max)
{
	return ascii_utf16(mb_uki_dropin_description(MB_UKI_DROPIN_SYSEXTS), out, max);
}

static bool is_sysext_event(const mb_event *ev)
{
	uint8_t text[64];
	size_t n = sysext_text(text, sizeof(text));

	return ev->type == MB_EV_IPL && ev->data_size == n && memcmp(ev->data, text, n) == 0;
}

/* Today's PCR 13 events with the new drop-ins: the stub's archive event is replaced by the new
 * archive's (or dropped when there are no system extensions); any other PCR 13 event is not
 * the stub's, and PCR 13 is then unknown. */
int pred_walk_uki_sysext(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	if (!is_sysext_event(ev) || c->uki_sysext_written) {
		pred_note(c, 13, true, "event %u: a PCR 13 event that is not systemd-stub's one archive of system "
			  "extensions, which mboot does not compute", ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	return pred_finish_uki_sysext(c, w);
}

/* The new archive's event where today's was, or at the end of a log that had none. */
int pred_finish_uki_sysext(predict_ctx *c, mb_log_writer *w)
{
	const mb_event *tmpl = NULL;
	uint8_t text[64];
	size_t n = sysext_text(text, sizeof(text));

	if (c->uki_sysext_written || !c->uki_extra)
		return 0;
	c->uki_sysext_written = true;
	if (!c->uki_sysext.have) {
		pred_note(c, 13, false, "no system extension in the new drop-in folder: systemd-stub measures nothing");
		return 0;
	}
	/* any event with every bank of the log gives the new one its digest layout */
	for (size_t i = 0; !tmpl && i < mb_event_log_count(c->in->log); i++) {
		const mb_event *ev = mb_event_log_event(c->in->log, i);

		if (!ev->sha1_format && ev->n_digests == c->n_banks)
			tmpl = ev;
	}
	if (!tmpl) {
		pred_note(c, 13, true, "no event of today's log has every bank to model the new one on");
		return 0;
	}
	mb_event e = *tmpl;

	e.pcr = 13;
	e.type = MB_EV_IPL;
	pred_note(c, 13, false, "systemd-stub's archive of the system extensions in the new drop-in folder");
	return pred_write_event(c, w, &e, &c->uki_sysext, NULL, 0, text, n);
}

/* An EV_IPL of PCR 11 whose UTF-16 text is name and whose digest is not H(name NUL): the
 * content event of that section. */
static bool is_section_content(predict_ctx *c, const mb_event *ev, const char *name)
{
	char *text = mb_event_text(ev);
	bool same = text && strcmp(text, name) == 0;
	uint8_t d[MB_DIGEST_MAX];

	free(text);
	if (!same || !ev->n_digests || mb_digest(ev->digests[0].alg, name, strlen(name) + 1, d) < 0)
		return false;
	(void) c;
	return memcmp(d, ev->digests[0].bytes, ev->digests[0].size) != 0;
}

/* Today's UKI: the last PCR 4 application before systemd-stub's first PCR 11 event (systemd-boot
 * had the firmware load it), and today's .initrd content digests. */
void pred_find_today_uki(predict_ctx *c)
{
	size_t i, n = mb_event_log_count(c->in->log);

	c->uki_app_event = c->uki_first_pcr11 = SIZE_MAX;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(c->in->log, i);

		if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION && c->uki_first_pcr11 == SIZE_MAX)
			c->uki_app_event = i;
		if (ev->pcr != 11 || ev->type != MB_EV_IPL)
			continue;
		if (c->uki_first_pcr11 == SIZE_MAX)
			c->uki_first_pcr11 = i;
		if (!c->today_initrd.have && is_section_content(c, ev, ".initrd")) {
			for (uint32_t j = 0; j < ev->n_digests; j++) {
				int b = pred_bank_index(c, ev->digests[j].alg);

				if (b >= 0)
					memcpy(c->today_initrd.d[b], ev->digests[j].bytes, ev->digests[j].size);
			}
			c->today_initrd.have = true;
		}
	}
	if (c->uki_first_pcr11 != SIZE_MAX && c->uki_app_event != SIZE_MAX)
		c->matched |= MB_PREDICT_UKI;
}
/* systemd-stub's PCR 11 events for the new UKI, in place of today's (tmpl: today's first, for
 * the banks and the event type): per section its name, then its bytes; each event's data is the
 * section name in UTF-16 with its NUL, as the stub logs it. */
int pred_write_uki_events(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl)
{
	uint8_t data[2 * 16];
	int rc = 0;

	for (size_t k = 0; k < c->n_uki && rc == 0; k++) {
		size_t n = ascii_utf16(c->uki_names[k], data, sizeof(data));

		rc = pred_write_event(c, w, tmpl, &c->uki_name_d[k], NULL, 0, data, n);
		if (rc == 0)
			rc = pred_write_event(c, w, tmpl, &c->uki_content_d[k], NULL, 0, data, n);
	}
	pred_note(c, 11, false, "the UKI's sections as systemd-stub measures them (the value when it starts the kernel; "
		  "systemd-pcrphase's boot phases come later and are not included)");
	return rc;
}

/* The Linux EFI stub's initrd tag (PCR 9) on a UKI boot: the initrd systemd-stub passed it. It is
 * the .initrd section when today's tag has today's .initrd digest (no credentials or system
 * extensions were appended); anything else is not computed. */
int pred_walk_uki_initrd_tag(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	const mb_event_digest *d = ev->n_digests ? &ev->digests[0] : NULL;
	int b = d ? pred_bank_index(c, d->alg) : -1;

	c->uki_initrd_tag = true;
	if (!c->today_initrd.have || b < 0 || memcmp(c->today_initrd.d[b], d->bytes, d->size) != 0) {
		pred_note(c, 9, true, "event %u: the kernel's EFI stub tagged an initrd that is not today's .initrd section "
			  "alone (systemd-stub appends credentials and system extensions), which mboot does not compute",
			  ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	if (c->uki_appended) {
		pred_note(c, 9, true, "event %u: systemd-stub appends the archives of the new drop-in folder's %s to the "
			  "initrd the kernel's EFI stub tags, which mboot does not compute", ev->number,
			  (c->uki_appended & (1u << MB_UKI_DROPIN_SYSEXTS)) && c->uki_creds ? "system extensions and credentials" :
			  c->uki_creds ? "credentials" : "system extensions");
		return mb_log_writer_add_event(w, ev);
	}
	if (c->uki_initrd < 0) {
		pred_note(c, 9, true, "event %u: the kernel's EFI stub tagged today's .initrd; the new UKI has none", ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	pred_note(c, 9, false, "the kernel's EFI stub's initrd tag (the UKI's .initrd)");
	return pred_write_event(c, w, ev, &c->uki_content_d[c->uki_initrd], NULL, 0, NULL, 0);
}
