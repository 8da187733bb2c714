#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 'mboot predict --uki' on a systemd-boot + UKI boot: a real systemd-boot log of the corpus
# (Fedora 37, tpm2-tools) with today's UKI appended by mb-forge as the firmware and systemd-stub
# log it (the UKI in PCR 4, its sections in PCR 11, the kernel's initrd tag in PCR 9). The next
# UKI's PCR 11 must equal systemd 252's 'systemd-measure calculate', PCR 4 today's events with
# the UKI's digest replaced by 'pesign -h', PCR 9 the new .initrd, extended here with openssl.
# PCR 12 and the kernel's LoadOptions tag (PCR 9) from the new .cmdline in UTF-16LE (iconv,
# openssl) when today's events are today's UKI's .cmdline (--uki-today, --efi OLD=NEW); an edited
# command line, an initrd with appended cpio archives and logs without a UKI are refused.
# No TPM is needed.
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
"$F" "$T/log.bin" "$T/log.bin" append-event 4 0x80000003 "$T/app-data" "sha256=$(pesign -h -i "$T/old.efi" | awk '/^hash:/ { print $2 }')"
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
"$M" predict --log "$T/log.bin" --uki "$T/old.efi" --json 2>/dev/null | jq -e '.changed == []' >/dev/null ||
	fail "today's UKI again: nothing should change"
ok "today's UKI again: PCRs 4, 9 and 11 unchanged"

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
unpredictable "a systemd-boot command line in PCR 12, today's UKI not given" "$T/log12.bin" 12 "today's UKI is not given"
cat "$T/initrd-old" "$T/tag" >"$T/initrd-plus-cred"
"$F" "$T/log-notag.bin" "$T/log-cred.bin" append-event 9 6 "$T/tag" "$T/initrd-plus-cred"
unpredictable "an initrd tag of more than .initrd" "$T/log-cred.bin" 9 "credentials"
ok "PCR 12 (systemd-boot's command line) and PCR 9 (credentials appended) unpredictable, named, no value"

# --- the command line (PCR 12, PCR 9's LoadOptions tag), explained by today's UKI ------------
# systemd-boot (252.5+) passes .cmdline as the UKI's load options, a trailing newline (control
# characters, trailing blanks) dropped, and measures them into PCR 12 as UTF-16LE with the NUL;
# the stub measures them again, and the kernel's EFI stub tags the same bytes in PCR 9 (the
# vm-uki real boot shows the three digests equal). Today's log forged so; the new UKI's values
# computed here with iconv and openssl.
u16() { { printf '%s' "$1" | iconv -f ascii -t utf-16le; printf '\0\0'; } >"$2"; }
u16 'root=/dev/vda2 quiet' "$T/today16"
u16 'root=/dev/vda2 quiet splash' "$T/new16"
printf 'ed223b8f1a0000004c4f414445445f494d4147453a3a4c6f61644f7074696f6e7300' | xxd -r -p >"$T/lotag"
cmdlog() { # cmdlog OUT PCR12_DATA_FILE: today's log with systemd-boot's and the stub's PCR 12 events and the tags
	"$F" "$T/log-notag.bin" "$2.tmp" append-event 12 13 "$1" "$1"
	"$F" "$2.tmp" "$2.tmp" append-event 12 13 "$1" "$1"
	"$F" "$2.tmp" "$2.tmp" append-event 9 6 "$T/lotag" "$1"
	"$F" "$2.tmp" "$2" append-event 9 6 "$T/tag" "$T/initrd-old"
}
cmdlog "$T/today16" "$T/logc.bin"
z=0000000000000000000000000000000000000000000000000000000000000000
want12=$(ext "$(ext $z "$(sha "$T/new16")")" "$(sha "$T/new16")")
want9c=$(ext "$(ext $z "$(sha "$T/new16")")" "$(sha "$T/initrd-new")")
for today in "--uki-today $T/old.efi" "--efi $T/old.efi=$T/new.efi"; do
	rc=0
	# shellcheck disable=SC2086 # two words
	"$M" predict --log "$T/logc.bin" --uki "$T/new.efi" $today --json --write-log "$T/nextc.bin" >"$T/c.json" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err"; fail "predict --uki $today on today's UKI's command line: exit $rc"; }
	c12=$(jq -r '.banks.sha256["12"]' "$T/c.json") c9=$(jq -r '.banks.sha256["9"]' "$T/c.json")
	[ "$c12" = "$want12" ] || fail "$today: PCR 12 $c12, openssl $want12"
	[ "$c9" = "$want9c" ] || fail "$today: PCR 9 $c9, openssl $want9c"
	jq -e '.changed == [4, 9, 11, 12] and .unpredictable == {} and .unmatched == []' "$T/c.json" >/dev/null ||
		fail "$today: $(jq -c '[.changed, .unpredictable, .unmatched]' "$T/c.json")"
	[ "$(jq -r '.notes["12"]' "$T/c.json")" != null ] || fail "$today: no note for PCR 12"
	"$M" log show --json --pcr 12 "$T/nextc.bin" | jq -e '[.events[].decoded.text] | . == ["root=/dev/vda2 quiet splash", "root=/dev/vda2 quiet splash"]' >/dev/null ||
		fail "$today: the predicted log's PCR 12 texts"
