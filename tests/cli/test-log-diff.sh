#!/bin/bash
# `mboot log diff` on two real boots of one desktop (tpm2-tools' event-arch-linux.bin and
# go-tpm-tools' arch-linux-workstation.bin) and on copies of the first edited with dd: what it
# reports for a changed event is what differs (the digests, as tpm2_eventlog reads them), and
# an event whose digests agree is not a difference however its unmeasured data (an image's load
# address) changed.
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}"
C=$MB_TESTDATA/corpus
A=$C/tpm2-tools/event-arch-linux.bin
B=$C/go-tpm-tools/arch-linux-workstation.bin
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

# The sha256 digest of event N of LOG as tpm2_eventlog prints it (event numbers agree: both
# count the crypto-agile header as event 0). Without tpm2-tools: the values it printed, below.
ref_sha256() { # ref_sha256 LOG N FALLBACK
	if command -v tpm2_eventlog >/dev/null; then
		tpm2_eventlog "$1" 2>/dev/null | awk -v n="$2" '
			$0 ~ "^- EventNum: " n "$" { on = 1; next }
			on && /^- EventNum/ { exit }
			on && /AlgorithmId: sha256/ { getline; gsub(/[" ]|Digest:/, ""); print; exit }'
	else
		echo "$3"
	fi
}
a23=$(ref_sha256 "$A" 23 6c1b73563471cd9082ea3d149fa4668cd8f1a0c315531d4bf513bc5ede8939a5)
b23=$(ref_sha256 "$B" 23 7b50cf89806cefff619a2266ae37e1f7e7f4c14212da9445dd7e51046e90ca88)
[ ${#a23} = 64 ] && [ ${#b23} = 64 ] && [ "$a23" != "$b23" ] || bad "reference digests of event 23: '$a23' '$b23'"

# The two boots: #22 (systemd-boot) has the same digests, loaded elsewhere; #23 (the kernel) is
# another image. Only #23 is a difference, shown with both digests.
"$MBOOT" log diff "$A" "$B" >"$tmp/text"
rc=$?
[ $rc = 1 ] && ok "two boots: exit 1" || bad "two boots: exit $rc"
grep -q '^PCR 4: changed: #23 in A, #23 in B, EV_EFI_BOOT_SERVICES_APPLICATION$' "$tmp/text" &&
	ok "two boots: event 23 changed" || { bad "two boots: event 23 not named"; cat "$tmp/text"; }
grep -qx "    - sha256  $a23" "$tmp/text" && grep -qx "    + sha256  $b23" "$tmp/text" &&
	ok "two boots: both sha256 digests shown" || { bad "two boots: digests not shown"; cat "$tmp/text"; }
if grep -q '#22' "$tmp/text"; then bad "two boots: #22 (same digests, other load address) reported"; cat "$tmp/text"
else ok "two boots: #22 (same digests) not reported"; fi
[ "$(grep -c '^PCR [0-9]' "$tmp/text")" = 1 ] && ok "two boots: one entry" || { bad "two boots: not one entry"; cat "$tmp/text"; }
"$MBOOT" log diff --json "$A" "$B" >"$tmp/json"
jq -e --arg a "$a23" --arg b "$b23" '.identical == false and (.entries | length) == 1
	and .entries[0].change == "changed" and .entries[0].a.index == 23 and .entries[0].b.index == 23
	and .entries[0].a.digests.sha256 == $a and .entries[0].b.digests.sha256 == $b
	and .entries[0].differs == {"digests": ["sha1", "sha256"], "data": true, "data_measured": false}
	and .pcrs_moved == [4]' "$tmp/json" >/dev/null &&
	ok "two boots --json" || { bad "two boots --json"; jq -c '.entries[] | .differs' "$tmp/json"; }

# Where event 23 of A lies: its record, its data (the record's last bytes), its sha256 digest
# (after PCR, type, count, the sha1 id and digest and the sha256 id).
"$MBOOT" log show --json "$A" >"$tmp/a.json"
off=$(jq '.events[23].offset' "$tmp/a.json")
data_off=$(jq '.events[23] | .offset + .record_size - (.data | length / 2)' "$tmp/a.json")
[ "$(jq -r '.events[23].digests.sha256' "$tmp/a.json")" = "$a23" ] || bad "event 23 of A is not the kernel"
patch() { # patch FILE OFFSET BYTES(printf format)
	# shellcheck disable=SC2059
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# A copy of A whose kernel was loaded elsewhere (ImageLocationInMemory, the data's first 8 bytes).
cp "$A" "$tmp/moved.bin"
patch "$tmp/moved.bin" "$data_off" '\x00\x10\x00\xa0'
cmp -s "$A" "$tmp/moved.bin" && bad "the load address edit changed nothing"
"$MBOOT" log diff "$A" "$tmp/moved.bin" >"$tmp/text"
rc=$?
[ $rc = 0 ] && grep -qx 'The logs record the same events.' "$tmp/text" &&
	ok "load address moved, digests kept: no difference" || { bad "load address moved: exit $rc"; cat "$tmp/text"; }
jq -e '.identical and .entries == [] and .pcrs_moved == []' <("$MBOOT" log diff --json "$A" "$tmp/moved.bin") >/dev/null &&
	ok "load address moved --json: identical" || bad "load address moved --json"

# A copy of A whose kernel's sha256 digest ends in 00 instead of a5: reported with both digests.
cp "$A" "$tmp/digest.bin"
patch "$tmp/digest.bin" $((off + 36 + 31)) '\x00'
edited=${a23%??}00
"$MBOOT" log diff "$A" "$tmp/digest.bin" >"$tmp/text"
rc=$?
[ $rc = 1 ] && grep -qx "    - sha256  $a23" "$tmp/text" && grep -qx "    + sha256  $edited" "$tmp/text" &&
	! grep -q sha1 "$tmp/text" && grep -q '^      data (not measured): .*vmlinuz-linux-lts$' "$tmp/text" &&
	ok "digest changed: both sha256 digests, not sha1, the data once" || { bad "digest changed: exit $rc"; cat "$tmp/text"; }
jq -e '(.entries | length) == 1 and .entries[0].differs == {"digests": ["sha256"], "data": false, "data_measured": false}
	and .pcrs_moved == [4]' <("$MBOOT" log diff --json "$A" "$tmp/digest.bin") >/dev/null &&
	ok "digest changed --json" || bad "digest changed --json"

echo "log diff: $fails failed"
[ "$fails" = 0 ]
