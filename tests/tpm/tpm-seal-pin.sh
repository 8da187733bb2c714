#!/bin/bash
# mboot seal --pin / unseal (TPM + PIN, docs/seal.md) against a swtpm, checked with tpm2-tools:
# the policy digest is a tpm2-tools trial session's PolicyPCR + PolicyAuthValue; tpm2_unseal
# alone opens the object with the documented authValue (hex of SHA-256 of the PIN); the right
# PIN unseals (file, stdin), a wrong one is exit 1 and moves the TPM's lockout counter
# (tpm2_getcap) by one; the right PIN with a changed PCR is refused; a lockout is said; files
# that lose or fake "pin" are refused; reseal keeps the PIN.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}

lockout_counter() {
	tpm2_getcap properties-variable | sed -n 's/^TPM2_PT_LOCKOUT_COUNTER: *//p' | tr -d ' '
}
expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}

swtpm_start
# a lockout far away, so that the wrong PINs below only count; the lockout test sets its own
tpm2_dictionarylockout -s -n 10 -t 1000 -l 1000 >/dev/null || fail "tpm2_dictionarylockout -s"
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"

printf 'disk\0key\377\n' > "$WORK/secret"
printf '4711-zz\n' > "$WORK/pin"
printf '4712-zz\n' > "$WORK/wrong"

# 1. The policy: PolicyPCR then PolicyAuthValue, as a tpm2-tools trial session computes it.
"$M" seal --pcrs 0,7 --pin-file "$WORK/pin" -i "$WORK/secret" -o "$WORK/sealed" 2>"$WORK/err" ||
	fail "seal --pin-file: $(cat "$WORK/err")"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 >/dev/null || fail "tpm2_policypcr"
tpm2_policyauthvalue -S "$WORK/s.ctx" -L "$WORK/pol.dig" >/dev/null || fail "tpm2_policyauthvalue"
tpm2_flushcontext "$WORK/s.ctx" >/dev/null
want=$(xxd -p -c 64 "$WORK/pol.dig")
got=$(jq -r .policy.digest "$WORK/sealed")
[ "$got" = "$want" ] || fail "policy digest $got, tpm2 trial policypcr+policyauthvalue $want"
[ "$(jq -r .policy.pin "$WORK/sealed")" = true ] || fail "policy.pin is $(jq -c .policy.pin "$WORK/sealed")"
echo "ok: policy digest == tpm2_policypcr + tpm2_policyauthvalue trial ($want); policy.pin true"

# 2. The right PIN unseals: from a file, from stdin (not a terminal here).
"$M" unseal -i "$WORK/sealed" --pin-file "$WORK/pin" 2>"$WORK/err" | cmp -s - "$WORK/secret" ||
	fail "unseal --pin-file: $(cat "$WORK/err")"
printf '4711-zz\n' | "$M" unseal -i "$WORK/sealed" 2>"$WORK/err" | cmp -s - "$WORK/secret" ||
	fail "unseal, PIN on stdin: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed" --pin-file /dev/null >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "an empty PIN"
echo "ok: the right PIN unseals (--pin-file, stdin); an empty PIN is exit 2"

# 3. tpm2-tools alone: authValue = SHA-256(PIN), as documented. tpm2-tools' SRK made persistent at
# 0x81000001 is the parent both tools load under.
tpm2_createprimary -C o -G ecc256:aes128cfb -c "$WORK/srk.ctx" >/dev/null || fail "tpm2_createprimary"
tpm2_evictcontrol -C o -c "$WORK/srk.ctx" 0x81000001 >/dev/null || fail "tpm2_evictcontrol"
tpm2_flushcontext -t >/dev/null
"$M" seal --pcrs 0,7 --pin-file "$WORK/pin" -i "$WORK/secret" -o "$WORK/sealed-srk" 2>"$WORK/err" ||
	fail "seal under the persistent SRK: $(cat "$WORK/err")"
[ "$(jq -r .parent.handle "$WORK/sealed-srk")" = 0x81000001 ] || fail "parent $(jq -c .parent "$WORK/sealed-srk")"
jq -r .public "$WORK/sealed-srk" | base64 -d > "$WORK/obj.pub"
jq -r .private "$WORK/sealed-srk" | base64 -d > "$WORK/obj.priv"
tpm2_load -C 0x81000001 -u "$WORK/obj.pub" -r "$WORK/obj.priv" -c "$WORK/obj.ctx" >/dev/null ||
	fail "tpm2_load of mboot's object"
tpm2_flushcontext -t >/dev/null
auth=$(printf '4711-zz' | sha256sum | cut -c1-64)
tpm2_startauthsession --policy-session -S "$WORK/s.ctx" >/dev/null || fail "policy session"
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 >/dev/null || fail "tpm2_policypcr"
tpm2_policyauthvalue -S "$WORK/s.ctx" >/dev/null || fail "tpm2_policyauthvalue"
tpm2_unseal -c "$WORK/obj.ctx" -p "session:$WORK/s.ctx+hex:$auth" > "$WORK/tools.out" || fail "tpm2_unseal"
tpm2_flushcontext "$WORK/s.ctx" >/dev/null
tpm2_flushcontext -t >/dev/null
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null || fail "evict"
cmp -s "$WORK/tools.out" "$WORK/secret" || fail "tpm2_unseal gave other bytes"
echo "ok: tpm2_policypcr + tpm2_policyauthvalue + tpm2_unseal -p hex:SHA-256(PIN) gives the secret"

