#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 'mboot predict --uki' on a systemd-boot + UKI boot: a real systemd-boot log of the corpus
# (Fedora 37, tpm2-tools) with today's UKI appended by mb-forge as the firmware and systemd-stub
# log it (the UKI in PCR 4, its sections in PCR 11, the kernel's initrd tag in PCR 9). The next
# UKI's PCR 11 must equal systemd 252's 'systemd-measure calculate', PCR 4 today's events with
# the UKI's digest replaced by 'pesign -h', PCR 9 the new .initrd, extended here with openssl.
# What cannot be computed (PCR 12's command line, an initrd with appended cpio archives) and
# logs without a UKI are refused. No TPM is needed.
set -eu -o pipefail

M=${MBOOT:?}
F=${MB_FORGE:?}
C=${MB_TESTDATA:?}/corpus
SDBOOT=$C/tpm2-tools/event-sd-boot-fedora37.bin
UBUNTU=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
measure=/usr/lib/systemd/systemd-measure
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

ext() { printf '%s%s' "$1" "$2" | xxd -r -p | openssl dgst -sha256 -r | cut -d' ' -f1; }
sha() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
uki() { # uki OUT LINUX OSREL CMDLINE INITRD: systemd's objcopy recipe
	objcopy --add-section .osrel="$3" --change-section-vma .osrel=0x20000 \
		--add-section .cmdline="$4" --change-section-vma .cmdline=0x30000 \
		--add-section .linux="$2" --change-section-vma .linux=0x2000000 \
		--add-section .initrd="$5" --change-section-vma .initrd=0x3000000 "$stub" "$1"
}

# Today's and the next UKI.
printf '.text\n.globl _start\n_start: ret\n' >"$T/t.s"
as --64 -o "$T/t.o" "$T/t.s" && ld -m i386pep --subsystem 10 -e _start -o "$T/linux-new" "$T/t.o"
head -c 70000 /dev/urandom >"$T/linux-old"
cp /etc/os-release "$T/osrel"
cp "$T/osrel" "$T/osrel-old"
printf 'root=/dev/vda2 quiet\n' >"$T/cmdline-old"
printf 'root=/dev/vda2 quiet splash\n' >"$T/cmdline-new"
head -c 50000 /dev/urandom >"$T/initrd-old"
head -c 60001 /dev/urandom >"$T/initrd-new"
uki "$T/old.efi" "$T/linux-old" "$T/osrel" "$T/cmdline-old" "$T/initrd-old"
uki "$T/new.efi" "$T/linux-new" "$T/osrel" "$T/cmdline-new" "$T/initrd-new"

# The boot log: systemd-boot's log without its PCR 9 and 12 events, then the firmware's PCR 4
# event for today's UKI, systemd-stub's PCR 11 events (the section name in UTF-16 as data;
# digests of the name with NUL, then of the section) and the kernel's initrd tag (PCR 9).
"$F" "$SDBOOT" "$T/a.bin" drop-pcr 9
"$F" "$T/a.bin" "$T/log.bin" drop-pcr 12
head -c 32 /dev/zero >"$T/app-data"
"$F" "$T/log.bin" "$T/log.bin" append-event 4 0x80000003 "$T/app-data" "$T/old.efi"
for s in linux osrel cmdline initrd; do
	printf '.%s\0' "$s" >"$T/name"
	printf '.%s\0' "$s" | iconv -f ascii -t utf-16le >"$T/name16"
	"$F" "$T/log.bin" "$T/log.bin" append-event 11 13 "$T/name16" "$T/name"
	"$F" "$T/log.bin" "$T/log.bin" append-event 11 13 "$T/name16" "$T/$s-old"
done
printf 'ec223b8f0d0000004c696e757820696e6974726400' | xxd -r -p >"$T/tag"
cp "$T/log.bin" "$T/log-notag.bin"
"$F" "$T/log.bin" "$T/log.bin" append-event 9 6 "$T/tag" "$T/initrd-old"
want_today=$("$measure" calculate --linux="$T/linux-old" --osrel="$T/osrel" --cmdline="$T/cmdline-old" \
	--initrd="$T/initrd-old" --bank=sha256 --phase= 2>/dev/null | sed -n 's/^11:sha256=//p')
[ "$("$M" log replay --json "$T/log.bin" | jq -r '.banks.sha256["11"]')" = "$want_today" ] ||
	fail "the forged log's PCR 11 is not systemd-measure's value for today's UKI"

