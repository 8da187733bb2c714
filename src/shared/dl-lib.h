/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_DL_LIB_H
#define MB_SHARED_DL_LIB_H

/*
 * Libraries that only some commands need (libcrypto, json-c, zlib, tpm2-tss, PCRE2, zstd,
 * libqrencode, libcurl) are dlopen()ed at their first use instead of being linked: linked,
 * every process pays for mapping and relocating them and their dependencies (libcurl alone
 * brings GnuTLS, Kerberos, LDAP...), 'mboot --version' and 'mboot hash' included. The types still come from the
 * libraries' headers at compile time; only the linking changes.
 *
 * Each user header (e.g. src/lib/tpm/tss2-dl.h) declares one pointer sym_F for each function
 * F it uses and #defines F as sym_F, so that the calls read as before; its .c lists them in
 * a dl_lib, and its dlopen_X() calls dl_lib_load() at the entry points, before any call
 * (or, for the package's hard dependencies, F means (dl_lib_ensure(&lib), sym_F): below).
 */

#include <stdbool.h>
#include <stddef.h>
#include <mboot/error.h>

#define DL_STR(x) #x
/* The name of f after macro expansion: pcre2_compile is pcre2_compile_8 in the library. */
#define DL_XSTR(x) DL_STR(x)

/* X-macro helpers for the user headers and their .c files. */
#define DL_DECLARE(f) extern __typeof__(f) *sym_##f;
#define DL_DEFINE(f) __typeof__(f) *sym_##f;
#define DL_ENTRY(f) { (void **) &sym_##f, DL_XSTR(f) },

typedef struct dl_sym {
	void **slot;      /* &sym_F */
	const char *name; /* the symbol in the library */
} dl_sym;

typedef struct dl_lib {
	const char *soname;  /* the exact soname: a different major version is not ours to use */
	const char *what;    /* what the user knows it as: "tpm2-tss" */
	const char *package; /* the package that ships soname (Debian's name) */
	const dl_sym *syms;
	size_t n_syms;
	bool loaded; /* set (release) once every slot is filled; then never cleared */
} dl_lib;

/*
 * Load lib and fill its slots, once per process (thread-safe; a failure is retried on the next
 * call). 0, or -EOPNOTSUPP with "WHAT is needed and cannot be loaded: ..." naming the package.
 */
int dl_lib_load(dl_lib *lib, mb_error *err);

/*
 * For a library the package depends on (libcrypto, zlib), whose user header defines each F as
 * (dl_lib_ensure(&lib), sym_F): every call loads it first if needed, so no path can reach an
 * empty slot. Entry points still call dl_lib_load() for an error that names the package; a
 * load that fails here aborts, as a missing DT_NEEDED library stops a program from starting.
 */
void dl_lib_need(dl_lib *lib);

static inline void dl_lib_ensure(dl_lib *lib)
{
	if (!__atomic_load_n(&lib->loaded, __ATOMIC_ACQUIRE))
		dl_lib_need(lib);
}

#endif
