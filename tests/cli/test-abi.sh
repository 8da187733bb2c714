#!/bin/bash
# libmboot.so exports exactly its installed API: every exported function is declared with
# MB_EXPORT in include/mboot/*.h, and every function declared so is exported (nm -D).
set -u
LIB=${MB_BUILD_ROOT:?}/libmboot.so
INC=${MB_SOURCE_ROOT:?}/include/mboot
fail() { echo "FAIL: $*"; exit 1; }
[ -e "$LIB" ] || fail "$LIB not built"
nm -D --defined-only "$LIB" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u > "${TMPDIR:-/tmp}/abi.$$.exported"
trap 'rm -f "${TMPDIR:-/tmp}"/abi.$$.*' EXIT
# the function names of MB_EXPORT declarations (the name right before the parameter list)
grep -hv '^#' "$INC"/*.h | sed -n '/MB_EXPORT/,/;/p' | tr '\n' ' ' | grep -o 'MB_EXPORT[^;]*;' |
	sed 's/(.*//; s/.*[ *]\(mb_[a-z0-9_]*\)$/\1/' | sort -u > "${TMPDIR:-/tmp}/abi.$$.declared"
n=$(wc -l < "${TMPDIR:-/tmp}/abi.$$.exported")
[ "$n" -gt 50 ] || fail "only $n exported functions"
extra=$(comm -23 "${TMPDIR:-/tmp}/abi.$$.exported" "${TMPDIR:-/tmp}/abi.$$.declared")
[ -z "$extra" ] || fail "exported but not declared with MB_EXPORT in include/mboot: $extra"
missing=$(comm -13 "${TMPDIR:-/tmp}/abi.$$.exported" "${TMPDIR:-/tmp}/abi.$$.declared")
[ -z "$missing" ] || fail "declared with MB_EXPORT but not exported: $missing"
nm -D --defined-only "$LIB" | awk '$2 == "T" && $3 !~ /^mb_/' | grep . && fail "exported symbols outside mb_*"
echo "ok: libmboot.so exports exactly the $n functions include/mboot declares with MB_EXPORT"
