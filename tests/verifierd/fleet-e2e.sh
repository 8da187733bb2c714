#!/bin/bash
# The fleet end to end, as issue 18 proves it: mboot-verifierd (SQLite in a temp dir, plain HTTP
# on 127.0.0.1) and three machines, each a manufactured swtpm of its own (EK certificates from
# its own swtpm_localca CA) booted by replaying a real recorded GRUB boot (the demo's Ubuntu VM)
# with `mboot log extend`. Every machine runs `mboot attest push` (enroll on first contact,
# nonce, quote, evidence, verdict) and the operator `mboot fleet`. Proves: trusted machines; the
# init=/bin/sh boot untrusted with the event named; a machine that stops pushing turns stale
# after twice its interval; a second push takes a new nonce; policy set re-judges; revoke refuses;
# forget lets the machine enroll again; one TPM under a second id is refused; a wrong token and
# http:// without --insecure are refused. Webhooks (--notify, docs/api.md): every status change
# POSTed to a receiver on 127.0.0.1 (notify-receiver.py) that checks the HMAC with python's hmac;
# m1 turning untrusted is the expected body, delivered on the 3rd try after two 500s, 1 s and 2 s
# apart; a second receiver that never answers slows no attestation, its queue overflows, and
# GET /metrics counts delivered, dropped and retried. Turning stale is an event: the verifier
# started again with --stale-sweep 1 announces the silent m2 once (signed, its audit line), not
# again once started another time; a policy set leaves it stale and sends nothing; its next push
# is sent as stale -> trusted.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
M=${MBOOT:?}
V=${MB_VERIFIERD:?}
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin
BANKS=sha1,sha256,sha384 # the banks the log lists (Spec ID): attest verify wants the strongest quoted
CMDLINE="root=PARTUUID=6443a6ae-e5e9-4df7-9a06-d1329e50f33c ro console=ttyS0 panic=-1" # the VM's
cd "$WORK" || exit 1
unset MBOOT_VERIFIER MBOOT_MACHINE_ID http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
VPID=
RPID=
stop_all() {
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	swtpm_cleanup
}
trap stop_all EXIT

# boot NAME LOG: machine NAME (manufactured once) powered on, LOG replayed into its PCRs.
boot() {
	swtpm_stop
	[ -d "$SWTPM_DIR/$1/state" ] || swtpm_manufacture "$SWTPM_DIR/$1" "$BANKS"
	swtpm_serve "$SWTPM_DIR/$1/state" not-need-init # mboot log extend sends TPM2_Startup
	"$M" log extend --tcti "$TCTI" "$2" >extend.out 2>&1 || fail "log extend $2 on $1: $(cat extend.out)"
}
# push NAME [ARGS]: mboot attest push from machine NAME (its TPM booted); output in push.out, rc in $rc
push() {
	local name=$1
	shift
	rc=0
	"$M" attest push --server "$URL" --insecure --machine-id "$name" --ak-file "$WORK/ak-$name.json" \
		--tcti "$TCTI" --log "$BOOTED" "$@" >push.out 2>push.err || rc=$?
}
fleet() { "$M" fleet "$@" --server "$URL" --token-file "$WORK/token" --insecure 2>fleet.err; }
status_of() { fleet list --json | jq -r --arg id "$1" '.machines[] | select(.id == $id) | .status'; }

# The machines, made first: the verifier trusts their manufacturers' CAs.
mkdir -p ekca
for m in m1 m2 m3; do
	swtpm_manufacture "$SWTPM_DIR/$m" "$BANKS"
	cp "$SWTPM_DIR/$m/ca/swtpm-localca-rootca-cert.pem" "ekca/$m-root.pem"
	cp "$SWTPM_DIR/$m/ca/issuercert.pem" "ekca/$m-issuer.pem"
done
"$M" policy generate --from-log "$LOG" -o policy.json || fail "policy generate"
# The boot the demo's attacker makes: the same machine with init=/bin/sh added to the kernel's
# command line, the log of that boot as mboot predict writes it (GRUB measures the command line).
"$M" predict --log "$LOG" --cmdline "$CMDLINE init=/bin/sh" --write-log cmdline.log >/dev/null ||
	fail "predict --write-log (init=/bin/sh)"
DB=sqlite:$WORK/verifier.db
(umask 077 && "$V" --db "$DB" --new-token --token-name alice >token) || fail "mboot-verifierd --new-token"
# The webhook receivers: a good one (its tries in hook-tries.jsonl) and one that never answers.
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >notify.secret && echo >>notify.secret)
python3 "$MB_FLEET_TESTS/notify-receiver.py" notify.secret hook.port hang.port hook-tries.jsonl hook.fail \
	hang.log 2>receiver.log &
