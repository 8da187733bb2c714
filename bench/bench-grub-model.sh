#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per process: 'mboot predict --grub-cfg' on Debian's grub-mkconfig config (the recorded real boot,
# tests/data/grub-model) with the GRUB model (its self-check over the configs that booted, then
# the new config) against the same predict without booted copies (today's line by line check,
# which cannot predict PCR 8 of such a config). Each row runs the two in pairs, R times
# (bench/paired.c): medians of CPU and wall time; ratio = plain CPU / model CPU (< 1: the model
# costs more). The model's run must stay well under a second.
# Usage: bench/bench-grub-model.sh [BUILD_DIR]   Environment: R (pairs, 15).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$B/mboot
PAIRED=$B/bench/paired
if [ ! -x "$MBOOT" ] || [ ! -x "$PAIRED" ]; then echo "build first: meson setup $B && ninja -C $B"; exit 2; fi
D=tests/data/grub-model
R=${R:-15}
ESP='(hd0,gpt1)/EFI/BOOT/grub.cfg'
BOOT='(hd0,gpt1)/boot/grub/grub.cfg'
out=$("$PAIRED" -a "$R" \
	"$MBOOT" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" -- \
	"$MBOOT" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg")
read -r mc rc mw rw ratio <<<"$out"
echo "medians of $R paired runs"
printf 'predict, grub-mkconfig config: model cpu %7.2f ms (wall %7.2f)  plain cpu %7.2f ms (wall %7.2f)  ratio %5.2fx\n' \
	"$mc" "$mw" "$rc" "$rw" "$ratio"
awk -v w="$mw" 'BEGIN { exit !(w < 1000) }' || { echo "FAIL: the model's predict took $mw ms"; exit 1; }
