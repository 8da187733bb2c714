#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per process, as a user runs them: mboot hash --authenticode against pesign -h (and
# osslsigncode verify, which recomputes the digest of a signed image) on the Debian kernel, GRUB,
# shim and systemd-boot images; the plain 'mboot hash' against sha256sum on a small file and
# against sha256sum, 'openssl dgst -sha256' and sha1sum on a large one; 'mboot --version' and
# 'mboot log replay' of a real 204-event log (tests/data/corpus/tpm2-tss) against /bin/true.
# Each row runs the two commands in pairs, R times (bench/paired.c): medians of the CPU time
# (user + system, from wait4) and of the wall time; ratio = median over the pairs of
# reference CPU / mboot CPU (> 1: mboot is cheaper). The aim (docs/pe.md): the 4 KiB row's
# ratio >= 1/1.3 (hash within 1.3x of sha256sum), --version within 2 ms of /bin/true.
# Usage: bench/bench-hash.sh [BUILD_DIR [KERNEL]]   (default: build, /boot/vmlinuz-* or
#        $MB_BENCH_KERNEL). Environment: R (pairs, 15), MB_BENCH_MIB (large file size, 256),
#        MB_BENCH_MBOOT (the mboot to measure; default BUILD_DIR/mboot).
# The build tree's mboot finds libmboot through its RUNPATH ($ORIGIN), and glibc's loader tries
# ten subdirectories there first (20 failed system calls, about 3 % of a small hash); an
# installed mboot (meson install, ldconfig) finds it in ld.so.cache. To measure that one:
# MB_BENCH_MBOOT=/usr/local/bin/mboot bench/bench-hash.sh.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=${MB_BENCH_MBOOT:-$B/mboot}
PAIRED=$B/bench/paired
if [ ! -x "$MBOOT" ] || [ ! -x "$PAIRED" ]; then echo "build first: meson setup $B && ninja -C $B"; exit 2; fi
command -v pesign >/dev/null || { echo "pesign is needed"; exit 2; }
kernel=${2:-${MB_BENCH_KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | head -1)}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
R=${R:-15}

# row [-a] LABEL BYTES REF_NAME MBOOT_CMD... -- REF_CMD...   (-a: any exit status of REF_CMD)
row() {
	local any=() label bytes ref out mc rc mw rw ratio
	[ "$1" = -a ] && { any=(-a); shift; }
	label=$1 bytes=$2 ref=$3
	shift 3
	out=$("$PAIRED" "${any[@]}" "$R" "$@") || { echo "failed: $*"; exit 1; }
	read -r mc rc mw rw ratio <<<"$out"
	printf '%-36s %7.1f MiB  mboot cpu %7.2f ms (wall %7.2f)  %-20s cpu %7.2f ms (wall %7.2f)  ratio %5.2fx\n' \
		"$label" "$(echo "$bytes / 1048576" | bc -l)" "$mc" "$mw" "$ref" "$rc" "$rw" "$ratio"
}
# absolute LABEL MBOOT_CMD... -- REF_CMD...: the CPU mboot costs over the reference, in ms
absolute() {
	local label=$1 out mc rc mw rw ratio
	shift
	out=$("$PAIRED" "$R" "$@") || { echo "failed: $*"; exit 1; }
	read -r mc rc mw rw ratio <<<"$out"
	printf '%-36s mboot cpu %6.2f ms (wall %6.2f)  /bin/true cpu %6.2f ms (wall %6.2f)  difference %5.2f ms cpu\n' \
		"$label" "$mc" "$mw" "$rc" "$rw" "$(echo "$mc - $rc" | bc -l)"
}

echo "$MBOOT ($(readelf -d "$MBOOT" 2>/dev/null | grep -q RUNPATH && echo "build tree: RUNPATH" || echo "no RUNPATH"))"
echo "medians of $R paired runs; ratio = reference CPU / mboot CPU (> 1: mboot cheaper)"
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
	row "authenticode $(basename "$f")" "$size" "pesign -h" \
		"$MBOOT" hash --authenticode --alg sha256 "$f" -- pesign -h -i "$f"
	if command -v osslsigncode >/dev/null && osslsigncode verify -in "$f" 2>/dev/null | grep -q '^Calculated'; then
		row -a "authenticode $(basename "$f")" "$size" "osslsigncode verify" \
			"$MBOOT" hash --authenticode --alg sha256 "$f" -- osslsigncode verify -in "$f"
	fi
	row "authenticode, 4 banks $(basename "$f")" "$size" "pesign -h" \
		"$MBOOT" hash --authenticode "$f" -- pesign -h -i "$f"
done

head -c 4096 /dev/urandom >"$tmp/small"
[ "$("$MBOOT" hash --alg sha256 --json "$tmp/small" | jq -r '.files[0].digests.sha256')" = \
  "$(sha256sum "$tmp/small" | cut -d' ' -f1)" ] || { echo "plain digest differs from sha256sum's"; exit 1; }
row "plain sha256, 4 KiB file" 4096 "sha256sum" "$MBOOT" hash --alg sha256 "$tmp/small" -- sha256sum "$tmp/small"

mib=${MB_BENCH_MIB:-256}
head -c $((mib * 1048576)) /dev/urandom >"$tmp/big"
[ "$("$MBOOT" hash --alg sha256 --json "$tmp/big" | jq -r '.files[0].digests.sha256')" = \
  "$(sha256sum "$tmp/big" | cut -d' ' -f1)" ] || { echo "plain digest differs from sha256sum's"; exit 1; }
size=$((mib * 1048576))
row "plain sha256, ${mib} MiB file" "$size" "sha256sum" "$MBOOT" hash --alg sha256 "$tmp/big" -- sha256sum "$tmp/big"
row "plain sha256, ${mib} MiB file" "$size" "openssl dgst -sha256" \
	"$MBOOT" hash --alg sha256 "$tmp/big" -- openssl dgst -sha256 "$tmp/big"
row "plain sha1, ${mib} MiB file" "$size" "sha1sum" "$MBOOT" hash --alg sha1 "$tmp/big" -- sha1sum "$tmp/big"

# Start-up: what a process costs beyond exec, and a replay of a real log (204 events, 4 banks).
log=tests/data/corpus/tpm2-tss/binary_measurements_hcrtm.bin
absolute "mboot --version" "$MBOOT" --version -- /bin/true
absolute "mboot log replay (204 events)" "$MBOOT" log replay "$log" -- /bin/true
