#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ABI a distribution keeps: libmboot.so against the committed baseline abi/libmboot.abi
# (abidw of the public headers' ABI), with abidiff from libabigail. Fails when a function
# is removed or changed, or a type a public function uses changes (size, layout, enum values):
# programs built against the baseline would break. Added functions pass, with a note (the
# baseline should take them so that removing them later is caught).
# A deliberate change: scripts/update-abi, and commit abi/libmboot.abi with the change.
set -u -o pipefail

LIB=${MB_BUILD_ROOT:?}/libmboot.so
SRC=${MB_SOURCE_ROOT:?}
BASE=$SRC/abi/libmboot.abi
fail() { echo "FAIL: $*"; echo "If the change is deliberate: scripts/update-abi, then commit abi/libmboot.abi."; exit 1; }

[ -e "$LIB" ] || fail "$LIB not built"
[ -e "$BASE" ] || fail "no baseline $BASE"
command -v abidiff >/dev/null || fail "abidiff not found (apt-get install abigail-tools; scripts/install-deps)"
# Without DWARF abidiff would compare symbol names only and miss every type change.
grep -q '\.debug_info' <<<"$(readelf -S "$LIB")" || fail "$LIB has no debug info (build with -Ddebug=true)"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The built library through abidw exactly as scripts/update-abi records it, then XML against
# XML (abidiff on the ELF file with --headers-dir2 missed a changed public struct).
abidw --headers-dir "$SRC/include/mboot" --drop-private-types --no-show-locs --no-corpus-path --no-comp-dir-path \
	--out-file "$T/now.abi" "$LIB" >"$T/abidw.log" 2>&1 || fail "abidw $LIB: $(cat "$T/abidw.log")"
# abidiff's status is a bit set: 1 error, 2 usage error, 4 ABI change, 8 incompatible change.
report=$(abidiff --no-added-syms "$BASE" "$T/now.abi" 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "$report"
	[ $((rc & 3)) -ne 0 ] && fail "abidiff could not compare (status $rc)"
	fail "libmboot.so changed the ABI of abi/libmboot.abi (abidiff status $rc; above)"
fi
n=$(grep -c '<elf-symbol ' "$BASE")
added=$(abidiff "$BASE" "$T/now.abi" 2>&1 | sed -n "s/^  \[A\] 'function \(.*\)'.*/  \1/p")
if [ -n "$added" ]; then
	echo "note: added since the baseline (scripts/update-abi records them):"
	echo "$added"
fi
echo "ok: libmboot.so keeps the ABI of abi/libmboot.abi ($n functions, none removed or changed)"
