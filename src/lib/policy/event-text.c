/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include <mboot/policy.h>
#include "lib/events/event-data.h"
#include "event-text.h"

/* The text itself is the events module's (text_judged), next to the decoder's. */
MB_EXPORT char *mb_event_text(const mb_event *ev)
{
	return text_judged(ev->data, ev->data_size);
}

char *policy_judged_text(const mb_event *ev, grub_string_kind derived)
{
	const uint8_t *body;
	size_t len, n;
	mb_event copy;
	uint8_t *buf;
	const char *prefix;
	char *text;

	if (derived == GRUB_STRING_NONE || grub_string_split(ev, &body, &len) == GRUB_STRING_NONE)
		return mb_event_text(ev);
	prefix = grub_string_prefix(derived);
	n = strlen(prefix);
	buf = malloc(n + len);
	if (!buf)
		return NULL;
	memcpy(buf, prefix, n);
	memcpy(buf + n, body, len);
	copy = *ev;
	copy.data = buf;
	copy.data_size = (uint32_t) (n + len);
	text = mb_event_text(&copy);
	free(buf);
	return text;
}
