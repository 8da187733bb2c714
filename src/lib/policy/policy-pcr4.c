/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCR 4 of a policy from release artifacts: the EFI applications (shim, GRUB, systemd-boot; the
 * kernel shim verifies for GRUB, a UKI), each by its PE/COFF Authenticode digest, as often as
 * the chain measures it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include <mboot/policy.h>
#include "lib/grub/grub.h"
#include "policy-build.h"
#include "shared/fail.h"
#include "shared/hex.h"

/*
 * How many times the chain measured the kernel into PCR 4: the EV_EFI_BOOT_SERVICES_APPLICATION
 * events after GRUB's command that loads it (PCR 8). Under Secure Boot GRUB has shim verify the
 * kernel, and shim measures it by its Authenticode digest (Debian's GRUB twice: its shim_lock
 * verifier when it opens the file, and linuxefi before the hand-over); without shim, none.
 */
size_t policy_kernel_apps(const mb_event_log *log, const mb_event **ret)
{
	size_t i, n = mb_event_log_count(log), count = 0;
	bool after = false;

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (ev->pcr == 8 && grub_event_kind_of(ev) == GRUB_EVENT_LINUX) {
			after = true;
		} else if (after && ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION) {
			if (ret)
				ret[count] = ev;
			count++;
		}
	}
	return count;
}

typedef struct kernel_events {
	const mb_event **ev;
	size_t n;
} kernel_events;

static bool skip_kernel_app(const mb_event *ev, void *ud)
{
	const kernel_events *k = ud;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (k->ev[i] == ev)
			return true;
	return false;
}

/* {"sha256": "<hex>", ...}: a PE image's Authenticode digests in the policy's banks. */
int policy_app_digests(const char *path, const uint16_t *algs, size_t n_algs, json_t **ret, mb_error *err)
{
	uint8_t d[MB_MAX_BANKS][MB_DIGEST_MAX];
	json_t *ds;
	size_t i;
	int rc = mb_pe_authenticode_file(path, 0, algs, n_algs, d, err);

	if (rc < 0)
		return prefix_error(err, rc, path);
	ds = json_object();
	for (i = 0; ds && i < n_algs; i++) {
		const mb_digest_info *info = mb_digest_by_alg(algs[i]);
		char hex[2 * MB_DIGEST_MAX + 1];

		json_object_set_new(ds, info->name, json_text(hex_format(d[i], info->size, hex)));
	}
	*ret = ds;
	return ds ? 0 : set_error(err, -ENOMEM, "out of memory");
}


/* xr's rule in r4 (xr->digests given away): required, at most xr->max times. An --efi naming
 * the same binary (the same digests) is that one rule, with xr's max: the counts of the two do
 * not add up, since it is one image the chain measures xr->max times. */
static int add_app_rule(json_t *r4, policy_app_rule *xr, mb_error *err)
{
	json_t *rule = policy_find_rule(r4, "EV_EFI_BOOT_SERVICES_APPLICATION", NULL, xr->digests);

	if (rule)
		json_decref(xr->digests);
	else if (policy_add_rule(r4, "EV_EFI_BOOT_SERVICES_APPLICATION", NULL, xr->digests, xr->what, true) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	else
		rule = json_array_get(r4, json_array_size(r4) - 1);
	xr->digests = NULL;
	json_object_set_new(rule, "required", json_boolean(true));
	json_object_set_new(rule, "max", json_integer(xr->max));
	return 0;
}

/* PCR 4 rules: the firmware's boot-manager action, the separator, each --efi application and
 * the booted image's (add_app_rule; xr NULL or its digests NULL: none). */
int policy_pcr4_rules(json_t *jp, const mb_policy_artifacts *a, const uint16_t *algs, size_t n_algs,
		      policy_app_rule *xr, mb_error *err)
{
	json_t *extra = xr ? xr->digests : NULL;

	json_t *r4 = policy_pcr_entry(jp, 4, "rules");
	static const uint8_t sep[4];
	size_t i;
	int rc = 0;

	if (!r4 || policy_add_rule(r4, "EV_EFI_ACTION", "Calling EFI Application from Boot Option", NULL,
				   "the firmware's boot-manager action", false) < 0) {
		json_decref(extra);
		return set_error(err, -ENOMEM, "out of memory");
	}
	{
		json_t *ds = json_object();

		for (i = 0; ds && i < n_algs; i++) {
			uint8_t d[MB_DIGEST_MAX];
			char hex[2 * MB_DIGEST_MAX + 1];
			const mb_digest_info *info = mb_digest_by_alg(algs[i]);

			/* the banks are known ones (policy_banks): only memory can fail here */
			if (mb_digest(algs[i], sep, 4, d) < 0) {
				json_decref(ds);
				ds = NULL;
				break;
			}
			json_object_set_new(ds, info->name, json_text(hex_format(d, info->size, hex)));
		}
		if (!ds || policy_add_rule(r4, "EV_SEPARATOR", NULL, ds, "separator 00000000 (success)", true) < 0) {
			json_decref(extra);
			return set_error(err, -ENOMEM, "out of memory");
		}
	}
	for (i = 0; i < a->boot->n_efi; i++) {
		json_t *ds = json_object();
		size_t k;

		if (!ds) {
			json_decref(extra);
			return set_error(err, -ENOMEM, "out of memory");
		}
		for (k = 0; k < a->boot->efi[i].n; k++) {
			const mb_digest_info *info = mb_digest_by_alg(a->boot->efi[i].algs[k]);
			char hex[2 * MB_DIGEST_MAX + 1];

			if (info)
				json_object_set_new(ds, info->name,
						       json_text(hex_format(a->boot->efi[i].digest[k], info->size, hex)));
		}
		if (policy_add_rule(r4, "EV_EFI_BOOT_SERVICES_APPLICATION", NULL, ds, a->boot->efi[i].description, true) < 0) {
			json_decref(extra);
			return set_error(err, -ENOMEM, "out of memory");
		}
	}
	return extra ? add_app_rule(r4, xr, err) : rc;
}

/*
 * PCR 4 from a known-good log whose chain measured the kernel (no --efi): the log's events as
 * rules (the boot-manager action, the separator, shim and GRUB by digest), less its kernel's,
 * and the new kernel's rule (xr). A value would hold the log's kernel.
 */
int policy_pcr4_from_log(json_t *jp, const mb_event_log *log, policy_app_rule *xr, mb_error *err)
{
	json_t *r4 = policy_pcr_entry(jp, 4, "rules");
	kernel_events k = { calloc((size_t) xr->max, sizeof(*k.ev)), 0 };
	int rc;

	if (!r4 || !k.ev) {
		free(k.ev);
		json_decref(xr->digests);
		return set_error(err, -ENOMEM, "out of memory");
	}
	k.n = policy_kernel_apps(log, k.ev);
	rc = policy_rules_from_log(r4, log, 4, skip_kernel_app, &k, true);
	free(k.ev);
	if (rc < 0) {
		json_decref(xr->digests);
		return set_error(err, rc, "out of memory");
	}
	return add_app_rule(r4, xr, err);
}
