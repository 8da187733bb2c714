#!/bin/bash
# `mboot log` as a user runs it: help, exit codes, errors with offsets, replay against the
# PCR values real TPMs held (read with jq from the corpus), diff against cmp(1).
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}"
C=$MB_TESTDATA/corpus
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check NAME EXPECTED_EXIT CMD...
	local name=$1 want=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL $name: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err" | head -5
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}
expect_grep() { # expect_grep NAME FILE REGEX
	if grep -qE "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: no /$3/ in:"; head -5 "$2"; fails=$((fails + 1)); fi
}

# --help answers on stdout with exit 0; usage errors are one line and exit 2.
for sub in "" show replay diff; do
	check "log $sub --help" 0 "$MBOOT" log $sub --help
	expect_grep "log $sub --help text" "$tmp/out" "Usage: mboot log"
done
check "--help" 0 "$MBOOT" --help
check "--version" 0 "$MBOOT" --version
check "unknown command" 2 "$MBOOT" frobnicate
check "unknown option" 2 "$MBOOT" log show --frob "$C/HIRS/TpmLog.bin"
[ "$(wc -l <"$tmp/err")" = 1 ] && echo "ok   usage error is one line" || { echo "FAIL usage error not one line"; fails=$((fails + 1)); }
check "bad pcr list" 2 "$MBOOT" log show --pcr 1-99 "$C/HIRS/TpmLog.bin"
check "unknown bank" 2 "$MBOOT" log replay --bank md5 "$C/HIRS/TpmLog.bin"
check "diff needs two logs" 2 "$MBOOT" log diff "$C/HIRS/TpmLog.bin"

# Unreadable and malformed inputs: exit 2, the file named, the offset given.
check "missing file" 2 "$MBOOT" log show "$tmp/nope"
expect_grep "missing file named" "$tmp/err" "nope: cannot open"
for junk in keylime/create-mb-policy/binary_bios_measurements-bogus keylime/create-mb-policy/binary_bios_measurements-empty \
	fwupd/fuzzing-v2.bin go-eventlog/ccel/CCEL.bin tpm2-tools/specid-vendordata.bin; do
	check "junk $junk" 2 "$MBOOT" log show "$C/$junk"
	expect_grep "junk $junk: offset" "$tmp/err" "at byte [0-9]+ \(0x[0-9a-f]+\)"
done
# An IMA runtime log (the kernel's binary_runtime_measurements or ascii_runtime_measurements,
# real ones from tpm2-tss and ima-evm-utils) given as a firmware log is called what it is.
for ima in tpm2-tss/sml-ima-ng-sha1.bin tpm2-tss/sml-ima-sha1.bin tpm2-tss/sml-ima-sig-sha256.bin \
	ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9 keylime/ima/ima-log-sha256; do
	for sub in show replay; do
		check "IMA log $ima: log $sub" 2 "$MBOOT" log $sub "$C/$ima"
		expect_grep "IMA log $ima: log $sub says so" "$tmp/err" "is an IMA runtime measurement log"
	done
done
head -c 5000 "$C/go-tpm-tools/gdc-host.bin" >"$tmp/cut.bin"
check "cut log" 2 "$MBOOT" log replay "$tmp/cut.bin"
expect_grep "cut log names the event" "$tmp/err" "at byte [0-9]+.*event [0-9]+"

