#!/bin/bash
# Prediction against a TPM (issue 6's proof): a real GRUB boot (ima-evm-utils' sample machine) is
# the state today; the next boot replaces the kernel, the initrd and the command line. mboot
# predict's values must equal what a second, fresh swtpm holds after that next boot's log is
# extended into it, read back with tpm2_pcrread (tpm2-tools), every bank, every PCR the log
# touches, except PCR 4: this machine's shim also measured each kernel GRUB loaded into PCR 4
# (an Authenticode digest --kernel does not give), so predict exits 1 naming PCR 4 and prints
# no value for it (it used to exit 0 and print today's PCR 4). The kernel and initrd events of
# the next boot carry sha256sum's digests of the files.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9

# updated in place: the files GRUB loads today, another version of them (another name moves PCR 8)
mkdir -p "$WORK/new"
head -c 200000 /dev/urandom >"$WORK/new/vmlinuz-5.7.0-rc2+"
head -c 100000 /dev/urandom >"$WORK/new/initrd.img-5.7.0-rc2+"
"$M" predict --log "$LOG" --kernel "$WORK/new/vmlinuz-5.7.0-rc2+" --initrd "$WORK/new/initrd.img-5.7.0-rc2+" \
	--cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb mitigations=auto" \
	--json --write-log "$WORK/next.bin" >"$WORK/predicted.json"
rc=$?
[ $rc = 1 ] || fail "predict exited $rc, not 1 (PCR 4 unpredictable)"
[ "$(jq -c '.unpredictable | keys' "$WORK/predicted.json")" = '["4"]' ] ||
	fail "unpredictable PCRs: $(jq -c .unpredictable "$WORK/predicted.json")"
jq -e '[.banks[] | has("4")] == [false, false]' "$WORK/predicted.json" >/dev/null || fail "a value for the unpredictable PCR 4"
[ "$(jq -c .changed "$WORK/predicted.json")" = "[8,9]" ] || fail "changed PCRs: $(jq -c .changed "$WORK/predicted.json")"

k=$(sha256sum <"$WORK/new/vmlinuz-5.7.0-rc2+" | cut -d' ' -f1)
i=$(sha256sum <"$WORK/new/initrd.img-5.7.0-rc2+" | cut -d' ' -f1)
"$M" log show --json --pcr 9 "$WORK/next.bin" >"$WORK/next9.json"
jq -e --arg k "$k" '[.events[] | select(.digests.sha256 == $k)] | length >= 1' "$WORK/next9.json" >/dev/null ||
	fail "no PCR 9 event carries the new kernel's sha256sum"
jq -e --arg i "$i" '[.events[] | select(.digests.sha256 == $i)] | length == 1' "$WORK/next9.json" >/dev/null ||
	fail "no PCR 9 event carries the new initrd's sha256sum"
echo "ok: the next boot's kernel and initrd events carry sha256sum's digests of the new files"

# The next boot, in a fresh swtpm.
swtpm_start
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$WORK/next.bin" >"$WORK/extend" 2>&1 || fail "log extend: $(cat "$WORK/extend")"
tpm2_pcrread sha1:all+sha256:all -o "$WORK/raw" >"$WORK/pcrread.yaml" || fail "tpm2_pcrread"
for bank in sha1 sha256; do
	for pcr in $(jq -r ".banks.$bank | keys[]" "$WORK/predicted.json"); do
		want=$(jq -r ".banks.${bank}[\"$pcr\"]" "$WORK/predicted.json")
		# tpm2_pcrread: "  sha1:" then "    0 : 0x..." / "    14: 0x..." lines.
		got=$(awk -v b="$bank:" -v p="$pcr" '
			$1 == b { on = 1; next } /^ *[a-z0-9_]+:$/ { on = 0 }
			on { line = $0; gsub(/[ \t]/, "", line); split(line, f, ":");
			     if (f[1] == p) print tolower(substr(f[2], 3)) }' "$WORK/pcrread.yaml")
		[ "$want" = "$got" ] || fail "$bank PCR $pcr: predicted $want, the TPM after the next boot holds $got"
	done
done
echo "ok: mboot predict equals tpm2_pcrread of the next boot's TPM in sha1 and sha256, every PCR the log touches but the unpredictable PCR 4"
echo "tpm-predict: all passed"