RPID=$!
for _ in $(seq 100); do [ -s hook.port ] && [ -s hang.port ] && break; sleep 0.1; done
[ -s hook.port ] || fail "notify-receiver.py did not start: $(cat receiver.log)"
NOTIFY_QUEUE=8
# start_verifier ARGS: the verifier (its log appended to verifierd.log), with ARGS; $URL its address.
start_verifier() {
	rm -f port
	"$V" --listen 127.0.0.1:0 --port-file port --insecure --db "$DB" --ek-ca-dir ekca \
		--default-policy policy.json --threads 2 --notify "http://127.0.0.1:$(cat hook.port)/hook" \
		--notify "http://127.0.0.1:$(cat hang.port)/hang" --notify-secret-file notify.secret \
		--notify-timeout 100 --notify-queue "$NOTIFY_QUEUE" "$@" 2>>verifierd.log &
	VPID=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
	[ -s port ] || fail "mboot-verifierd did not start: $(cat verifierd.log)"
	URL=http://127.0.0.1:$(cat port)
}
stop_verifier() {
	kill "$VPID" && wait "$VPID"
	VPID=
}
# No stale sweep at first: m2 (below) goes stale unannounced until the verifier is started again
# with one, at the end, so that the webhooks' order here does not depend on the time.
start_verifier --stale-sweep 0

# --- m1: the good boot, enrolled on first contact, trusted ----------------------------------------
BOOTED=$LOG
boot m1 "$BOOTED"
push m1 --json
check "m1: first push enrolls and is trusted (exit $rc: $(head -c 300 push.err))" \
	test "$rc:$(jq -r .status push.out)" = "0:trusted"
nonce1=$(jq -r .nonce push.out)
check "m1: the AK file is kept, mode 600" test "$(stat -c %a "$WORK/ak-m1.json" 2>/dev/null)" = 600
push m1
check "m1: a second push (a new nonce) is trusted, said as attest verify says it (exit $rc)" \
	test "$rc:$(cut -c1-8 push.out)" = "0:trusted:"
fleet show m1 --json >show-m1.json
check "m1: two attestations in the history, the last with a new nonce" \
	test "$(jq '.history | length' show-m1.json):$(jq -r '.history[0].trusted' show-m1.json)" = "2:true"
