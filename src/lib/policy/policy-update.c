/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The known-good log of the boot after a Secure Boot or MOK update, from today's known-good
 * log: the prediction's log (lib/predict, through its public API), so the policy generated from
 * it holds the values that boot will have, and none where the prediction cannot say.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mboot/policy.h>
#include <mboot/predict.h>
#include "shared/fail.h"

/* A message of at most sizeof(mb_error.message) bytes, appended to; what does not fit is cut. */
typedef struct message {
	char text[sizeof(((mb_error *) 0)->message)];
	size_t len;
} message;

static void add(message *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(message *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->len >= sizeof(m->text) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->text + m->len, sizeof(m->text) - m->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->len += (size_t) n < sizeof(m->text) - m->len ? (size_t) n : sizeof(m->text) - 1 - m->len;
}

/* Each variable no event of the log holds: where it was looked for. */
static void say_unmatched(message *m, const mb_efi_var_update *vars, size_t n_vars, uint32_t unmatched)
{
	size_t i;

	for (i = 0; i < n_vars; i++) {
		const mb_efi_var_update *v = &vars[i];
		bool sbat = strcmp(v->name, "SbatLevel") == 0, mok = strncmp(v->name, "Mok", 3) == 0;

		if (!(unmatched & (1u << i)))
			continue;
		add(m, "%s%s%s (%s): today's log has %s, so what it changes is unknown", m->len ? "; " : "", v->name,
		    v->append ? "+" : "", v->file,
		    sbat ? "no PCR 7 SbatLevel event of shim" :
		    mok ? "no PCR 14 event of shim for this variable" :
			  "no PCR 7 EV_EFI_VARIABLE_DRIVER_CONFIG event of this variable");
	}
}

/* Each unpredictable PCR and why; PCRs with the same reason (a revoked application: 4 and 7) once. */
static void say_unpredictable(message *m, const mb_predict_result *r)
{
	uint32_t said = 0, p, q;

	for (p = 0; p < MB_PCR_COUNT; p++) {
		const char *why = r->why[p] ? r->why[p] : "unknown";
		uint32_t same = 1u << p;

		if (!(r->unpredictable & (1u << p)) || (said & (1u << p)))
			continue;
		for (q = p + 1; q < MB_PCR_COUNT; q++)
			if ((r->unpredictable & (1u << q)) && r->why[p] && r->why[q] && strcmp(r->why[p], r->why[q]) == 0)
				same |= 1u << q;
		said |= same;
		add(m, "%sPCR %u", m->len ? "; " : "", p);
		for (q = p + 1; q < MB_PCR_COUNT; q++)
			if (same & (1u << q))
				add(m, " and %u", q);
		add(m, " cannot be predicted: %s", why);
	}
}

MB_EXPORT int mb_policy_log_after_update(const mb_event_log *log, const mb_efi_var_update *vars, size_t n_vars,
					 mb_event_log **ret_log, mb_error *err)
{
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .efi_vars = vars, .n_efi_vars = n_vars };
	mb_predict_result r;
	message m = { .len = 0 };
	int rc;

	*ret_log = NULL;
	if (!log)
		return set_error(err, -EINVAL, "no log to apply the update to");
	/* bad input (a malformed signature list, an unknown name): mb_predict's error as it is */
	rc = mb_predict(&in, &r, err);
	if (rc < 0)
		return rc;
	say_unmatched(&m, vars, n_vars, r.unmatched_efi_var);
	say_unpredictable(&m, &r);
	/* no change but variables: another unmatched bit is a change of ours left unsaid */
	if (!m.len && (r.unmatched || r.unmatched_efi || r.unmatched_grub_cfg || !r.values))
		add(&m, "the prediction matched a change to no event");
	if (m.len) {
		rc = set_error(err, MB_ERR_POLICY_UNPREDICTABLE, "no policy for the boot after the update: %s", m.text);
	} else {
		*ret_log = r.next_log;
		r.next_log = NULL;
	}
	mb_predict_result_done(&r);
	return rc;
}
