#!/bin/bash
# attest verify judges the strongest bank the TPM has active (issue 28): a swtpm with sha1 and
# sha256 allocated (tpm2_pcrallocate) holding a recorded boot whose crypto-agile log lists both;
# evidence from `mboot quote --bank sha1` alone is refused (bank-too-weak), sha256 or every bank is
# trusted; --min-bank and the policy's "min_bank" ask for more (sha384, which this TPM lacks:
# refused); a sha1-only TPM (TPM 1.2-format log) quoting sha1 is trusted. The banks the log
# lists are read with python from the Spec ID header's bytes, not with mboot.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
SHA1LOG=$C/tpm2-tss/binary_measurements_nuc.bin
N1=00112233445566778899aabbccddeeff
cd "$WORK" || exit 1

# The algorithm ids a log's first record declares: a Spec ID Event03 header's table, or "sha1-format".
spec_algs() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
size = struct.unpack_from("<I", b, 28)[0]
ev = b[32:32 + size]
if not ev.startswith(b"Spec ID Event03\0"):
    print("sha1-format")
    sys.exit(0)
n = struct.unpack_from("<I", ev, 24)[0]
print(" ".join("0x%04x" % struct.unpack_from("<H", ev, 28 + 4 * i)[0] for i in range(n)))
EOF
}

# machine BANKS LOG: a fresh swtpm with exactly BANKS, LOG extended into it, an AK enrolled
# (trust on first use: this swtpm has no EK certificate) and its machine record machine.json.
machine() {
	swtpm_stop 2>/dev/null || true
	swtpm_start
	swtpm_banks "$1"
	"$M" log extend --tcti "$TCTI" "$2" >extend.out 2>&1 || fail "log extend $2: $(cat extend.out)"
	rm -f ak.json request.json challenge.json state.json response.json machine.json
	"$M" attest enroll --tcti "$TCTI" --ak-file ak.json -o request.json || fail "attest enroll"
	"$M" attest challenge -i request.json --allow-no-ek-cert -o challenge.json --state state.json ||
		fail "attest challenge"
	"$M" attest activate --tcti "$TCTI" --ak-file ak.json -i challenge.json -o response.json || fail "attest activate"
	"$M" attest challenge --state state.json -i response.json -o machine.json || fail "attest challenge --state"
}

# quote OUT LOG [--bank NAME]...
quote() {
	local out=$1 log=$2
	shift 2
	rm -f "$out"
	"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$log" -o "$out" "$@" || fail "quote $out $*"
}

# judge WHAT WANT EVIDENCE [options]: WANT is "trusted" (exit 0) or the reasons' names (exit 1).
judge() {
	local what=$1 want=$2 ev=$3 rc=0 got
	shift 3
	"$M" attest verify "$ev" --machine machine.json --nonce $N1 --json "$@" >v.json 2>v.err || rc=$?
	got=$(jq -r 'if .trusted then "trusted" else [.reasons[].name] | unique | join(" ") end' v.json 2>/dev/null)
	if { [ "$want" = trusted ] && [ $rc -eq 0 ] && [ "$got" = trusted ]; } ||
		{ [ "$want" != trusted ] && [ $rc -eq 1 ] && [ "$got" = "$want" ]; }; then
		ok "$what: $got ($(jq -r '.reasons[0].detail // "-"' v.json | cut -c1-140))"
	else
		bad "$what: exit $rc, '$got', wanted '$want' $(cat v.err)"
	fi
}

[ "$(spec_algs "$LOG")" = "0x0004 0x000b" ] || fail "$LOG: Spec ID lists $(spec_algs "$LOG"), not sha1 and sha256"
[ "$(spec_algs "$SHA1LOG")" = sha1-format ] || fail "$SHA1LOG is not a TPM 1.2-format log"

machine "sha1 sha256" "$LOG"
check "the swtpm has exactly sha1 and sha256 allocated (tpm2_getcap pcrs)" \
	test "$(tpm2_getcap pcrs | awk '/^ *- (sha[0-9]*|sm3_256) *: *\[ *[0-9]/ { sub(":", "", $2); print $2 }' | paste -sd' ')" = "sha1 sha256"
quote sha1.json "$LOG" --bank sha1
check "the sha1-only evidence quotes sha1 alone" test "$(jq -r '.pcrs.banks | keys | join(",")' sha1.json)" = sha1
judge "sha1 quoted, sha256 active" bank-too-weak sha1.json
jq -r '.reasons[] | select(.name == "bank-too-weak") | .detail' v.json >detail.txt
check "the detail names the quoted bank and the strongest active one ($(cat detail.txt))" \
	grep -q "covers sha1, but the strongest bank the firmware log lists is sha256" detail.txt
quote sha256.json "$LOG" --bank sha256
judge "sha256 quoted" trusted sha256.json
quote all.json "$LOG"
judge "every bank quoted" trusted all.json
judge "--min-bank sha384 on a TPM without sha384" bank-too-weak all.json --min-bank sha384
check "the detail names the verifier's minimum" grep -q "the verifier's minimum" <(jq -r '.reasons[0].detail' v.json)
judge "--min-bank sha256, sha256 quoted" trusted sha256.json --min-bank sha256
judge "--min-bank sm3_256 (as strong as sha256), sha256 quoted" trusted sha256.json --min-bank sm3_256
rc=0
"$M" attest verify all.json --machine machine.json --nonce $N1 --min-bank md5 >/dev/null 2>v.err || rc=$?
check "--min-bank md5: usage error, exit 2 (exit $rc: $(cat v.err))" test $rc -eq 2

# The policy's "min_bank": the policy generated from this boot, with the key added.
"$M" policy generate --from-log "$LOG" -o gen.json || fail "policy generate"
judge "the generated policy, every bank quoted" trusted all.json --policy gen.json
jq '. + {"min_bank": "sha384"}' gen.json >p384.json
judge "policy min_bank sha384, every bank quoted" bank-too-weak all.json --policy p384.json
check "the detail names the policy" grep -q "the policy's min_bank" <(jq -r '.reasons[0].detail' v.json)
jq '. + {"min_bank": "sha256"}' gen.json >p256.json
judge "policy min_bank sha256, sha256 quoted" trusted sha256.json --policy p256.json
judge "policy min_bank sha256, sha1 quoted" bank-too-weak sha1.json --policy p256.json
judge "policy min_bank sha1 (weaker than the log's sha256), sha1 quoted" bank-too-weak sha1.json \
	--policy <(jq '. + {"min_bank": "sha1"}' gen.json)
for bad in '"sha3_256"' '"sha-256"' '11' '""'; do
	rc=0
	"$M" attest verify all.json --machine machine.json --nonce $N1 --policy <(jq ". + {\"min_bank\": $bad}" gen.json) \
		>/dev/null 2>v.err || rc=$?
	check "policy min_bank $bad: refused, exit 2 (exit $rc: $(cat v.err))" \
		eval "[ $rc -eq 2 ] && grep -q min_bank v.err"
done

# A TPM with sha1 alone (a TPM 1.2-format log): sha1 is its strongest bank.
machine "sha1" "$SHA1LOG"
quote nuc.json "$SHA1LOG"
check "the sha1-only TPM's evidence quotes sha1" test "$(jq -r '.pcrs.banks | keys | join(",")' nuc.json)" = sha1
judge "sha1-only TPM, sha1 quoted" trusted nuc.json
judge "sha1-only TPM, --min-bank sha256" bank-too-weak nuc.json --min-bank sha256

[ "$failures" -eq 0 ]
