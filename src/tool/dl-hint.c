/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "tool/tool.h"

/*
 * The library names the soname it could not load (src/shared/dl-lib.c), never a package: which
 * package ships it is the distribution's business, so it is said here, by the tool, for Debian
 * and its derivatives (the sonames of debian/control's Depends and Recommends).
 */
static const struct {
	const char *soname;
	const char *package;
} hints[] = {
	{ "libtss2-esys.so.0", "libtss2-esys-3.0.2-0" },
	{ "libtss2-mu.so.0", "libtss2-mu0" },
	{ "libtss2-rc.so.0", "libtss2-rc0" },
	{ "libtss2-tctildr.so.0", "libtss2-tctildr0" },
	{ "libcryptsetup.so.12", "libcryptsetup12" },
	{ "libpcre2-8.so.0", "libpcre2-8-0" },
	{ "libzstd.so.1", "libzstd1" },
	{ "libqrencode.so.4", "libqrencode4" },
	{ "libcurl.so.4", "libcurl4" },
};

const char *tool_dl_package(const char *message)
{
	size_t i;

	if (!message || !strstr(message, "cannot be loaded ("))
		return NULL;
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strstr(message, hints[i].soname))
			return hints[i].package;
	return NULL;
}

void tool_dl_hint(const char *message)
{
	const char *pkg = tool_dl_package(message);

	if (pkg)
		fprintf(stderr, "mboot: hint: on Debian, apt-get install %s\n", pkg);
}
