#!/bin/bash
# mboot attest verify against evidence assembled from tpm2-tools output on a swtpm holding a real
# boot (ima-evm-utils' GRUB machine): trusted with the policy generated from that boot, and a
# catalogue of forged evidence, each refused with the reason named (exactly that set of reasons).
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
F=${MB_FORGE:?}
E="python3 ${MB_TPM_TESTS:-$(dirname "$0")}/attest-evidence.py"
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
OTHER=$C/tpm2-tss/binary_measurements_hcrtm.bin
KERNEL=/boot/vmlinuz-5.7.0-rc2+.signed
ARGS="root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb"
N1=00112233445566778899aabbccddeeff
N2=ffeeddccbbaa99887766554433221100
python3 -c 'import cryptography' 2>/dev/null || { echo "SKIP: python3 cryptography missing"; exit 77; }
cd "$WORK" || exit 1

boot() { # boot LOG [BANKS]: a fresh swtpm (a new machine) holding that boot's PCRs
	swtpm_stop 2>/dev/null || true
	swtpm_start
	swtpm_banks "${2:-sha1 sha256}"
	"$M" log extend --tcti "$TCTI" "$1" >extend.out 2>&1 || { echo "log extend $1: $(cat extend.out)"; exit 1; }
}

# An AK (restricted signing key) under the owner's primary: PREFIX.pub/.priv/.name/.ctx and the
# machine record PREFIX.machine.json. ALG: ecc (ECDSA-SHA256) or rsa (RSASSA-SHA256).
mkak() {
	local p=$1 alg=$2 spec
	[ "$alg" = rsa ] && spec=rsa2048:rsassa-sha256:null || spec=ecc256:ecdsa-sha256:null
	tpm2_createprimary -Q -C o -g sha256 -G ecc -c prim.ctx || fail createprimary
	tpm2_flushcontext -t # no resource manager: every loaded object stays until flushed
	tpm2_create -Q -C prim.ctx -G "$spec" -u "$p.pub" -r "$p.priv" \
		-a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign' || fail "create $p"
	tpm2_flushcontext -t
	tpm2_load -Q -C prim.ctx -u "$p.pub" -r "$p.priv" -c "$p.ctx" -n "$p.name" || fail "load $p"
	tpm2_flushcontext -t
	$E machine --ak-pub "$p.pub" --ak-name "$p.name" -o "$p.machine.json"
}

reload() { # the AK again, after a TPM reset (the primary is derived again from the same seed)
	tpm2_createprimary -Q -C o -g sha256 -G ecc -c prim.ctx || fail createprimary
	tpm2_flushcontext -t # no resource manager: every loaded object stays until flushed
	tpm2_load -Q -C prim.ctx -u "$1.pub" -r "$1.priv" -c "$1.ctx" || fail "load $1"
	tpm2_flushcontext -t
}

# quote AK NONCE SELECTION OUT [LOG]: tpm2_quote, assembled into evidence OUT.
quote() {
	local ak=$1 nonce=$2 sel=$3 out=$4 log=${5:-$LOG}
	tpm2_quote -Q -c "$ak.ctx" -l "$sel" -q "$nonce" -m "$out.msg" -s "$out.sig" -o "$out.pcrs" -F values \
		-g sha256 || fail "tpm2_quote $out"
	tpm2_flushcontext -t
	$E assemble --attest "$out.msg" --sig "$out.sig" --values "$out.pcrs" --selection "$sel" \
		--ak-pub "$ak.pub" --eventlog "$log" -o "$out" || fail "assemble $out"
}

# expect WHAT "REASON ..." EVIDENCE [options]: refused (exit 1) with exactly these reasons.
expect() {
	local what=$1 want=$2 ev=$3 got rc
	shift 3
	"$M" attest verify "$ev" --machine "${MACHINE:-ak.machine.json}" --nonce "${NONCE:-$N1}" --json "$@" >v.json 2>v.err
	rc=$?
	got=$(jq -r '[.reasons[].name] | unique | join(" ")' v.json 2>/dev/null)
	if [ $rc -eq 1 ] && [ "$got" = "$want" ]; then
		ok "$what: $want ($(jq -r '.reasons[0].detail' v.json | cut -c1-110))"
	else
		bad "$what: exit $rc, reasons '$got', wanted '$want' $(cat v.err)"
	fi
}

