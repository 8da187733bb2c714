#!/bin/bash
# Races and lockout in `mboot unseal`, against a real swtpm (no stubbed TPM responses).
#
# 1. TPM_RC_PCR_CHANGED. tpm-race.py sits between mboot and the swtpm (tpm2-tss "cmd"
#    TCTI) and, just before mboot's TPM2_Unseal, sends a real TPM2_PCR_Extend of its
#    own. TPM2_PolicyPCR records the TPM's pcrUpdateCounter in the policy session and
#    the use of the session fails with TPM_RC_PCR_CHANGED when it has moved since
#    (Part 3 §23.7; libtpms SessionProcess.c CheckPolicyAuthSession() and
#    SessionPCRValueIsCurrent()), whichever PCR was extended, except the PCRs the TPM
#    lists as TPM_PT_PCR_NO_INCREMENT (Part 2 §6.13; libtpms PCR.c PCRChanged() and
#    PCRBelongsTCBGroup(): 16 and 21-23). Note that libtpms skips the check while the
#    counter is 0 (right after TPM2_Startup(CLEAR)): the test extends PCRs first.
# 2. Dictionary-attack lockout (Part 1 §19.8; libtpms SessionProcess.c
#    CheckAuthSession(), IsDAExempted(), CheckLockedOut()). The TPM is put into real
#    lockout by a wrong password on a DA-protected tpm2-tools sealed object. A policy
#    session without PolicyAuthValue/PolicyPassword uses no authValue and is not
#    DA-checked, the owner hierarchy and noDA objects (mboot's template SRK) are exempt:
#    so mboot seals and unseals during lockout. Only a persistent SRK without noDA
#    (tpm2_createprimary's default attributes) makes mboot's HMAC-authorised
#    TPM2_Load/TPM2_Create get TPM_RC_LOCKOUT: exit 3, said as lockout.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
RACE=${MB_TPM_TESTS:-$(dirname "$0")}/tpm-race.py
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
# extend_hex OLD DIGEST: the sha256 PCR value after extending OLD with DIGEST (openssl).
extend_hex() { printf '%s%s' "$1" "$2" | xxd -r -p | openssl dgst -sha256 -r | cut -d' ' -f1; }
sha_of() { printf '%s' "$1" | openssl dgst -sha256 -r | cut -d' ' -f1; }
# race_unseal SEALED [PCR DIGEST [N]]: mboot unseal through the proxy; $rc, $WORK/out
# (stdout), $WORK/err, $WORK/trace ("CC RC [race]" per command).
race_unseal() {
	local sealed=$1
	shift
	: > "$WORK/trace"
	"$M" unseal -i "$sealed" --tcti "cmd:python3 $RACE $SWTPM_DIR/sock $WORK/trace $*" \
		> "$WORK/out" 2> "$WORK/err"
	rc=$?
}
# The policy rounds in the trace: PolicyPCR, PolicyOR, the proxy's extend and Unseal, "CC:RC".
rounds() {
	awk '$1 == "0000017f" || $1 == "00000171" || $1 == "00000182" || $1 == "0000015e" {
		sub(/^0+/, "", $1); sub(/^0+/, "", $2); printf "%s%s:%s", sep, $1, ($2 == "" ? "0" : $2); sep = " " }' \
		"$WORK/trace"
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"; }
no_leak() { # the TPM has no transient object nor session left by mboot
	[ -z "$(tpm2_getcap handles-transient)" ] || fail "$1 left transient objects: $(tpm2_getcap handles-transient)"
	[ -z "$(tpm2_getcap handles-loaded-session)" ] || fail "$1 left sessions: $(tpm2_getcap handles-loaded-session)"
}

swtpm_start
tpm2_pcrextend "0:sha256=$(sha_of zero)" "7:sha256=$(sha_of seven)" >/dev/null || fail "tpm2_pcrextend"
head -c 32 /dev/urandom > "$WORK/secret"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed" 2>"$WORK/err" || fail "seal: $(cat "$WORK/err")"

# 0. The proxy alone changes nothing: one round, the secret.
race_unseal "$WORK/sealed"
expect_rc 0 "unseal through the proxy"
cmp -s "$WORK/out" "$WORK/secret" || fail "unseal through the proxy: wrong secret"
[ "$(rounds)" = "17f:0 15e:0" ] || fail "rounds without a race: $(rounds)"
echo "ok: through the proxy, no race: one PolicyPCR + Unseal round"

