#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# redefine-core.sh CORE.a SYMS OUT.a: OUT.a is the static core with the symbols renamed as SYMS
# says (objcopy --redefine-syms: malloc -> oom_malloc, ...). meson's static libraries are thin
# archives, which objcopy cannot copy: each member object is renamed on its own.
set -eu
in=$1 syms=$2 out=$3
case $out in /*) ;; *) out=$PWD/$out ;; esac
case $syms in /*) ;; *) syms=$PWD/$syms ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$in")"
i=0
for o in $(ar t "$(basename "$in")"); do
	i=$((i + 1))
	objcopy --redefine-syms="$syms" "$o" "$tmp/$i-$(basename "$o")"
done
rm -f "$out"
ar rcs "$out" "$tmp"/*.o