# expect_malformed WHAT EVIDENCE: exit 2, with a message.
expect_malformed() {
	"$M" attest verify "$2" --machine ak.machine.json --nonce "$N1" >v.out 2>v.err
	local rc=$?
	[ $rc -eq 2 ] && [ -s v.err ] && ok "$1: malformed, exit 2 ($(head -c 120 v.err))" || bad "$1: exit $rc $(cat v.out v.err)"
}

"$M" policy generate --from-log "$LOG" -o gen.json || fail "policy generate"
boot "$LOG"
mkak ak ecc
quote ak "$N1" sha1:all+sha256:all good.json

# The good boot: trusted, with the policy.
"$M" attest verify good.json --machine ak.machine.json --nonce "$N1" --policy gen.json --json >v.json
rc=$?
[ $rc -eq 0 ] && jq -e '.trusted and .reasons == [] and .logs.verified and .policy.ok and .logs.banks.sha256.verified
	and .logs.banks.sha1.verified' v.json >/dev/null &&
	ok "the real boot, quoted by the swtpm: trusted with the generated policy" || bad "good evidence: exit $rc $(head -c 600 v.json)"
"$M" attest verify good.json --machine ak.machine.json --nonce "$N1" --policy gen.json >v.out
[ $? -eq 0 ] && grep -q '^trusted' v.out && ok "... the text verdict says trusted" || bad "text verdict: $(cat v.out)"
# A policy with an "ima" section (docs/policy.md, "IMA"): this evidence carries no IMA list, so
# the same good boot is not trusted (fail closed), the reason naming the section; the rules for
# the PCRs are met (tpm-attest-ima.sh judges evidence that carries a list).
jq '.ima = {"unlisted": "ignore"}' gen.json >gen-ima.json
"$M" attest verify good.json --machine ak.machine.json --nonce "$N1" --policy gen-ima.json --json >v.json
rc=$?
[ $rc -eq 1 ] && jq -e '(.trusted | not) and .policy.ok and (.ima.carried | not) and any(.reasons[]; tostring | test("ima"))' v.json \
	>/dev/null && ok "a policy with an \"ima\" section: not trusted without an IMA list" ||
	bad "ima policy: exit $rc $(jq -c '{trusted, reasons}' v.json | head -c 600)"
# Firmware sets (docs/policy.md): with another machine's firmware added as a second set, the
# verdict names the set the quoted boot's firmware PCRs hold.
cp gen.json gen2.json
"$M" policy add-firmware gen2.json --from-log "$C/go-tpm-tools/cos-85-amd-sev.bin" --name cos-85 >/dev/null &&
	"$M" attest verify good.json --machine ak.machine.json --nonce "$N1" --policy gen2.json --json >v.json
rc=$?
[ $rc -eq 0 ] && jq -e '.trusted and .policy.ok and .policy.firmware_set == "firmware-1"' v.json >/dev/null &&
	ok "with a second firmware set: trusted, the verdict names set firmware-1" ||
	bad "firmware sets: exit $rc $(jq -c .policy v.json | head -c 600)"

# 1, 2. The nonce: another verifier's nonce; an old quote replayed for a new nonce, as it is and
# with extraData edited to the new nonce (then the TPM's signature no longer covers it).
NONCE=$N2 expect "wrong nonce" "nonce-mismatch" good.json
cp good.json replay.json
$E attest-set replay.json extra "$N2"
NONCE=$N2 expect "an old quote with the new nonce written in" "signature-invalid" replay.json