# 1. A PCR outside the sealed selection (8) is extended between PolicyPCR and Unseal: the
#    TPM answers the first Unseal with TPM_RC_PCR_CHANGED (0x128), mboot starts a new
#    session, and the second round gives the secret.
D=$(sha_of "race 1")
want8=$(extend_hex "$(pcr_hex 8)" "$D")
race_unseal "$WORK/sealed" 8 "$D"
expect_rc 0 "unseal with PCR 8 extended in the race"
cmp -s "$WORK/out" "$WORK/secret" || fail "unseal after the retry: wrong secret"
[ "$(rounds)" = "17f:0 182:0 15e:128 17f:0 15e:0" ] ||
	fail "expected PolicyPCR, extend, Unseal=PCR_CHANGED, PolicyPCR, Unseal=0; trace: $(rounds)"
[ "$(pcr_hex 8)" = "$want8" ] || fail "PCR 8 is $(pcr_hex 8), openssl says $want8: the proxy's extend is not real"
no_leak "unseal after a retry"
echo "ok: PCR 8 extended in the race: first Unseal 0x128 (PCR_CHANGED), retried, secret; PCR 8 == openssl $want8"

# 1b. The same with a PolicyOR file (reseal to this boot OR a predicted PCR 7): each
#     round is PolicyPCR, PolicyOR, Unseal.
E=$(sha_of "next boot")
printf '{"banks": {"sha256": {"0": "%s", "7": "%s"}}}\n' "$(pcr_hex 0)" "$(extend_hex "$(pcr_hex 7)" "$E")" > "$WORK/next.json"
cp "$WORK/sealed" "$WORK/sealed-or"
"$M" reseal -i "$WORK/sealed-or" --values "$WORK/next.json" > /dev/null 2>"$WORK/err" || fail "reseal --values: $(cat "$WORK/err")"
[ "$(jq -r .policy.kind "$WORK/sealed-or")" = or ] || fail "reseal --values did not make a PolicyOR file"
D=$(sha_of "race 1b")
want8=$(extend_hex "$(pcr_hex 8)" "$D")
race_unseal "$WORK/sealed-or" 8 "$D"
expect_rc 0 "unseal of the PolicyOR file with PCR 8 extended in the race"
cmp -s "$WORK/out" "$WORK/secret" || fail "PolicyOR file: wrong secret after the retry"
[ "$(rounds)" = "17f:0 171:0 182:0 15e:128 17f:0 171:0 15e:0" ] ||
	fail "PolicyOR file: expected PolicyPCR, PolicyOR, extend, Unseal=PCR_CHANGED, then a clean round; trace: $(rounds)"
[ "$(pcr_hex 8)" = "$want8" ] || fail "PCR 8 is $(pcr_hex 8), openssl says $want8"
no_leak "unseal of a PolicyOR file after a retry"
echo "ok: PolicyOR file, PCR 8 extended in the race: PolicyPCR+PolicyOR+Unseal 0x128, retried, secret"

# 2. A sealed PCR (7) is extended in the race: PCR_CHANGED, retry, then the policy fails
#    (TPM_RC_POLICY_FAIL for session 1, 0x99d): exit 1 naming PCR 7 with its new value.
sealed7=$(jq -r '.pcrs.values["7"]' "$WORK/sealed")
D=$(sha_of "race 2")
want7=$(extend_hex "$(pcr_hex 7)" "$D")
race_unseal "$WORK/sealed" 7 "$D"
expect_rc 1 "unseal with PCR 7 extended in the race"
[ -s "$WORK/out" ] && fail "a refused unseal wrote to stdout"
[ "$(rounds)" = "17f:0 182:0 15e:128 17f:0 15e:99d" ] ||
	fail "expected PolicyPCR, extend, Unseal=PCR_CHANGED, PolicyPCR, Unseal=POLICY_FAIL; trace: $(rounds)"
[ "$(pcr_hex 7)" = "$want7" ] || fail "PCR 7 is $(pcr_hex 7), openssl says $want7"
grep -q "^PCR 7 (sha256) differs: sealed to $sealed7, now $want7" "$WORK/err" ||
	fail "PCR 7 not named with openssl's value: $(cat "$WORK/err")"