# --- the prediction -----------------------------------------------------------------
rc=0
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" --json --write-log "$T/next.bin" >"$T/p.json" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err"; fail "predict --uki: exit $rc"; }
want11=$("$measure" calculate --linux="$T/linux-new" --osrel="$T/osrel" --cmdline="$T/cmdline-new" \
	--initrd="$T/initrd-new" --bank=sha256 --phase= 2>/dev/null | sed -n 's/^11:sha256=//p')
app=$(pesign -h -i "$T/new.efi" | awk '/^hash:/ { print $2 }')
want4=0000000000000000000000000000000000000000000000000000000000000000
for d in $("$M" log show --json --pcr 4 "$SDBOOT" | jq -r '.events[].digests.sha256') "$app"; do
	want4=$(ext "$want4" "$d")
done
want9=$(ext 0000000000000000000000000000000000000000000000000000000000000000 "$(sha "$T/initrd-new")")
got() { jq -r --arg p "$1" '.banks.sha256[$p]' "$T/p.json"; }
[ "$(got 11)" = "$want11" ] || fail "PCR 11 $(got 11), systemd-measure $want11"
[ "$(got 4)" = "$want4" ] || fail "PCR 4 $(got 4), want $want4 (pesign -h $app)"
[ "$(got 9)" = "$want9" ] || fail "PCR 9 $(got 9), want $want9"
[ "$(got 0)" = "$("$M" log replay --json "$SDBOOT" | jq -r '.banks.sha256["0"]')" ] || fail "PCR 0 moved"
jq -e '.changed == [4, 9, 11] and .unpredictable == {} and .unmatched == []' "$T/p.json" >/dev/null ||
	fail "changed/unpredictable: $(jq -c '[.changed, .unpredictable, .unmatched]' "$T/p.json")"
# The predicted log: today's events but the UKI's, which carry the stub's UTF-16 names.
"$M" log show --json --pcr 11 "$T/next.bin" | jq -e '[.events[].decoded.text] ==
	[".linux", ".linux", ".osrel", ".osrel", ".cmdline", ".cmdline", ".initrd", ".initrd"]' >/dev/null ||
	fail "predicted log's PCR 11 events"
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" 2>"$T/err" >"$T/p.txt"
grep -q "PCR 11: recomputed .*systemd-pcrphase" "$T/err" || { cat "$T/err"; fail "PCR 11's note"; }
grep -qi "0x${want11^^}" "$T/p.txt" || fail "text output lacks PCR 11"
ok "predict --uki: PCR 11 = systemd-measure calculate, PCR 4 with pesign -h's digest, PCR 9 the new .initrd; the rest carried"

# The same UKI again: nothing changes.
"$M" predict --log "$T/log.bin" --uki "$T/old.efi" --json 2>/dev/null | jq -e '.changed == [4]' >/dev/null ||
	fail "today's UKI again: only PCR 4 (the forged app digest is a plain hash) should change"
ok "today's UKI again: PCR 11 and 9 unchanged"

# --- what cannot be predicted -------------------------------------------------------
unpredictable() { # unpredictable WHAT LOG PCR PATTERN
	local rc=0
	"$M" predict --log "$2" --uki "$T/new.efi" --json >"$T/u.json" 2>/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "$1: exit $rc, not 1"
	jq -e --arg p "$3" '.unpredictable[$p] != null and .banks.sha256[$p] == null and .banks.sha256["11"] != null' \
		"$T/u.json" >/dev/null || fail "$1: $(jq -c '.unpredictable' "$T/u.json")"
	grep -q -- "$4" <<<"$(jq -r --arg p "$3" '.unpredictable[$p]' "$T/u.json")" || fail "$1: reason $(jq -c .unpredictable "$T/u.json")"
}
printf ' root=/dev/vda2 quiet\0' | iconv -f ascii -t utf-16le >"$T/cmd16"
"$F" "$T/log.bin" "$T/log12.bin" append-event 12 13 "$T/cmd16" "$T/cmd16"
unpredictable "a systemd-boot command line in PCR 12" "$T/log12.bin" 12 "which happened is not in the log"
cat "$T/initrd-old" "$T/tag" >"$T/initrd-plus-cred"
"$F" "$T/log-notag.bin" "$T/log-cred.bin" append-event 9 6 "$T/tag" "$T/initrd-plus-cred"
unpredictable "an initrd tag of more than .initrd" "$T/log-cred.bin" 9 "credentials"
ok "PCR 12 (systemd-boot's command line) and PCR 9 (credentials appended) unpredictable, named, no value"

