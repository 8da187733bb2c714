#!/bin/bash
# Revocable signed policies (docs/seal.md): policy sign --counter-value N approves
# PolicyPCR(values) + PolicyNV(mboot's revocation counter == N), which equals tpm2-tools'
# trial (tpm2_policypcr, tpm2_policynv); such a signature unseals while the counter (read
# with tpm2_nvread) is at N, and no longer after 'mboot policy revoke' (counter N+1);
# a new signature for N+1 unseals.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
NV=0x01800b01

K=$WORK/keys
mkdir -p "$K"
openssl genrsa -out "$K/rsa.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$K/rsa.pem" -pubout -out "$K/rsa.pub" 2>/dev/null || fail "openssl rsa -pubout"

swtpm_start
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"
printf 'fleet key\n' > "$WORK/secret"
"$M" seal --authorized-by "$K/rsa.pub" -i "$WORK/secret" -o "$WORK/sealed" || fail "seal --authorized-by"
"$M" pcrs --json > "$WORK/now.json" || fail "mboot pcrs"

# The counter the signer needs: mboot policy counter defines it; tpm2_nvread agrees.
n=$("$M" policy counter) || fail "policy counter"
[ "$((16#$(tpm2_nvread "$NV" -s 8 | xxd -p)))" = "$n" ] || fail "policy counter $n, tpm2_nvread $(tpm2_nvread "$NV" -s 8 | xxd -p)"
"$M" policy sign --key "$K/rsa.pem" --pcrs 0,7 --values "$WORK/now.json" --counter-value "$n" -o "$WORK/old.sig" \
	>/dev/null || fail "policy sign --counter-value"
[ "$(jq -r .counter.value "$WORK/old.sig")" = "$n" ] || fail "signature counter value"

# tpm2-tools: PolicyPCR(0,7 now) then PolicyNV(counter eq n) in a trial session.
printf '%016x' "$n" | xxd -r -p > "$WORK/operand"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 >/dev/null || fail "policypcr"
tpm2_policynv -S "$WORK/s.ctx" -i "$WORK/operand" "$NV" eq -L "$WORK/approved.dig" >/dev/null || fail "policynv"
tpm2_flushcontext "$WORK/s.ctx"
want=$(xxd -p -c 64 "$WORK/approved.dig")
[ "$(jq -r .policy "$WORK/old.sig")" = "$want" ] || fail "approved policy $(jq -r .policy "$WORK/old.sig"), tpm2-tools $want"
echo "ok: the revocable approved policy == tpm2_policypcr + tpm2_policynv trial ($want)"

"$M" unseal -i "$WORK/sealed" --signature "$WORK/old.sig" | cmp - "$WORK/secret" || fail "unseal with the signature at N"
echo "ok: a signature for counter $n unseals while the counter is at $n"

"$M" policy revoke > "$WORK/out" || fail "policy revoke: $(cat "$WORK/out")"
m=$((16#$(tpm2_nvread "$NV" -s 8 | xxd -p)))
[ "$m" -eq $((n + 1)) ] || fail "counter after revoke: tpm2_nvread $m, was $n"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/old.sig" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "the revoked signature: exit $rc: $(cat "$WORK/out")"
grep -q "revoked (signed for NV counter $NV at $n, which is at $m now)" "$WORK/out" || fail "revocation not said: $(cat "$WORK/out")"
echo "ok: after policy revoke (tpm2_nvread: $n -> $m) the old signature no longer unseals"

"$M" policy sign --key "$K/rsa.pem" --pcrs 0,7 --values "$WORK/now.json" --counter-value "$m" -o "$WORK/new.sig" \
	>/dev/null || fail "policy sign at m"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/old.sig" --signature "$WORK/new.sig" | cmp - "$WORK/secret" ||
	fail "unseal with the new signature"
echo "ok: a signature for the new value unseals (the revoked one beside it is skipped)"

# A signature file whose counter was edited no longer matches its policy: input error.
jq ".counter.value = $m" "$WORK/old.sig" > "$WORK/edited.sig"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/edited.sig" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "edited counter: exit $rc: $(cat "$WORK/out")"
echo "ok: a signature with its counter value edited is refused (exit 2)"