grep -q "^PCR 0 " "$WORK/err" && fail "PCR 0 named though unchanged"
no_leak "a refused unseal"
echo "ok: PCR 7 extended in the race: 0x128, retried, 0x99d (POLICY_FAIL): exit 1 naming PCR 7 (now openssl's $want7)"

# 3. A PCR extended before every Unseal: mboot gives up after 5 rounds, exit 3.
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed" --force 2>"$WORK/err" || fail "seal: $(cat "$WORK/err")"
D=$(sha_of "race 3")
want8=$(pcr_hex 8)
for _ in 1 2 3 4 5; do want8=$(extend_hex "$want8" "$D"); done
race_unseal "$WORK/sealed" 8 "$D" 100
expect_rc 3 "unseal with PCR 8 extended before every Unseal"
[ -s "$WORK/out" ] && fail "a failed unseal wrote to stdout"
r="17f:0 182:0 15e:128"
[ "$(rounds)" = "$r $r $r $r $r" ] || fail "expected 5 rounds ending in PCR_CHANGED: $(rounds)"
[ "$(pcr_hex 8)" = "$want8" ] || fail "PCR 8 is $(pcr_hex 8), openssl (5 extends) says $want8"
no_leak "an unseal that gave up"
echo "ok: PCR 8 extended before every Unseal: 5 rounds of 0x128, then exit 3: $(cat "$WORK/err")"

# 4. PCRs the TPM does not count (TPM_PT_PCR_NO_INCREMENT) do not race: no PCR_CHANGED.
[ "$(python3 "$RACE" --no-increment "$SWTPM_DIR/sock")" = "16 21 22 23" ] ||
	fail "TPM_PT_PCR_NO_INCREMENT is '$(python3 "$RACE" --no-increment "$SWTPM_DIR/sock")', libtpms has 16 21 22 23"
D=$(sha_of "race 4")
want16=$(extend_hex "$(pcr_hex 16)" "$D")
race_unseal "$WORK/sealed" 16 "$D"
expect_rc 0 "unseal with PCR 16 extended in the race"
cmp -s "$WORK/out" "$WORK/secret" || fail "unseal with PCR 16 extended: wrong secret"
[ "$(rounds)" = "17f:0 182:0 15e:0" ] || fail "PCR 16 (no increment) caused a retry: $(rounds)"
[ "$(pcr_hex 16)" = "$want16" ] || fail "PCR 16 is $(pcr_hex 16), openssl says $want16"
echo "ok: TPM_PT_PCR_NO_INCREMENT = 16 21 22 23; PCR 16 extended in the race: one round, no PCR_CHANGED"
# ... which is also why a secret sealed to such a PCR is released by an Unseal that
# follows an extend of it: the TPM does not see the change (a property of the TPM, not
# of mboot; sealing to PCR 16 or 21-23 is racy by design).
"$M" seal --pcrs 7,16 -i "$WORK/secret" -o "$WORK/sealed16" 2>"$WORK/err" || fail "seal 7,16: $(cat "$WORK/err")"
sealed16=$(jq -r '.pcrs.values["16"]' "$WORK/sealed16")
D=$(sha_of "race 5")
race_unseal "$WORK/sealed16" 16 "$D"
expect_rc 0 "unseal of a PCR-16 seal with PCR 16 extended in the race"
cmp -s "$WORK/out" "$WORK/secret" || fail "PCR-16 seal: wrong secret"
[ "$(rounds)" = "17f:0 182:0 15e:0" ] || fail "PCR-16 seal: $(rounds)"
[ "$(pcr_hex 16)" = "$(extend_hex "$sealed16" "$D")" ] || fail "PCR 16 did not move"
"$M" unseal -i "$WORK/sealed16" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal of a PCR-16 seal after the race"
grep -q "^PCR 16 (sha256) differs: sealed to $sealed16, now $(pcr_hex 16)" "$WORK/err" || fail "PCR 16 not named: $(cat "$WORK/err")"
echo "ok: sealed to PCR 16 (no increment): an extend between PolicyPCR and Unseal goes unseen by the TPM; the next unseal names PCR 16"

