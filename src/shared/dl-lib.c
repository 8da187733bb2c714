/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "shared/dl-lib.h"
#include "shared/fail.h"

/* One lock for all libraries: a load happens a few times per process at most. */
static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static int load_locked(dl_lib *lib, mb_error *err)
{
	void *h;
	size_t i;

	/* RTLD_NODELETE: the slots keep pointing into it for the life of the process. */
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		const char *why = dlerror();

		return set_error(err, -EOPNOTSUPP, "%s is needed and cannot be loaded (%s): %s", lib->what,
				 lib->soname, why ? why : "dlopen failed");
	}
	for (i = 0; i < lib->n_syms; i++) {
		void *p;

		dlerror();
		p = dlsym(h, lib->syms[i].name);
		if (!p) {
			int r = set_error(err, -EOPNOTSUPP, "%s is needed and cannot be loaded (%s): it lacks %s; "
					  "a version that has it is needed", lib->what, lib->soname, lib->syms[i].name);

			while (i > 0)
				*lib->syms[--i].slot = NULL;
			dlclose(h);
			return r;
		}
		*lib->syms[i].slot = p;
	}
	__atomic_store_n(&lib->loaded, true, __ATOMIC_RELEASE);
	return 0;
}

int dl_lib_load(dl_lib *lib, mb_error *err)
{
	int r = 0;

	if (__atomic_load_n(&lib->loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&dl_lock);
	if (!lib->loaded)
		r = load_locked(lib, err);
	pthread_mutex_unlock(&dl_lock);
	return r;
}
