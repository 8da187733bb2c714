#!/bin/bash
# mboot seal / unseal against a swtpm, checked with tpm2-tools and openssl: the PolicyPCR
# digest equals a tpm2-tools trial session's; secrets (binary, 128 bytes) come back exactly;
# an extended PCR is named on failure; sealing to predicted values works; with the event log
# of sealing, a boot with another kernel command line is explained event by event; malformed
# sealed files are input errors; the secret is in no sealed file and in no argv.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus

trial_digest() { # trial_digest SEL: tpm2-tools' PolicyPCR digest of the current PCRs
	tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
	tpm2_policypcr -S "$WORK/s.ctx" -l "$1" -L "$WORK/pol.dig" >/dev/null || fail "tpm2_policypcr"
	tpm2_flushcontext "$WORK/s.ctx" >/dev/null
	xxd -p -c 64 "$WORK/pol.dig"
}
pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}

swtpm_start
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"

# 1. The policy digest is what a TPM computes in a trial session, and follows every PCR.
printf 'k\0e\377y\n' > "$WORK/secret"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed" 2>"$WORK/err" || fail "seal: $(cat "$WORK/err")"
want=$(trial_digest sha256:0,7)
got=$(jq -r .policy.digest "$WORK/sealed")
[ "$got" = "$want" ] || fail "policy digest $got, tpm2_policypcr trial $want"
for p in 0 7; do
	[ "$(jq -r ".pcrs.values[\"$p\"]" "$WORK/sealed")" = "$(pcr_hex $p)" ] || fail "sealed value of PCR $p is not tpm2_pcrread's"
done
[ "$(stat -c %a "$WORK/sealed")" = 600 ] || fail "sealed file mode $(stat -c %a "$WORK/sealed")"
echo "ok: policy digest == tpm2_policypcr trial ($want); values == tpm2_pcrread; file 0600"

"$M" unseal -i "$WORK/sealed" > "$WORK/out" 2>"$WORK/err" || fail "unseal: $(cat "$WORK/err")"
cmp "$WORK/out" "$WORK/secret" || fail "unsealed bytes differ"
"$M" unseal -i "$WORK/sealed" -o "$WORK/out2" || fail "unseal -o"
cmp "$WORK/out2" "$WORK/secret" || fail "unseal -o bytes differ"
[ "$(stat -c %a "$WORK/out2")" = 600 ] || fail "unseal -o mode"
"$M" unseal -i "$WORK/sealed" -o "$WORK/out2" 2>"$WORK/err"; rc=$?
expect_rc 2 "unseal -o over an existing file"
ln -s "$WORK/nowhere" "$WORK/link"
"$M" unseal -i "$WORK/sealed" -o "$WORK/link" 2>/dev/null; rc=$?
expect_rc 2 "unseal -o through a symlink"
[ -e "$WORK/nowhere" ] && fail "unseal followed a symlink"
echo "ok: binary secret unsealed exactly (stdout, -o 0600); -o refuses existing files and symlinks"

head -c 128 /dev/urandom > "$WORK/s128"
"$M" seal --pcrs 7 -i - -o "$WORK/sealed128" < "$WORK/s128" || fail "seal 128 bytes"
"$M" unseal -i "$WORK/sealed128" | cmp - "$WORK/s128" || fail "128-byte secret differs"
head -c 129 /dev/urandom > "$WORK/s129"
"$M" seal --pcrs 7 -i "$WORK/s129" -o "$WORK/sealed129" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal of 129 bytes"
grep -q "larger than 128 bytes" "$WORK/err" || fail "no size message: $(cat "$WORK/err")"
[ -e "$WORK/sealed129" ] && fail "a sealed file was written for 129 bytes"
echo "ok: 128-byte secret round-trips (stdin); 129 bytes refused, exit 2"

"$M" seal -i "$WORK/secret" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal without --pcrs"
"$M" seal --pcrs none -i "$WORK/secret" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal --pcrs none without --force"
grep -q "refusing to seal to no PCRs" "$WORK/err" || fail "no refusal message"
"$M" seal --pcrs none --force -i "$WORK/secret" -o "$WORK/none" || fail "seal --pcrs none --force"
"$M" unseal -i "$WORK/none" | cmp - "$WORK/secret" || fail "unseal of a PCR-less seal"
echo "ok: no PCRs refused without --force (exit 2); with --force it seals and unseals"

# 2. The secret is in no sealed file and in no argv (seal reads it from a pipe while ps looks).
printf 'TOPSECRET-%s' "$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" > "$WORK/secret2"
( sleep 1; cat "$WORK/secret2" ) | "$M" seal --pcrs 0,7 -i - -o "$WORK/sealed2" &
spid=$!
sleep 0.5
ps -eo args > "$WORK/ps"
wait $spid || fail "seal from a pipe"
grep -q TOPSECRET "$WORK/ps" && fail "the secret appears in ps"
grep -q mboot "$WORK/ps" || fail "ps did not see mboot running"
grep -q TOPSECRET "$WORK/sealed2" && fail "the secret appears in the sealed file"
grep -qF "$(base64 < "$WORK/secret2" | head -c 12)" "$WORK/sealed2" && fail "the secret's base64 appears in the sealed file"
"$M" unseal -i "$WORK/sealed2" | cmp - "$WORK/secret2" || fail "unseal secret2"
echo "ok: the secret is not in the sealed file nor in ps argv"

# 3. Extend a sealed PCR: unseal fails with exit 1 and names PCR 7 (only), and the digest follows.
tpm2_pcrextend "7:sha256=$(printf '%064x' 8)" || fail "tpm2_pcrextend"
"$M" unseal -i "$WORK/sealed" > "$WORK/stdout" 2>"$WORK/out"; rc=$?
expect_rc 1 "unseal after extending PCR 7"
[ -s "$WORK/out" ] || fail "no explanation"
[ -s "$WORK/stdout" ] && fail "a failed unseal wrote to stdout (where the secret goes)"
grep -q "^PCR 7 (sha256) differs: sealed to $(jq -r '.pcrs.values["7"]' "$WORK/sealed"), now $(pcr_hex 7)" "$WORK/out" ||
	fail "PCR 7 not named with tpm2_pcrread's value: $(cat "$WORK/out")"
grep -q "^PCR 0 " "$WORK/out" && fail "PCR 0 named though unchanged"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed3" || fail "seal after extend"
[ "$(jq -r .policy.digest "$WORK/sealed3")" = "$(trial_digest sha256:0,7)" ] || fail "digest after extend != trial"
[ "$(jq -r .policy.digest "$WORK/sealed3")" != "$got" ] || fail "digest did not change with PCR 7"
tpm2_pcrextend "0:sha256=$(printf '%064x' 9)" || fail "tpm2_pcrextend"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed4" || fail "seal after extend"
[ "$(jq -r .policy.digest "$WORK/sealed4")" = "$(trial_digest sha256:0,7)" ] || fail "digest after PCR 0 extend != trial"
[ "$(jq -r .policy.digest "$WORK/sealed4")" != "$(jq -r .policy.digest "$WORK/sealed3")" ] || fail "digest did not change with PCR 0"
echo "ok: after extending PCR 7 unseal exits 1 naming PCR 7 alone; digest follows PCR 0 and 7 (== trial)"

# 4. Sealing to predicted values: PCR 7 after an extend with E, computed by openssl.
E=$(printf 'next boot' | openssl dgst -sha256 -r | cut -d' ' -f1)
p7=$( { pcr_hex 7 | xxd -r -p; echo "$E" | xxd -r -p; } | openssl dgst -sha256 -r | cut -d' ' -f1)
printf '{"banks": {"sha256": {"0": "%s", "7": "%s"}}}\n' "$(pcr_hex 0)" "$p7" > "$WORK/predicted.json"
"$M" seal --pcrs 0,7 --values "$WORK/predicted.json" -i "$WORK/secret" -o "$WORK/sealedp" || fail "seal --values"
"$M" unseal -i "$WORK/sealedp" >/dev/null 2>&1; rc=$?
expect_rc 1 "unseal before the predicted extend"
tpm2_pcrextend 7:sha256=$E || fail "tpm2_pcrextend"
[ "$(pcr_hex 7)" = "$p7" ] || fail "openssl's prediction $p7 != tpm2_pcrread $(pcr_hex 7)"
"$M" unseal -i "$WORK/sealedp" | cmp - "$WORK/secret" || fail "unseal after reaching the predicted values"
echo "ok: sealed to predicted values (openssl), unseals only once PCR 7 reaches them"
# A values file without one of the PCRs: refused before sealing, naming the PCR.
printf '{"banks": {"sha256": {"0": "%s"}}}\n' "$(pcr_hex 0)" > "$WORK/partial.json"
"$M" seal --pcrs 0,4,7 --values "$WORK/partial.json" -i "$WORK/secret" -o "$WORK/sealedq" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal --values missing PCRs 4 and 7"
grep -q 'no sha256 value for PCR 4,7 ' "$WORK/err" || fail "seal --values does not name PCRs 4,7: $(cat "$WORK/err")"
[ ! -e "$WORK/sealedq" ] || fail "seal --values with missing PCRs wrote $WORK/sealedq"
echo "ok: seal --values names the PCRs the file has no value for (4,7), writes nothing"

# 4b. PCRs 16 and 23 are resettable at locality 0 (tpm2_pcrreset shows it): seal says so.
tpm2_pcrextend "16:sha256=$(printf '%064x' 1)" || fail "extend 16"
tpm2_pcrreset 16 || fail "tpm2_pcrreset 16"
[ "$(pcr_hex 16)" = "$(printf '%064x' 0)" ] || fail "PCR 16 not reset"
"$M" seal --pcrs 7,16 -i "$WORK/secret" -o "$WORK/sealed16" 2>"$WORK/err" || fail "seal --pcrs 7,16"
grep -q "PCRs 16 and 23 can be reset" "$WORK/err" || fail "no note on PCR 16: $(cat "$WORK/err")"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed07" 2>"$WORK/err" || fail "seal --pcrs 0,7"
[ -s "$WORK/err" ] && fail "a note for PCRs 0,7: $(cat "$WORK/err")"
echo "ok: sealing to PCR 16 (reset by tpm2_pcrreset at locality 0) is said to protect nothing"

# 5. Malformed sealed files: exit 2, the field named, no crash.
bad() { # bad NAME JQ-FILTER EXPECTED-TEXT
	jq "$2" "$WORK/sealed" > "$WORK/bad.json" || fail "jq $2"
	"$M" unseal -i "$WORK/bad.json" > /dev/null 2>"$WORK/err"; rc=$?
	expect_rc 2 "$1"
	grep -q "$3" "$WORK/err" || fail "$1: message does not name $3: $(cat "$WORK/err")"
}
bad "wrong version" '.version = 2' '"version"'
bad "wrong kind" '.kind = "x"' '"kind"'
bad "truncated base64" '.public |= .[0:-3]' '"public"'
bad "bad base64" '.private |= "!!!!" + .[4:]' '"private"'
bad "cut public" '.public |= .[0:-4]' '"public"'
bad "huge public" ".public = \"$(head -c 30000 /dev/zero | base64 -w0)\"" '"public"'
bad "huge eventlog" ".eventlog = \"$(head -c 100 /dev/zero | base64 -w0)\" | .eventlog |= .[0:-1]" '"eventlog"'
bad "public swapped with private" '.public as $p | .public = .private | .private = $p' '"public"'
bad "unknown bank" '.pcrs.bank = "md5"' '"pcrs.bank"'
bad "PCR 24" '.pcrs.selection = [0, 24]' '"pcrs.selection"'
bad "value missing" 'del(.pcrs.values["7"])' '"pcrs.values"'
bad "short value" '.pcrs.values["7"] = "abcd"' '"pcrs.values.7"'
bad "value edited" ".pcrs.values[\"7\"] = \"$(printf '%064x' 5)\"" '"policy.digest"'
bad "selection edited" '.pcrs.selection = [0]' '"pcrs.values"'
# another sealed file's values and policy, consistent with each other but not with this object
bad "values and policy grafted" "$(jq -c '{pcrs, policy}' "$WORK/sealedp") as \$g | .pcrs = \$g.pcrs | .policy = \$g.policy" 'authPolicy'
bad "parent" '.parent = {"handle": "0x40000001"}' '"parent.handle"'
bad "no parent" 'del(.parent)' '"parent"'
head -c 200 "$WORK/sealed" > "$WORK/bad.json"
"$M" unseal -i "$WORK/bad.json" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "truncated file"
grep -qE "line [0-9]*, column [0-9]*: (premature end of input|.* near end of file)" "$WORK/err" || fail "truncated file: $(cat "$WORK/err")"
head -c $((70 << 20)) /dev/zero > "$WORK/bad.json"
"$M" unseal -i "$WORK/bad.json" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "70 MiB file"
rm -f "$WORK/bad.json"
echo "ok: malformed sealed files (version, base64, sizes, values, policy, parent, truncation) exit 2 naming the field"

# 6. A real boot (ima-evm-utils' GRUB machine) rebuilt by `log extend`; seal with its log; another
#    boot with init=/bin/sh on the kernel command line: unseal names PCR 8 and the event.
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
# One TPM (its seeds, hence its SRK, must stay): each boot is a reset (_TPM_Init) + replay.
swtpm_start
swtpm_banks "sha1 sha256"
boot() {
	swtpm_reset
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}
boot "$LOG"
"$M" seal --pcrs 0,4,7,8,9 --log "$LOG" -i "$WORK/secret" -o "$WORK/sealedlog" || fail "seal --log"
[ "$(jq -r .eventlog "$WORK/sealedlog" | base64 -d | sha256sum | cut -d' ' -f1)" = "$(sha256sum < "$LOG" | cut -d' ' -f1)" ] ||
	fail "the sealed file does not keep the log byte for byte"
"$M" unseal -i "$WORK/sealedlog" --log "$LOG" | cmp - "$WORK/secret" || fail "unseal on the sealing boot"
"$M" predict --log "$LOG" --cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh" \
	--write-log "$WORK/evil.bin" >/dev/null || fail "predict for the other boot"
boot "$WORK/evil.bin"
"$M" unseal -i "$WORK/sealedlog" --log "$WORK/evil.bin" > "$WORK/stdout" 2>"$WORK/out"; rc=$?
[ -s "$WORK/stdout" ] && fail "a failed unseal wrote to stdout"
expect_rc 1 "unseal on the init=/bin/sh boot"
grep -q "^PCR 8 (sha256) differs" "$WORK/out" || fail "PCR 8 not named: $(cat "$WORK/out")"
grep -Eq "^PCR (0|4|7|9) " "$WORK/out" && fail "an unchanged PCR is named: $(cat "$WORK/out")"
grep -q "^PCR 8: changed: #[0-9]* EV_IPL: kernel_cmdline: .*vt.handoff=7 → #[0-9]* EV_IPL: kernel_cmdline: .*init=/bin/sh$" "$WORK/out" ||
	fail "the kernel_cmdline event is not named: $(cat "$WORK/out")"
# reseal there cannot unseal either, and says why as unseal does (the log kept at sealing time
# against today's), not "no change" from comparing today's log with itself.
cp "$WORK/sealedlog" "$WORK/sealedlog.orig"
"$M" reseal -i "$WORK/sealedlog" --log "$WORK/evil.bin" > "$WORK/stdout" 2>"$WORK/out"; rc=$?
expect_rc 1 "reseal on the init=/bin/sh boot"
grep -q "^PCR 8: changed: #[0-9]* EV_IPL: kernel_cmdline: .*vt.handoff=7 → #[0-9]* EV_IPL: kernel_cmdline: .*init=/bin/sh$" "$WORK/out" ||
	fail "reseal does not name the kernel_cmdline event: $(cat "$WORK/out")"
grep -q "show no change" "$WORK/out" && fail "reseal compared today's log with itself: $(cat "$WORK/out")"
cmp -s "$WORK/sealedlog" "$WORK/sealedlog.orig" || fail "a refused reseal changed the sealed file"
"$M" unseal -i "$WORK/sealedlog" --log "$WORK/evil.bin" --json > "$WORK/report.json" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal --json on the init=/bin/sh boot"
jq -e '.unsealed == false and ([.pcrs[].pcr] == [8]) and .pcrs[0].bank == "sha256"' "$WORK/report.json" >/dev/null ||
	fail "--json report: $(cat "$WORK/report.json")"
[ "$(jq -r '.pcrs[0].actual' "$WORK/report.json")" = "$(pcr_hex 8)" ] || fail "--json: actual is not tpm2_pcrread's PCR 8"
[ "$(jq -r '.pcrs[0].expected' "$WORK/report.json")" != "$(pcr_hex 8)" ] || fail "--json: expected is today's PCR 8"
# verify's names for the same two values (docs/json.md); pretty by default, one line with --compact.
jq -e '[.. | objects | has("now")] | any | not' "$WORK/report.json" >/dev/null || fail "--json still says now"
[ "$(wc -l < "$WORK/report.json")" -gt 5 ] || fail "--json is not pretty-printed"
"$M" unseal -i "$WORK/sealedlog" --log "$WORK/evil.bin" --compact > "$WORK/compact.json" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal --compact on the init=/bin/sh boot"
[ "$(wc -l < "$WORK/compact.json")" = 1 ] && [ "$(jq -c . "$WORK/compact.json")" = "$(jq -c . "$WORK/report.json")" ] ||
	fail "--compact is not the same report on one line: $(head -c 300 "$WORK/compact.json")"
jq -e '[.events[] | select(.pcr == 8 and .change == "changed" and (.after | test("EV_IPL: kernel_cmdline: .*init=/bin/sh$")))] | length == 1' \
	"$WORK/report.json" >/dev/null || fail "--json: the kernel_cmdline change: $(cat "$WORK/report.json")"
"$M" unseal -i "$WORK/sealedlog" --log /nonexistent > "$WORK/out" 2>&1; rc=$?
expect_rc 1 "unseal without today's log"
grep -q "not readable" "$WORK/out" || fail "missing log not said: $(cat "$WORK/out")"
boot "$LOG"
"$M" unseal -i "$WORK/sealedlog" | cmp - "$WORK/secret" || fail "unseal back on the sealing boot"
echo "ok: corpus boot: sealed with its log; init=/bin/sh boot exits 1 naming PCR 8 and the kernel_cmdline change (text and --json)"

# 7. A persistent SRK at 0x81000001 (made by tpm2-tools) is used as the parent when present.
tpm2_createprimary -C o -G ecc256:aes128cfb -c "$WORK/srk.ctx" >/dev/null || fail "tpm2_createprimary"
tpm2_evictcontrol -C o -c "$WORK/srk.ctx" 0x81000001 >/dev/null || fail "tpm2_evictcontrol"
tpm2_flushcontext -t >/dev/null || fail "tpm2_flushcontext"  # no resource manager: drop the transient copy
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$WORK/sealedsrk" || fail "seal under the persistent SRK"
[ "$(jq -r .parent.handle "$WORK/sealedsrk")" = 0x81000001 ] || fail "parent: $(jq -c .parent "$WORK/sealedsrk")"
"$M" unseal -i "$WORK/sealedsrk" | cmp - "$WORK/secret" || fail "unseal under the persistent SRK"
# the template-parent file still unseals (its parent is recreated from the template)
"$M" unseal -i "$WORK/sealedlog" | cmp - "$WORK/secret" || fail "unseal of a template-parent file"
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null || fail "evict"
"$M" unseal -i "$WORK/sealedsrk" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 3 "unseal with the persistent parent gone"
grep -q "0x81000001" "$WORK/err" || fail "missing parent not named: $(cat "$WORK/err")"
echo "ok: persistent SRK 0x81000001 used and recorded; its absence is a TPM error naming the handle"
# A signing key at 0x81000001 is no parent: the template SRK is used, and seal says so.
tpm2_createprimary -C o -G rsa2048 -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign' \
	-c "$WORK/sign.ctx" >/dev/null || fail "tpm2_createprimary (signing key)"
tpm2_evictcontrol -C o -c "$WORK/sign.ctx" 0x81000001 >/dev/null || fail "tpm2_evictcontrol"
tpm2_flushcontext -t >/dev/null
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$WORK/sealednote" 2>"$WORK/err" || fail "seal beside a signing key"
grep -q "0x81000001 is not a storage key" "$WORK/err" || fail "the fallback is not said: $(cat "$WORK/err")"
[ "$(jq -r .parent.template "$WORK/sealednote")" = ecc-p256-srk ] || fail "parent $(jq -c .parent "$WORK/sealednote")"
"$M" unseal -i "$WORK/sealednote" | cmp - "$WORK/secret" || fail "unseal under the template SRK"
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null || fail "evict"
echo "ok: a signing key at 0x81000001: sealed under the template SRK, and said so"

# 8. An existing -o is kept byte for byte (exit 2) unless --force; a new or replaced sealed
#    file is 0600 whatever the umask; a failed seal leaves nothing in the directory, not
#    even a temp file (also when the write itself fails, after the temp file was made).
D=$WORK/out.d
mkdir "$D"
printf 'a file someone keeps\n' > "$D/kept"
chmod 644 "$D/kept"
cp "$D/kept" "$WORK/kept.orig"
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/kept" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal -o an existing file"
grep -qF "$D/kept already exists; not replaced (give --force to replace it)" "$WORK/err" || fail "refusal not said: $(cat "$WORK/err")"
cmp -s "$D/kept" "$WORK/kept.orig" || fail "seal changed the existing file it refused"
openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/rel.pem" 2>/dev/null || fail "openssl ecparam"
openssl ec -in "$WORK/rel.pem" -pubout -out "$WORK/rel.pub" 2>/dev/null || fail "openssl ec -pubout"
"$M" seal --authorized-by "$WORK/rel.pub" -i "$WORK/secret" -o "$D/kept" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal --authorized-by -o an existing file"
grep -q "already exists" "$WORK/err" || fail "seal --authorized-by: refusal not said: $(cat "$WORK/err")"
cmp -s "$D/kept" "$WORK/kept.orig" || fail "seal --authorized-by changed the existing file it refused"
printf 'another secret' > "$WORK/secret2"
(umask 0; "$M" seal --pcrs 7 -i "$WORK/secret2" -o "$D/kept" --force 2>"$WORK/err") || fail "seal --force: $(cat "$WORK/err")"
[ "$(stat -c %a "$D/kept")" = 600 ] || fail "replaced sealed file mode $(stat -c %a "$D/kept")"
"$M" unseal -i "$D/kept" | cmp - "$WORK/secret2" || fail "the file seal --force wrote does not unseal to the new secret"
(umask 0; "$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/new" 2>"$WORK/err") || fail "seal (umask 0): $(cat "$WORK/err")"
[ "$(stat -c %a "$D/new")" = 600 ] || fail "new sealed file mode $(stat -c %a "$D/new") with umask 0"
ln -s "$D/nowhere" "$D/dangling"
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/dangling" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal -o a dangling symlink"
[ -e "$D/nowhere" ] && fail "seal followed a dangling symlink"
echo "ok: seal -o an existing file: exit 2, file unchanged; --force replaces it (0600, unseals); new files 0600 under umask 0"

listing() { (cd "$D" && ls -A | tr '\n' ' '); }
before=$(listing)
"$M" seal --pcrs 99 -i "$WORK/secret" -o "$D/bad" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal --pcrs 99"
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/bad" --tcti "swtpm:path=$WORK/no-such-sock" 2>"$WORK/err"; rc=$?
expect_rc 3 "seal with no TPM"
"$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/kept" --force --tcti "swtpm:path=$WORK/no-such-sock" 2>"$WORK/err"; rc=$?
expect_rc 3 "seal --force with no TPM"
# A file-size limit of 0 makes the write into the temp file fail (EFBIG; SIGXFSZ ignored);
# stderr goes through a pipe, which the limit does not touch.
(trap '' XFSZ; ulimit -f 0; "$M" seal --pcrs 7 -i "$WORK/secret" -o "$D/kept" --force 2>&1) | cat > "$WORK/err"
rc=${PIPESTATUS[0]}
expect_rc 2 "seal whose write fails"
grep -q "write error" "$WORK/err" || fail "the failed write is not said: $(cat "$WORK/err")"
"$M" unseal -i "$D/kept" | cmp - "$WORK/secret2" || fail "a failed seal --force damaged the file it was to replace"
[ "$(listing)" = "$before" ] || fail "failed seals left files behind: '$(listing)', was '$before'"
echo "ok: failed seals (bad --pcrs, no TPM, a write that fails): no file and no temp file left; the file to replace intact"