# Replay equals the true PCR values, compared by jq for every bank and PCR of the truth file.
for t in "$C"/go-tpm-tools/*.pcrs.json "$C"/go-attestation/sb_cert_eventlog.pcrs.json "$C"/fwupd/*.pcrs.json \
	"$C"/tpm2-tss/binary_measurements_hcrtm.pcrs.json; do
	log=${t%.pcrs.json}
	[ -f "$log" ] || log=$log.bin
	[ -f "$log" ] || { echo "FAIL no log for $t"; fails=$((fails + 1)); continue; }
	"$MBOOT" log replay --json "$log" >"$tmp/replay.json" || { echo "FAIL replay $log"; fails=$((fails + 1)); continue; }
	bad=$(jq -n --slurpfile t "$t" --slurpfile r "$tmp/replay.json" '
		[$t[0].banks | to_entries[] | .key as $b | .value | to_entries[]
		 | select(($r[0].banks[$b] // {})[.key] != null)
		 | select($r[0].banks[$b][.key] != (.value | ascii_downcase)) | "\($b)/\(.key)"] | join(" ")')
	n=$(jq -n --slurpfile t "$t" --slurpfile r "$tmp/replay.json" '
		[$t[0].banks | to_entries[] | .key as $b | .value | keys[] | select(($r[0].banks[$b] // {})[.] != null)] | length')
	if [ "$bad" = '""' ] && [ "$n" -gt 0 ]; then echo "ok   replay $(basename "$log"): $n PCR values equal the real TPM"
	else echo "FAIL replay $(basename "$log"): differ: $bad (compared $n)"; fails=$((fails + 1)); fi
done

# The text replay reads back as a PCR file: notes (StartupLocality 3 here) go to stderr, and
# `verify --pcrs` of that output verifies the log (11 values, those of the real TPM above).
L3="$C/go-tpm-tools/gdc-host.bin"
if "$MBOOT" log replay "$L3" >"$tmp/replay.txt" 2>"$tmp/replay.err" &&
	grep -q "note: StartupLocality 3" "$tmp/replay.err" && ! grep -q note "$tmp/replay.txt" &&
	"$MBOOT" verify --log "$L3" --pcrs "$tmp/replay.txt" >"$tmp/v.out" 2>&1 && grep -q "^verified: 11 PCR values" "$tmp/v.out"; then
	echo "ok   text replay reads back (notes on stderr)"
else echo "FAIL text replay does not read back: $(cat "$tmp/v.out" 2>/dev/null)"; fails=$((fails + 1)); fi

# --pcr filters; --bank selects.
"$MBOOT" log show --json --pcr 4,7 "$C/go-tpm-tools/arch-linux-workstation.bin" >"$tmp/s.json"
[ "$(jq '[.events[].pcr] | unique | map(select(. != 4 and . != 7)) | length' "$tmp/s.json")" = 0 ] &&
	echo "ok   --pcr 4,7" || { echo "FAIL --pcr"; fails=$((fails + 1)); }
[ "$(jq -r '.banks | keys | join(",")' <("$MBOOT" log replay --json --bank sha1 "$C/go-tpm-tools/arch-linux-workstation.bin"))" = sha1 ] &&
	echo "ok   --bank sha1" || { echo "FAIL --bank"; fails=$((fails + 1)); }
# tpm2-tss's event-uefiaction.bin declares sha1, sha256, sha384, sha512, but its PCR 4 event
# carries only the first two (tpm2_eventlog: DigestCount 2): PCR 4 is incomplete in the last two,
# also when --bank keeps only the last (its incomplete PCRs move with it to bank 0).
for b in sha384 sha512; do
	[ "$("$MBOOT" log replay --json --bank $b "$C/tpm2-tss/event-uefiaction.bin" | jq -c .info.incomplete)" = "{\"$b\":[4]}" ] &&
		echo "ok   --bank $b: PCR 4 incomplete" || { echo "FAIL --bank $b: incomplete PCRs"; fails=$((fails + 1)); }
done
[ "$("$MBOOT" log replay --json --bank sha256 "$C/tpm2-tss/event-uefiaction.bin" | jq -c .info.incomplete)" = null ] &&
	echo "ok   --bank sha256: complete" || { echo "FAIL --bank sha256: incomplete PCRs"; fails=$((fails + 1)); }

# The JSON of log show is valid and strict (jq parses it; every event has the keys README.md lists).
for log in "$C"/go-attestation/windows_gcp_shielded_vm.bin "$C"/go-attestation/linux_tpm12.bin "$C"/go-eventlog/ccel/cos-113-intel-tdx.bin; do
	"$MBOOT" log show --json "$log" >"$tmp/s.json" && jq -e '.events | all(has("index") and has("pcr") and has("type") and has("digests") and has("data") and has("decoded"))' "$tmp/s.json" >/dev/null &&
		echo "ok   show --json $(basename "$log")" || { echo "FAIL show --json $log"; fails=$((fails + 1)); }
done
# Windows logs end with PCR 0xFFFFFFFF events: shown, flagged, never extended. Append one
# (TCG_PCR_EVENT layout, written with printf) to a real TPM 1.2 log.
cp "$C/go-attestation/linux_tpm12.bin" "$tmp/win.bin"
{ printf '\xff\xff\xff\xff\x0c\x00\x00\x00'; head -c 20 /dev/zero | tr '\0' '\1'; printf '\x01\x00\x00\x00x'; } >>"$tmp/win.bin"
jq -e '[.events[] | select(.pcr == 4294967295)] | length == 1 and all(.pcr_out_of_range)' \
	<("$MBOOT" log show --json "$tmp/win.bin") >/dev/null &&
	echo "ok   out-of-range PCR shown and flagged" || { echo "FAIL out-of-range PCR"; fails=$((fails + 1)); }
[ "$("$MBOOT" log replay --json "$tmp/win.bin" | jq -c .banks)" = "$("$MBOOT" log replay --json "$C/go-attestation/linux_tpm12.bin" | jq -c .banks)" ] &&
	echo "ok   out-of-range PCR not extended" || { echo "FAIL out-of-range PCR extended"; fails=$((fails + 1)); }

# Diff: two boots of the same desktop (tpm2-tools' event-arch-linux.bin and go-tpm-tools'
# arch-linux-workstation.bin differ in 58 bytes). Every byte cmp(1) finds different must lie in
# an event the diff names or in one whose digests are the same in both logs (an image loaded
# elsewhere: its data is not what was measured; tests/cli/test-log-diff.sh looks closer), and
# the diff must name no event without such a byte.
A=$C/tpm2-tools/event-arch-linux.bin
B=$C/go-tpm-tools/arch-linux-workstation.bin
check "diff of two boots exits 1" 1 "$MBOOT" log diff --json "$A" "$B"
cp "$tmp/out" "$tmp/diff.json"
"$MBOOT" log show --json "$A" >"$tmp/a.json"
"$MBOOT" log show --json "$B" >"$tmp/b.json"
cmp -l "$A" "$B" | awk '{print $1 - 1}' >"$tmp/offsets"
[ -s "$tmp/offsets" ] || { echo "FAIL cmp found no difference"; fails=$((fails + 1)); }
covered=$(jq --slurpfile off <(jq -s . "$tmp/offsets") --slurpfile a "$tmp/a.json" --slurpfile b "$tmp/b.json" '
	([.entries[] | .b | select(. != null) | [.offset, .offset + .record_size]]
	 + [$b[0].events[] | . as $e | select($a[0].events[$e.index].digests == $e.digests)
	    | [.offset, .offset + .record_size]]) as $spans
	| [$off[0][] | . as $o | select([$spans[] | select($o >= .[0] and $o < .[1])] | length == 0)] | length' "$tmp/diff.json")
useless=$(jq --slurpfile off <(jq -s . "$tmp/offsets") '
	[.entries[] | .b | select(. != null) | [.offset, .offset + .record_size] | . as $s
	 | select([$off[0][] | select(. >= $s[0] and . < $s[1])] | length == 0)] | length' "$tmp/diff.json")
if [ "$covered" = 0 ] && [ "$useless" = 0 ]; then echo "ok   diff names exactly the events cmp finds changed"
else echo "FAIL diff: $covered differing bytes outside named events, $useless named events without a change"; fails=$((fails + 1)); fi
moved=$(jq -c '.pcrs_moved' "$tmp/diff.json")
want=$(jq -c '[.entries[].pcr] | unique' "$tmp/diff.json")
[ "$moved" = "$want" ] && echo "ok   pcrs_moved $moved" || { echo "FAIL pcrs_moved $moved, events in $want"; fails=$((fails + 1)); }
check "diff of a log with itself exits 0" 0 "$MBOOT" log diff "$A" "$A"

echo "log cli: $fails failed"
[ "$fails" = 0 ]