# 3-6. The values carried against the quote (the CVE-2024-29038/29039 class).
cp good.json edited.json
$E set-pcr edited.json sha256 9 "$(printf '%064d' 0)"
expect "a PCR value edited" "pcr-digest-mismatch" edited.json
cp good.json dropped.json
$E drop-pcr dropped.json sha256 9
expect "a PCR dropped from the values, still selected" "selection-mismatch" dropped.json
quote ak "$N1" "sha1:all+sha256:$(seq -s, 0 15)" sub.json
"$M" attest verify sub.json --machine ak.machine.json --nonce "$N1" >/dev/null || bad "a quote of sha256 PCRs 0-15 (and sha1) did not verify"
# The strongest bank active (sha256, the log's Spec ID) must be quoted and verify (bank-too-weak).
quote ak "$N1" sha1:all sha1only.json
expect "sha1 alone quoted, sha256 active (tpm2_quote)" "bank-too-weak" sha1only.json
quote ak "$N1" "sha1:all+sha256:16,23" sha256empty.json
# (fail closed: the sha256 PCRs the log extends are quoted bank PCRs without a value)
expect "sha256 quoted only in PCRs the log leaves alone (16, 23), sha1 in all" "log-not-verified" sha256empty.json
cp sub.json added.json
$E set-pcr added.json sha256 16 "$(printf '%064d' 0)"
expect "a PCR value added, not selected" "selection-mismatch" added.json
quote ak "$N1" sha256:all sha256only.json
cp sha256only.json morebank.json
python3 - morebank.json good.json <<'PY'
import json, sys
ev, good = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev["pcrs"]["banks"]["sha1"] = good["pcrs"]["banks"]["sha1"]
json.dump(ev, open(sys.argv[1], "w"))
PY
expect "a bank the quote does not cover (sha1 values beside a sha256 quote)" "selection-mismatch" morebank.json
"$M" attest verify sha256only.json --machine ak.machine.json --nonce "$N1" --policy gen.json >/dev/null &&
	ok "a quote of the sha256 bank alone, its values: trusted (the logs checked in that bank)" || bad "sha256-only quote refused"
tpm2_pcrextend "16:sha256=$(printf '%064d' 1)" || fail pcrextend
quote ak "$N1" sha1:all+sha256:all later.json
cp good.json otherdigest.json
$E set-quote otherdigest.json later.json.msg later.json.sig
expect "a quote of other PCR values (PCR 16 extended since) with these values" "pcr-digest-mismatch" otherdigest.json

# 7. Who signed: another AK of the same TPM.
mkak ak2 ecc
quote ak2 "$N1" sha1:all+sha256:all byak2.json
expect "a quote by another AK, which the evidence carries" "ak-not-enrolled signature-invalid" byak2.json
cp byak2.json byak2claims.json
$E set-field byak2claims.json ak_public ak.pub
expect "a quote by another AK, the evidence claiming the enrolled one" "signature-invalid" byak2claims.json
MACHINE=ak2.machine.json expect "evidence of the enrolled AK judged for a machine enrolled with another" \
	"ak-not-enrolled signature-invalid" good.json

# 8. A TPMS_ATTEST of another type, genuinely made and signed by the TPM with the AK: its
# signature verifies, only its type gives it away.
reload ak
tpm2_gettime -Q -c ak.ctx -q "$N1" --attestation time.att -o time.sig -g sha256 >/dev/null 2>&1 || fail tpm2_gettime
tpm2_flushcontext -t
cp good.json time.json
$E set-quote time.json time.att time.sig
expect "tpm2_gettime's TPMS_ATTEST (a time attestation) signed by the AK" "not-quote" time.json

# 9. Without the magic: the attack a restricted key exists to stop. The AK signs any digest the TPM
# hashed itself (tpm2_hash ticket) unless the data starts with TPM_GENERATED_VALUE, so
# quote-shaped bytes with another magic and made-up values get a valid signature.
cp good.json nomagic.json
$E attest-set nomagic.json magic ff544348
$E attest-file nomagic.json nomagic.att
reload ak
tpm2_hash -Q -C o -g sha256 -t nomagic.tk -o nomagic.dig nomagic.att || fail tpm2_hash
tpm2_sign -Q -c ak.ctx -g sha256 -d -t nomagic.tk -o nomagic.sig nomagic.dig || fail tpm2_sign
tpm2_flushcontext -t
$E set-quote nomagic.json nomagic.att nomagic.sig
expect "quote-shaped data without TPM_GENERATED_VALUE, signed by the AK" "not-tpm-generated" nomagic.json
cp good.json magicedit.json
$E attest-set magicedit.json magic ff544348
expect "the magic of a real quote edited (the signature no longer covers it)" "not-tpm-generated signature-invalid" magicedit.json

