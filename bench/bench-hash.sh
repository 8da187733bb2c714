#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mboot hash --authenticode against pesign -h (and osslsigncode verify, which recomputes the
# digest of a signed image) on the Debian kernel, GRUB and shim images; and the plain
# 'mboot hash' against sha256sum and 'openssl dgst -sha256' on a large file. Best of R runs,
# wall and CPU time; ratio = reference time / mboot time (> 1: mboot is faster).
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

# best of R runs: "WALL CPU" seconds (CPU = user + system, steadier on a loaded machine)
best() {
	local r=${R:-5} i bw="" bc="" w u s c TIMEFORMAT='%3R %3U %3S'
	for ((i = 0; i < r; i++)); do
		{ time "$@" >/dev/null 2>&1; } 2>"$tmp/t" || true
		read -r w u s <"$tmp/t"
		c=$(echo "$u + $s" | bc -l)
		if [ -z "$bw" ] || [ "$(echo "$w < $bw" | bc -l)" = 1 ]; then bw=$w; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc -l)" = 1 ]; then bc=$c; fi
	done
	echo "$bw $bc"
}
row() { # row LABEL BYTES "MBOOT_WALL MBOOT_CPU" REF_NAME "REF_WALL REF_CPU"
	local mw mc rw rc
	read -r mw mc <<<"$3"
	read -r rw rc <<<"$5"
	printf '%-40s %7.1f MiB  mboot %7.3f s (cpu %6.3f)  %-20s %7.3f s (cpu %6.3f)  wall %5.2fx  cpu %5.2fx\n' \
		"$1" "$(echo "$2 / 1048576" | bc -l)" "$mw" "$mc" "$4" "$rw" "$rc" \
		"$(echo "$rw / ($mw + 0.0005)" | bc -l)" "$(echo "$rc / ($mc + 0.0005)" | bc -l)"
}

echo "ratio = reference time / mboot time (> 1: mboot faster); best of ${R:-5} runs"
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
