#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per process, as a user runs it: 'mboot predict' of a Secure Boot update against a GRUB update,
# the baseline, in the same run (issue 16).
# - GRUB chain: the recorded real GRUB boot (tests/data/grub-model, 4 banks) updated to
#   grub-mkconfig's config for the next kernel with the GRUB model (the configs that booted) and
#   a kernel and initrd made up here: of Debian's sizes (MB_BENCH_KERNEL_MIB, MB_BENCH_INITRD_MIB:
#   hashing them in 4 banks is most of the cost) and of 1 KiB (the chain's own work).
# - Secure Boot chain: keylime's shim boot (the corpus log of tests/cli/test-predict-secureboot.sh,
#   sha256), with a GRUB update (--efi OLD=NEW: two images grub-mkimage makes here with the same
#   prefix, other modules), db += a KEK-signed update (openssl, efitools) and dbx += today's dbx
#   and an Authenticode hash (hash-to-efi-sig-list). The Fedora GRUB that booted is not on this
#   machine: the log's GRUB event gets OLD's digest (pesign's) in place of its own, byte for byte.
# - The UKI chain is bench/bench-uki.sh (predict --uki against systemd-measure).
# Both predictions are checked first against values from outside mboot (sha256sum, pesign,
# openssl over tpm2_eventlog's digests). Each row runs GRUB then Secure Boot in pairs, R times
# (bench/paired.c): medians of the CPU time (user + system, from wait4) and of the wall time;
# ratio = median over the pairs of Secure Boot CPU / GRUB CPU (< 1: the Secure Boot chain is cheaper).
# Usage: bench/bench-predict-chains.sh [BUILD_DIR]   (default: build). Environment: R (15),
#        MB_BENCH_KERNEL_MIB (8), MB_BENCH_INITRD_MIB (32).
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$B/mboot
PAIRED=$B/bench/paired
if [ ! -x "$MBOOT" ] || [ ! -x "$PAIRED" ]; then echo "build first: meson setup $B && ninja -C $B"; exit 2; fi
for t in grub-mkimage pesign sha256sum; do
	command -v "$t" >/dev/null || { echo "$t is needed (scripts/install-deps)"; exit 2; }
done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
R=${R:-15}
load() { cut -d' ' -f1-3 /proc/loadavg; }

