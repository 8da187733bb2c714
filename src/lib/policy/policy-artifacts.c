/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A policy from release artifacts (the kernel, initrd and GRUB config a release ships), with
 * the firmware part and GRUB's other commands carried over from a known-good log.
 * What GRUB 2's tpm module measures (MEASUREMENTS.md §2): every command into PCR 8 as
 * argv joined by spaces, the kernel command line as path + arguments (each under its label,
 * src/lib/grub), and every file it reads into PCR 9 (H(file)); the EFI stub tags the initrd it
 * loads through LoadFile2 (EV_EVENT_TAG, H(initrd)).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include <mboot/policy.h>
#include "lib/grub/grub.h"
#include "policy-build.h"
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/options.h"

/* A word as a regular expression: literal text, with $name and ${name} matching any word part. */
static char *word_regex(const char *w)
{
	size_t n = strlen(w), i, o = 0;
	char *out = malloc(6 * n + 1);

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (w[i] == '$' && i + 1 < n && (w[i + 1] == '{' || isalnum((unsigned char) w[i + 1]) || w[i + 1] == '_')) {
			if (w[i + 1] == '{') {
				const char *close = strchr(w + i, '}');
				i = close ? (size_t) (close - w) : n - 1;
			} else {
				while (i + 1 < n && (isalnum((unsigned char) w[i + 1]) || w[i + 1] == '_'))
					i++;
			}
			memcpy(out + o, "[^ ]*", 5);
			o += 5;
			continue;
		}
		if (strchr("\\^$.|?*+()[]{}", w[i]))
			out[o++] = '\\';
		out[o++] = w[i];
	}
	out[o] = 0;
	return out;
}

/* Words [from, n) as regular expressions joined by single spaces (GRUB joins argv so). */
static char *join_regex(const grub_words *ws, size_t from)
{
	size_t i, len = 1;
	char *out, **parts = calloc(ws->n + 1, sizeof(*parts));

	if (!parts)
		return NULL;
	for (i = from; i < ws->n; i++) {
		parts[i] = word_regex(ws->w[i]);
		if (!parts[i])
			goto fail;
		len += strlen(parts[i]) + 1;
	}
	out = malloc(len);
	if (!out)
		goto fail;
	len = 0;
	for (i = from; i < ws->n; i++) {
		size_t k = strlen(parts[i]);

		if (i > from)
			out[len++] = ' ';
		memcpy(out + len, parts[i], k);
		len += k;
	}
	out[len] = 0;
	for (i = from; i < ws->n; i++)
		free(parts[i]);
	free(parts);
	return out;
fail:
	for (i = from; i < ws->n; i++)
		free(parts[i]);
	free(parts);
	return NULL;
}

/* Banks the policy speaks for: the log's known banks, or all four a TPM 2.0 may have. */
static size_t policy_banks(const mb_event_log *log, uint16_t *algs)
{
	static const uint16_t all[] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384, MB_ALG_SHA512 };
	size_t n = 0, i;

	if (log) {
		const mb_spec_id_alg *banks;
		size_t nb = mb_event_log_banks(log, &banks);

		for (i = 0; i < nb; i++)
			if (mb_digest_by_alg(banks[i].alg))
				algs[n++] = banks[i].alg;
		if (n)
			return n;
	}
	memcpy(algs, all, sizeof(all));
	return 4;
}

/* {"sha1": "<hex>", ...} of n digests, or NULL when out of memory or of an unknown bank. */
static json_t *digests_json(const mb_event_digest *d, size_t n)
{
	json_t *ds = json_object();
	size_t i;

	for (i = 0; ds && i < n; i++) {
		const mb_digest_info *info = mb_digest_by_alg(d[i].alg);
		char hex[2 * MB_DIGEST_MAX + 1];

		if (!info || d[i].size != info->size) {
			json_decref(ds);
			return NULL;
		}
		json_object_set_new(ds, info->name, json_text(hex_format(d[i].bytes, info->size, hex)));
	}
	return ds;
}