# 5. Dictionary-attack lockout.
swtpm_start
tpm2_pcrextend "0:sha256=$(sha_of zero)" "7:sha256=$(sha_of seven)" >/dev/null || fail "tpm2_pcrextend"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed-t" 2>"$WORK/err" || fail "seal: $(cat "$WORK/err")"
[ "$(jq -c .parent "$WORK/sealed-t")" = '{"template":"ecc-p256-srk"}' ] || fail "parent of sealed-t: $(jq -c .parent "$WORK/sealed-t")"
# A persistent SRK as tpm2-tools makes it by default: no noDA, so DA-protected.
tpm2_createprimary -Q -C o -c "$WORK/srk.ctx" || fail "tpm2_createprimary"
tpm2_readpublic -c "$WORK/srk.ctx" > "$WORK/srk.yaml" || fail "tpm2_readpublic"
grep -q "value: .*restricted|decrypt" "$WORK/srk.yaml" || fail "the SRK is not a storage key: $(cat "$WORK/srk.yaml")"
grep -q "noda" "$WORK/srk.yaml" && fail "tpm2_createprimary's default SRK has noDA"
tpm2_evictcontrol -Q -C o -c "$WORK/srk.ctx" 0x81000001 || fail "tpm2_evictcontrol"
tpm2_flushcontext -t
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed-p" 2>"$WORK/err" || fail "seal: $(cat "$WORK/err")"
[ "$(jq -c .parent "$WORK/sealed-p")" = '{"handle":"0x81000001"}' ] || fail "parent of sealed-p: $(jq -c .parent "$WORK/sealed-p")"
"$M" unseal -i "$WORK/sealed-p" | cmp -s - "$WORK/secret" || fail "unseal under the persistent SRK before lockout"
# A DA-protected tpm2-tools sealed object (userWithAuth, no noDA) with a password.
printf 'pw-protected' > "$WORK/pwsecret"
tpm2_create -Q -C 0x81000001 -p goodpw -i "$WORK/pwsecret" -u "$WORK/o.pub" -r "$WORK/o.priv" || fail "tpm2_create"
tpm2_load -Q -C 0x81000001 -u "$WORK/o.pub" -r "$WORK/o.priv" -c "$WORK/o.ctx" || fail "tpm2_load"
tpm2_flushcontext -t
tpm2_unseal -c "$WORK/o.ctx" -p goodpw | cmp -s - "$WORK/pwsecret" || fail "tpm2_unseal with the right password"
tpm2_flushcontext -t
# One failure locks the TPM out for 1000 s.
tpm2_dictionarylockout -s -n 1 -t 1000 -l 1000 || fail "tpm2_dictionarylockout -s"
tpm2_unseal -c "$WORK/o.ctx" -p wrongpw > /dev/null 2> "$WORK/tools-err" && fail "tpm2_unseal with a wrong password succeeded"
tpm2_flushcontext -t
grep -qi "0x98e" "$WORK/tools-err" || fail "wrong password: not TPM_RC_AUTH_FAIL (0x98e): $(cat "$WORK/tools-err")"
tpm2_unseal -c "$WORK/o.ctx" -p goodpw > /dev/null 2> "$WORK/tools-err" && fail "tpm2_unseal worked in lockout"
tpm2_flushcontext -t
grep -qi "0x921" "$WORK/tools-err" || fail "right password after the failure: not TPM_RC_LOCKOUT (0x921): $(cat "$WORK/tools-err")"
in_lockout() { tpm2_getcap properties-variable | grep -q "inLockout: *1"; }
in_lockout || fail "tpm2_getcap does not show inLockout"
echo "ok: TPM in lockout: wrong password 0x98e, then the right one 0x921; inLockout 1"

# 5a. The PCR-sealed secret under the template SRK unseals during lockout: the policy
#     session uses no authValue, the SRK is noDA, the owner hierarchy is exempt.
"$M" unseal -i "$WORK/sealed-t" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "unseal (template SRK) in lockout"
cmp -s "$WORK/out" "$WORK/secret" || fail "unseal in lockout: wrong secret"
echo "ok: in lockout, unseal of a secret under the template SRK works (policy session: not DA-checked)"

