#!/bin/bash
# The IMA list at the fleet verifier (issue 32, docs/attest.md "IMA"): mboot-verifierd (SQLite in a
# temp dir, plain HTTP on 127.0.0.1) and one machine, a manufactured swtpm booted by replaying a
# real recorded GRUB boot (the demo's Ubuntu VM), whose PCR 10 is extended as a kernel extends it
# for an IMA list written with hashlib (tests/tpm/ima-build.py). `mboot attest push --ima-log`:
# the first push carries the whole list; each later push of the boot only the entries after
# those the verifier judged (its nonce answer says how many, and the last one's template hash);
# an unknown file that ran turns the machine untrusted naming its path and digest (sha256sum),
# and keeps it so for the rest of the boot; the verifier restarted keeps its state (in the
# database); the firmware logs' judgment is still taken once per boot although PCR 10 moves; a
# reboot sends the whole new list; a policy set judges the stored evidence again; of two nonces
# asked at once, the later evidence is judged on the state the earlier one left.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
M=${MBOOT:?}
V=${MB_VERIFIERD:?}
B="python3 $MB_TPM_TESTS/ima-build.py"
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin
BANKS=sha1,sha256,sha384
cd "$WORK" || exit 1
unset MBOOT_VERIFIER MBOOT_MACHINE_ID http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
VPID=
stop_all() {
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	swtpm_cleanup
}
trap stop_all EXIT

