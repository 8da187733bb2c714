/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include <mboot/policy.h>
#include "lib/events/utf16.h"
#include "event-text.h"

MB_EXPORT char *mb_event_text(const mb_event *ev)
{
	size_t n = ev->data_size, i;
	bool ascii = true;
	char *s;

	while (n > 0 && ev->data[n - 1] == 0)
		n--;
	if (n == 0)
		return NULL;
	for (i = 0; i < n; i++) {
		uint8_t c = ev->data[i];

		if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
			ascii = false;
			break;
		}
	}
	if (!ascii)
		return ev->data_size >= 4 && ev->data[1] == 0 ? utf16le_to_utf8_strict(ev->data, ev->data_size) : NULL;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, ev->data, n);
	s[n] = 0;
	return s;
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