# 10, 11. The logs against this boot's quote.
cp good.json otherlog.json
$E set-field otherlog.json eventlog "$OTHER"
expect "a log from another boot with this boot's quote" "log-not-verified" otherlog.json
"$F" "$LOG" added.bin append 8 grub_cmd "linux $KERNEL $ARGS init=/bin/sh"
cp good.json addedevent.json
$E set-field addedevent.json eventlog added.bin
expect "a log with an added event" "log-not-verified" addedevent.json
jq -e '[.reasons[].detail] | any(test("PCR 8 sha(1|256): mismatch: the quoted value matches without event 162"))' v.json >/dev/null &&
	ok "... the reason names the added event (162)" || bad "added event not named: $(jq -c '[.reasons[].detail]' v.json)"
cp good.json nolog.json
$E set-field nolog.json eventlog null
expect "no firmware log" "log-not-verified" nolog.json

# 12-14. The signature's bytes.
cp good.json trunc.json
$E truncate-sig trunc.json 5
expect_malformed "a truncated signature" trunc.json
cp good.json rsasig.json
$E sig-rsa rsasig.json
expect "an RSA signature on an ECC AK" "signature-scheme" rsasig.json
cp good.json clock.json
python3 - clock.json <<'PY'
import base64, json, sys
ev = json.load(open(sys.argv[1]))
att = bytearray(base64.b64decode(ev["quote"]["attest"]))
att[-40] ^= 1    # a bit of the PCR selection's tail or the clock: anything the TPM signed
ev["quote"]["attest"] = base64.b64encode(bytes(att)).decode()
json.dump(ev, open(sys.argv[1], "w"))
PY
"$M" attest verify clock.json --machine ak.machine.json --nonce "$N1" --json >v.json
jq -e '[.reasons[].name] | index("signature-invalid")' v.json >/dev/null && ok "a bit of TPMS_ATTEST flipped: signature-invalid" ||
	bad "bit flip: $(jq -c '[.reasons[].name]' v.json)"

# 15. An RSA AK (RSASSA-SHA256): trusted, and an ECDSA-shaped signature on it is of the wrong scheme.
mkak akr rsa
quote akr "$N1" sha1:all+sha256:all rsa.json
MACHINE=akr.machine.json
"$M" attest verify rsa.json --machine akr.machine.json --nonce "$N1" --policy gen.json >/dev/null &&
	ok "an RSA AK's quote: trusted" || bad "RSA AK quote refused"
cp rsa.json rsa-ecdsa.json
$E set-quote rsa-ecdsa.json later.json.msg later.json.sig
expect "an ECDSA signature on an RSA AK" "signature-scheme" rsa-ecdsa.json
unset MACHINE

# 16. The policy: a boot whose quote and log are genuine but that ran a command the policy does
# not allow (init=/bin/sh): trusted logs, policy-violated naming the GRUB event.
boot added.bin
mkak ak ecc
quote ak "$N1" sha1:all+sha256:all evil.json added.bin
expect "a genuine boot that ran init=/bin/sh" "policy-violated" evil.json --policy gen.json
jq -e '.logs.verified and ([.policy.violations[] | select(.pcr == 8) | .event] | index(162))' v.json >/dev/null &&
	ok "... the logs verified, the violation names event 162 in PCR 8" || bad "evil boot: $(jq -c '.policy' v.json | head -c 400)"
# closest_rules is a list of rule names, one string each (docs/json.md), not one joined string.
jq -e '[.policy.violations[] | select(.event == 162) | .closest_rules] | .[0] | type == "array" and length > 0
	and all(type == "string" and (contains("; ") | not))' v.json >/dev/null &&
	ok "... its closest_rules are a list of strings" || bad "closest_rules: $(jq -c '.policy.violations' v.json | head -c 400)"
