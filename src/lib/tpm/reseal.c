/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `mboot reseal` (docs/seal.md): unseal a secret on this boot and seal it again to today's
 * values OR predicted ones, and afterwards close a firmware-update window. Through the public
 * calls of this folder (mb_tpm_unseal_sealed, mb_seal_secret, the NV counter); the secret only
 * in locked memory.
 */
#include <errno.h>
#include <string.h>

#include <mboot/seal.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "shared/options.h"
#include "shared/secret-page.h"

MB_EXPORT int mb_reseal(mb_tpm *t, const mb_sealed *s, const mb_reseal_options *opt_in, mb_sealed **ret,
			mb_unseal_explanation **explanation, mb_error *err)
{
	mb_reseal_options o;
	mb_seal_options so = MB_OPTIONS_INIT(mb_seal_options);
	mb_unseal_options uo = MB_OPTIONS_INIT(mb_unseal_options);
	secret_page secret = { 0 };
	uint32_t index = 0;
	int r;

	*ret = NULL;
	*explanation = NULL;
	r = OPTIONS_TAKE(o, opt_in, err);
	if (r < 0)
		return r;
	if (!t || !s)
		return set_error(err, -EINVAL, "mb_reseal: no TPM or no sealed secret");
	/* the new policy first: options that do not fit fail before the TPM is asked anything */
	r = mb_reseal_seal_options(s, o.predicted, o.n_predicted, &so, err);
	if (r < 0)
		return r;
	if (mb_sealed_pin(s) && (!o.pin || !o.pin_size))
		return set_error(err, -ENOKEY, "the secret is sealed with a PIN: no PIN given");
	if (o.eventlog) {
		so.eventlog = o.eventlog;
		so.eventlog_size = o.eventlog_size;
	} else
		so.eventlog = mb_sealed_eventlog(s, &so.eventlog_size);
	if (mb_sealed_pin(s)) {
		so.pin = o.pin;
		so.pin_size = o.pin_size;
	}
	if (o.firmware_update) {
		so.firmware_window = true;
		/* a window reopened (a second reseal before the update) stays on its counter */
		so.window_index = !o.window_index && mb_sealed_window(s, &index, NULL) ? index : o.window_index;
	}
	if (secret_page_alloc(&secret, 0) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	uo.log = o.log;
	uo.log_path = o.log_path;
	uo.pin = o.pin;
	uo.pin_size = o.pin_size;
	r = mb_tpm_unseal_sealed(t, s, &uo, secret.p, &secret.size, explanation, err);
	if (r == 0)
		r = mb_seal_secret(t, secret.p, secret.size, &so, ret, err);
	secret_page_free(&secret);
	return r;
}

MB_EXPORT int mb_reseal_close_window(mb_tpm *t, const mb_sealed *s, bool *ret_closed, uint64_t *ret_counter,
				     mb_error *err)
{
	uint32_t index;
	uint64_t counter, now = 0;
	int r;

	*ret_closed = false;
	*ret_counter = 0;
	if (!s || !mb_sealed_window(s, &index, &counter))
		return 0;
	r = mb_tpm_counter_read(t, index, false, &now, err);
	if (r < 0)
		return r;
	*ret_counter = now;
	/* moved on already: closed by an earlier reseal or `mboot reseal --close-window` */
	if (now != counter)
		return 0;
	r = mb_tpm_counter_increment(t, index, &now, err);
	if (r < 0)
		return prefix_error(err, r, "resealed, but the firmware-update window is still open");
	*ret_counter = now;
	*ret_closed = true;
	return 0;
}
