#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# predict --efi OLD=NEW when NEW is a GRUB update (issue 16): GRUB images are made here by
# grub-mkimage (Debian's grub-efi-amd64-bin), the log by tcg-log.py (no mboot code: the PCR 4
# event is pesign's Authenticode digest of OLD, PCR 8 one of GRUB's commands). Checked: an
# image with other modules but the same prefix, built-in config and memdisk predicts PCR 4 as
# openssl extends pesign's digest of it and carries PCRs 8 and 9 (exit 0); another prefix,
# another built-in config or another memdisk make PCRs 8 and 9 unpredictable, each named
# (exit 1); a loader that is not GRUB in GRUB's place too. tests/vm's secureboot scenario
# boots the same case for real (Debian's signed grubx64.efi replaced by its gcdx64.efi).
set -u -o pipefail
M=${MBOOT:?}
S=${MB_SOURCE_ROOT:?}
W=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
for t in grub-mkimage pesign openssl python3 jq; do
	command -v "$t" >/dev/null || { echo "FAIL missing: $t"; exit 1; }
done
[ -d /usr/lib/grub/x86_64-efi ] || { echo "FAIL missing: /usr/lib/grub/x86_64-efi (grub-efi-amd64-bin)"; exit 1; }

printf 'normal (memdisk)/grub.cfg\n' >"$W/embedded.cfg"
printf 'set timeout=0\n' >"$W/embedded-other.cfg"
mkdir -p "$W/md/a" "$W/md/b"
printf 'source $prefix/grub.cfg\n' >"$W/md/a/grub.cfg"
printf 'configfile $prefix/grub.cfg\n' >"$W/md/b/grub.cfg"
tar -C "$W/md/a" -cf "$W/memdisk-a.tar" --mtime=@0 --owner=0 --group=0 grub.cfg
tar -C "$W/md/b" -cf "$W/memdisk-b.tar" --mtime=@0 --owner=0 --group=0 grub.cfg
# mk OUT PREFIX CONFIG MEMDISK MODULES...: a GRUB EFI image as grub-install makes one (MEMDISK
# '-': none; with one, grub-mkimage sets the prefix to (memdisk)/boot/grub itself).
mk() {
	local out=$1 prefix=$2 cfg=$3 md=$4
	shift 4
	if [ "$md" = - ]; then
		grub-mkimage -O x86_64-efi -o "$W/$out" -p "$prefix" -c "$cfg" "$@" || bad "grub-mkimage $out"
	else
		grub-mkimage -O x86_64-efi -o "$W/$out" -p "$prefix" -c "$cfg" -m "$md" "$@" memdisk tar ||
			bad "grub-mkimage $out"
	fi
}
mk old.efi /EFI/debian "$W/embedded.cfg" - normal configfile tpm
mk same.efi /EFI/debian "$W/embedded.cfg" - normal configfile tpm echo test
mk prefix.efi /boot/grub "$W/embedded.cfg" - normal configfile tpm
mk config.efi /EFI/debian "$W/embedded-other.cfg" - normal configfile tpm
mk oldmd.efi /EFI/debian "$W/embedded.cfg" "$W/memdisk-a.tar" normal configfile tpm
mk memdisk.efi /EFI/debian "$W/embedded.cfg" "$W/memdisk-b.tar" normal configfile tpm

auth() { pesign -h -d "$2" -i "$W/$1" | awk '{ print $2 }'; }
# extend BANK DIGEST...: a PCR from zero extended with each DIGEST (openssl).
extend() {
	local alg=$1 pcr d
	shift
	pcr=$(head -c "$(($(printf '%s' "$1" | wc -c) / 2))" /dev/zero | od -An -v -tx1 | tr -d ' \n')
	for d in "$@"; do
		pcr=$(printf '%s%s' "$pcr" "$d" | xxd -r -p | openssl dgst "-$alg" -r | cut -d' ' -f1)
	done
	printf '%s' "$pcr"
}
hexof() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
# the log: GRUB's application events (PCR 4, type 0x80000003: old.efi, and oldmd.efi as a
# second loader for the memdisk case), one command GRUB ran (PCR 8, EV_IPL) and the config it
# read (PCR 9, EV_IPL)
cmd='grub_cmd: normal (memdisk)/grub.cfg'
python3 "$S/tests/cli/tcg-log.py" "$W/log" \
	"4:2147483651:$(auth old.efi sha1):$(auth old.efi sha256):$(hexof 'grubx64.efi')" \
	"4:2147483651:$(auth oldmd.efi sha1):$(auth oldmd.efi sha256):$(hexof 'grubmd.efi')" \
	"8:13:$(printf '%s' "$cmd" | openssl dgst -sha1 -r | cut -c1-40):$(printf '%s' "$cmd" | openssl dgst -sha256 -r | cut -c1-64):$(hexof "$cmd")00" \
	"9:13:$(openssl dgst -sha1 -r "$W/md/a/grub.cfg" | cut -c1-40):$(openssl dgst -sha256 -r "$W/md/a/grub.cfg" | cut -c1-64):$(hexof '(hd0,gpt1)/EFI/debian/grub.cfg')00" ||
	bad "tcg-log.py"

