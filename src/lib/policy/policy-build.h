/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building policy JSON: shared by the generators. */
#ifndef MB_POLICY_BUILD_H
#define MB_POLICY_BUILD_H

#include "shared/json.h"

#include <mboot/eventlog.h>
#include <mboot/replay.h>

/* Every character that means something to PCRE2 escaped: the pattern says exactly s. */
char *policy_regex_literal(const char *s);
/* {"sha1": "<hex>", ...} of an event's known banks. */
json_t *policy_event_digests(const mb_event *ev);
const char *policy_string_field(json_t *o, const char *key);
/* A rule already in rules with this type and the same text, or the same digests. */
json_t *policy_find_rule(json_t *rules, const char *type, const char *pattern, json_t *digests);
/* Append a rule, or count one more for an equal one (max + 1). Takes ownership of digests. */
int policy_add_rule(json_t *rules, const char *type, const char *pattern, json_t *digests,
		    const char *description, bool required);
/* The "pcrs" entry for a PCR, created on first use with the given kind ("rules"/"values"). */
json_t *policy_pcr_entry(json_t *pcrs, uint32_t pcr, const char *kind);
/* {"values": {...}} from replayed values for one PCR; false if the log does not touch it. */
bool policy_add_values(json_t *pcrs, const mb_pcr_values *v, uint32_t pcr);
/* Rules for every event of one PCR of a log (text where it hashes, digests otherwise);
 * skip(ev) may leave events out. */
int policy_rules_from_log(json_t *rules, const mb_event_log *log, uint32_t pcr,
			  bool (*skip)(const mb_event *ev, void *ud), void *ud, bool required);
char *policy_to_string(json_t *root, json_build_mark mark);
/* A policy's root object (version 1, description, generator) and its empty "pcrs" object
 * (*ret_pcrs, owned by the root); NULL when out of memory. */
json_t *policy_root_new(const char *description, const char *generator, json_t **ret_pcrs);
/*
 * What a known-good log says of each PCR of mask it touches: its replayed values (a PCR of
 * firmware), else a rule for each of its events, made by rules_of(pcrs, log, pcr, ud) when
 * given, else required rules in the PCR's entry. The replay's error, or -ENOMEM.
 */
int policy_from_log(json_t *pcrs, const mb_event_log *log, uint32_t mask, uint32_t firmware,
		    int (*rules_of)(json_t *pcrs, const mb_event_log *log, uint32_t pcr, void *ud), void *ud,
		    mb_error *err);

/* policy-pcr4.c: PCR 4 of a policy from artifacts. */
struct mb_policy_artifacts;
/* The PCR 4 rule of the image the artifacts boot (the kernel shim verifies, the UKI). */
typedef struct policy_app_rule {
	json_t *digests; /* given away to policy_pcr4_*; NULL: no such rule */
	const char *what;
	int64_t max;          /* how many times the chain measures it */
} policy_app_rule;
/* The PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION events after GRUB's linux command (the kernel, under
 * shim), stored in ret (NULL: only counted); their number. */
size_t policy_kernel_apps(const mb_event_log *log, const mb_event **ret);
/* {"sha1": "<hex>", ...}: a PE image's Authenticode digests in banks algs. */
int policy_app_digests(const char *path, const uint16_t *algs, size_t n_algs, json_t **ret, mb_error *err);
/* The boot-manager action, the separator, each a->boot->efi and xr (NULL, or digests NULL: none). */
int policy_pcr4_rules(json_t *pcrs, const struct mb_policy_artifacts *a, const uint16_t *algs, size_t n_algs,
		      policy_app_rule *xr, mb_error *err);
/* The log's PCR 4 events as rules but its kernel's (policy_kernel_apps), and xr's. */
int policy_pcr4_from_log(json_t *pcrs, const mb_event_log *log, policy_app_rule *xr, mb_error *err);

#endif