# 4. A wrong PIN: exit 1, said with the tries left, and the TPM's lockout counter moves by one.
before=$(lockout_counter)
"$M" unseal -i "$WORK/sealed" --pin-file "$WORK/wrong" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "a wrong PIN"
after=$(lockout_counter)
[ "$after" = "$(printf '0x%X' $((before + 1)))" ] || [ "$((after))" -eq "$((before + 1))" ] ||
	fail "lockout counter $before -> $after, expected one more"
grep -q "wrong PIN (the TPM counts failed attempts: $((10 - after)) more before lockout)" "$WORK/err" ||
	fail "wrong PIN message: $(cat "$WORK/err")"
[ -s "$WORK/out" ] && fail "a wrong PIN wrote to stdout"
echo "ok: a wrong PIN is exit 1 and TPM2_PT_LOCKOUT_COUNTER went $before -> $after ($(cat "$WORK/err"))"

# 5. The right PIN on a boot with other PCRs: refused (the PCRs named), and not counted.
tpm2_pcrextend "7:sha256=$(printf '%064x' 8)" || fail "tpm2_pcrextend"
before=$(lockout_counter)
"$M" unseal -i "$WORK/sealed" --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "the right PIN, PCR 7 changed"
grep -q "PCR 7 (sha256) differs" "$WORK/err" || fail "PCR 7 not named: $(cat "$WORK/err")"
[ "$(lockout_counter)" = "$before" ] || fail "a PCR refusal moved the lockout counter"
echo "ok: the right PIN with PCR 7 changed is exit 1, PCR 7 named, nothing counted"

# 6. The file says pin: it cannot be made to unseal without one, and an old file is unchanged.
"$M" seal --pcrs 0,7 --pin-file "$WORK/pin" -i "$WORK/secret" -o "$WORK/sealed2" 2>"$WORK/err" || fail "seal"
jq 'del(.policy.pin)' "$WORK/sealed2" > "$WORK/nopin"
"$M" unseal -i "$WORK/nopin" >/dev/null 2>"$WORK/err" </dev/null; rc=$?
expect_rc 2 "a PIN file with policy.pin removed"
grep -q 'policy.digest' "$WORK/err" || fail "no field named: $(cat "$WORK/err")"
jq '.policy.pin = false' "$WORK/sealed2" > "$WORK/pinfalse"
"$M" unseal -i "$WORK/pinfalse" >/dev/null 2>"$WORK/err" </dev/null; rc=$?
expect_rc 2 "policy.pin false"
grep -q 'policy.pin' "$WORK/err" || fail "policy.pin not named: $(cat "$WORK/err")"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/plain" 2>"$WORK/err" || fail "seal without a PIN"
[ "$(jq -c .policy.pin "$WORK/plain")" = null ] || fail "a seal without a PIN writes policy.pin"
"$M" unseal -i "$WORK/plain" </dev/null 2>"$WORK/err" | cmp -s - "$WORK/secret" || fail "unseal without a PIN"
jq '.policy.pin = true' "$WORK/plain" > "$WORK/fakepin"
"$M" unseal -i "$WORK/fakepin" --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "policy.pin added to a file sealed without one"
echo "ok: policy.pin removed, false or added: exit 2 naming the field; a file without a PIN is as before"

# 7. reseal keeps the PIN: the new file says pin, unseals with it only.
"$M" reseal -i "$WORK/sealed2" --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err" || fail "reseal: $(cat "$WORK/err")"
[ "$(jq -r .policy.pin "$WORK/sealed2")" = true ] || fail "reseal dropped the PIN"
"$M" unseal -i "$WORK/sealed2" --pin-file "$WORK/pin" 2>"$WORK/err" | cmp -s - "$WORK/secret" ||
	fail "unseal after reseal: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed2" --pin-file "$WORK/wrong" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "a wrong PIN after reseal"
echo "ok: reseal keeps the PIN"

# 8. Usage: the secret and the PIN cannot both be stdin; --pin with --authorized-by.
printf 'x' | "$M" seal --pcrs 7 --pin -i - -o "$WORK/s3" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal -i - --pin with stdin no terminal"
[ -e "$WORK/s3" ] && fail "a refused seal wrote its output"
echo "ok: seal -i - --pin without --pin-file is exit 2"

# 9. Lockout: after the TPM's limit, a PIN (even the right one) is said to be locked out.
tpm2_dictionarylockout -c >/dev/null || fail "tpm2_dictionarylockout -c"
tpm2_dictionarylockout -s -n 2 -t 1000 -l 1000 >/dev/null || fail "tpm2_dictionarylockout -s -n 2"
"$M" unseal -i "$WORK/sealed2" --pin-file "$WORK/wrong" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "wrong PIN 1 of 2"
grep -q "1 more before lockout" "$WORK/err" || fail "tries left: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed2" --pin-file "$WORK/wrong" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "wrong PIN 2 of 2"
grep -q "dictionary-attack lockout" "$WORK/err" || fail "lockout not said: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed2" --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 3 "the right PIN in lockout"
grep -q "lockout" "$WORK/err" || fail "lockout not said: $(cat "$WORK/err")"
echo "ok: lockout after 2 wrong PINs is said; then even the right PIN is exit 3, lockout ($(tail -1 "$WORK/err"))"