# --- system extensions (PCR 13): --uki-extra DIR ----------------------------------------
# The truth is a real boot: tests/data/uki-dropins recorded systemd-stub's PCR 13 for test.raw
# (its archive is all PCR 13 holds, whatever the rest of the boot).
D=${MB_TESTDATA:?}/uki-dropins
mkdir -p "$T/extra" "$T/empty" "$T/extra/folder.raw"
cp "$D/test.raw" "$D/test.cred" "$T/extra/"
printf 'skipped\n' >"$T/extra/.hidden.raw"
rc=0
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" --uki-extra "$T/extra" --json >"$T/x.json" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err"; fail "predict --uki-extra: exit $rc"; }
[ "$(got 11)" = "$(jq -r '.banks.sha256["11"]' "$T/x.json")" ] || fail "--uki-extra moved PCR 11"
[ "$(jq -r '.banks.sha256["13"]' "$T/x.json")" = "$(jq -r '.sha256["13"]' "$D/pcrs.json")" ] ||
	fail "PCR 13 $(jq -r '.banks.sha256["13"]' "$T/x.json"), the recorded boot's TPM $(jq -r '.sha256["13"]' "$D/pcrs.json")"
jq -e '.changed == [4, 9, 11, 13]' "$T/x.json" >/dev/null || fail "--uki-extra changed: $(jq -c .changed "$T/x.json")"
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" --uki-extra "$T/empty" --json 2>/dev/null |
	jq -e '.changed == [4, 9, 11] and .banks.sha256["13"] == null' >/dev/null || fail "an empty drop-in folder added PCR 13"
# today's boot had a system extension: a new one replaces its event, none leaves PCR 13 at zero
printf 'System extension initrd\0' | iconv -f ascii -t utf-16le >"$T/sx16"
"$F" "$T/log.bin" "$T/log13.bin" append-event 13 13 "$T/sx16" "$T/initrd-old"
"$M" predict --log "$T/log13.bin" --uki "$T/new.efi" --uki-extra "$T/extra" --json 2>/dev/null >"$T/x13.json" || true
[ "$(jq -r '.banks.sha256["13"]' "$T/x13.json")" = "$(jq -r '.sha256["13"]' "$D/pcrs.json")" ] || fail "PCR 13 replaced: $(jq -c .banks.sha256 "$T/x13.json")"
"$M" predict --log "$T/log13.bin" --uki "$T/new.efi" --uki-extra "$T/empty" --json 2>/dev/null >"$T/x0.json" || true
jq -e '.banks.sha256["13"] == "0000000000000000000000000000000000000000000000000000000000000000" and (.changed | index(13) != null)' \
	"$T/x0.json" >/dev/null || fail "no system extension any more: PCR 13 $(jq -c '.banks.sha256["13"]' "$T/x0.json")"
printf 'something else\0' | iconv -f ascii -t utf-16le >"$T/other16"
"$F" "$T/log.bin" "$T/log13x.bin" append-event 13 13 "$T/other16" "$T/initrd-old"
rc=0; "$M" predict --log "$T/log13x.bin" --uki "$T/new.efi" --uki-extra "$T/extra" --json >"$T/u.json" 2>/dev/null || rc=$?
[ "$rc" = 1 ] && jq -e '.unpredictable["13"] != null and .banks.sha256["13"] == null' "$T/u.json" >/dev/null ||
	fail "a PCR 13 event not the stub's: exit $rc, $(jq -c .unpredictable "$T/u.json")"
rc=0; "$M" predict --log "$T/log.bin" --uki-extra "$T/extra" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--uki-extra without --uki: exit $rc"
rc=0; "$M" predict --log "$T/log.bin" --uki "$T/new.efi" --uki-extra "$T/nowhere" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "nowhere" "$T/err" || fail "a missing drop-in folder: exit $rc, $(cat "$T/err")"
ok "predict --uki-extra: PCR 13 = the recorded boot's TPM for the same system extension (hidden names, folders and *.cred left out), replaced, dropped to zero; another PCR 13 event unpredictable; misuse exit 2"

