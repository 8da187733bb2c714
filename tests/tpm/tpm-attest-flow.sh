#!/bin/bash
# The tenant's whole flow with mboot at both ends and nothing else: a manufactured swtpm (EK
# certificates from swtpm_localca) holding a real boot (ima-evm-utils' GRUB machine), enrolled,
# challenged, activated, quoted; the verifier trusts the evidence with the policy generated from
# that boot, and refuses it under another nonce, for another enrolled machine and with a log from
# another boot. The PCR values it trusted are the ones tpm2_pcrread reads from the TPM.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
OTHER=$C/tpm2-tss/binary_measurements_hcrtm.bin
N1=00112233445566778899aabbccddeeff
N2=0f1e2d3c4b5a69788796a5b4c3d2e1f0
cd "$WORK" || exit 1

swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256" # reset: the boot below starts the TPM at its own locality
"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/

# Machine: enroll. Verifier: challenge. Machine: activate. Verifier: the machine record.
"$M" attest enroll --tcti "$TCTI" --ak-file ak.json -o request.json || fail "attest enroll"
"$M" attest challenge -i request.json --ek-ca ca -o challenge.json --state state.json || fail "attest challenge"
"$M" attest activate --tcti "$TCTI" --ak-file ak.json -i challenge.json -o response.json || fail "attest activate"
"$M" attest challenge --state state.json -i response.json -o machine.json || fail "attest challenge --state"
check "the machine record carries the EK certificate's SHA-256 (as sha256sum of tpm2_nvread's bytes)" \
	test "$(jq -r .ek_certificate_sha256 machine.json)" = \
	"$(tpm2_nvread 0x01c00002 -C o -s "$(tpm2_nvreadpublic 0x01c00002 | awk '/size:/ { print $2 }')" | sha256sum | cut -d' ' -f1)"

# Machine: quote. Verifier: judge, with the policy of this boot.
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" -o evidence.json || fail "quote"
"$M" policy generate --from-log "$LOG" -o policy.json || fail "policy generate"
rc=0
"$M" attest verify evidence.json --machine machine.json --nonce $N1 --policy policy.json --json >v.json || rc=$?
check "attest verify trusts the whole flow's evidence (exit $rc: $(jq -c .reasons v.json 2>/dev/null))" \
	test "$rc:$(jq -c .trusted v.json)" = "0:true"
for bank in sha1 sha256; do
	want=$(tpm2_pcrread "$bank" | sed -n 's/^ *\([0-9]*\) *: 0x\([0-9A-Fa-f]*\)$/\1=\2/p' | tr 'A-F' 'a-f' | paste -sd,)
	got=$(jq -r --arg b "$bank" '.pcrs.banks[$b] | to_entries | sort_by(.key | tonumber) | map("\(.key)=\(.value)") | join(",")' evidence.json)
	check "the evidence's $bank values are the TPM's (tpm2_pcrread)" test "$got" = "$want"
	[ "$got" = "$want" ] || printf '  evidence: %s\n  tpm2_pcrread: %s\n' "$got" "$want"
done

# The log named instead of carried, as for a verifier that keeps its judgment: by openssl's SHA-256.
log_sha=$(openssl dgst -sha256 -r "$LOG" | cut -d' ' -f1)
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --eventlog-sha256 "$log_sha" \
	-o evidence-named.json || fail "quote --eventlog-sha256"
check "quote --eventlog-sha256 of this log: the evidence names it by openssl's SHA-256 and carries no log" \
	test "$(jq -r '"\(.eventlog_sha256) \(has("eventlog"))"' evidence-named.json)" = "$log_sha false"
rc=0
"$M" attest verify evidence-named.json --machine machine.json --nonce $N1 --policy policy.json --json >vn.json || rc=$?
check "attest verify of a log named only: not trusted, log-not-verified asking for the log (exit $rc)" \
	test "$rc:$(jq -c '[.reasons[] | select(.name == "log-not-verified") | .detail | test("send the log")]' vn.json)" = '1:[true]'
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" -o evidence-carried.json \
	--eventlog-sha256 "$(openssl dgst -sha256 -r "$OTHER" | cut -d' ' -f1)" || fail "quote --eventlog-sha256 (another log)"
check "quote --eventlog-sha256 of another log: this log carried, byte for byte, and not named" \
	sh -c 'jq -r .eventlog evidence-carried.json | base64 -d | cmp -s - "$1" && [ "$(jq -r .eventlog_sha256 evidence-carried.json)" = null ]' sh "$LOG"
# Hostile: a log both carried and named, a name that is not 32 bytes of hex: malformed, exit 2.
jq --arg d "$log_sha" '. + {eventlog_sha256: $d}' evidence.json >both.json
jq '.eventlog_sha256 = "'"${log_sha:0:62}"'zz"' evidence-named.json >short.json
for f in both:"both given" short:"not 32 bytes of hex"; do
	rc=0
	"$M" attest verify "${f%%:*}.json" --machine machine.json --nonce $N1 2>hostile.err >/dev/null || rc=$?
	check "attest verify of evidence with ${f%%:*} eventlog_sha256: exit 2, '${f#*:}' ($(head -c 200 hostile.err))" \
		test "$rc:$(grep -c "${f#*:}" hostile.err)" = "2:1"
done
rc=0
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --eventlog-sha256 "${log_sha:1}" -o bad.json 2>bad.err || rc=$?
check "quote --eventlog-sha256 of 63 digits: a usage error, exit 2 ($(head -c 200 bad.err))" \
	test "$rc:$(grep -c "64 hex digits" bad.err)" = "2:1"

rc=0
"$M" attest verify evidence.json --machine machine.json --nonce $N2 --policy policy.json --json >v2.json || rc=$?
check "another nonce: not trusted, nonce-mismatch (exit $rc)" \
	test "$rc:$(jq -c '[.reasons[].name]' v2.json)" = '1:["nonce-mismatch"]'

# Another machine enrolled with this verifier: its record does not vouch for this evidence.
"$M" attest enroll --tcti "$TCTI" --ak-file ak2.json -o request2.json || fail "attest enroll (second AK)"
"$M" attest challenge -i request2.json --ek-ca ca -o challenge2.json --state state2.json || fail "challenge 2"
"$M" attest activate --tcti "$TCTI" --ak-file ak2.json -i challenge2.json -o response2.json || fail "activate 2"
"$M" attest challenge --state state2.json -i response2.json -o machine2.json || fail "machine 2"
rc=0
"$M" attest verify evidence.json --machine machine2.json --nonce $N1 --json >v3.json || rc=$?
check "another machine's record: not trusted, ak-not-enrolled (exit $rc: $(jq -c '[.reasons[].name]' v3.json))" \
	test "$rc:$(jq -c '[.reasons[].name] | index("ak-not-enrolled") != null' v3.json)" = "1:true"
# The first AK's response replayed for the second challenge: refused.
rc=0
"$M" attest challenge --state state2.json -i response.json -o machine3.json 2>refused.err || rc=$?
check "a response to another challenge is refused (exit $rc: $(head -c 200 refused.err))" test $rc -eq 1

# A log from another boot with this boot's quote.
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$OTHER" -o evidence-other.json || fail "quote (other log)"
rc=0
"$M" attest verify evidence-other.json --machine machine.json --nonce $N1 --json >v4.json || rc=$?
check "another boot's log: not trusted, log-not-verified (exit $rc)" \
	test "$rc:$(jq -c '[.reasons[].name] | index("log-not-verified") != null' v4.json)" = "1:true"

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
