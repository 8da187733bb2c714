#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mboot hash --authenticode against pesign -h (and osslsigncode verify, which recomputes the
# digest of a signed image) on the Debian kernel, GRUB and shim images; and the plain
# 'mboot hash' against sha256sum and 'openssl dgst -sha256' on a large file. Best of R runs,
# wall time; ratio = reference time / mboot time (> 1: mboot is faster).
# Usage: bench/bench-hash.sh [BUILD_DIR [KERNEL]]   (default: build, /boot/vmlinuz-* or
#        $MB_BENCH_KERNEL). Environment: R (runs, 5), MB_BENCH_MIB (plain file size, 256).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$B/mboot
[ -x "$MBOOT" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
command -v pesign >/dev/null || { echo "pesign is needed"; exit 2; }
kernel=${2:-${MB_BENCH_KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | head -1)}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

best() { # best of R runs, in seconds
	local r=${R:-5} i t best=
	for ((i = 0; i < r; i++)); do
		local s e
		s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}
row() { # row LABEL BYTES MBOOT_T REF_NAME REF_T
	printf '%-34s %9.1f MiB %9.4f s %-20s %9.4f s %7.2fx\n' "$1" "$(echo "$2 / 1048576" | bc -l)" "$3" "$4" "$5" \
		"$(echo "$5 / $3" | bc -l)"
}

printf '%-34s %13s %11s %-20s %11s %8s\n' image size mboot reference "ref time" ratio
images=()
[ -n "$kernel" ] && [ -f "$kernel" ] && images+=("$kernel")
for f in /usr/lib/grub/x86_64-efi/monolithic/grubx64.efi /usr/lib/shim/shimx64.efi.signed \
	/usr/lib/systemd/boot/efi/systemd-bootx64.efi; do
	[ -f "$f" ] && images+=("$f")
done
[ -n "$kernel" ] || echo "(no kernel: pass one, e.g. vmlinuz from linux-image-*.deb via apt-get download)"
for f in "${images[@]}"; do
	[ "$("$MBOOT" hash --authenticode --alg sha256 --json "$f" | jq -r '.files[0].digests.sha256')" = \
	  "$(pesign -h -i "$f" | awk '{print $2}')" ] || { echo "digest differs from pesign's on $f"; exit 1; }
	size=$(stat -c %s "$f")
	m=$(best "$MBOOT" hash --authenticode --alg sha256 "$f")
	row "authenticode $(basename "$f")" "$size" "$m" "pesign -h" "$(best pesign -h -i "$f")"
	if command -v osslsigncode >/dev/null && osslsigncode verify -in "$f" 2>/dev/null | grep -q '^Calculated'; then
		row "authenticode $(basename "$f")" "$size" "$m" "osslsigncode verify" "$(best osslsigncode verify -in "$f")"
	fi
	row "authenticode, 4 banks $(basename "$f")" "$size" "$(best "$MBOOT" hash --authenticode "$f")" "pesign -h" \
		"$(best pesign -h -i "$f")"
done

mib=${MB_BENCH_MIB:-256}
head -c $((mib * 1048576)) /dev/urandom >"$tmp/big"
[ "$("$MBOOT" hash --alg sha256 --json "$tmp/big" | jq -r '.files[0].digests.sha256')" = \
  "$(sha256sum "$tmp/big" | cut -d' ' -f1)" ] || { echo "plain digest differs from sha256sum's"; exit 1; }
size=$((mib * 1048576))
m=$(best "$MBOOT" hash --alg sha256 "$tmp/big")
row "plain sha256, ${mib} MiB file" "$size" "$m" "sha256sum" "$(best sha256sum "$tmp/big")"
row "plain sha256, ${mib} MiB file" "$size" "$m" "openssl dgst -sha256" "$(best openssl dgst -sha256 "$tmp/big")"
m=$(best "$MBOOT" hash --alg sha1 "$tmp/big")
row "plain sha1, ${mib} MiB file" "$size" "$m" "sha1sum" "$(best sha1sum "$tmp/big")"
