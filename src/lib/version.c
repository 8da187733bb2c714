/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <mboot/version.h>
#include "mb-config.h"

MB_EXPORT const char *mb_version(void)
{
	return MB_VERSION;
}
