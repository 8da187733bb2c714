/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a firmware event log. Parses it and, when it parses, runs
 * every consumer of an untrusted log: replay, digest checks, the decoder and diff.
 */
#include <stdint.h>
#include <stdlib.h>

#include <json-c/json.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	size_t i;

	if (size > (1u << 20))
		return 0;
	if (mb_event_log_parse(data, size, &log, &err) < 0)
		return 0;
	{
		mb_pcr_values v;
		mb_replay_info info;
		mb_diff d;

		(void) !mb_replay_log(log, SIZE_MAX, &v, &info, &err);
		if (mb_log_diff(log, log, &d, &err) == 0)
			mb_diff_done(&d);
	}
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		mb_digest_check c;
		json_object *j = mb_event_decode(log, ev);

		json_object_to_json_string(j);
		json_object_put(j);
		(void) !mb_event_check_digest(ev, &c);
	}
	mb_event_log_free(log);
	return 0;
}
