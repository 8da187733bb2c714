#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 'mboot hash --uki': PCR 11 of unified kernel images built here with objcopy from systemd's
# EFI stub (systemd's documented recipe), against systemd 252's own 'systemd-measure calculate'
# on the same section files, in four banks; hostile images exit 2.
set -eu -o pipefail

M=${MBOOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
measure=/usr/lib/systemd/systemd-measure
[ -f "$stub" ] || fail "no $stub (systemd-boot-efi)"
[ -x "$measure" ] || fail "no $measure (systemd 252)"

# shellcheck source=tests/cli/pe-bytes.sh
. "$(dirname "$0")/pe-bytes.sh"
# The section table entry of the section named $2: its file offset.
section_hdr() {
	local pe n opt i
	pe=$(u32 "$1" 60); n=$(u16 "$1" $((pe + 6))); opt=$(u16 "$1" $((pe + 20)))
	for ((i = 0; i < n; i++)); do
		local h=$((pe + 24 + opt + 40 * i))
		if [ "$(dd if="$1" bs=1 skip="$h" count=8 status=none | tr -d '\0')" = "$2" ]; then
			echo "$h"; return
		fi
	done
	return 1
}

# The kernel: Debian's, from the real-boot suite's cache (apt-get download); else a tiny PE.
kernel=$( (. "${MB_SOURCE_ROOT:?}/tests/vm/lib.sh" && vm_kernel) 2>/dev/null) || kernel=
if [ -z "$kernel" ]; then
	printf '.text\n.globl _start\n_start: ret\n' >"$T/t.s"
	as --64 -o "$T/t.o" "$T/t.s" && ld -m i386pep --subsystem 10 -e _start -o "$T/kernel.efi" "$T/t.o"
	kernel=$T/kernel.efi
	echo "note: no Debian kernel, a tiny PE as .linux"
fi
printf 'root=/dev/vda1 ro quiet\n' >"$T/cmdline"
cp /etc/os-release "$T/osrel"
head -c 200000 /dev/urandom >"$T/initrd"
head -c 3001 /dev/urandom >"$T/splash"
head -c 517 /dev/urandom >"$T/dtb"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/key.pem" 2>/dev/null
openssl pkey -in "$T/key.pem" -pubout -out "$T/pcrpkey"
printf '{"sha256": []}' >"$T/pcrsig"

# uki OUT SECTION=FILE ...: systemd's objcopy recipe, sections at their own addresses.
uki() {
	local out=$1 vma=$((0x1000000)) args=() s; shift
	for s in "$@"; do
		args+=(--add-section ".${s%%=*}=${s#*=}" --change-section-vma ".${s%%=*}=$(printf '0x%x' "$vma")")
		vma=$((vma + 0x2000000))
	done
	objcopy "${args[@]}" "$stub" "$out"
}
measure_pcr11() { # measure_pcr11 BANK SECTION=FILE ...: systemd-measure's value before any phase
	local bank=$1 args=() s; shift
	for s in "$@"; do [ "${s%%=*}" = pcrsig ] || args+=("--${s%%=*}=${s#*=}"); done
	"$measure" calculate "${args[@]}" --bank="$bank" --phase= 2>/dev/null | sed -n "s/^11:$bank=//p"
}

n=0
check() { # check NAME SECTION=FILE ...
	local name=$1 bank want got; shift
	uki "$T/$name.efi" "$@"
	for bank in sha1 sha256 sha384 sha512; do
		want=$(measure_pcr11 "$bank" "$@")
		got=$("$M" hash --uki --bank "$bank" --json "$T/$name.efi" | jq -r --arg b "$bank" '.banks[$b]["11"]')
		[ -n "$want" ] && [ "$want" = "$got" ] || fail "$name $bank: mboot $got, systemd-measure $want"
	done
	n=$((n + 1))
}
# Sections added in an order other than the stub's: the stub's order is what counts.
check linux-only linux="$kernel"
check debian osrel="$T/osrel" cmdline="$T/cmdline" linux="$kernel" initrd="$T/initrd"
check all initrd="$T/initrd" pcrpkey="$T/pcrpkey" dtb="$T/dtb" splash="$T/splash" cmdline="$T/cmdline" \
	osrel="$T/osrel" linux="$kernel"
check with-pcrsig linux="$kernel" pcrsig="$T/pcrsig" cmdline="$T/cmdline"
ok "$n UKIs: PCR 11 equals systemd-measure calculate --phase= in sha1, sha256, sha384, sha512"

# The text output is the layout of 'mboot pcrs'; default bank sha256; several --bank.
want=$(measure_pcr11 sha256 osrel="$T/osrel" cmdline="$T/cmdline" linux="$kernel" initrd="$T/initrd")
"$M" hash --uki "$T/debian.efi" >"$T/out"
printf '  sha256:\n    11: 0x%s\n' "${want^^}" | cmp -s - "$T/out" || { cat "$T/out"; fail "text output"; }
"$M" hash --uki --bank sha1 --bank sha256 --json "$T/debian.efi" | jq -e '.banks | keys == ["sha1", "sha256"]' \
	>/dev/null || fail "two banks"
ok "text output as 'mboot pcrs' prints it; --bank repeatable"

# --- refused ------------------------------------------------------------------------
refused() { # refused WHAT FILE PATTERN
	local rc=0
	"$M" hash --uki "$2" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "$1: exit $rc, not 2"
	grep -q -- "$3" "$T/err" || { cat "$T/err"; fail "$1: message lacks '$3'"; }
	[ ! -s "$T/out" ] || fail "$1: printed a value"
}
refused "the bare stub" "$stub" "no .linux section"
size=$(stat -c %s "$T/debian.efi")
initrd_end=$(($(u32 "$T/debian.efi" $(($(section_hdr "$T/debian.efi" .initrd) + 20))) + 100))
for cut in 64 400 1000 $((size / 2)) "$initrd_end"; do
	head -c "$cut" "$T/debian.efi" >"$T/cut.efi"
	refused "truncated to $cut" "$T/cut.efi" "at byte"
done
cp "$T/debian.efi" "$T/beyond.efi"
h=$(section_hdr "$T/beyond.efi" .initrd)
poke32 "$T/beyond.efi" $((h + 20)) $((size - 100))
refused "section beyond the file" "$T/beyond.efi" "beyond the end of the file"
cp "$T/debian.efi" "$T/many.efi"
poke16 "$T/many.efi" $(($(u32 "$T/many.efi" 60) + 6)) 65535
refused "65535 sections" "$T/many.efi" "over the limit"
cp "$T/debian.efi" "$T/vsize.efi"
h=$(section_hdr "$T/vsize.efi" .cmdline)
poke32 "$T/vsize.efi" $((h + 8)) 1000000
refused "VirtualSize over the raw size" "$T/vsize.efi" "VirtualSize 1000000 is larger"
# .initrd placed in memory inside .linux: the loaded bytes are not the file's
objcopy --add-section .linux="$kernel" --change-section-vma .linux=0x1000000 \
	--add-section .initrd="$T/initrd" --change-section-vma .initrd=0x1000100 "$stub" "$T/overlap.efi"
refused "sections overlapping in memory" "$T/overlap.efi" "overlaps section"
refused "not a file" "$T/nonexistent.efi" "nonexistent"
rc=0; "$M" hash --uki "$T/debian.efi" "$T/all.efi" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "two files: exit $rc"
rc=0; "$M" hash --uki --authenticode "$T/debian.efi" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "--uki --authenticode: exit $rc"
ok "refused with exit 2: no .linux, truncations, a section beyond the file, 65535 sections, VirtualSize over the raw size, overlap in memory, usage"