boot() { # the machine powered on: the firmware log replayed, a new IMA list of its boot_aggregate and FILES
	swtpm_stop
	swtpm_serve "$SWTPM_DIR/m1/state" not-need-init
	"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
	tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 >pcrs09.txt || fail pcrread
	$B new pcrs09.txt list.bin "$@" >ext.txt || fail "ima-build new"
	extend ext.txt
}
extend() { # PCR 10 extended by each line, as the kernel does after adding the entry
	local x
	while read -r x; do tpm2_pcrextend "10:$x" || fail "pcrextend $x"; done <"$1"
}
run() { # the kernel measures another file: its entry added, then PCR 10 extended
	$B add list.bin "$@" >ext.txt || fail "ima-build add"
	extend ext.txt
}
push() {
	rc=0
	"$M" attest push --server "$URL" --insecure --machine-id m1 --ak-file "$WORK/ak-m1.json" \
		--tcti "$TCTI" --log "$LOG" --ima-log list.bin --json >push.out 2>push.err || rc=$?
}
api() { curl -sSf -H "Authorization: Bearer $(cat "$WORK/token")" "$URL$1"; }
metric() { api /metrics | awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'; }
start_verifier() {
	rm -f port
	"$V" --listen 127.0.0.1:0 --port-file port --insecure --db "$DB" --ek-ca-dir ekca \
		--default-policy policy.json --threads 2 2>>verifierd.log &
	VPID=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
	[ -s port ] || fail "mboot-verifierd did not start: $(cat verifierd.log)"
	URL=http://127.0.0.1:$(cat port)
}
ima() { jq -c "[.status, .verdict.ima.start, .verdict.ima.new_entries, .verdict.ima.entries]" push.out; }

printf 'a known program\n' >good1
printf 'a known library\n' >good2
head -c 64 /dev/urandom >evil
swtpm_manufacture "$SWTPM_DIR/m1" "$BANKS"
mkdir -p ekca
cp "$SWTPM_DIR/m1/ca/swtpm-localca-rootca-cert.pem" ekca/root.pem
cp "$SWTPM_DIR/m1/ca/issuercert.pem" ekca/issuer.pem
boot /usr/bin/good1=good1
cp list.bin known.bin
$B add known.bin /usr/lib/good2.so=good2 >/dev/null
# The release's policy: the firmware PCRs of the boot, and the files it may run.
"$M" policy generate --from-log "$LOG" --from-ima-log known.bin -o policy.json || fail "policy generate"
DB=sqlite:$WORK/verifier.db
(umask 077 && "$V" --db "$DB" --new-token --token-name alice >token) || fail "mboot-verifierd --new-token"
start_verifier

push
check "first push: trusted, the whole list (from 0, 2 entries) judged (exit $rc: $(head -c 300 push.err))" \
	test "$rc:$(ima)" = '0:["trusted",0,2,2]'
run /usr/lib/good2.so=good2
push
check "second push: only the new entry sent (from 2), trusted, 3 judged in all (exit $rc)" \
	test "$rc:$(ima)" = '0:["trusted",2,1,3]'
check "the firmware logs judged once, taken again by the second push although PCR 10 moved" \
	test "$(metric 'mboot_verifierd_logs_judged_total{result="judged"}') $(metric 'mboot_verifierd_logs_judged_total{result="reused"}')" = "1 1"

run /tmp/evil=evil
push
evil_sha=$(sha256sum <evil | cut -d' ' -f1)
check "an unknown file ran: untrusted, from 3, naming /tmp/evil and sha256sum's digest (exit $rc: $(jq -r '.verdict.reasons[0].detail' push.out))" \
	sh -c "test '$rc:$(ima)' = '1:[\"untrusted\",3,1,4]' && jq -r '.verdict.reasons[].detail' push.out | grep -q '\"/tmp/evil\" (sha256:$evil_sha)'"

# The verifier restarted: the state is in the database.
kill "$VPID" && wait "$VPID"
VPID=
start_verifier
run /usr/bin/good1=good1
push
check "after a restart, a known file: still untrusted, from 4, /tmp/evil still named (exit $rc)" \
	sh -c "test '$rc:$(ima)' = '1:[\"untrusted\",4,1,5]' && jq -r '.verdict.reasons[].detail' push.out | grep -q '/tmp/evil.*an earlier evidence of this boot'"

# A reboot: a new list as long as the verifier's state (5 entries) whose entry 4 differs from the
# last boot's: the machine sends it whole.
boot /usr/bin/good1=good1 /usr/lib/good2.so=good2 /usr/bin/good1=good1 /usr/lib/good2.so=good2
push
check "after a reboot: trusted, the whole list from 0 (exit $rc: $(jq -c .verdict.reasons push.out))" \
	test "$rc:$(ima)" = '0:["trusted",0,5,5]'
run /usr/bin/good1=good1
push
check "the same boot again: from 5 (exit $rc)" test "$rc:$(ima)" = '0:["trusted",5,1,6]'

# A policy set judges the stored evidence again: the first of its boot key, which the reboot kept
# (the same firmware boot: PCR 10 is the IMA list's, not the key's), the first push's, of 2
# entries. The state after that judgment is of those 2, which this boot's list starts with too:
# the next push sends the rest.
"$M" policy generate --from-log "$LOG" --from-ima-log list.bin -o policy2.json || fail "policy generate 2"
"$M" fleet policy set m1 policy2.json --server "$URL" --token-file token --insecure >set.out 2>&1 ||
	fail "fleet policy set: $(cat set.out)"
run /usr/bin/good1=good1
push
check "after a policy set: the next push from the stored evidence's 2 entries (exit $rc: $(ima))" \
	test "$rc:$(ima)" = '0:["trusted",2,5,7]'

# Two nonces asked at once (two pushes racing): the second's evidence, stored after the first's,
# is judged on the state the first left (the verifier keeps the row it read for a nonce; the row
# changed meanwhile, so it is read again and judged again), not on the row of its nonce's time.
nonce() { curl -sSf -X POST -H 'Content-Type: application/json' -d '' "$URL/v1/machines/m1/nonce" >"$1" || fail "nonce"; }
quote() { # quote NONCE_ANSWER START LAST OUT
	"$M" quote --tcti "$TCTI" --ak-file "$WORK/ak-m1.json" --nonce "$(jq -r .nonce "$1")" --log "$LOG" \
		--ima-log list.bin --ima-start "$2" --ima-last "$3" -o "$4" --force || fail "quote $4"
}
post_evidence() { # post_evidence EVIDENCE NONCE_ANSWER OUT: the HTTP status
	curl -sS -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$1" \
		"$URL/v1/machines/m1/evidence?nonce=$(jq -r .nonce "$2")"
}
run /usr/bin/good1=good1
nonce n1.json
nonce n2.json
quote n1.json "$(jq .ima_from n1.json)" "$(jq -r .ima_last n1.json)" ev1.json
st=$(post_evidence ev1.json n1.json v1.json)
check "racing nonces: the first's evidence trusted from $(jq .ima_from n1.json) ($st: $(jq -c '[.status, .verdict.ima.start]' v1.json))" \
	test "$st:$(jq -c '[.status, .verdict.ima.start]' v1.json)" = "200:[\"trusted\",$(jq .ima_from n1.json)]"
nonce n3.json
run /usr/lib/good2.so=good2
quote n2.json "$(jq .ima_from n3.json)" "$(jq -r .ima_last n3.json)" ev2.json
st=$(post_evidence ev2.json n2.json v2.json)
check "racing nonces: the second's evidence judged on the state the first left, from $(jq .ima_from n3.json) ($st: $(jq -c '[.status, .verdict.ima.start, .verdict.reasons]' v2.json))" \
	test "$st:$(jq -c '[.status, .verdict.ima.start]' v2.json)" = "200:[\"trusted\",$(jq .ima_from n3.json)]"

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
