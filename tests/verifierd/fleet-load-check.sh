#!/bin/bash
# The load generator's software TPM against the library, no service: a request from a software
# EK (TCG template L-1, certificate from fleet-load's CA) and AK passes mb_attest_challenge_make;
# the software TPM2_ActivateCredential opens the credential it makes (and not for another AK
# under the same EK); mb_attest_challenge_check accepts the answer; a software quote of a real
# GRUB boot (162 events, sha1 and sha256) is trusted by mb_attest_verify under the policy
# `mboot policy generate --from-log` makes from that boot, and not for another nonce.
# The evidence is then judged once more by `mboot attest verify`, another program.
set -eu
M=${MBOOT:?}
FL=${MB_BUILD_ROOT:?}/bench/fleet-load
LOG=${MB_TESTDATA:?}/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
[ -x "$FL" ] || { echo "SKIP: bench/fleet-load not built (libcurl missing)"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/fleet-load-check.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$M" policy generate --from-log "$LOG" -o "$W/policy.json"
mkdir "$W/keep"
"$FL" --self-check --log "$LOG" --policy "$W/policy.json" --keep "$W/keep" || fail "self-check"
"$M" attest verify "$W/keep/evidence.json" --machine "$W/keep/machine.json" --nonce "$(cat "$W/keep/nonce")" \
	--policy "$W/policy.json" --json > "$W/verdict.json" || fail "mboot attest verify refuses the software evidence"
[ "$(jq -r '.trusted' "$W/verdict.json")" = true ] || fail "not trusted"
# the quote covers every PCR of both banks of the boot, signed with ECDSA-SHA256
[ "$(jq -c '.quote.pcrs | map_values(length)' "$W/verdict.json")" = '{"sha1":24,"sha256":24}' ] ||
	fail "quoted PCRs: $(jq -c '.quote.pcrs' "$W/verdict.json")"
[ "$(jq -r '.quote.signature + "-" + .quote.signature_hash' "$W/verdict.json")" = ecdsa-sha256 ] ||
	fail "signature: $(jq -c '.quote' "$W/verdict.json")"
[ "$(jq -r '.logs.verified' "$W/verdict.json")" = true ] || fail "logs: $(jq -c '.logs' "$W/verdict.json")"
# the quoted sha1 values are the real machine's (tsspcrread on it, in the corpus), except PCR 10,
# which IMA extended there after this log
REAL=${MB_TESTDATA:?}/corpus/ima-evm-utils/sample-tpm-2.0-pcrs-8-9
n=0
while read -r pcr value; do
	pcr=${pcr%:}
	case $pcr in 10 | pcrread) continue ;; esac
	got=$(jq -r --arg p "$pcr" '.pcrs.banks.sha1[$p]' "$W/keep/evidence.json")
	[ "$got" = "$value" ] || fail "sha1 PCR $pcr: $got, the machine's TPM held $value"
	n=$((n + 1))
done < "$REAL"
[ "$n" = 23 ] || fail "compared $n PCRs"
echo "ok"
