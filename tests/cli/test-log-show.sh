#!/bin/bash
# `mboot log show` on real logs: the footer (events, event data that does not hash to its
# digest, the replayed PCRs) against tpm2_eventlog's warnings, sha256sum and the PCR values the
# real TPM held; and the labels of digests that match only an alternative form of the data or
# cannot be checked at all.
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}"
C=$MB_TESTDATA/corpus
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

# gdc-host.bin: 159 records (#0, the crypto-agile header, to #158); event 3's data does not hash
# to its digest (tpm2_eventlog: "WARN: Event 3's digest does not match its payload").
L=$C/go-tpm-tools/gdc-host.bin
if command -v tpm2_eventlog >/dev/null; then
	warned=$(tpm2_eventlog "$L" 2>&1 | grep -o "WARN: Event [0-9]*'s digest does not match" | grep -o '[0-9]*' | paste -sd, -)
	last=$(tpm2_eventlog "$L" 2>/dev/null | grep -o '^- EventNum: [0-9]*' | tail -1 | grep -o '[0-9]*$')
else
	warned=3 last=158
fi
[ "$warned" = 3 ] && [ "$last" = 158 ] || bad "tpm2_eventlog: warned '$warned', last event '$last'"
"$MBOOT" log show "$L" >"$tmp/text" || bad "log show exit $?"
grep -qx "$((last + 1)) events; event data not matching its digest: 1 (#$warned)" "$tmp/text" &&
	ok "text footer: events and the mismatch tpm2_eventlog warns of" || { bad "text footer"; tail -15 "$tmp/text"; }
# The PCRs are the replay's, in its layout (the same lines as `log replay`), last in the output.
"$MBOOT" log replay "$L" >"$tmp/replay" 2>/dev/null
n=$(wc -l <"$tmp/replay")
grep -qx 'PCRs replayed from the log:' "$tmp/text" && [ "$n" -gt 5 ] && tail -n "$n" "$tmp/text" | cmp -s - "$tmp/replay" &&
	ok "text footer: the PCRs as log replay prints them" || { bad "text footer PCRs"; tail -15 "$tmp/text"; }
"$MBOOT" log show --pcr 4 "$L" | grep -qx "$((last + 1)) events (5 shown); event data not matching its digest: 1 (#3)" &&
	ok "text footer with --pcr: the whole log, and how many shown" || bad "text footer with --pcr"

# --json: one valid document; the summary is its last member; its banks hold what the real TPM held.
"$MBOOT" log show --json "$L" >"$tmp/json" || bad "log show --json exit $?"
jq -e --argjson n "$((last + 1))" '(keys_unsorted | last) == "summary" and .summary.events == $n
	and .summary.events_shown == (.events | length) and .summary.digest_mismatches == 1
	and .summary.mismatched_events == [3] and ([.events[] | select(.digest_check == "mismatch") | .index] == [3])' \
	"$tmp/json" >/dev/null && ok "json summary" || { bad "json summary"; jq -c '.summary | del(.banks)' "$tmp/json"; }