# --- refused ------------------------------------------------------------------------
for log in "$SDBOOT" "$UBUNTU"; do
	rc=0
	"$M" predict --log "$log" --uki "$T/new.efi" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] && [ ! -s "$T/out" ] && grep -q -- "--uki .* matched no event" "$T/err" ||
		fail "$(basename "$log") has no UKI: exit $rc, $(cat "$T/err")"
done
rc=0; "$M" predict --log "$T/log.bin" --uki "$stub" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "not a unified kernel image" "$T/err" || fail "the bare stub: exit $rc"
rc=0; "$M" predict --log "$T/log.bin" --uki "$T/new.efi" --kernel "$T/linux-new" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--uki with --kernel: exit $rc"
ok "refused: logs without a UKI (exit 1, --uki named), a stub without .linux and --uki with --kernel (exit 2)"

# --- policy generate --uki ----------------------------------------------------------
"$M" policy generate --uki "$T/new.efi" --from-log "$T/log.bin" -o "$T/policy.json"
jq -e --arg v "$want11" --arg a "$app" '.pcrs["11"].values.sha256 == $v and
	([.pcrs["4"].rules[].digests[]?.sha256] | index($a)) != null and .pcrs["12"] == null' "$T/policy.json" >/dev/null ||
	fail "policy: PCR 11 value or PCR 4 digest: $(jq -c '.pcrs["11"], [.pcrs["4"].rules[].digests[]?.sha256]' "$T/policy.json")"
"$M" log replay --json "$T/next.bin" >"$T/next.pcrs"
"$M" verify --log "$T/next.bin" --pcrs "$T/next.pcrs" --policy "$T/policy.json" >"$T/v.out" 2>&1 ||
	{ cat "$T/v.out"; fail "the predicted boot does not pass the policy generated from the same UKI"; }
"$M" log replay --json "$T/log.bin" >"$T/today.pcrs"
rc=0; "$M" verify --log "$T/log.bin" --pcrs "$T/today.pcrs" --policy "$T/policy.json" >"$T/v.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "PCR 11" "$T/v.out" || { cat "$T/v.out"; fail "today's boot passes the next UKI's policy (exit $rc)"; }
# with the drop-in folder: PCR 13's value = the recorded boot's TPM for the same system extension,
# and the boot predict --uki-extra writes passes it
"$M" policy generate --uki "$T/new.efi" --uki-extra "$T/extra" --from-log "$T/log.bin" -o "$T/policy13.json"
jq -e --slurpfile t "$D/pcrs.json" '.pcrs["13"].values.sha256 == $t[0].sha256["13"]' "$T/policy13.json" >/dev/null ||
	fail "policy --uki-extra: PCR 13 $(jq -c '.pcrs["13"]' "$T/policy13.json"), recorded $(jq -r '.sha256["13"]' "$D/pcrs.json")"
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" --uki-extra "$T/extra" --write-log "$T/next13.bin" >/dev/null 2>&1 || true
"$M" log replay --json "$T/next13.bin" >"$T/next13.pcrs"
"$M" verify --log "$T/next13.bin" --pcrs "$T/next13.pcrs" --policy "$T/policy13.json" >"$T/v.out" 2>&1 ||
	{ cat "$T/v.out"; fail "the predicted boot with the system extension does not pass the policy with --uki-extra"; }
rc=0; "$M" verify --log "$T/next.bin" --pcrs "$T/next.pcrs" --policy "$T/policy13.json" >"$T/v.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "PCR 13" "$T/v.out" || { cat "$T/v.out"; fail "a boot without the system extension passes (exit $rc)"; }
"$M" policy generate --uki "$T/new.efi" --uki-extra "$T/empty" --from-log "$T/log.bin" -o "$T/policy0.json"
jq -e '.pcrs["13"].values.sha256 == "0000000000000000000000000000000000000000000000000000000000000000"' "$T/policy0.json" >/dev/null ||
	fail "policy --uki-extra of an empty folder: PCR 13 $(jq -c '.pcrs["13"]' "$T/policy0.json")"
rc=0; "$M" policy generate --uki-extra "$T/extra" --from-log "$T/log.bin" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "policy generate --uki-extra without --uki: exit $rc"
rc=0; "$M" policy generate --uki "$T/new.efi" --kernel "$T/linux-new" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "policy generate --uki --kernel: exit $rc"
ok "policy generate --uki: PCR 11 = systemd-measure, PCR 4 = pesign -h; the predicted boot passes, today's fails on PCR 11; --uki-extra: PCR 13 = the recorded boot's, a boot without the extension fails on it"
