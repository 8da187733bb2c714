/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


#include "shared/secret-page.h"

int secret_page_alloc(secret_page *s, size_t min_size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t ps = page > 0 ? (size_t) page : 4096;

	memset(s, 0, sizeof(*s));
	if (min_size > SIZE_MAX - ps)
		return -ENOMEM;
	s->cap = min_size ? (min_size + ps - 1) / ps * ps : ps;
	s->p = aligned_alloc(ps, s->cap);
	if (!s->p)
		return -ENOMEM;
	s->locked = mlock(s->p, s->cap) == 0;
	(void) madvise(s->p, s->cap, MADV_DONTDUMP);
	return 0;
}

void secret_page_free(secret_page *s)
{
	if (!s->p)
		return;
	explicit_bzero(s->p, s->cap);
	if (s->locked)
		(void) munlock(s->p, s->cap);
	free(s->p);
	memset(s, 0, sizeof(*s));
}