/* A digest rule for the file path (what: its role), its digests given. */
static int digest_rule(json_t *rules, const char *type, const char *path, const mb_event_digest *d, size_t n,
		       const char *what, bool required, mb_error *err)
{
	json_t *ds = digests_json(d, n);
	char desc[512];
	const char *base = strrchr(path, '/');
	int rc;

	if (!ds)
		return set_error(err, -ENOMEM, "out of memory");
	snprintf(desc, sizeof(desc), "%s %s", what, base ? base + 1 : path);
	rc = policy_add_rule(rules, type, NULL, ds, desc, required);
	return rc < 0 ? set_error(err, rc, "out of memory") : 0;
}

static int file_rule(json_t *rules, const char *type, const char *path, const uint16_t *algs, size_t n,
		     const char *what, bool required, mb_error *err)
{
	uint8_t d[MB_MAX_BANKS][MB_DIGEST_MAX];
	mb_event_digest ed[MB_MAX_BANKS];
	size_t i;
	int rc = mb_digest_file(path, algs, n, d, err);

	if (rc < 0)
		return prefix_error(err, rc, path);
	for (i = 0; i < n; i++)
		ed[i] = (mb_event_digest) { .alg = algs[i], .size = (uint16_t) mb_digest_by_alg(algs[i])->size, .bytes = d[i] };
	return digest_rule(rules, type, path, ed, n, what, required, err);
}

int mb_policy_generate_initrd(const char *name, const mb_event_digest *digests, size_t n_digests, char **ret_json,
			      mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *pcrs, *r9, *root;
	int rc;

	*ret_json = NULL;
	if (n_digests == 0 || n_digests > MB_MAX_BANKS)
		return set_error(err, -EINVAL, "an initrd rule needs from 1 to %d digests", MB_MAX_BANKS);
	for (size_t i = 0; i < n_digests; i++)
		if (!mb_digest_by_alg(digests[i].alg) || mb_digest_by_alg(digests[i].alg)->size != digests[i].size)
			return set_error(err, -EINVAL, "digest %zu: algorithm 0x%04x of %u bytes unknown", i,
					 digests[i].alg, digests[i].size);
	root = policy_root_new("mboot initramfs pack --policy-rule", "mboot initramfs pack --policy-rule", &pcrs);
	r9 = root ? policy_pcr_entry(pcrs, 9, "rules") : NULL;
	if (!r9) {
		json_decref(root);
		return set_error(err, -ENOMEM, "out of memory");
	}
	if ((rc = digest_rule(r9, "EV_IPL", name, digests, n_digests, "initrd", true, err)) < 0 ||
	    (rc = digest_rule(r9, "EV_EVENT_TAG", name, digests, n_digests, "Linux initrd (EFI stub tag)", false, err)) < 0) {
		json_decref(root);
		return rc;
	}
	*ret_json = policy_to_string(root, mark);
	json_decref(root);
	return *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
}

/* Which log events the artifacts replace. */
typedef struct carry_ctx {
	grub_words log_paths; /* files the log's own linux/initrd commands loaded */
	grub_words configs;   /* the measured paths of the configs given; none given: every config */
	json_t *r8, *r9; /* the rules of PCR 8 and 9 the log's other events join */
} carry_ctx;

static bool skip_pcr8(const mb_event *ev, void *ud)
{
	(void) ud;
	return grub_event_kind_of(ev) != GRUB_EVENT_NONE;
}

static bool ends_with(const uint8_t *data, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	while (n > 0 && data[n - 1] == 0)
		n--;
	return n >= k && memcmp(data + n - k, suffix, k) == 0;
}

static bool skip_pcr9(const mb_event *ev, void *ud)
{
	const carry_ctx *c = ud;
	size_t i;
	char *path;
	bool config;

	if (ev->type == MB_EV_EVENT_TAG)
		return true; /* the stub's initrd tag: replaced by the artifact's */
	if (ev->type != MB_EV_IPL)
		return false;
	path = grub_file_event_path(ev);
	config = path && (c->configs.n ? false : grub_is_config_path(path));
	for (i = 0; path && i < c->configs.n && !config; i++)
		config = strcmp(c->configs.w[i], path) == 0;
	free(path);
	if (config)
		return true;
	for (i = 0; i < c->log_paths.n; i++) {
		const char *p = c->log_paths.w[i];
		const char *slash = strchr(p, ')');

		/* GRUB logs "(hd0,gpt1)/vmlinuz" or "/vmlinuz": compare the path after the device. */
		if (ends_with(ev->data, ev->data_size, slash ? slash + 1 : p))
			return true;
	}
	return false;
}

