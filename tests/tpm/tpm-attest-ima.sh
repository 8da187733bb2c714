#!/bin/bash
# The IMA list in attestation evidence (docs/attest.md, "IMA"), on a manufactured swtpm holding a
# real boot (ima-evm-utils' GRUB machine) whose PCR 10 is extended as a kernel extends it, for a
# list written with hashlib (ima-build.py): `mboot quote` carries the list, `attest verify`
# replays it against the quoted PCR 10 and judges it by the policy's "ima" section; the next
# evidence carries only the new entries and is judged on top of the state the last verdict
# left; a file that ran stays named until the machine reboots; entries the quote does not cover
# yet wait; a tampered list, or new entries without the state they follow, are refused.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
B="python3 ${MB_TPM_TESTS:-$(dirname "$0")}/ima-build.py"
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
N1=00112233445566778899aabbccddeeff
N2=0f1e2d3c4b5a69788796a5b4c3d2e1f0
cd "$WORK" || exit 1

swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/
"$M" attest enroll --tcti "$TCTI" --ak-file ak.json -o request.json || fail "attest enroll"
"$M" attest challenge -i request.json --ek-ca ca -o challenge.json --state state.json || fail "attest challenge"
"$M" attest activate --tcti "$TCTI" --ak-file ak.json -i challenge.json -o response.json || fail "attest activate"
"$M" attest challenge --state state.json -i response.json -o machine.json || fail "attest challenge --state"

# extend FILE: PCR 10 extended by each line of FILE, as the kernel does after adding the entry.
extend() {
	local x
	while read -r x; do
		tpm2_pcrextend "10:$x" || fail "pcrextend $x"
	done <"$1"
}
printf 'known file\n' >good1
printf 'another known file\n' >good2
head -c 64 /dev/urandom >evil
tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 >pcrs09.txt || fail pcrread
$B new pcrs09.txt list.bin /usr/bin/good1=good1 /usr/lib/good2.so=good2 >ext1.txt || fail "ima-build new"
extend ext1.txt
cp list.bin list-good.bin
"$M" policy generate --from-log "$LOG" --from-ima-log list-good.bin -o policy.json || fail "policy generate"
check "the policy's ima section allows /usr/bin/good1 with sha256sum's digest" \
	test "$(jq -r '.ima.digests["/usr/bin/good1"][0]' policy.json | sed 's/^sha256://')" = "$(sha256sum <good1 | cut -d' ' -f1)"

# verify EVIDENCE NONCE [options]: attest verify --json into v.json; its exit code in $rc.
verify() {
	local ev=$1 nonce=$2
	shift 2
	rc=0
	"$M" attest verify "$ev" --machine machine.json --nonce "$nonce" --policy policy.json --json "$@" >v.json 2>v.err || rc=$?
}
reasons() { jq -r '[.reasons[].name] | unique | join(" ")' v.json; }

# 1. The whole list: PCR 10 (sha256) is its replay, boot_aggregate the quoted PCRs 0-9's, trusted.
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --ima-log list.bin -o ev1.json || fail "quote 1"
check "the evidence carries the list byte for byte (base64 -d | cmp) from entry 0" \
	sh -c "jq -r .ima_log ev1.json | base64 -d | cmp - list.bin && test \"\$(jq .ima_start ev1.json)\" = 0"
verify ev1.json $N1 --ima-state-out st1.json
check "1: trusted, 3 entries judged in sha256 by the recomputed rule, 2 allowed, aggregate match (exit $rc: $(jq -c .reasons v.json))" \
	test "$rc:$(jq -c '[.trusted, .ima.entries, .ima.bank, .ima.rule, .ima.allowed, .ima.boot_aggregate, .ima.pending]' v.json)" = \
	'0:[true,3,"sha256","recomputed",2,"match",0]'
check "1: the state holds 3 entries, the TPM's PCR 10 (tpm2_pcrread) and entry 2's template hash" \
	test "$(jq -r '[.entries, .pcr10, .last] | join(" ")' st1.json)" = \
	"3 $(tpm2_pcrread sha256:10 | sed -n 's/.*0x//p' | tr A-F a-f) $($B last list.bin 3)"

# 2. An entry added to the list and not yet to PCR 10 (the kernel adds before it extends): it waits.
cp list.bin list-ahead.bin
$B add list-ahead.bin /usr/bin/good1=good1 >/dev/null
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --ima-log list-ahead.bin -o ev2.json || fail "quote 2"
verify ev2.json $N1
check "2: an entry past the quoted PCR 10 waits: trusted, 3 judged, 1 pending (exit $rc)" \
	test "$rc:$(jq -c '[.trusted, .ima.entries, .ima.pending]' v.json)" = '0:[true,3,1]'

# 3. An unknown file runs: only the new entry is sent, judged on top of the state; named.
$B add list.bin /tmp/evil=evil >ext3.txt
extend ext3.txt
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N2 --log "$LOG" --ima-log list.bin --ima-start 3 \
	--ima-last "$(jq -r .last st1.json)" -o ev3.json || fail "quote 3"