done
# the text output: PCR 12's value on stdout
"$M" predict --log "$T/logc.bin" --uki "$T/new.efi" --uki-today "$T/old.efi" >"$T/c.txt" 2>/dev/null
grep -qi "12 *: *0x${want12^^}" "$T/c.txt" || fail "text output lacks PCR 12: $(cat "$T/c.txt")"
ok "today's PCR 12 and LoadOptions tag are today's UKI's .cmdline: the new UKI's PCR 12 and 9 = openssl over its UTF-16LE .cmdline (--uki-today, --efi OLD=NEW)"

# today's command line is not today's UKI's (edited at the menu): unpredictable, with the reason
u16 'root=/dev/vda2 quiet single' "$T/edit16"
cmdlog "$T/edit16" "$T/loge.bin"
unpredictable_today() { # unpredictable_today WHAT LOG PCR PATTERN ARGS...
	local what=$1 log=$2 pcr=$3 pat=$4 rc=0
	shift 4
	"$M" predict --log "$log" --uki "$T/new.efi" "$@" --json >"$T/u.json" 2>/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, not 1"
	jq -e --arg p "$pcr" '.unpredictable[$p] != null and .banks.sha256[$p] == null and .banks.sha256["11"] != null' \
		"$T/u.json" >/dev/null || fail "$what: $(jq -c '.unpredictable' "$T/u.json")"
	grep -q -- "$pat" <<<"$(jq -r --arg p "$pcr" '.unpredictable[$p]' "$T/u.json")" || fail "$what: reason $(jq -c .unpredictable "$T/u.json")"
}
unpredictable_today "an edited command line (PCR 12)" "$T/loge.bin" 12 "is not today's UKI's .cmdline.*edited at the boot menu" --uki-today "$T/old.efi"
unpredictable_today "an edited command line (PCR 9)" "$T/loge.bin" 9 "other load options than today's UKI's .cmdline" --uki-today "$T/old.efi"
unpredictable_today "the wrong today's UKI" "$T/logc.bin" 12 "new.efi is not today's UKI" --uki-today "$T/new.efi"
unpredictable_today "today's UKI not given" "$T/logc.bin" 9 "today's UKI is not given" 
rc=0; "$M" predict --log "$T/logc.bin" --uki-today "$T/old.efi" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--uki-today without --uki: exit $rc"
rc=0; "$M" predict --log "$T/logc.bin" --uki "$T/new.efi" --efi "$T/old.efi=$T/linux-new" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "another image than --uki" "$T/err" || fail "--efi TODAY=OTHER with --uki: exit $rc, $(cat "$T/err")"
ok "an edited command line, the wrong or no today's UKI: PCRs 12 and 9 unpredictable with the reason; --uki-today without --uki, --efi TODAY=OTHER: exit 2"