# 5b. Under the DA-protected persistent SRK, TPM2_Load (HMAC session on the SRK) is refused.
"$M" unseal -i "$WORK/sealed-p" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 3 "unseal (DA-protected persistent SRK) in lockout"
[ -s "$WORK/out" ] && fail "unseal in lockout wrote to stdout"
grep -q "dictionary-attack lockout" "$WORK/err" || fail "unseal in lockout: not said as lockout: $(cat "$WORK/err")"
grep -q "0x00000921" "$WORK/err" || fail "unseal in lockout: TPM_RC_LOCKOUT not shown: $(cat "$WORK/err")"
[ "$(wc -l < "$WORK/err")" -eq 1 ] || fail "unseal in lockout: more than one line: $(cat "$WORK/err")"
no_leak "unseal in lockout"
echo "ok: in lockout, unseal under a DA-protected persistent SRK: exit 3: $(cat "$WORK/err")"

# 5c. seal (TPM2_Create under that SRK) and reseal: exit 3, lockout, nothing written.
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed-new" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 3 "seal (persistent SRK) in lockout"
grep -q "dictionary-attack lockout" "$WORK/err" || fail "seal in lockout: not said as lockout: $(cat "$WORK/err")"
grep -q "0x00000921" "$WORK/err" || fail "seal in lockout: TPM_RC_LOCKOUT not shown: $(cat "$WORK/err")"
[ -e "$WORK/sealed-new" ] && fail "seal in lockout wrote a sealed file"
no_leak "seal in lockout"
cp "$WORK/sealed-p" "$WORK/sealed-p.before"
"$M" reseal -i "$WORK/sealed-p" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 3 "reseal (persistent SRK) in lockout"
grep -q "dictionary-attack lockout" "$WORK/err" || fail "reseal in lockout: not said as lockout: $(cat "$WORK/err")"
cmp -s "$WORK/sealed-p" "$WORK/sealed-p.before" || fail "reseal in lockout changed the sealed file"
no_leak "reseal in lockout"
# A template-SRK file is resealed under its own parent (reseal keeps the recorded parent,
# even with a persistent SRK present), so it is not moved onto the DA-protected key and
# reseals during lockout.
"$M" reseal -i "$WORK/sealed-t" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "reseal (template SRK file, persistent SRK present) in lockout"
[ "$(jq -r .parent.template "$WORK/sealed-t")" = ecc-p256-srk ] || fail "reseal moved the file to $(jq -c .parent "$WORK/sealed-t")"
"$M" unseal -i "$WORK/sealed-t" | cmp -s - "$WORK/secret" || fail "unseal of the template file resealed in lockout"
no_leak "reseal of the template file in lockout"
echo "ok: in lockout, seal and reseal under the DA-protected SRK: exit 3, said as lockout, no file written or changed; a template-SRK file reseals under its own parent"

# 5d. Without the persistent SRK (evicted: owner authorisation is DA-exempt), seal and
#     reseal use the noDA template SRK and work during lockout.
tpm2_evictcontrol -Q -C o -c 0x81000001 || fail "tpm2_evictcontrol (evict)"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed-new" 2>"$WORK/err" || fail "seal (template) in lockout: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed-new" | cmp -s - "$WORK/secret" || fail "unseal of a secret sealed in lockout"
"$M" reseal -i "$WORK/sealed-t" > /dev/null 2>"$WORK/err" || fail "reseal (template) in lockout: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed-t" | cmp -s - "$WORK/secret" || fail "unseal of a secret resealed in lockout"
no_leak "seal, unseal, reseal in lockout"
in_lockout || fail "the TPM left lockout during the test"
echo "ok: in lockout (still inLockout 1), seal, reseal and unseal under the template SRK work"

# 5e. Out of lockout (lockoutAuth), the same persistent SRK again (same template, same
#     owner seed: the same key): the file refused in lockout unseals.
tpm2_dictionarylockout -c || fail "tpm2_dictionarylockout -c"
in_lockout && fail "still in lockout after tpm2_dictionarylockout -c"
tpm2_createprimary -Q -C o -c "$WORK/srk.ctx" || fail "tpm2_createprimary"
tpm2_evictcontrol -Q -C o -c "$WORK/srk.ctx" 0x81000001 || fail "tpm2_evictcontrol"
tpm2_flushcontext -t
"$M" unseal -i "$WORK/sealed-p" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "unseal (persistent SRK) after the lockout was cleared"
cmp -s "$WORK/out" "$WORK/secret" || fail "unseal after lockout: wrong secret"
echo "ok: lockout cleared: the file refused during lockout unseals"