# ---- GRUB chain --------------------------------------------------------------------------------
D=tests/data/grub-model
ESP='(hd0,gpt1)/EFI/BOOT/grub.cfg'
BOOT='(hd0,gpt1)/boot/grub/grub.cfg'
# grub_pcr9 LOG_JSON CFG KERNEL INITRD: PCR 9 (sha256) with sha256sum's digests of the files
# shellcheck source=tests/grub-model-fallback.sh
. tests/grub-model-fallback.sh
next=$(sed -n 's/.*vmlinuz-\([^ \t]*\).*/\1/p' "$D/boot-grub-next.cfg" | sed -n 1p)
mkdir "$W/big" "$W/small"
head -c $((${MB_BENCH_KERNEL_MIB:-8} << 20)) /dev/urandom >"$W/big/vmlinuz-$next"
head -c $((${MB_BENCH_INITRD_MIB:-32} << 20)) /dev/urandom >"$W/big/initrd.img-$next"
head -c 1024 /dev/urandom >"$W/small/vmlinuz-$next"
head -c 1024 /dev/urandom >"$W/small/initrd.img-$next"
grub=("$MBOOT" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg"
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg")
grub_big=("${grub[@]}" --kernel "$W/big/vmlinuz-$next" --initrd "$W/big/initrd.img-$next")
grub_small=("${grub[@]}" --kernel "$W/small/vmlinuz-$next" --initrd "$W/small/initrd.img-$next")
"$MBOOT" log show --json "$D/log.bin" >"$W/grub-log.json"
"${grub_big[@]}" --json >"$W/grub.json" 2>/dev/null || { echo "GRUB chain: predict failed"; exit 1; }
[ "$(jq -r '.banks.sha256["9"]' "$W/grub.json")" = \
  "$(grub_pcr9 "$W/grub-log.json" "$D/boot-grub-next.cfg" "$W/big/vmlinuz-$next" "$W/big/initrd.img-$next")" ] ||
	{ echo "GRUB chain: predicted PCR 9 differs from sha256sum's replay"; exit 1; }

# ---- Secure Boot chain -------------------------------------------------------------------------
TODAY=tests/data/corpus/keylime-tests/mb_log_secureboot.bin
LOG=$W/sb.bin
# the helper's sb_need_tools, sb_read_log (tpm2_eventlog), var_data, replay, n_dbx; W and LOG set
# shellcheck source=tests/cli/secureboot-lib.sh
. tests/cli/secureboot-lib.sh
sb_need_tools
grub-mkimage -O x86_64-efi -o "$W/old.efi" -p /EFI/fedora normal configfile tpm linux
grub-mkimage -O x86_64-efi -o "$W/new.efi" -p /EFI/fedora normal configfile tpm linux echo test
auth() { pesign -h -i "$1" | awk '{ print $2 }'; }
# today's GRUB (\EFI\fedora\grubx64.efi, the second application) by its sha256 as tpm2_eventlog reads it
was=3ca0250a57e52ec2d8eedc0674fdfaba376bf1f0297483dfe63bc3abb40b073d
xxd -p "$TODAY" | tr -d '\n' >"$W/today.hex"
[ "$(grep -o "$was" "$W/today.hex" | wc -l)" = 1 ] || { echo "$TODAY: GRUB's digest not found once"; exit 1; }
sed "s/$was/$(auth "$W/old.efi")/" "$W/today.hex" | xxd -r -p >"$LOG"
[ "$( { cmp -l "$TODAY" "$LOG" || true; } | wc -l)" -le 32 ] && [ "$(stat -c %s "$LOG")" = "$(stat -c %s "$TODAY")" ] ||
	{ echo "the patched log differs in more than the digest"; exit 1; }
sb_read_log
n_grub=$(awk -v d="$(auth "$W/old.efi")" '$3 == d { print $1 }' "$W/digests")
for k in db kek; do
	openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mboot bench $k/" -keyout "$W/$k.key" \
		-out "$W/$k.crt" -days 30 2>/dev/null
done
cert-to-efi-sig-list -g 11111111-2222-3333-4444-555555555555 "$W/db.crt" "$W/db.esl" >/dev/null
sign-efi-sig-list -a -g 11111111-2222-3333-4444-555555555555 -k "$W/kek.key" -c "$W/kek.crt" db \
	"$W/db.esl" "$W/db.auth" >/dev/null 2>&1
hash-to-efi-sig-list "$W/new.efi" "$W/hash.esl" >/dev/null
{ var_data "$n_dbx" | xxd -r -p; cat "$W/hash.esl"; } >"$W/dbx.update"
sb=("$MBOOT" predict --log "$LOG" --efi "$W/old.efi=$W/new.efi" --efi-var "db+=$W/db.auth" --efi-var "dbx+=$W/dbx.update")
"${sb[@]}" --json >"$W/sb.json" 2>/dev/null || { echo "Secure Boot chain: predict failed"; exit 1; }
[ -n "$n_grub" ] && [ "$(jq -c .changed "$W/sb.json")" = '[4,7]' ] &&
	[ "$(jq -r '.banks.sha256["4"]' "$W/sb.json")" = "$(replay 4 "$n_grub" "$(auth "$W/new.efi")")" ] ||
	{ echo "Secure Boot chain: changed $(jq -c .changed "$W/sb.json"), PCR 4 differs from openssl's replay"; exit 1; }

# ---- the runs ----------------------------------------------------------------------------------
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "$(nproc) CPUs (${cpu_model:-unknown}), load $(load) before; medians of $R paired runs;"
echo "ratio = Secure Boot CPU / GRUB CPU (< 1: the Secure Boot chain is cheaper)"
row() { # row LABEL GRUB_CMD... -- SB_CMD...: the ratio in $ratio
	local label=$1 out gc sc gw sw
	shift
	out=$("$PAIRED" "$R" "$@") || { echo "failed: $*"; exit 1; }
	read -r gc sc gw sw ratio <<<"$out"
	printf '%-38s GRUB cpu %7.2f ms (wall %7.2f)  Secure Boot cpu %6.2f ms (wall %6.2f)  ratio %5.2fx\n' \
		"$label" "$gc" "$gw" "$sc" "$sw" "$ratio"
}
big="kernel ${MB_BENCH_KERNEL_MIB:-8} MiB, initrd ${MB_BENCH_INITRD_MIB:-32} MiB"
row "GRUB: $big" "${grub_big[@]}" -- "${sb[@]}"
r_big=$ratio
row "GRUB: kernel and initrd of 1 KiB" "${grub_small[@]}" -- "${sb[@]}"
echo "UKI chain: bench/bench-uki.sh (predict --uki against systemd-measure calculate)"
printf 'summary: Secure Boot chain / GRUB chain CPU %.2fx (%s), %.2fx (1 KiB files); load %s after\n' \
	"$r_big" "$big" "$ratio" "$(load)"