check "3: the evidence carries only entry 3 (ima_start 3, 1 entry's bytes)" \
	test "$(jq .ima_start ev3.json):$(jq -r .ima_log ev3.json | base64 -d | wc -c)" = "3:$(($(stat -c %s list.bin) - $(stat -c %s list-good.bin)))"
verify ev3.json $N2 --ima-state st1.json --ima-state-out st3.json
evil_sha=$(sha256sum <evil | cut -d' ' -f1)
check "3: untrusted, policy-violated naming /tmp/evil and sha256sum's digest (exit $rc: $(jq -r '.reasons[0].detail' v.json))" \
	sh -c "test '$rc:$(reasons)' = '1:policy-violated' && jq -r '.reasons[0].detail' v.json | grep -q 'IMA entry 3 \"/tmp/evil\" (sha256:$evil_sha)'"
check "3: one new entry judged, 4 in all" test "$(jq -c '[.ima.new_entries, .ima.entries]' v.json)" = '[1,4]'

# 4. A known file later in the same boot: the file that ran is still named.
$B add list.bin /usr/lib/good2.so=good2 >ext4.txt
extend ext4.txt
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --ima-log list.bin --ima-start 4 -o ev4.json || fail "quote 4"
verify ev4.json $N1 --ima-state st3.json --ima-state-out st4.json
check "4: still untrusted, /tmp/evil named from the earlier evidence (exit $rc)" \
	sh -c "test '$rc:$(reasons)' = '1:policy-violated' && jq -r '.reasons[].detail' v.json | grep -q '/tmp/evil.*an earlier evidence of this boot'"
check "4: this evidence's entry was allowed" test "$(jq -c '[.ima.new_entries, .ima.allowed, .ima.violations]' v.json)" = '[1,1,0]'

# 5. New entries without the state they follow, or on another state: refused, not guessed.
verify ev4.json $N1
check "5: entries from 4 without a state: log-not-verified (exit $rc)" test "$rc:$(reasons)" = "1:log-not-verified"
verify ev4.json $N1 --ima-state st1.json
check "5: entries from 4 on the state after 3 entries: log-not-verified (exit $rc)" test "$rc:$(reasons)" = "1:log-not-verified"
jq '.entries = 4' st1.json >st-forged.json
verify ev4.json $N1 --ima-state st-forged.json
check "5: a state claiming 4 entries with PCR 10 after 3: log-not-verified (exit $rc)" test "$rc:$(reasons)" = "1:log-not-verified"

# 6. The whole list tampered, quoted from entry 0: refused.
for t in drop:3 path:1 digest:2; do
	$B tamper list.bin bad.bin "${t%:*}" "${t#*:}"
	"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --ima-log bad.bin -o "ev6-${t%:*}.json" || fail "quote 6 $t"
	verify "ev6-${t%:*}.json" $N1
	check "6: entry ${t#*:} ${t%:*} (whole list): log-not-verified (exit $rc: $(jq -r '.reasons[0].detail' v.json | cut -c1-100))" \
		test "$rc:$(jq -r '[.reasons[].name] | index("log-not-verified") != null' v.json)" = "1:true"
done

# 7. The policy has an ima section, the evidence no list: not met. Without the section, a list
# that replays is no reason to refuse.
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $N1 --log "$LOG" --no-ima-log -o ev7.json || fail "quote 7"
verify ev7.json $N1
check "7: no list under a policy with an ima section: policy-violated (exit $rc)" test "$rc:$(reasons)" = "1:policy-violated"
"$M" policy generate --from-log "$LOG" -o policy-fw.json || fail "policy generate (firmware)"
rc=0
"$M" attest verify ev1.json --machine machine.json --nonce $N1 --policy policy-fw.json --json >v.json || rc=$?
check "7: the first list under a policy without ima section: trusted (exit $rc)" test "$rc:$(jq .trusted v.json)" = "0:true"

# 8. Malformed: a clear error, exit 2.
malformed() { # WHAT JQ-EDIT [options]
	local what=$1 edit=$2
	shift 2
	jq "$edit" ev1.json >bad.json
	rc=0
	"$M" attest verify bad.json --machine machine.json --nonce $N1 --policy policy.json "$@" >/dev/null 2>bad.err || rc=$?
	check "8: $what: exit 2 ($(head -c 120 bad.err))" test "$rc" = 2 -a -s bad.err
}
malformed "ima_start negative" '.ima_start = -1'
malformed "ima_start not a number" '.ima_start = "3"'
malformed "ima_log not base64" '.ima_log = "!!!!"'
head -c 100 list.bin | base64 -w0 >cut.b64
malformed "ima_log cut inside entry 0" ".ima_log = \"$(cat cut.b64)\""
printf '{"version": 1, "kind": "mboot-ima-state", "bank": "sha256"}' >st-bad.json
jq '.ima_start = 3' ev1.json >ev-start.json
rc=0
"$M" attest verify ev-start.json --machine machine.json --nonce $N1 --policy policy.json --ima-state st-bad.json >/dev/null 2>bad.err || rc=$?
check "8: a malformed state with evidence from entry 3: exit 2 ($(head -c 120 bad.err))" test "$rc" = 2

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