"$M" attest verify evil.json --machine ak.machine.json --nonce "$N1" --policy gen.json >v.out
[ $? -eq 1 ] && grep -q 'policy-violated: PCR 8 event 162 "grub_cmd: linux' v.out && ok "... and the text verdict names it" ||
	bad "text verdict: $(cat v.out)"

# 16b. Text from the machine printed safely: a GRUB command (the machine's, hostile) with newlines
# that would put a line reading exactly like the trusted verdict into the NOT TRUSTED output. Every
# detail is one line, its control characters escaped (\n, \r, \t), in the text, the JSON and the
# local `mboot verify` output.
TRUSTED_LINE="trusted: the quote is the enrolled AK's, for this nonce; the logs replay to the quoted values and meet the policy"
"$F" "$LOG" nl.bin append 8 grub_cmd "$(printf 'echo x\n%s\n\r\tdone' "$TRUSTED_LINE")"
boot nl.bin
mkak ak ecc
quote ak "$N1" sha1:all+sha256:all nl.json nl.bin
"$M" attest verify nl.json --machine ak.machine.json --nonce "$N1" --policy gen.json >v.out
rc=$?
if [ $rc -eq 1 ] && ! grep -qxF "$TRUSTED_LINE" v.out && ! grep -q "$(printf '\033')" v.out &&
	grep -qF 'grub_cmd: echo x\ntrusted: the quote' v.out && grep -qF '\r\tdone' v.out; then
	ok "a GRUB command with newlines: NOT TRUSTED, no line reads as the trusted verdict, the escapes visible"
else
	bad "newline in a GRUB command: exit $rc $(cat -A v.out | head -c 800)"
fi
"$M" attest verify nl.json --machine ak.machine.json --nonce "$N1" --policy gen.json --json >v.json
jq -e '[.reasons[].detail] | all(explode | all(. >= 32 and . != 127)) and any(contains("echo x\\ntrusted: the quote"))' \
	v.json >/dev/null && ok "... the verdict JSON's details: one line each, the newline written \\n" ||
	bad "JSON details: $(jq -c '[.reasons[].detail]' v.json | head -c 600)"
"$M" verify --log nl.bin --tcti "$TCTI" --policy gen.json >v.out 2>&1
rc=$?
[ $rc -eq 1 ] && ! grep -qxF "$TRUSTED_LINE" v.out && ! grep -q "$(printf '\033')" v.out &&
	grep -qF 'VIOLATION PCR 8 event #162 EV_IPL "grub_cmd: echo x\ntrusted: the quote' v.out &&
	ok "... mboot verify prints the violation on one line, escaped" || bad "mboot verify text: exit $rc $(cat -A v.out | tail -c 800)"

# 17. Baseline: the good boot, then the machine rebooted into the evil one (same TPM, same AK).
# An AK outside the endorsement hierarchy sees resetCount, restartCount and firmwareVersion
# obfuscated by a per-key offset (Part 1, "Clock/Counter Obfuscation"): the counts differ by
# what happened, their values say nothing.
boot "$LOG"
mkak ak ecc
quote ak "$N1" sha1:all+sha256:all base.json
quote ak "$N2" sha1:all+sha256:all base2.json
swtpm_reset
"$M" log extend --tcti "$TCTI" added.bin >extend.out 2>&1 || fail "log extend after reset: $(cat extend.out)"
reload ak
quote ak "$N2" sha1:all+sha256:all after.json added.bin
"$M" attest verify after.json --machine ak.machine.json --nonce "$N2" --baseline base.json --json >v.json
rc=$?
[ $rc -eq 0 ] && jq -e '.baseline.rebooted and (.baseline.reset_count.after - .baseline.reset_count.before) % 4294967296 == 1 and
	([.baseline.events[] | select(.kind == "added" and .pcr == 8) | .event] == [162]) and .baseline.pcrs_moved == [8]' \
	v.json >/dev/null && ok "baseline: the reboot (resetCount + 1) and the added PCR 8 event 162 reported" ||
	bad "baseline: exit $rc $(jq -c .baseline v.json | head -c 600)"