bad_pcrs=$(jq -n --slurpfile t "$L.pcrs.json" --slurpfile s "$tmp/json" '
	[$t[0].banks | to_entries[] | .key as $b | .value | to_entries[]
	 | select($s[0].summary.banks[$b][.key] != (.value | ascii_downcase)) | "\($b)/\(.key)"] | join(" ")')
[ "$bad_pcrs" = '""' ] && ok "json summary banks equal the real TPM's PCRs" || bad "json summary banks differ: $bad_pcrs"
jq -e --slurpfile r <("$MBOOT" log replay --json "$L") '.summary.banks == $r[0].banks' "$tmp/json" >/dev/null &&
	ok "json summary banks equal log replay --json" || bad "json summary banks vs replay"
jq -e '.summary.events == 159 and .summary.events_shown == 5 and (.events | length) == 5' \
	<("$MBOOT" log show --json --pcr 4 "$L") >/dev/null && ok "json summary with --pcr" || bad "json summary with --pcr"

# A TPM 1.2 log of 40 separators whose digests are not SHA-1(00000000): every one mismatches,
# the list stops at 32.
for _ in $(seq 40); do
	printf '\x00\x00\x00\x00\x04\x00\x00\x00'
	head -c 20 /dev/zero | tr '\0' '\1'
	printf '\x04\x00\x00\x00\x00\x00\x00\x00'
done >"$tmp/bad.bin"
"$MBOOT" log show "$tmp/bad.bin" >"$tmp/text"
want="40 events; event data not matching its digest: 40 ($(seq -f '#%g' 0 31 | paste -sd, - | sed 's/,/, /g'), ... 8 more)"
grep -qxF "$want" "$tmp/text" && ok "text footer: the list is bounded" || { bad "bounded list"; grep events "$tmp/text"; }
jq -e '.summary.digest_mismatches == 40 and .summary.mismatched_events == [range(32)]' \
	<("$MBOOT" log show --json "$tmp/bad.bin") >/dev/null && ok "json: the list is bounded" || bad "json bounded list"

# Event 18 of event-arch-linux.bin (an EV_EFI_VARIABLE_BOOT): its sha256 is that of the whole
# event data (sha256sum), not the spec's H(VariableData): a pass, labelled as the other form.
L=$C/tpm2-tools/event-arch-linux.bin
"$MBOOT" log show --json "$L" >"$tmp/json"
sum=$(jq -r '.events[18].data' "$tmp/json" | xxd -r -p | sha256sum | cut -d' ' -f1)
[ "$sum" = "$(jq -r '.events[18].digests.sha256' "$tmp/json")" ] || bad "event 18's sha256 is not sha256sum of its data"
"$MBOOT" log show "$L" | grep -qx '#18    PCR 1   EV_EFI_VARIABLE_BOOT  \[digest ok (alternative form: H(event data))\]' &&
	ok "alternative form labelled" || bad "alternative form not labelled"

# systemd-boot's kernel command line (PCR 12, UTF-16 with its NUL): its digest is sha256sum of
# the data as logged, so it is checked (no label, digest_check match); an edited copy of the text
# hashes to no bank: not checkable, never shown as proven.
L=$C/tpm2-tools/event-sd-boot-fedora37.bin
"$MBOOT" log show "$L" >"$tmp/text"
"$MBOOT" log show --json "$L" >"$tmp/json"
for e in 23 24; do
	[ "$(jq -r ".events[$e].data" "$tmp/json" | xxd -r -p | sha256sum | cut -d' ' -f1)" = "$(jq -r ".events[$e].digests.sha256" "$tmp/json")" ] ||
		bad "event $e's sha256 is not sha256sum of its data"
done
if [ "$(grep -c '^#2[34]  *PCR 12  EV_IPL$' "$tmp/text")" = 2 ] &&
	[ "$(jq -c '[.events[23,24] | .digest_check, .decoded.kind]' "$tmp/json")" = '["match","utf16_string","match","utf16_string"]' ]; then
	ok "systemd-boot command line: digest checked as logged"
else
	bad "sd-boot command line label"
	grep -A2 '^#23' "$tmp/text"
fi
# u"console" -> u"consolE" in both events (the file's only UTF-16 "console=ttyS0 console=tty0")
python3 - "$L" "$tmp/edited.bin" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
old = 'console=ttyS0 console=tty0'.encode('utf-16-le')
assert b.count(old) == 2, b.count(old)
open(sys.argv[2], 'wb').write(b.replace(old, 'consolE=ttyS0 console=tty0'.encode('utf-16-le')))
PY
"$MBOOT" log show "$tmp/edited.bin" >"$tmp/text"
[ "$(grep -c '^#2[34]  *PCR 12  EV_IPL  \[digest not checkable: UTF-16 text' "$tmp/text")" = 2 ] &&
	ok "an edited systemd-boot command line: digest not checkable" || { bad "edited sd-boot command line label"; grep -A2 '^#23' "$tmp/text"; }

echo "log show: $fails failed"
[ "$fails" = 0 ]
