#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the attack seeds of fuzz/corpus/verify and fuzz/corpus/eventlog (see the README.md
# there) from a real GRUB boot, tests/data/corpus/tpm2-tools/event-bootorder.bin (SHA-1 +
# SHA-256), with the test helper mb-tamper. Deterministic: rerunning changes no byte.
# Usage: fuzz/make-attack-seeds.sh [BUILD_DIR]   (default build; needs -Dtests=true)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
tamper=$B/tests/tpm/mb-tamper
mboot=$B/mboot
if ! [ -x "$tamper" ] || ! [ -x "$mboot" ]; then
	echo "build first: scripts/build $B" >&2
	exit 2
fi
base=tests/data/corpus/tpm2-tools/event-bootorder.bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The index of the first PCR 8 event whose text starts with $1.
grub_event() {
	"$mboot" log show --json --pcr 8 "$base" | jq -r --arg p "$1" \
		'[.events[] | select(.decoded.description // "" | startswith($p)) | .index][0] // empty'
}
cmdline=$(grub_event "kernel_cmdline: ")
linux=$(grub_event "grub_cmd: linux ")
if [ -z "$cmdline" ] || [ -z "$linux" ]; then
	echo "no kernel_cmdline or grub_cmd linux event in $base" >&2
	exit 1
fi

"$tamper" "$base" "$tmp/attack-cmdline-sha1-only.bin" drop-digest "$cmdline" sha256
"$tamper" "$base" "$tmp/attack-cmdline-relabelled-grub-cmd.bin" relabel "$cmdline"
"$tamper" "$base" "$tmp/attack-grub-cmd-relabelled-cmdline.bin" relabel "$linux"
"$tamper" "$base" "$tmp/attack-empty-log.bin" cut 1
for dir in fuzz/corpus/verify fuzz/corpus/eventlog; do
	cp "$tmp"/attack-*.bin "$dir"/
	echo "$dir: $(cd "$tmp" && echo attack-*.bin)"
done