# --- today's UKI found on the ESP (--esp DIR) ------------------------------------------
# Without --uki-today, the *.efi under the ESP's EFI/Linux/, then EFI/ and its folders, whose
# Authenticode digest is today's UKI event's (pesign -h's, forged into the log above). A decoy UKI
# (new.efi) sorts first and is not picked; neither is a file that is no PE image.
esp=$T/esp
mkdir -p "$esp/EFI/Linux" "$esp/EFI/BOOT" "$esp/EFI/mboot"
cp "$T/new.efi" "$esp/EFI/Linux/a-decoy.efi"
printf 'no PE image\n' >"$esp/EFI/BOOT/BOOTX64.EFI"
for at in EFI/Linux/b-today.efi EFI/mboot/today.EFI; do
	rm -f "$esp/EFI/Linux/b-today.efi" "$esp/EFI/mboot/today.EFI"
	cp "$T/old.efi" "$esp/$at"
	rc=0
	"$M" predict --log "$T/logc.bin" --uki "$T/new.efi" --esp "$T/nothing" --esp "$esp" --json >"$T/c.json" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err"; fail "predict --uki --esp, today's UKI at $at: exit $rc, $(jq -c .unpredictable "$T/c.json")"; }
	[ "$(jq -r '.banks.sha256["12"]' "$T/c.json"):$(jq -r '.banks.sha256["9"]' "$T/c.json")" = "$want12:$want9c" ] ||
		fail "predict --uki --esp, today's UKI at $at: PCRs 12 and 9 are not openssl's"
done
rm -f "$esp/EFI/mboot/today.EFI"
unpredictable_today "today's UKI not on the ESP (a decoy with another digest)" "$T/logc.bin" 12 \
	"today's UKI is not given (--uki-today FILE, or --efi TODAY=NEW) nor found on the ESP" --esp "$esp"
unpredictable_today "--esp none" "$T/logc.bin" 12 "today's UKI is not given (--uki-today FILE, or --efi TODAY=NEW):" --esp none
for bad in "--esp $esp" "--uki $T/new.efi --esp none --esp $esp" "--uki $T/new.efi --esp $esp --esp none"; do
	rc=0
	# shellcheck disable=SC2086 # options
	"$M" predict --log "$T/logc.bin" $bad >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "predict $bad: exit $rc, not 2"
done
ok "--esp: today's UKI found by its Authenticode digest (pesign -h) in EFI/Linux/ or another folder of EFI/, a decoy and a non-PE file passed over; none there: unpredictable, the same reason; --esp without --uki, none with a folder: exit 2"

# --- system extensions (PCR 13): --uki-extra DIR ----------------------------------------
# The truth is a real boot: tests/data/uki-dropins recorded systemd-stub's PCR 13 for test.raw
# (its archive is all PCR 13 holds, whatever the rest of the boot).
D=${MB_TESTDATA:?}/uki-dropins
mkdir -p "$T/extra" "$T/empty" "$T/extra/folder.raw"
cp "$D/test.raw" "$D/test.cred" "$T/extra/"
printf 'skipped\n' >"$T/extra/.hidden.raw"
rc=0
"$M" predict --log "$T/log.bin" --uki "$T/new.efi" --uki-extra "$T/extra" --json >"$T/x.json" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "predict --uki-extra: exit $rc, not 1 (PCRs 9 and 12 unpredictable)"; }
[ "$(got 11)" = "$(jq -r '.banks.sha256["11"]' "$T/x.json")" ] || fail "--uki-extra moved PCR 11"
[ "$(jq -r '.banks.sha256["13"]' "$T/x.json")" = "$(jq -r '.sha256["13"]' "$D/pcrs.json")" ] ||
	fail "PCR 13 $(jq -r '.banks.sha256["13"]' "$T/x.json"), the recorded boot's TPM $(jq -r '.sha256["13"]' "$D/pcrs.json")"
