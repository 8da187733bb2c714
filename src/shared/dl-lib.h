/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_DL_LIB_H
#define MB_SHARED_DL_LIB_H

/*
 * The one way mboot dlopen()s a library: only for what is optional for a verb (tpm2-tss,
 * libcryptsetup, PCRE2, zstd, libqrencode, libcurl). libcrypto, jansson, zlib and libc are
 * linked. The types still come from the libraries' headers at compile time.
 *
 * Per library, one list names each function once (systemd's dlopen pattern):
 *
 *     #define PCRE2_DL(X) X(pcre2_compile) X(pcre2_match) ...     (the user header)
 *     PCRE2_DL(DL_DECLARE)                                        (the user header)
 *     PCRE2_DL(DL_DEFINE)                                         (its .c)
 *     static const dl_sym syms[] = { PCRE2_DL(DL_ENTRY) };        (its .c)
 *
 * and callers call the pointer, sym_pcre2_compile(...), after the library's dlopen_X() at
 * their entry point (a function called but not listed has no sym_ pointer: a compile error).
 * Next to the table, DL_NOTE() records the soname in the ELF .note.dlopen section for
 * packagers (the freedesktop "ELF dlopen metadata" format: tests/cli/test-dlopen-note.sh).
 * tests/cli/test-banned.sh allows dlopen() only in dl-lib.c.
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
	const char *soname; /* the exact soname: a different major version is not ours to use */
	const char *what;   /* what the user knows it as: "tpm2-tss" */
	const dl_sym *syms;
	size_t n_syms;
	bool loaded; /* set (release) once every slot is filled; then never cleared */
} dl_lib;

#define DL_LIB(soname, what, syms) { soname, what, syms, sizeof(syms) / sizeof((syms)[0]), false }

/*
 * Load lib and fill its slots, once per process (thread-safe; a failure is retried on the next
 * call). 0, or -EOPNOTSUPP with "WHAT is needed and cannot be loaded (SONAME): why", the
 * missing symbol named when one is. Never prints, never aborts. Which package ships the
 * soname is the tool's business (src/tool/dl-hint.c).
 */
int dl_lib_load(dl_lib *lib, mb_error *err);

/*
 * ELF dlopen metadata (https://systemd.io/ELF_DLOPEN_METADATA/): a note of owner "FDO", type
 * 0x407c0c0a, whose payload is a NUL-terminated JSON array describing one dlopen()ed feature.
 * Put next to the library's table; soname_json is a JSON array of strings, priority one of
 * "required", "recommended", "suggested".
 */
#define DL_NOTE_JSON(feature, description, priority, soname_json) \
	"[{\"feature\":\"" feature "\",\"description\":\"" description "\",\"priority\":\"" priority \
	"\",\"soname\":" soname_json "}]"
#define DL_NOTE_CAT2(a, b) a##b
#define DL_NOTE_CAT(a, b) DL_NOTE_CAT2(a, b)
#define DL_NOTE(feature, description, priority, soname_json) \
	DL_NOTE_EMIT(DL_NOTE_CAT(dl_note_, __COUNTER__), DL_NOTE_JSON(feature, description, priority, soname_json))
#define DL_NOTE_EMIT(id, json) \
	__attribute__((used, section(".note.dlopen"), aligned(4))) static const struct { \
		unsigned int n_namesz, n_descsz, n_type; \
		char name[4]; \
		char desc[(sizeof(json) + 3) & ~3u]; \
	} id = { 4, sizeof(json), 0x407c0c0a, "FDO", json }

#endif
