/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a firmware event log. Parses it and, when it parses, runs
 * every consumer of an untrusted log: replay, digest checks, the decoder and diff. The
 * one-pass readers (mb_event_log_visit, mb_replay_log_data) must agree with the parser:
 * same verdict, same error offset, same PCR values; a difference aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include <mboot/mboot.h>
#include "lib/replay/pcr-values.h" /* reaches into the values: the fuzzers link the static core */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	mb_event_decoded *dec;
	size_t i;

	mb_error verr = { 0 };
	int rc, vrc;

	if (size > (1u << 20))
		return 0;
	rc = mb_event_log_parse(data, size, &log, &err);
	vrc = mb_event_log_visit(data, size, NULL, NULL, &verr);
	if (rc != vrc || (rc < 0 && (err.offset != verr.offset || strcmp(err.message, verr.message) != 0)))
		abort();
	if (rc < 0)
		return 0;
	{
		mb_pcr_values *v = mb_pcr_values_new(), *v2 = mb_pcr_values_new();
		mb_replay_info info, info2;
		mb_diff d;

		if (!v || !v2)
			abort();
		/* Byte for byte, through the internal layout: the two replays are one. The info's
		 * lists are the values' own (compared with them), each replay's pointing at its own. */
		rc = mb_replay_log(log, SIZE_MAX, v, &info, &err);
		if (rc != mb_replay_log_data(data, size, v2, &info2, &err))
			abort();
		if (rc == 0 && (info.incomplete != v->incomplete || info2.incomplete != v2->incomplete ||
				info.unknown_algs != v->unknown_algs || info2.unknown_algs != v2->unknown_algs))
			abort();
		info2.incomplete = info.incomplete;
		info2.unknown_algs = info.unknown_algs;
		if (rc == 0 && (memcmp(v, v2, sizeof(*v)) != 0 || memcmp(&info, &info2, sizeof(info)) != 0))
			abort();
		mb_pcr_values_free(v);
		mb_pcr_values_free(v2);
		if (mb_log_diff(log, log, &d, &err) == 0)
			mb_diff_done(&d);
	}
	dec = mb_event_decoded_new();
	for (i = 0; dec && i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		mb_digest_check c;

		if (mb_event_decode(log, ev, dec) == 0)
			free(mb_event_decoded_json(dec));
		(void) !mb_event_check_digest(ev, &c);
	}
	mb_event_decoded_free(dec);
	mb_event_log_free(log);
	return 0;
}