jq -e '.changed == [4, 11, 13]' "$T/x.json" >/dev/null || fail "--uki-extra changed: $(jq -c .changed "$T/x.json")"
# the stub appends the new archives to the initrd the kernel tags, and measures the credentials'
jq -e '(.unpredictable | keys) == ["12", "9"] and (.unpredictable["9"] | test("system extensions and credentials"))' \
	"$T/x.json" >/dev/null || fail "--uki-extra with credentials and a system extension: $(jq -c .unpredictable "$T/x.json")"
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
# PCR 9: with drop-ins the kernel tags .initrd followed by the stub's archives, which predict
# leaves unpredictable (its --write-log keeps today's tag) and policy generate writes no rule for
# (the same mb_uki_dropin_appended); without any, the rule is sha256sum of the .initrd
initrd_alone=$(sha "$T/initrd-new")
jq -e --arg d "$initrd_alone" '[.pcrs["9"].rules[]?.digests[]?.sha256] | index($d) == null' "$T/policy13.json" >/dev/null ||
	fail "policy --uki-extra with a system extension and a credential: PCR 9 allows the .initrd alone: $(jq -c '.pcrs["9"]' "$T/policy13.json")"
"$M" verify --log "$T/next13.bin" --pcrs "$T/next13.pcrs" --policy "$T/policy13.json" >"$T/v.out" 2>&1 ||
	{ cat "$T/v.out"; fail "the predicted boot with the system extension does not pass the policy with --uki-extra"; }
mkdir -p "$T/extra-raw"
cp "$D/test.raw" "$T/extra-raw/"
"$M" policy generate --uki "$T/new.efi" --uki-extra "$T/extra-raw" --from-log "$T/log.bin" -o "$T/policy-raw.json"
jq -e --arg d "$initrd_alone" '[.pcrs["9"].rules[]?.digests[]?.sha256] | index($d) == null' "$T/policy-raw.json" >/dev/null ||
	fail "policy --uki-extra with a system extension alone: PCR 9 allows the .initrd alone"
rc=0; "$M" verify --log "$T/next.bin" --pcrs "$T/next.pcrs" --policy "$T/policy13.json" >"$T/v.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "PCR 13" "$T/v.out" || { cat "$T/v.out"; fail "a boot without the system extension passes (exit $rc)"; }
"$M" policy generate --uki "$T/new.efi" --uki-extra "$T/empty" --from-log "$T/log.bin" -o "$T/policy0.json"
jq -e '.pcrs["13"].values.sha256 == "0000000000000000000000000000000000000000000000000000000000000000"' "$T/policy0.json" >/dev/null ||
	fail "policy --uki-extra of an empty folder: PCR 13 $(jq -c '.pcrs["13"]' "$T/policy0.json")"
jq -e --arg d "$initrd_alone" '[.pcrs["9"].rules[]?.digests[]?.sha256] == [$d]' "$T/policy0.json" >/dev/null ||
	fail "policy --uki-extra of an empty folder: PCR 9 is not the .initrd's sha256sum: $(jq -c '.pcrs["9"]' "$T/policy0.json")"
rc=0; "$M" policy generate --uki-extra "$T/extra" --from-log "$T/log.bin" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "policy generate --uki-extra without --uki: exit $rc"
rc=0; "$M" policy generate --uki "$T/new.efi" --kernel "$T/linux-new" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "policy generate --uki --kernel: exit $rc"
ok "policy generate --uki: PCR 11 = systemd-measure, PCR 4 = pesign -h; the predicted boot passes, today's fails on PCR 11; --uki-extra: PCR 13 = the recorded boot's, a boot without the extension fails on it"
