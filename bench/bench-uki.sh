#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per process, as a user runs them: 'mboot hash --uki' and 'mboot predict --uki' against systemd
# 252's 'systemd-measure calculate --phase=' on the same UKI (systemd's objcopy recipe from
# systemd-boot-efi's stub: a Debian kernel, os-release, a command line and an initrd of
# MB_BENCH_INITRD_MIB MiB). systemd-measure reads the section files; mboot the UKI. predict also
# parses a log, computes the UKI's Authenticode digest (PCR 4) and writes nothing: it does more.
# Each row runs the two commands in pairs, R times (bench/paired.c): medians of the CPU time
# (user + system, from wait4) and of the wall time; ratio = median over the pairs of
# reference CPU / mboot CPU (> 1: mboot is cheaper).
# Usage: bench/bench-uki.sh [BUILD_DIR [KERNEL]]   (default: build, /boot/vmlinuz-*,
#        $MB_BENCH_KERNEL or the real-boot suite's cached Debian kernel). Environment: R (15),
#        MB_BENCH_INITRD_MIB (32).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$B/mboot
PAIRED=$B/bench/paired
FORGE=$B/tests/tpm/mb-forge
MEASURE=/usr/lib/systemd/systemd-measure
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
if [ ! -x "$MBOOT" ] || [ ! -x "$PAIRED" ] || [ ! -x "$FORGE" ]; then echo "build first: meson setup $B && ninja -C $B"; exit 2; fi
[ -x "$MEASURE" ] && [ -f "$STUB" ] || { echo "systemd-measure (systemd 252) and systemd-boot-efi are needed"; exit 2; }
kernel=${2:-${MB_BENCH_KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | head -1)}}
if [ -z "$kernel" ]; then
	# shellcheck source=/dev/null
	kernel=$( (export MB_SOURCE_ROOT=$PWD && . tests/vm/lib.sh && vm_kernel) 2>/dev/null) ||
		{ echo "no kernel: pass one (vmlinuz from linux-image-*.deb)"; exit 2; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
R=${R:-15}

row() { # row LABEL REF_NAME MBOOT_CMD... -- REF_CMD...
	local label=$1 ref=$2 out mc rc mw rw ratio
	shift 2
	out=$("$PAIRED" "$R" "$@") || { echo "failed: $*"; exit 1; }
	read -r mc rc mw rw ratio <<<"$out"
	printf '%-34s mboot cpu %7.2f ms (wall %7.2f)  %-26s cpu %7.2f ms (wall %7.2f)  ratio %5.2fx\n' \
		"$label" "$mc" "$mw" "$ref" "$rc" "$rw" "$ratio"
}

cp "$kernel" "$tmp/linux"
cp /etc/os-release "$tmp/osrel"
printf 'root=/dev/vda2 ro quiet\n' >"$tmp/cmdline"
head -c $((${MB_BENCH_INITRD_MIB:-32} << 20)) /dev/urandom >"$tmp/initrd"
objcopy --add-section .osrel="$tmp/osrel" --change-section-vma .osrel=0x20000 \
	--add-section .cmdline="$tmp/cmdline" --change-section-vma .cmdline=0x30000 \
	--add-section .linux="$tmp/linux" --change-section-vma .linux=0x2000000 \
	--add-section .initrd="$tmp/initrd" --change-section-vma .initrd=0x3000000 "$STUB" "$tmp/uki.efi"
sections=(--linux="$tmp/linux" --osrel="$tmp/osrel" --cmdline="$tmp/cmdline" --initrd="$tmp/initrd")
want=$("$MEASURE" calculate "${sections[@]}" --bank=sha256 --phase= 2>/dev/null | sed -n 's/^11:sha256=//p')
[ "$("$MBOOT" hash --uki --json "$tmp/uki.efi" | jq -r '.banks.sha256["11"]')" = "$want" ] ||
	{ echo "PCR 11 differs from systemd-measure's"; exit 1; }

# A UKI boot to predict from: the corpus' systemd-boot log with a UKI forged in (as tests/tpm/tpm-predict-uki.sh).
head -c 32 /dev/zero >"$tmp/app"
# (without its PCR 9 and 12 events, which a new UKI makes unpredictable: predict exits 0)
"$FORGE" tests/data/corpus/tpm2-tools/event-sd-boot-fedora37.bin "$tmp/a.bin" drop-pcr 9
"$FORGE" "$tmp/a.bin" "$tmp/log.bin" drop-pcr 12
"$FORGE" "$tmp/log.bin" "$tmp/log.bin" append-event 4 0x80000003 "$tmp/app" "$tmp/app"
for s in .linux .initrd; do
	printf '%s\0' "$s" >"$tmp/name"
	printf '%s\0' "$s" | iconv -f ascii -t utf-16le >"$tmp/name16"
	"$FORGE" "$tmp/log.bin" "$tmp/log.bin" append-event 11 13 "$tmp/name16" "$tmp/name"
	"$FORGE" "$tmp/log.bin" "$tmp/log.bin" append-event 11 13 "$tmp/name16" "$tmp/app"
done
printf 'ec223b8f0d0000004c696e757820696e6974726400' | xxd -r -p >"$tmp/tag"
"$FORGE" "$tmp/log.bin" "$tmp/log.bin" append-event 9 6 "$tmp/tag" "$tmp/app"
[ "$("$MBOOT" predict --log "$tmp/log.bin" --uki "$tmp/uki.efi" --json 2>/dev/null | jq -r '.banks.sha256["11"]')" = "$want" ] ||
	{ echo "predicted PCR 11 differs from systemd-measure's"; exit 1; }

echo "UKI of $(($(stat -c %s "$tmp/uki.efi") >> 20)) MiB; medians of $R paired runs; ratio = reference CPU / mboot CPU (> 1: mboot cheaper)"
row "hash --uki (sha256)" "systemd-measure calculate" \
	"$MBOOT" hash --uki "$tmp/uki.efi" -- "$MEASURE" calculate "${sections[@]}" --bank=sha256 --phase=
row "hash --uki (sha1, sha256)" "same, two banks" \
	"$MBOOT" hash --uki --bank sha1 --bank sha256 "$tmp/uki.efi" -- \
	"$MEASURE" calculate "${sections[@]}" --bank=sha1 --bank=sha256 --phase=
row "predict --uki (sha256 log)" "systemd-measure calculate" \
	"$MBOOT" predict --log "$tmp/log.bin" --uki "$tmp/uki.efi" -- \
	"$MEASURE" calculate "${sections[@]}" --bank=sha256 --phase=
