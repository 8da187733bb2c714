/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/options.h"

int options_take(void *dst, size_t dst_size, const void *src, const char *what, mb_error *err)
{
	size_t have, i;

	memset(dst, 0, dst_size);
	memcpy(dst, &dst_size, sizeof(size_t));
	if (!src)
		return 0;
	memcpy(&have, src, sizeof(size_t));
	if (have < sizeof(size_t))
		return set_error(err, -EINVAL, "%s: options of size %zu (set .size with MB_OPTIONS_INIT)", what, have);
	/* a newer caller's struct: what this library does not know must be unset */
	for (i = dst_size; i < have; i++)
		if (((const uint8_t *) src)[i])
			return set_error(err, -EOPNOTSUPP, "%s: a field past the %zu bytes this libmboot knows is set "
					 "(a newer libmboot's option)", what, dst_size);
	memcpy((uint8_t *) dst + sizeof(size_t), (const uint8_t *) src + sizeof(size_t),
	       (have < dst_size ? have : dst_size) - sizeof(size_t));
	return 0;
}

int options_check_out(const void *dst, size_t src_size, const char *what, mb_error *err)
{
	size_t have;

	(void) src_size;
	memcpy(&have, dst, sizeof(size_t));
	if (have < sizeof(size_t))
		return set_error(err, -EINVAL, "%s: options of size %zu (set .size with MB_OPTIONS_INIT)", what, have);
	return 0;
}

void options_give(void *dst, const void *src, size_t src_size)
{
	size_t have;

	memcpy(&have, dst, sizeof(size_t));
	if (have < sizeof(size_t))
		return;
	memcpy((uint8_t *) dst + sizeof(size_t), (const uint8_t *) src + sizeof(size_t),
	       (have < src_size ? have : src_size) - sizeof(size_t));
}