predict() { # predict NEW [OLD]: exit code and the JSON in $W/p.json
	local rc=0
	"$M" predict --log "$W/log" --efi "$W/${2:-old.efi}=$W/$1" --json >"$W/p.json" 2>"$W/p.err" || rc=$?
	printf '%s' "$rc"
}

rc=$(predict same.efi)
check "same prefix, config and memdisk, other modules: exit 0, only PCR 4 changed ($(jq -c '{changed, unpredictable}' "$W/p.json"))" \
	test "$rc:$(jq -c '[.changed, (.unpredictable | keys)]' "$W/p.json")" = '0:[[4],[]]'
for alg in sha1 sha256; do
	check "same: predicted PCR 4 ($alg) = openssl's extend of pesign's digests of the new image and the second loader" \
		test "$(jq -r --arg b "$alg" '.banks[$b]["4"]' "$W/p.json")" = "$(extend "$alg" "$(auth same.efi "$alg")" "$(auth oldmd.efi "$alg")")"
	check "same: PCRs 8 and 9 ($alg) carried over (today's: openssl's extend of the logged digests)" \
		test "$(jq -r --arg b "$alg" '.banks[$b]["8"]' "$W/p.json")" = "$(extend "$alg" "$(printf '%s' "$cmd" | openssl dgst "-$alg" -r | cut -d' ' -f1)")"
done

for c in "prefix.efi:old.efi:prefix than today's ('/boot/grub', was '/EFI/debian')" "config.efi:old.efi:built-in config than today's" \
	"memdisk.efi:oldmd.efi:memdisk than today's"; do
	f=${c%%:*} rest=${c#*:}
	o=${rest%%:*} what=${rest#*:}
	rc=$(predict "$f" "$o")
	check "$f: exit 1, PCRs 8 and 9 unpredictable: \"another $what\" ($(jq -r '.unpredictable["8"] // "none"' "$W/p.json"))" \
		test "$rc:$(jq -c '.unpredictable | keys' "$W/p.json"):$(jq -r '.unpredictable["8"] // ""' "$W/p.json" | grep -cF "another $what")" \
		= '1:["8","9"]:1'
	if [ "$o" = old.efi ]; then want=$(extend sha256 "$(auth "$f" sha256)" "$(auth oldmd.efi sha256)")
	else want=$(extend sha256 "$(auth old.efi sha256)" "$(auth "$f" sha256)"); fi
	check "$f: PCR 4 still predicted (pesign), no value for 8 and 9" \
		test "$(jq -r '.banks.sha256["4"]' "$W/p.json"):$(jq -c '.banks.sha256 | has("8") or has("9")' "$W/p.json")" \
		= "$want:false"
done

# A loader that is not GRUB in GRUB's place (a PE image without GRUB's modules).
objcopy --remove-section mods "$W/old.efi" "$W/nogrub.efi" 2>/dev/null || bad "objcopy"
rc=$(predict nogrub.efi)
check "a loader that is not GRUB in its place: exit 1, PCRs 8 and 9 named ($(jq -r '.unpredictable["8"] // "none"' "$W/p.json"))" \
	test "$rc:$(jq -c '.unpredictable | keys' "$W/p.json"):$(jq -r '.unpredictable["8"] // ""' "$W/p.json" | grep -c 'replaces GRUB')" \
	= '1:["8","9"]:1'

# A damaged mods area in the new image: a clear error, exit 2.
cp "$W/same.efi" "$W/bad.efi"
off=$(objdump -h "$W/bad.efi" | awk '$2 == "mods" { print $6 }')
printf 'MIMG' | dd of="$W/bad.efi" bs=1 seek=$((0x$off)) conv=notrunc status=none
rc=$(predict bad.efi)
check "a new image whose mods area is damaged: exit 2, named ($(head -c 160 "$W/p.err"))" \
	test "$rc:$(grep -c 'mimg' "$W/p.err")" = 2:1

echo "$fails failed"
[ "$fails" -eq 0 ]