push m1 --json
check "m1: a third push's nonce is not the first's" test "$rc:$(jq -r '.nonce != "'"$nonce1"'"' push.out)" = "0:true"
nonce3=$(jq -r .nonce push.out)
# Each boot judged once, its evidence stored once: the second and third pushes of the boot had
# their quotes checked and took the first's judgment of the logs; the stored evidence is still
# the first push's (its own nonce kept with it), the last nonce the third's.
api() { curl -sSf -H "Authorization: Bearer $(cat "$WORK/token")" "$URL$1"; }
# metric NAME{LABELS}: its value in GET /metrics (0 when absent)
metric() { api /metrics | awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'; }
check "m1: its boot's logs judged once, the judgment taken twice" \
	test "$(metric 'mboot_verifierd_logs_judged_total{result="judged"}') $(metric 'mboot_verifierd_logs_judged_total{result="reused"}')" = "1 2"
# row ID: the machine's stored evidence's nonce, its boot key's length, the last nonce, and
# whether the stored evidence's quote carries the first push's nonce (its extraData, base64)
row() {
	python3 -c 'import sqlite3, sys, json, base64
r = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute(
    "SELECT evidence_nonce, evidence_boot, last_nonce, last_evidence FROM machines WHERE id = ?", (sys.argv[2],)).fetchone()
q = base64.b64decode(json.loads(r[3])["quote"]["attest"])
print(r[0], len(r[1] or ""), r[2], bytes.fromhex(r[0]) in q)' "$WORK/verifier.db" "$1"
}
check "m1: the evidence stored is the first push's (its nonce in its quote), the last nonce the third's" \
	test "$(row m1)" = "$nonce1 64 $nonce3 True"
# The boot's judgment kept, its log is named instead of sent: the nonce answer names it by its
# SHA-256 (openssl's), and the second and third pushes named it (the stored evidence, above, is
# still the first push's, with its log).
log_sha=$(openssl dgst -sha256 -r "$BOOTED" | cut -d' ' -f1)
check "m1: the nonce answer names the log whose judgment is kept, by openssl's SHA-256 of it" \
	test "$(curl -sf -X POST "$URL/v1/machines/m1/nonce" | jq -r .eventlog_sha256)" = "$log_sha"
check "m1: the second and third pushes named the log instead of sending it" \
	test "$(metric 'mboot_verifierd_eventlog_named_total{result="taken"}') $(metric 'mboot_verifierd_eventlog_named_total{result="asked"}')" = "2 0"
# Two verifiers on the database (ack-proxy.py: the nonce from this one, which keeps the judgment
# and names the log; the evidence to a second one, just started, which does not): the second
# answers 409 "send": "eventlog", and push sends the evidence again with the log, same nonce.
rm -f port2
"$V" --listen 127.0.0.1:0 --port-file port2 --insecure --db "$DB" --ek-ca-dir ekca --default-policy policy.json \
	--threads 2 --notify-queue 1 2>>verifierd2.log &
V2PID=$!
for _ in $(seq 100); do [ -s port2 ] && break; sleep 0.1; done
[ -s port2 ] || fail "a second mboot-verifierd did not start: $(cat verifierd2.log)"
python3 "$MB_FLEET_TESTS/ack-proxy.py" proxy.port acks.jsonl "127.0.0.1:$(cat port),127.0.0.1:$(cat port2)" 2>proxy.err &
PPID2=$!
for _ in $(seq 100); do [ -s proxy.port ] && break; sleep 0.1; done
[ -s proxy.port ] || fail "ack-proxy.py did not start: $(cat proxy.err)"
URL1=$URL
URL=http://127.0.0.1:$(cat proxy.port)
push m1
URL=$URL1
second=$(curl -sSf -H "Authorization: Bearer $(cat "$WORK/token")" "http://127.0.0.1:$(cat port2)/metrics" |
	awk '$1 == "mboot_verifierd_eventlog_named_total{result=\"asked\"}" { print $2 }')
kill "$PPID2" "$V2PID" 2>/dev/null
wait "$PPID2" "$V2PID" 2>/dev/null
check "m1 through a second verifier that keeps no judgment: 409 asking for the log, then 200 with it, one nonce; trusted (exit $rc, $(head -c 200 push.err))" \
	test "$rc $second $(jq -r 'select(.path | contains("/evidence")) | "\(.status):\(.asked_nonce | length)"' acks.jsonl | paste -sd' ')" = "0 1 409:64 200:64"
check "... both evidence posts with the one nonce the first verifier gave" \
	test "$(jq -r 'select(.path | contains("/evidence")) | .asked_nonce' acks.jsonl | sort -u | wc -l)" = 1
# One TPM is one machine: m1's TPM (still the one serving) pushed under a second id is refused.
push m1-twin
check "m1's TPM under a second id: refused, exit 2, HTTP 409 naming m1 ($(head -c 300 push.err))" \
	test "$rc:$(grep -c "HTTP 409: this TPM (its EK) is enrolled as machine m1: one TPM is one machine" push.err)" = "2:1"
check "... and no machine m1-twin exists" test "$(status_of m1-twin)" = ""

# --- m2: interval 2 s, pushes once and then stays silent ------------------------------------------
boot m2 "$BOOTED"
push m2 --interval 2
check "m2: trusted (exit $rc)" test "$rc" = 0
m2_pushed=$(date +%s)
check "m2: trusted in fleet list while it is fresh" test "$(status_of m2)" = trusted

# --- m3: the init=/bin/sh boot --------------------------------------------------------------------
BOOTED=$WORK/cmdline.log
boot m3 "$BOOTED"
push m3
check "m3 booted with init=/bin/sh: push exits 1, NOT TRUSTED (exit $rc: $(head -c 300 push.err))" \
	test "$rc:$(head -1 push.out)" = "1:NOT TRUSTED:"
check "m3: a policy-violated reason names the event: its PCR, index and the init=/bin/sh command line" \
	grep -Eq '^  policy-violated: PCR 8 event [0-9]+ "kernel_cmdline: .* init=/bin/sh": ' push.out
fleet show m3 --json >show-m3.json
check "m3: fleet show --json says untrusted with the policy-violated reason" \
	test "$(jq -r '.status + " " + ([.verdict.reasons[].name] | unique | join(","))' show-m3.json)" = "untrusted policy-violated"
fleet show m3 >show-m3.txt
check "m3: fleet show prints the status and the reason naming the event" \
	grep -Eq '^  policy-violated: PCR 8 event [0-9]+ "kernel_cmdline: .* init=/bin/sh": ' show-m3.txt
# Its second push: the boot's judgment taken (the same violation named), the evidence not stored
# again. The policy set below judges the stored evidence with its own nonce, not the last one.
judged=$(metric 'mboot_verifierd_logs_judged_total{result="judged"}')
push m3
check "m3's second push: its boot's judgment taken, the same violation named (exit $rc)" \
	test "$rc:$(grep -Ec '^  policy-violated: PCR 8 event [0-9]+ "kernel_cmdline: .* init=/bin/sh": ' push.out):$(metric 'mboot_verifierd_logs_judged_total{result="judged"}')" = "1:1:$judged"
"$M" policy generate --from-log cmdline.log -o policy-sh.json || fail "policy generate (init=/bin/sh)"
fleet policy set m3 policy-sh.json >set.out
check "fleet policy set m3 (a policy of that boot): judged again, trusted ($(cat set.out fleet.err))" \
	grep -q "^m3: policy $(sha256sum <policy-sh.json | cut -d' ' -f1), status trusted$" set.out
fleet policy clear m3 >/dev/null
check "fleet policy clear m3: no policy in fleet show" test "$(fleet show m3 --json | jq -r .policy)" = null

fleet list --json >list.json
# (m2's status is not asked here: it may be stale by now, 2 x 2 s after its push)
check "fleet list --json: three machines, m1 trusted, m3 untrusted" \
	test "$(jq -r '[.machines[] | .id + "=" + (if .id == "m2" then "" else .status end)] | join(" ")' list.json)" = \
	"m1=trusted m2= m3=untrusted"
fleet list >list.txt
check "fleet list: a table with m1's status and policy digest" \
	grep -Eq "^m1 +trusted +[0-9T:Z-]{20} +$(sha256sum <policy.json | cut -c1-12)$" list.txt

# --- m1 reboots into the init=/bin/sh boot: what changed since its last trusted boot --------------
# The events that differ are those `predict --cmdline` rewrote: the ones whose data holds
# "init=/bin/sh" (found by their bytes, in hex, in the log's data).
sh_hex=$(printf 'init=/bin/sh' | od -An -tx1 | tr -d ' \n')
sh_events=$("$M" log show --json "$WORK/cmdline.log" |
	jq -c --arg h "$sh_hex" '[.events[] | select(.data | contains($h)) | .index]')
untrusted0=$(metric 'mboot_verifierd_attestations_total{result="untrusted"}')
judged0=$(metric mboot_verifierd_judge_seconds_count)
policy0=$(metric 'mboot_verifierd_untrusted_reasons_total{reason="policy-violated"}')
kept0=$(metric 'mboot_verifierd_nonce_rows_total{from="kept"}')
read0=$(metric 'mboot_verifierd_nonce_rows_total{from="read"}')
BOOTED=$WORK/cmdline.log
boot m1 "$BOOTED"
# hook_delivered N: wait (10 s at most) until the good receiver said 2xx to N deliveries
hook_delivered() {
	for _ in $(seq 100); do
		[ "$(jq -s '[.[] | select(.status == 204)] | length' hook-tries.jsonl 2>/dev/null)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# Eight status changes so far (m1, m2, m3 enrolled and judged; m3's policy set and cleared):
# all delivered before the receiver is told to fail the next two tries.
hook_delivered 8 || bad "webhooks: 8 deliveries before m1's, got: $(jq -c .body hook-tries.jsonl)"
echo 2 >hook.fail
t0=$(date +%s%N)
push m1 --json
push_ms=$((($(date +%s%N) - t0) / 1000000))
check "m1 trusted before, now booted with init=/bin/sh: NOT TRUSTED (exit $rc)" test "$rc" = 1
check "webhooks: the receiver that never answers holds a delivery ($(wc -l <hang.log) connection(s)), and yet the push took ${push_ms} ms (< 10000: never waits for the 100 s try)" \
	test "$(wc -l <hang.log)" -ge 1 -a "$push_ms" -lt 10000
m1_nonce=$(jq -r .nonce push.out)
hook_delivered 9 || bad "webhooks: m1's change not delivered within 10 s: $(tail -3 hook-tries.jsonl)"
jq -s -c --arg n "$m1_nonce" '[.[] | select(.body.nonce == $n)]' hook-tries.jsonl >m1-tries.json
check "webhooks: m1's change tried 3 times: 500, 500, 204, each signed (HMAC-SHA256 checked by python's hmac) and fresh" \
	test "$(jq -c '[.[] | [.status, .sig_ok, .fresh]]' m1-tries.json)" = '[[500,true,true],[500,true,true],[204,true,true]]'
check "webhooks: the retries backed off 1 s, then 2 s ($(jq -c '[.[].t]' m1-tries.json))" \
	jq -e '(.[1].t - .[0].t) >= 0.9 and (.[1].t - .[0].t) < 1.9 and (.[2].t - .[1].t) >= 1.9 and (.[2].t - .[1].t) < 3.5' m1-tries.json
fleet show m1 --json >show-m1-sh.json
jq '.[2]' m1-tries.json >m1-hook.json
check "webhooks: m1's body: kind, version, delivery id (its header), m1 trusted -> untrusted by attestation, its nonce, the verdict's reasons, the time" \
	jq -e --slurpfile show show-m1-sh.json --arg n "$m1_nonce" --arg now "$(date +%s)" '
	  (.body | keys) == ["at","cause","delivery_id","kind","machine_id","new_status","nonce","old_status","operator","reasons","version"] and
	  .body.kind == "mboot-status-change" and .body.version == 1 and .body.machine_id == "m1" and
	  .body.old_status == "trusted" and .body.new_status == "untrusted" and .body.cause == "attestation" and
	  .body.nonce == $n and .body.operator == null and .body.reasons == $show[0].verdict.reasons and
	  (.body.reasons | length) > 0 and
	  (.body.delivery_id | test("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")) and
	  .headers["X-Mboot-Delivery"] == .body.delivery_id and .headers["Content-Type"] == "application/json" and
	  ((.body.at | fromdateiso8601) - ($now | tonumber) | fabs) < 60 and .path == "/hook"' m1-hook.json
check "m1: fleet show --json names the events changed since its last trusted boot: $sh_events, PCR 8" \
	test "$(jq -c '[.since_trusted[] | select(.change == "changed" and .pcr == 8) | .event] | sort' show-m1-sh.json)" = \
	"$sh_events" -a "$(jq '.since_trusted | length' show-m1-sh.json)" = "$(jq length <<<"$sh_events")"
fleet show m1 >show-m1-sh.txt
check "m1: fleet show prints them under 'since the last trusted attestation'" \
	test "$(grep -A9 '^since the last trusted attestation:$' show-m1-sh.txt | grep -c '^  PCR 8 changed: event [0-9]* EV_IPL: .*init=/bin/sh')" = \
	"$(jq length <<<"$sh_events")"
api /v1/machines/m1/events >events-m1-sh.json || fail "GET /v1/machines/m1/events"
check "m1: the events API marks exactly those events changed" \
	test "$(jq -c '[.events[] | select(.changed == "changed") | .index]' events-m1-sh.json)" = "$sh_events"
# The log sent does not replay to the quote (an event added to the log only): PCR 8 does not
# verify, and of its events only those that differ from the trusted boot are marked broken.
"${MB_FORGE:?}" "$WORK/cmdline.log" "$WORK/tampered.log" append 8 grub_cmd "echo not in the TPM" ||
	fail "mb-forge append"
BOOTED=$WORK/tampered.log
push m1
check "m1: a log that does not replay to the quote: NOT TRUSTED (exit $rc)" test "$rc" = 1
api /v1/machines/m1/events >events-m1-tampered.json || fail "GET /v1/machines/m1/events"
added=$("$M" log show --json "$WORK/tampered.log" | jq '.events[-1].index')
check "m1: of PCR 8's $(jq '[.events[] | select(.pcr == 8)] | length' events-m1-tampered.json) events, the broken ones are the changed $sh_events and the added $added" \
	test "$(jq -c '[.events[] | select(.broken) | .index]' events-m1-tampered.json)" = \
	"$(jq -c --argjson a "$added" '. + [$a]' <<<"$sh_events")" -a \
	"$(jq -r '[.events[] | select(.broken) | .why] | unique | map(test("^PCR 8 ")) | all' events-m1-tampered.json)" = true
fleet show m1 --json >show-m1-tampered.json
api /metrics >metrics.txt
# The first of the two pushes was judged twice: this verifier's kept row of m1 was older than
# the database's (the second verifier stored m1's attestation above), so the verdict was not
# stored on it, and the evidence was judged again on the row read.
check "GET /metrics: two more untrusted attestations, three more judgments (one on a kept row another verifier changed), one more policy-violated" \
	test "$(metric 'mboot_verifierd_attestations_total{result="untrusted"}') $(metric mboot_verifierd_judge_seconds_count) $(metric 'mboot_verifierd_untrusted_reasons_total{reason="policy-violated"}')" = \
	"$((untrusted0 + 2)) $((judged0 + 3)) $((policy0 + $(jq '[.verdict.reasons[].name] | any(. == "policy-violated") | if . then 1 else 0 end' show-m1-sh.json) + $(jq '[.verdict.reasons[].name] | any(. == "policy-violated") | if . then 1 else 0 end' show-m1-tampered.json)))"
check "GET /metrics: the first push's nonce given on m1's row kept here, the second's on the row read (m1 was changed through another verifier)" \
	test "$(metric 'mboot_verifierd_nonce_rows_total{from="kept"}') $(metric 'mboot_verifierd_nonce_rows_total{from="read"}')" = \
	"$((kept0 + 1)) $((read0 + 1))"
for st in trusted untrusted stale enrolled revoked; do
	want=$(fleet list --json | jq --arg s "$st" '[.machines[] | select(.status == $s)] | length')
	check "GET /metrics: mboot_verifierd_machines{status=\"$st\"} is fleet list's $want" \
		test "$(metric "mboot_verifierd_machines{status=\"$st\"}")" = "$want"
done
check "GET /metrics: the judging histogram's buckets rise to its count (+Inf)" \
	awk '/^mboot_verifierd_judge_seconds_bucket/ { if ($2 < last) bad = 1; last = $2 } /^mboot_verifierd_judge_seconds_count/ { n = $2 } END { exit bad || last != n }' metrics.txt

# --- revoke, forget, enroll again --------------------------------------------------------------
BOOTED=$LOG
boot m1 "$BOOTED"
fleet revoke m1 >/dev/null
push m1
check "a revoked m1: push exits 2 with the verifier's 403 naming the fix (exit $rc: $(cat push.err))" \
	grep -q "HTTP 403: machine m1 is revoked: .*'mboot fleet forget m1'" push.err
test "$rc" = 2 || bad "revoked push: exit $rc, not 2"
check "m1 revoked in fleet show" test "$(fleet show m1 --json | jq -r .status)" = revoked
fleet forget m1 >/dev/null
rc=0
fleet show m1 >/dev/null || rc=$?
check "forgotten m1: fleet show exits 2 with the 404" test "$rc:$(grep -c "HTTP 404" fleet.err)" = "2:1"
push m1
check "forgotten m1 pushes again: enrolls anew (its AK file kept, the verifier said 404) and is trusted (exit $rc)" \
	test "$rc:$(grep -c "enrolling again" push.err)" = "0:1"

# --- refusals ------------------------------------------------------------------------------------
umask 077
echo not-the-token >wrong-token
rc=0
"$M" fleet list --server "$URL" --token-file wrong-token --insecure 2>wrong.err >/dev/null || rc=$?
check "a wrong token: exit 2 with the verifier's 401 message (exit $rc: $(cat wrong.err))" \
	test "$rc:$(grep -c "HTTP 401: ." wrong.err)" = "2:1"
rc=0
"$M" attest push --server "$URL" --machine-id m1 --ak-file "$WORK/ak-m1.json" --tcti "$TCTI" 2>plain.err >/dev/null || rc=$?
check "http:// without --insecure: exit 2 (exit $rc)" test "$rc:$(grep -c "plain http://" plain.err)" = "2:1"

# --- named tokens and the audit trail ------------------------------------------------------------
fleet show m3 --json >show-m3-audit.json
check "fleet show m3: the audit names alice's policy set (its sha256) and then her policy clear, newest first" \
	test "$(jq -c '[.audit[] | [.operator, .action, .detail]]' show-m3-audit.json)" = \
	"[[\"alice\",\"policy-clear\",null],[\"alice\",\"policy-set\",\"$(sha256sum <policy-sh.json | cut -d' ' -f1)\"]]"
fleet show m3 >show-m3-audit.txt
check "fleet show m3 prints them under 'operator actions'" \
	test "$(grep -A2 '^operator actions (newest first):$' show-m3-audit.txt | sed -n 's/^  [0-9T:Z-]*  //p' | paste -sd,)" = \
	"alice policy-clear,alice policy-set $(sha256sum <policy-sh.json | cut -d' ' -f1)"
(umask 077 && "$V" --db "$DB" --new-token --token-name bob >token-bob) || fail "--new-token --token-name bob"
rc=0
"$V" --db "$DB" --new-token --token-name bob >/dev/null 2>dup.err || rc=$?
check "a second token named bob: exit 2 ($(cat dup.err))" test "$rc:$(grep -c "named bob already" dup.err)" = "2:1"
"$V" --db "$DB" --list-tokens >tokens.txt || bad "--list-tokens"
check "--list-tokens: alice and bob, oldest first, with the start of each token's SHA-256" \
	test "$(awk '{ print $1 " " $3 }' tokens.txt | paste -sd,)" = \
	"alice $(tr -d '\n' <token | sha256sum | cut -c1-12),bob $(tr -d '\n' <token-bob | sha256sum | cut -c1-12)"
"$M" fleet policy clear m2 --server "$URL" --token-file token-bob --insecure >/dev/null 2>fleet.err ||
	bad "bob: fleet policy clear m2: $(cat fleet.err)"
"$V" --db "$DB" --revoke-token bob >revoke-bob.out || bad "--revoke-token bob"
rc=0
"$M" fleet list --server "$URL" --token-file token-bob --insecure >/dev/null 2>bob.err || rc=$?
check "bob's token, revoked: refused with 401 (exit $rc)" test "$rc:$(grep -c "HTTP 401" bob.err)" = "2:1"
rc=0
"$V" --db "$DB" --revoke-token nosuch >/dev/null 2>nosuch.err || rc=$?
check "--revoke-token of no such token: exit 1 ($(cat nosuch.err))" test "$rc:$(grep -c "no operator token is named nosuch" nosuch.err)" = "1:1"
curl -sSf -H "Authorization: Bearer $(cat token)" "$URL/v1/audit" >audit.json || bad "GET /v1/audit"
fleet audit >audit.txt
check "fleet audit: the API's entries, one line each, newest first (bob's token revoked first)" \
	test "$(wc -l <audit.txt) $(head -1 audit.txt | cut -d' ' -f3-)" = \
	"$(jq '.entries | length' audit.json) mboot-verifierd --revoke-token token-revoked bob"
check "GET /v1/audit: alice's token added first, her revoke and forget of m1, bob's token, his policy clear of m2, its revocation" \
	test "$(jq -c '[.entries[] | select(.action != "policy-set" and .machine_id != "m3") | [.operator, .action, (.machine_id // .detail)]] | reverse' audit.json)" = \
	'[["mboot-verifierd --new-token","token-added","alice"],["alice","revoke","m1"],["alice","forget","m1"],["mboot-verifierd --new-token","token-added","bob"],["bob","policy-clear","m2"],["mboot-verifierd --revoke-token","token-revoked","bob"]]'

# --- m2 silent for more than twice its interval ----------------------------------------------------
now=$(date +%s)
[ $((now - m2_pushed)) -ge 5 ] || sleep $((5 - (now - m2_pushed)))
check "m2, silent for more than 2 x 2 s: stale" test "$(status_of m2)" = stale
check "m1 (pushed recently, interval 600 s) is not stale" test "$(status_of m1)" = trusted

# --- webhooks: every status change, in order; the counters ------------------------------------
hook_delivered 14 || bad "webhooks: 14 deliveries expected"
check "webhooks: every status change once, in order (enrollment, attestation, policy, revoke, forget), each signed" \
	test "$(jq -s -r '[.[] | select(.status == 204) | .body | [.machine_id, .old_status // "-", .new_status // "-", .cause, .operator // "-"] | join(" ")] | join(",")' hook-tries.jsonl) $(jq -s '[.[] | .sig_ok] | all' hook-tries.jsonl)" = \
	"m1 - enrolled enrollment -,m1 enrolled trusted attestation -,m2 - enrolled enrollment -,m2 enrolled trusted attestation -,m3 - enrolled enrollment -,m3 enrolled untrusted attestation -,m3 untrusted trusted policy alice,m3 trusted untrusted policy alice,m1 trusted untrusted attestation -,m1 untrusted revoked revoke alice,m1 revoked - forget alice,m1 - enrolled enrollment -,m1 enrolled trusted attestation -,m2 trusted untrusted policy bob true"
check "webhooks: each delivery id is its change's own" \
	test "$(jq -s '[.[] | select(.status == 204) | .body.delivery_id] | unique | length' hook-tries.jsonl)" = 14
api /metrics >metrics-notify.txt
# The hanging receiver's thread holds the first change; its queue took the next 8; the rest dropped.
check "GET /metrics: 14 delivered, 0 failed, $((14 - 1 - NOTIFY_QUEUE)) dropped (the hanging receiver's full queue), 2 retries, $NOTIFY_QUEUE queued" \
	test "$(metric 'mboot_verifierd_notify_deliveries_total{result="delivered"}') $(metric 'mboot_verifierd_notify_deliveries_total{result="failed"}') $(metric 'mboot_verifierd_notify_deliveries_total{result="dropped"}') $(metric mboot_verifierd_notify_retries_total) $(metric mboot_verifierd_notify_queued)" = \
	"14 0 $((14 - 1 - NOTIFY_QUEUE)) 2 $NOTIFY_QUEUE"
check "webhooks: each drop logged" test "$(grep -c "dropped: the queue is full" verifierd.log)" = $((14 - 1 - NOTIFY_QUEUE))

kill -0 "$VPID" 2>/dev/null || bad "mboot-verifierd died: $(tail -5 verifierd.log)"

# --- turning stale is an event: m2 announced once, and back from stale when it attests -------------
# stale_hooks: the stale changes the receiver was sent (every try), one line each
stale_hooks() { jq -s -c '[.[] | select(.body.new_status == "stale") | .body | [.machine_id, .old_status, .cause]]' hook-tries.jsonl; }
stop_verifier
start_verifier --stale-sweep 1
hook_delivered 15 || bad "webhooks: m2's stale change not delivered within 10 s: $(tail -2 hook-tries.jsonl)"
jq -s '[.[] | select(.status == 204)][14]' hook-tries.jsonl >m2-stale.json
check "webhooks: m2 (silent for more than 2 x 2 s) announced by a sweep, once: untrusted -> stale, signed (python's hmac), no nonce, reasons or operator" \
	jq -e '.sig_ok and .fresh and .body.machine_id == "m2" and .body.old_status == "untrusted" and
	  .body.new_status == "stale" and .body.cause == "stale" and .body.nonce == null and .body.reasons == [] and
	  .body.operator == null and ((.body.at | fromdateiso8601) - now | fabs) < 60' m2-stale.json
check "webhooks: exactly one stale change sent ($(stale_hooks))" test "$(stale_hooks)" = '[["m2","untrusted","stale"]]'
fleet show m2 --json >show-m2-stale.json
check "m2: fleet show says stale; its audit trail's newest line is the sweep's ($(jq -c '.audit[0]' show-m2-stale.json))" \
	jq -e '.status == "stale" and .audit[0].operator == "mboot-verifierd (stale sweep)" and .audit[0].action == "stale" and
	  (.audit[0].detail | test("^was untrusted; nothing judged since [0-9T:-]+Z \\(interval 2 s\\)$"))' show-m2-stale.json
check "GET /metrics: one machine announced stale" test "$(metric 'mboot_verifierd_stale_total{change="announced"}')" = 1
# Started again: the machine is marked in the database, so no sweep announces it a second time.
stop_verifier
start_verifier --stale-sweep 1
sleep 2.5
check "the verifier started again swept (2 s) and announced nothing: still one stale change sent" \
	test "$(stale_hooks) $(metric 'mboot_verifierd_stale_total{change="announced"}')" = '[["m2","untrusted","stale"]] 0'
check "... and one stale line in m2's audit trail" \
	test "$(fleet show m2 --json | jq '[.audit[] | select(.action == "stale")] | length')" = 1
# A policy set judges m2's evidence again (trusted now) but m2 stays stale, and nothing is sent,
# until it attests: then stale -> trusted.
fleet policy set m2 policy.json >/dev/null || bad "fleet policy set m2: $(cat fleet.err)"
check "m2, a policy set while stale: still stale" test "$(status_of m2)" = stale
BOOTED=$LOG
boot m2 "$BOOTED"
push m2 --json
check "m2 attests again: trusted (exit $rc)" test "$rc:$(jq -r .status push.out)" = "0:trusted"
m2_nonce=$(jq -r .nonce push.out)
check "GET /metrics: one stale machine attested again" test "$(metric 'mboot_verifierd_stale_total{change="attested"}')" = 1
hook_delivered 16 || bad "webhooks: m2's return not delivered within 10 s: $(tail -2 hook-tries.jsonl)"
stop_verifier # before m2 (interval 2 s) goes stale again
check "webhooks: after the stale change, the next is m2's attestation, stale -> trusted (the policy set sent nothing), signed" \
	jq -s -e --arg n "$m2_nonce" '[.[] | select(.status == 204)] | length == 16 and (.[15] | .sig_ok and
	  .body.machine_id == "m2" and .body.old_status == "stale" and .body.new_status == "trusted" and
	  .body.cause == "attestation" and .body.nonce == $n)' hook-tries.jsonl
echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
