#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What `meson install` gives a distribution: the mboot binary linked to the libmboot.so
# installed beside it, the library, the public headers and mboot.pc; a program built with
# `pkg-config --cflags --libs mboot` against that tree links and calls mb_version().
# The version expected is meson's (meson introspect), not one the project prints.
set -eu -o pipefail

B=${MB_BUILD_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

version=$(meson introspect --projectinfo "$B" | jq -r .version)
case "$version" in "" | null) fail "no project version from meson introspect" ;; esac
prefix=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "prefix") | .value')
libdir=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "libdir") | .value')
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac

D=$T/dest
meson install -C "$B" --no-rebuild --quiet --destdir "$D" >"$T/install.log" 2>&1 ||
	fail "meson install --destdir: $(cat "$T/install.log")"

for f in "$prefix/bin/mboot" "$libdir/libmboot.so.$version" "$libdir/libmboot.so.0" "$libdir/libmboot.so" \
	"$libdir/pkgconfig/mboot.pc" "$prefix/include/mboot/mboot.h" "$prefix/include/mboot/version.h"; do
	[ -e "$D$f" ] || fail "not installed: $f"
done
ok "installed: bin/mboot, libmboot.so.$version (+ .so.0, .so), include/mboot/*.h, mboot.pc"

# The binary needs the shared library (not a static copy of it) and runs with the installed one.
readelf -d "$D$prefix/bin/mboot" | grep -q 'NEEDED.*\[libmboot\.so\.0\]' ||
	fail "installed mboot does not link libmboot.so.0: $(readelf -d "$D$prefix/bin/mboot" | grep NEEDED)"
out=$(LD_LIBRARY_PATH=$D$libdir "$D$prefix/bin/mboot" --version)
[ "$out" = "mboot $version" ] || fail "installed mboot --version printed '$out', meson says $version"
resolved=$(LD_LIBRARY_PATH=$D$libdir ldd "$D$prefix/bin/mboot" | sed -n 's/.*libmboot\.so\.0 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$D$libdir/libmboot.so.0")" ] ||
	fail "installed mboot resolves libmboot.so.0 to '$resolved'"
ok "installed mboot links libmboot.so.0 and prints 'mboot $version'"

# The .pc from the destdir: sysroot prefixes its paths with the destdir, as for a cross build.
export PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
[ "$(pkg-config --modversion mboot)" = "$version" ] || fail "mboot.pc version $(pkg-config --modversion mboot)"
read -r -a flags <<<"$(pkg-config --cflags --libs mboot)"
cat >"$T/hello.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <mboot/mboot.h>

int main(void)
{
	printf("%s %s\n", mb_version(), mb_strerror(-EBADMSG));
	return 0;
}
C
read -r -a cc <<<"${MB_CC:-cc}"
san=()
[ "${MB_SANITIZE:-none}" = none ] || san=("-fsanitize=$MB_SANITIZE")
"${cc[@]}" "${san[@]}" -std=c11 -Wall -Werror -o "$T/hello" "$T/hello.c" "${flags[@]}" 2>"$T/cc.log" ||
	fail "compiling with pkg-config --cflags --libs mboot (${flags[*]}): $(cat "$T/cc.log")"
out=$(LD_LIBRARY_PATH=$D$libdir "$T/hello")
[ "$out" = "$version malformed input" ] || fail "the program printed '$out', want '$version malformed input'"
ok "a C program built with pkg-config (${flags[*]}) calls mb_version() = $version"
