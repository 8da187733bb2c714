#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fetch Debian's signed kernel image (an EFI-stub PE/COFF with an Authenticode signature) with
# apt, for tests/cli/test-hash.sh: prints the path of the vmlinuz. Use as
#   MB_TEST_EFI=$(tests/pe/get-kernel.sh /var/tmp/mboot-kernel) meson test -C build
# Usage: get-kernel.sh DIR [PACKAGE]   (default: the newest linux-image-*-amd64 apt knows)
set -eu
dir=${1:?usage: get-kernel.sh DIR [PACKAGE]}
pkg=${2:-$(apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-amd64$' | cut -d' ' -f1 | sort -V | tail -1)}
mkdir -p "$dir"
cd "$dir"
if ! ls boot/vmlinuz-* >/dev/null 2>&1; then
	apt-get download "$pkg" >/dev/null 2>&1
	dpkg-deb --fsys-tarfile "$pkg"_*.deb | tar -x ./boot/
	rm -f "$pkg"_*.deb
fi
ls "$PWD"/boot/vmlinuz-* | head -1