/*
 * The configs given, by the path today's log measured them under (carry->configs): a single
 * config without one is the log's only config. With no log, there is nothing to tell apart.
 */
static int resolve_configs(const mb_policy_artifacts *a, carry_ctx *carry, mb_error *err)
{
	grub_words measured = { 0 };
	size_t i, k, n;
	int rc = 0;

	if (!a->log || !a->boot->n_grub_cfg)
		return 0;
	if (grub_measured_configs(a->log, &measured) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	for (i = 0; i < a->boot->n_grub_cfg && rc == 0; i++) {
		const mb_grub_config *g = &a->boot->grub_cfg[i];
		char *list = grub_join_list(&measured, ", ");
		bool found = false;

		if (!g->measured_path && measured.n != 1) {
			rc = set_error(err, -EINVAL, "the log measured %zu GRUB configs%s%s%s: say which one %s replaces, "
				       "as MEASURED_PATH=FILE", measured.n, measured.n ? " (" : "", measured.n ? list : "",
				       measured.n ? ")" : "", g->file);
		} else if (g->measured_path) {
			/* any file GRUB measured may be named, not only a ".../grub.cfg" */
			for (k = 0, n = mb_event_log_count(a->log); k < n && !found; k++) {
				char *path = grub_file_event_path(mb_event_log_event(a->log, k));

				found = path && strcmp(path, g->measured_path) == 0;
				free(path);
			}
			if (!found)
				rc = set_error(err, -EINVAL, "the log measured no file at %s (its GRUB configs: %s)",
					       g->measured_path, measured.n ? list : "none");
		}
		if (rc == 0 && carry->configs.n < GRUB_MAX_WORDS &&
		    !(carry->configs.w[carry->configs.n++] = strdup(g->measured_path ? g->measured_path : measured.w[0])))
			rc = set_error(err, -ENOMEM, "out of memory");
		free(list);
	}
	grub_words_done(&measured);
	return rc;
}

/* The first menu entry of the configs given: the one of the first config that has a linux
 * command (Debian's ESP stub has none). */
static int configs_entry(const mb_boot_artifacts *b, grub_entry *entry, mb_error *err)
{
	size_t i;
	int rc;

	for (i = 0; i < b->n_grub_cfg; i++) {
		mb_error scratch = { 0 };

		rc = grub_read_cfg_entry(b->grub_cfg[i].file, entry, &scratch);
		if (rc == 0)
			return 0;
		if (rc != -EBADMSG || i + 1 == b->n_grub_cfg) {
			*err = scratch;
			return rc;
		}
	}
	return 0;
}

/* Paths the log's linux/initrd commands loaded: they are the old kernel and initrd. -ENOMEM. */
static int log_loader_paths(const mb_event_log *log, carry_ctx *c)
{
	size_t i, n = mb_event_log_count(log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		grub_words ws = { 0 };
		grub_event_kind kind = grub_event_kind_of(ev);
		const uint8_t *text;
		size_t k, len;

		/* only the commands that load files, linux... and initrd...; a kernel command line
		 * names the kernel again */
		if (kind != GRUB_EVENT_LINUX && kind != GRUB_EVENT_INITRD)
			continue;
		grub_string_split(ev, &text, &len);
		if (grub_split_words((const char *) text, (const char *) text + len, &ws) < 0) {
			grub_words_done(&ws);
			continue;
		}
		/* linux: the path only; initrd: every path. */
		for (k = 1; k < ws.n && c->log_paths.n < GRUB_MAX_WORDS; k++) {
			if (grub_is_cmd(ws.w[0], "linux") && k > 1)
				break;
			c->log_paths.w[c->log_paths.n] = strdup(ws.w[k]);
			if (!c->log_paths.w[c->log_paths.n]) {
				grub_words_done(&ws);
				return -ENOMEM;
			}
			c->log_paths.n++;
		}
		grub_words_done(&ws);
	}
	return 0;
}

/* The log's rules of a PCR the artifacts do not decide: in PCR 8 and 9 GRUB's commands and
 * files but those the artifacts replace, not required (policy_from_log's rules_of). */
static int carried_rules(json_t *jp, const mb_event_log *log, uint32_t pcr, void *ud)
{
	carry_ctx *c = ud;

	if (pcr == 8)
		return policy_rules_from_log(c->r8, log, 8, skip_pcr8, NULL, false);
	if (pcr == 9)
		return policy_rules_from_log(c->r9, log, 9, skip_pcr9, c, false);
	return policy_rules_from_log(policy_pcr_entry(jp, pcr, "rules"), log, pcr, NULL, NULL, true);
}

static int add_text_rule(json_t *rules, const char *fmt_prefix, const char *a, const char *b,
			 const char *description, bool required)
{
	char *pattern = NULL;
	int rc;

	if (asprintf(&pattern, "%s%s%s%s", fmt_prefix, a, b && *b ? " " : "", b ? b : "") < 0)
		return -ENOMEM;
	rc = policy_add_rule(rules, "EV_IPL", pattern, NULL, description, required);
	free(pattern);
	return rc;
}

/*
 * From a unified kernel image: PCR 11's value (systemd-stub's sections, at its hand-over), PCR 4
 * rules with the UKI's Authenticode digest (and each --efi), the kernel's initrd tag of .initrd
 * (PCR 9, not required; none when the stub appends drop-ins to it, mb_uki_dropin_appended); with a known-good log, the firmware PCRs' values and its rules for the
 * PCRs the UKI does not decide. PCR 12 (the command line systemd-boot and the stub measure) is
 * left out: docs/predict.md says why it is not computed.
 */
static int generate_uki(const mb_policy_artifacts *a, char **ret_json, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *jp, *app = NULL, *root = policy_root_new(
		"generated from a unified kernel image (PCR 11 as systemd-stub measures it, PCR 4 its Authenticode"
		" digest) and a known-good log (firmware PCRs)", "mboot policy generate --uki ...", &jp);
	uint16_t algs[MB_MAX_BANKS];
	size_t n_algs = policy_banks(a->log, algs), n_secs = 0, i;
	uint8_t pcr11[MB_MAX_BANKS][MB_DIGEST_MAX], d[MB_DIGEST_MAX];
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	mb_pcr_values *v11 = mb_pcr_values_new();
	uint32_t firmware = a->firmware_pcrs ? a->firmware_pcrs : 0xff & ~(1u << 4);
	unsigned appended = 0;
	const char *base = strrchr(a->boot->uki, '/');
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	char what[512], hex[2 * MB_DIGEST_MAX + 1];
	int rc;

	if (!root || !v11) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (a->boot->kernel || a->boot->initrd || a->boot->cmdline || a->boot->n_grub_cfg || a->n_allow_text) {
		rc = set_error(err, -EINVAL, "a UKI carries the kernel, initrd and command line: no kernel, initrd, "
			       "cmdline, grub_cfg or allow_text with it");
		goto out;
	}
	rc = mb_pe_read_file(a->boot->uki, &buf, &size, err);
	if (rc >= 0)
		rc = mb_pe_parse(buf, size, 0, &pe, err);
	if (rc >= 0)
		rc = mb_uki_sections(pe, secs, &n_secs, err);
	if (rc >= 0)
		rc = mb_uki_pcr11(pe, buf, size, algs, n_algs, pcr11, err);
	for (i = 0; rc >= 0 && i < n_algs; i++)
		rc = mb_pcr_values_set(v11, algs[i], 11, pcr11[i], mb_digest_by_alg(algs[i])->size, err);
	if (rc < 0) {
		rc = prefix_error(err, rc, a->boot->uki);
		goto out;
	}
	if (!policy_add_values(jp, v11, 11)) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* PCR 4: the UKI as the firmware measures it when systemd-boot loads it */
	app = json_object();
	for (i = 0; app && i < n_algs; i++) {
		const mb_digest_info *info = mb_digest_by_alg(algs[i]);

		if (mb_pe_hash(pe, buf, size, algs[i], d) < 0) {
			rc = set_error(err, -EIO, "%s: hashing failed", a->boot->uki);
			goto out;
		}
		json_object_set_new(app, info->name, json_text(hex_format(d, info->size, hex)));
	}
	snprintf(what, sizeof(what), "unified kernel image %s", base ? base + 1 : a->boot->uki);
	{
		policy_app_rule xr = { app, what, 1 }; /* systemd-boot has the firmware load it, once */

		rc = policy_pcr4_rules(jp, a, algs, n_algs, &xr, err);
	}
	app = NULL;
	if (rc < 0)
		goto out;
	/* PCR 9: the kernel's EFI stub tags the initrd systemd-stub hands it: .initrd, when the stub
	 * appends nothing from the drop-in folder (else no rule: the concatenation is not computed) */
	rc = mb_uki_dropin_appended(a->boot->uki_extra_dir, &appended, err);
	if (rc < 0)
		goto out;
	for (i = 0; !appended && i < n_secs; i++) {
		json_t *ds, *r9;
		uint8_t name_d[MB_DIGEST_MAX];

		if (strcmp(secs[i].name, ".initrd") != 0)
			continue;
		ds = json_object();
		r9 = policy_pcr_entry(jp, 9, "rules");
		for (size_t k = 0; ds && k < n_algs; k++) {
			if (mb_uki_section_digests(&secs[i], buf, size, algs[k], name_d, d) < 0) {
				json_decref(ds);
				rc = set_error(err, -EIO, "%s: hashing failed", a->boot->uki);
				goto out;
			}
			json_object_set_new(ds, mb_digest_by_alg(algs[k])->name,
					       json_text(hex_format(d, mb_digest_by_alg(algs[k])->size, hex)));
		}
		if (!ds || !r9 || policy_add_rule(r9, "EV_EVENT_TAG", NULL, ds, "Linux initrd (EFI stub tag) of the UKI's "
						   ".initrd", false) < 0) {
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	/* PCR 13: the archive systemd-stub makes of the drop-in folder's system extensions, its
	 * only event (zero: none) */
	if (a->boot->uki_extra_dir) {
		mb_pcr_values *v13 = mb_pcr_values_new();
		uint8_t *cpio = NULL, pcr[MB_DIGEST_MAX];
		size_t cpio_size = 0;

		rc = v13 ? mb_uki_dropin_dir_cpio(a->boot->uki_extra_dir, MB_UKI_DROPIN_SYSEXTS, &cpio, &cpio_size, err)
			 : set_error(err, -ENOMEM, "out of memory");
		for (i = 0; rc >= 0 && i < n_algs; i++) {
			size_t ds = mb_digest_by_alg(algs[i])->size;

			memset(pcr, 0, sizeof(pcr));
			if (cpio && (mb_digest(algs[i], cpio, cpio_size, d) < 0 || mb_digest_extend(algs[i], pcr, d) < 0))
				rc = set_error(err, -EIO, "hashing the system extensions failed");
			if (rc >= 0)
				rc = mb_pcr_values_set(v13, algs[i], 13, pcr, ds, err);
		}
		if (rc >= 0 && !policy_add_values(jp, v13, 13))
			rc = set_error(err, -ENOMEM, "out of memory");
		free(cpio);
		mb_pcr_values_free(v13);
		if (rc < 0)
			goto out;
	}
	/* from the log: all but what the UKI (and its drop-ins) decide, and PCR 12 (not computed) */
	if (a->log) {
		rc = policy_from_log(jp, a->log, ~((1u << 4) | (1u << 9) | (1u << 11) | (1u << 12) |
					  (a->boot->uki_extra_dir ? 1u << 13 : 0)), firmware, NULL, NULL, err);
		if (rc < 0)
			goto out;
	}
	*ret_json = policy_to_string(root, mark);
	rc = *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
out:
	json_decref(app);
	json_decref(root);
	mb_pcr_values_free(v11);
	mb_pe_info_free(pe);
	free(buf);
	return rc;
}

MB_EXPORT int mb_policy_generate_from_artifacts(const mb_policy_artifacts *a_opt, char **ret_json, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	mb_policy_artifacts a_buf;
	mb_boot_artifacts boot_buf;
	int take = OPTIONS_TAKE(a_buf, a_opt, err);
	const mb_policy_artifacts *a = &a_buf;
	json_t *jp, *root, *r8, *r9;
	grub_entry entry = { 0 };
	grub_words args = { 0 };
	carry_ctx carry = { 0 };
	uint16_t algs[MB_MAX_BANKS];
	size_t n_algs, i, kcount = 0;
	uint32_t firmware;
	bool pcr4 = false;
	char *kpath = NULL, *kargs = NULL, *ipaths = NULL, *lcmd = NULL, *icmd = NULL;
	int rc;

	/* boot grows as a does, so it is taken alike (NULL: no artifacts, refused below); from here
	 * on a->boot is our copy, never NULL */
	if (take == 0)
		take = OPTIONS_TAKE_NAMED(boot_buf, a_buf.boot,
					  "mb_policy_generate_from_artifacts: mb_policy_artifacts.boot (mb_boot_artifacts)", err);
	if (take < 0)
		return take;
	a_buf.boot = &boot_buf;
	n_algs = policy_banks(a->log, algs);
	firmware = a->firmware_pcrs;

	if (a->boot->uki)
		return generate_uki(a, ret_json, err);
	root = policy_root_new("generated from release artifacts (kernel, initrd, GRUB config, command line)"
			       " and a known-good log (firmware PCRs, GRUB's other commands and files)",
			       "mboot policy generate --kernel ...", &jp);
	if (!root) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (!a->boot->kernel || !a->boot->initrd) {
		rc = set_error(err, -EINVAL, "a kernel and an initrd are needed");
		goto out;
	}
	if (!a->boot->cmdline && !a->boot->n_grub_cfg) {
		rc = set_error(err, -EINVAL, "the kernel command line is needed: --cmdline or --grub-cfg");
		goto out;
	}
	if (a->boot->n_grub_cfg) {
		rc = configs_entry(a->boot, &entry, err);
		if (rc == -EBADMSG && a->boot->cmdline)
			rc = 0; /* no entry: the paths are then matched loosely, as with --cmdline alone */
		if (rc < 0)
			goto out;
		rc = resolve_configs(a, &carry, err);
		if (rc < 0)
			goto out;
	}
	if (a->boot->cmdline) {
		rc = grub_split_words(a->boot->cmdline, a->boot->cmdline + strlen(a->boot->cmdline), &args);
		if (rc < 0) {
			rc = set_error(err, rc, "the command line has too many words");
			goto out;
		}
	} else {
		for (i = 2; i < entry.linux_line.n; i++) {
			args.w[args.n] = strdup(entry.linux_line.w[i]);
			if (!args.w[args.n]) {
				rc = set_error(err, -ENOMEM, "out of memory");
				goto out;
			}
			args.n++;
		}
	}

	/* The strings GRUB will measure into PCR 8. */
	kargs = join_regex(&args, 0);
	lcmd = entry.linux_line.n ? policy_regex_literal(entry.linux_line.w[0]) : strdup("linux(?:efi|16)?");
	icmd = entry.initrd_line.n ? policy_regex_literal(entry.initrd_line.w[0]) : strdup("initrd(?:efi|16)?");
	if (a->boot->kernel_path)
		kpath = policy_regex_literal(a->boot->kernel_path);
	else if (entry.linux_line.n)
		kpath = word_regex(entry.linux_line.w[1]);
	else
		kpath = strdup("[^ ]+");
	if (a->boot->initrd_path) {
		ipaths = policy_regex_literal(a->boot->initrd_path);
	} else if (entry.initrd_line.n) {
		ipaths = join_regex(&entry.initrd_line, 1);
	} else {
		ipaths = strdup("[^ ]+");
	}
	if (!kargs || !lcmd || !icmd || !kpath || !ipaths) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	r8 = policy_pcr_entry(jp, 8, "rules");
	if (!r8) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	{
		char *cmd = NULL;

		/* Text rules see GRUB's strings under the upstream label, whichever form the log
		 * writes (grub_string_prefix); the labels hold no regular-expression syntax. */
		if (asprintf(&cmd, "%s%s %s", grub_string_prefix(GRUB_STRING_CMD), lcmd, kpath) < 0 ||
		    add_text_rule(r8, cmd, "", kargs, "the command that loads the kernel", true) < 0 ||
		    add_text_rule(r8, grub_string_prefix(GRUB_STRING_KERNEL_CMDLINE), kpath, kargs,
				  "the kernel command line", true) < 0) {
			free(cmd);
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
		free(cmd);
		if (asprintf(&cmd, "%s%s ", grub_string_prefix(GRUB_STRING_CMD), icmd) < 0 ||
		    add_text_rule(r8, cmd, ipaths, NULL, "the command that loads the initrd", true) < 0) {
			free(cmd);
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
		free(cmd);
	}
	for (i = 0; i < a->n_allow_text; i++)
		if (policy_add_rule(r8, "EV_IPL", a->allow_text[i], NULL, "allowed by --allow-text", false) < 0) {
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}

	/* The files GRUB will read into PCR 9, and the stub's initrd tag. */
	r9 = policy_pcr_entry(jp, 9, "rules");
	if (!r9) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = file_rule(r9, "EV_IPL", a->boot->kernel, algs, n_algs, "kernel", true, err)) < 0 ||
	    (rc = file_rule(r9, "EV_IPL", a->boot->initrd, algs, n_algs, "initrd", true, err)) < 0 ||
	    (rc = file_rule(r9, "EV_EVENT_TAG", a->boot->initrd, algs, n_algs, "Linux initrd (EFI stub tag)", false, err)) < 0)
		goto out;
	for (i = 0; i < a->boot->n_grub_cfg; i++) {
		const mb_grub_config *g = &a->boot->grub_cfg[i];
		char what[400];

		snprintf(what, sizeof(what), "GRUB config%s%s", g->measured_path ? " measured as " : "",
			 g->measured_path ? g->measured_path : "");
		rc = file_rule(r9, "EV_IPL", g->file, algs, n_algs, what, true, err);
		if (rc < 0)
			goto out;
	}
	/* PCR 4: the EFI applications given, and the kernel as often as the known-good boot's
	 * chain measured it after GRUB's linux command (none: no shim verified it). Without --efi,
	 * such a log's PCR 4 as rules, unless --firmware-pcrs asks for its value. */
	if (a->log)
		kcount = policy_kernel_apps(a->log, NULL);
	if (a->boot->n_efi || (kcount && !(a->firmware_pcrs & (1u << 4)))) {
		const char *kbase = strrchr(a->boot->kernel, '/');
		char what[512];
		policy_app_rule xr = { NULL, what, (int64_t) kcount };

		snprintf(what, sizeof(what), "kernel %s (verified by shim for GRUB)", kbase ? kbase + 1 : a->boot->kernel);
		pcr4 = true;
		if (a->firmware_pcrs == 0)
			firmware = 0xff & ~(1u << 4);
		if (kcount && (rc = policy_app_digests(a->boot->kernel, algs, n_algs, &xr.digests, err)) < 0) {
			rc = prefix_error(err, rc, "the log has shim measure the kernel into PCR 4, by its Authenticode digest");
			goto out;
		}
		rc = a->boot->n_efi ? policy_pcr4_rules(jp, a, algs, n_algs, &xr, err) : policy_pcr4_from_log(jp, a->log, &xr, err);
		if (rc < 0)
			goto out;
	} else if (a->firmware_pcrs == 0) {
		firmware = 0xff;
	}

	/* From the known-good log: firmware values, and what the artifacts do not replace. */
	if (a->log) {
		rc = log_loader_paths(a->log, &carry);
		if (rc < 0) {
			rc = set_error(err, rc, "out of memory");
			goto out;
		}
		carry.r8 = r8;
		carry.r9 = r9;
		rc = policy_from_log(jp, a->log, pcr4 ? ~(1u << 4) : ~0u, firmware, carried_rules, &carry, err);
		if (rc < 0)
			goto out;
	}
	*ret_json = policy_to_string(root, mark);
	rc = *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
out:
	grub_entry_done(&entry);
	grub_words_done(&args);
	grub_words_done(&carry.log_paths);
	grub_words_done(&carry.configs);
	free(kpath);
	free(kargs);
	free(ipaths);
	free(lcmd);
	free(icmd);
	json_decref(root);
	return rc;
}
