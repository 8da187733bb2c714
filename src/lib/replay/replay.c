/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include <mboot/replay.h>
#include "shared/fail.h"

MB_EXPORT mb_pcr_bank *mb_pcr_values_bank(mb_pcr_values *v, uint16_t alg)
{
	size_t i;

	for (i = 0; i < v->n_banks; i++)
		if (v->banks[i].alg == alg)
			return &v->banks[i];
	return NULL;
}

MB_EXPORT const mb_pcr_bank *mb_pcr_values_bank_const(const mb_pcr_values *v, uint16_t alg)
{
	return mb_pcr_values_bank((mb_pcr_values *) v, alg);
}

MB_EXPORT void mb_pcr_initial(uint16_t alg, uint32_t pcr, uint8_t locality, bool hcrtm, uint8_t *out)
{
	const mb_digest_info *info = mb_digest_by_alg(alg);
	size_t size = info ? info->size : MB_DIGEST_MAX;

	if (pcr >= 17 && pcr <= 22) {
		memset(out, 0xff, size);
		return;
	}
	memset(out, 0, size);
	if (pcr == 0)
		out[size - 1] = hcrtm ? 4 : locality;
}

/* "StartupLocality\0" + one byte (PFP §10.4.5.3). */
static bool startup_locality(const mb_event *ev, uint8_t *ret)
{
	static const char sig[16] = "StartupLocality";

	if (ev->type != MB_EV_NO_ACTION || ev->pcr != 0 || ev->data_size != 17)
		return false;
	if (memcmp(ev->data, sig, 16) != 0)
		return false;
	*ret = ev->data[16];
	return true;
}

MB_EXPORT int mb_replay_log(const mb_event_log *log, size_t until, mb_pcr_values *ret,
			    mb_replay_info *info, mb_error *err)
{
	const mb_spec_id_alg *banks;
	size_t n_banks = mb_event_log_banks(log, &banks), n = mb_event_log_count(log), i, b;
	mb_replay_info local;
	int bank_of[MB_MAX_BANKS];

	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	memset(ret, 0, sizeof(*ret));
	if (until > n)
		until = n;

	/* PCR 0's starting value depends on events anywhere before its first extend. */
	for (i = 0; i < until; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		uint8_t loc;

		if (!info->startup_locality_seen && startup_locality(ev, &loc)) {
			info->startup_locality_seen = true;
			info->startup_locality = loc;
		}
		if (ev->type == MB_EV_EFI_HCRTM_EVENT && ev->pcr == 0)
			info->hcrtm = true;
	}

	for (b = 0; b < n_banks; b++) {
		const mb_digest_info *d = mb_digest_by_alg(banks[b].alg);
		uint32_t p;

		bank_of[b] = -1;
		if (!d) {
			info->unknown_algs[info->n_unknown_algs++] = banks[b].alg;
			continue;
		}
		bank_of[b] = (int) ret->n_banks;
		ret->banks[ret->n_banks].alg = d->alg;
		ret->banks[ret->n_banks].size = d->size;
		for (p = 0; p < MB_PCR_COUNT; p++)
			mb_pcr_initial(d->alg, p, info->startup_locality, info->hcrtm,
				       ret->banks[ret->n_banks].value[p]);
		ret->n_banks++;
	}

	for (i = 0; i < until; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		uint32_t k;

		if (ev->type == MB_EV_NO_ACTION) {
			info->events_no_action++;
			continue;
		}
		if (ev->pcr >= MB_PCR_COUNT) {
			info->events_out_of_range++;
			continue;
		}
		if (ev->n_digests < n_banks)
			for (b = 0; b < ret->n_banks; b++)
				if (!mb_event_digest_for(ev, ret->banks[b].alg))
					info->incomplete[b] |= 1u << ev->pcr;
		for (k = 0; k < ev->n_digests; k++) {
			mb_pcr_bank *bank = NULL;

			/* digests[] follow the Spec ID order in practice, but look it up anyway. */
			for (b = 0; b < n_banks; b++)
				if (banks[b].alg == ev->digests[k].alg) {
					if (bank_of[b] >= 0)
						bank = &ret->banks[bank_of[b]];
					break;
				}
			if (!bank)
				continue;
			if (mb_digest_extend(bank->alg, bank->value[ev->pcr], ev->digests[k].bytes) < 0)
				return mb_fail(err, -EIO, "hashing failed while replaying event %u", ev->number);
			bank->present |= 1u << ev->pcr;
		}
		info->events_extended++;
	}
	return 0;
}