"$M" attest verify after.json --machine ak.machine.json --nonce "$N2" --baseline good.json >/dev/null 2>v.err
[ $? -eq 2 ] && ok "a baseline another machine's AK signed is refused as input (exit 2)" || bad "foreign baseline accepted"

# 18. Each boot judged once (the fleet verifier's judged_lookup): the boot's second quote takes
# the first's judgment of the logs and writes what it writes judged in full; the rebooted
# machine's quote (another key) and a quote that fails take nothing.
# The second quote with its log named by its SHA-256 (openssl's) takes the same judgment.
log_sha=$(openssl dgst -sha256 -r "$LOG" | cut -d' ' -f1)
jq --arg d "$log_sha" 'del(.eventlog) + {eventlog_sha256: $d}' base2.json >base2-named.json
"${MB_JUDGED:?}" ak.machine.json gen.json base.json "$N1" base2.json "$N2" after.json "$N2" base2-named.json "$log_sha" \
	>judged.out &&
	ok "judged once: the same boot's judgment taken (its log carried or named), another boot's and a failed quote's not" ||
	bad "judged once: $(grep '^FAILED' judged.out) $(grep -v '^FAILED' judged.out | head -c 1500)"

# Malformed input: exit 2, never a verdict.
echo '{"version": 1, "kind": "mboot-evidence"}' >empty.json
expect_malformed "evidence without a quote" empty.json
printf 'not json' >garbage.json
expect_malformed "evidence that is not JSON" garbage.json
"$M" attest verify after.json --machine ak.machine.json --nonce "$(printf '%0130d' 0)" >/dev/null 2>&1
[ $? -eq 2 ] && ok "a 65-byte nonce (over TPM2B_DATA's 64): usage error" || bad "65-byte nonce accepted"

# Nonces of evidence made elsewhere: any extraData a TPM takes, 0 to 64 bytes (tpm2_quote's -q).
boot "$LOG"
mkak ak ecc
quote ak 0011 sha256:all n2.json
"$M" attest verify n2.json --machine ak.machine.json --nonce 0011 --policy gen.json >/dev/null &&
	ok "a quote of a 2-byte nonce (tpm2_quote -q 0011): trusted with --nonce 0011" || bad "2-byte nonce refused"
N64=$(openssl rand -hex 64)
quote ak "$N64" sha256:all n64.json
"$M" attest verify n64.json --machine ak.machine.json --nonce "$N64" --policy gen.json >/dev/null &&
	ok "a quote of a 64-byte nonce: trusted" || bad "64-byte nonce refused"
tpm2_quote -Q -c ak.ctx -l sha256:all -m n0.msg -s n0.sig -o n0.pcrs -F values -g sha256 || fail "tpm2_quote without -q"
tpm2_flushcontext -t
$E assemble --attest n0.msg --sig n0.sig --values n0.pcrs --selection sha256:all --ak-pub ak.pub --eventlog "$LOG" \
	-o n0.json || fail "assemble n0.json"
"$M" attest verify n0.json --machine ak.machine.json --nonce '' --policy gen.json >/dev/null &&
	ok "a quote without qualifying data (tpm2_quote, no -q): trusted with --nonce ''" || bad "empty nonce refused"
NONCE=0011 expect "the empty extraData judged for nonce 0011" "nonce-mismatch" n0.json
jq -e '.reasons[0].detail == "extraData is (empty), not the nonce sent"' v.json >/dev/null &&
	ok "... the detail says extraData is (empty)" || bad "empty extraData detail: $(jq -c '.reasons' v.json)"
NONCE='' expect "extraData 0011 judged for the empty nonce" "nonce-mismatch" n2.json
jq -e '.reasons[0].detail == "extraData is 0011, not the nonce sent"' v.json >/dev/null &&
	ok "... the detail names extraData 0011" || bad "0011 detail: $(jq -c '.reasons' v.json)"

[ $failures -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "all attest verify cases passed"
