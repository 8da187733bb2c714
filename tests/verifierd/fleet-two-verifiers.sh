#!/bin/bash
# Two mboot-verifierd processes on one PostgreSQL serve one fleet. Started at the same moment
# on an empty database, both come up (the schema migration race), three times. Then every
# machine enrolls through the first and activates through the second, gets its nonces from the
# first and posts its evidence to the second (ack-proxy.py splits each conversation: the nonce
# key is the database's, shared): all of it succeeds, every verdict is stored, and both list
# the same fleet.
set -u
# shellcheck source=tests/verifierd/pg-env.sh
. "$MB_FLEET_TESTS/pg-env.sh"
# shellcheck source=tests/verifierd/fleet-rel-lib.sh
. "$MB_FLEET_TESTS/fleet-rel-lib.sh"

rel_setup
pg_start

# The migration race, on fresh databases: both at once, both must answer /healthz.
for i in 1 2 3; do
	pg_psql "CREATE DATABASE race$i" >/dev/null
	url="postgresql:///race$i?host=$PG_DIR&user=mboot"
	: >"$RW/gate"
	exec {gate}<"$RW/gate"
	flock -x "$gate"
	VD_GATE=$RW/gate vd_start a "$url" "$(free_port)"
	VD_GATE=$RW/gate vd_start b "$url" "$(free_port)"
	sleep 0.2
	flock -u "$gate"
	exec {gate}<&-
	if vd_wait a && vd_wait b; then
		ok "race $i: two verifiers started at once on an empty database both come up"
	else
		bad "race $i: $(tail -q -n 1 "$RW/vd-a.log" "$RW/vd-b.log" | paste -sd" ")"
	fi
	versions=$(db_sql "$url" "SELECT count(*), max(version) FROM schema_version" 2>&1)
	[ "$versions" = "7|7" ] || bad "race $i: schema_version holds $versions, not versions 1 to 7 once each"
	# One nonce key: a nonce either verifier gives, the other checks.
	keys=$(db_sql "$url" "SELECT count(*) FROM secrets WHERE name = 'nonce-key'" 2>&1)
	[ "$keys" = 1 ] || bad "race $i: $keys nonce keys, not one"
	vd_stop a
	vd_stop b
done

vd_start a "$PG_URL" "$(free_port)"
vd_start b "$PG_URL" "$(free_port)"
{ vd_wait a && vd_wait b; } || fail "two verifiers on $PG_URL did not start"
proxy_start "127.0.0.1:${VD_PORT[a]},127.0.0.1:${VD_PORT[b]}"
# At least one judged attestation a machine: a busy CI machine (ASan, tests in parallel) may manage few more.
load_start 4 --machines 6 --rate 20 --concurrency 4
load_wait

count() { jq -c "select($1)" "$RW/acks.jsonl" | wc -l; }
n_enroll=$(count '(.path == "/v1/enroll") and .status == 201')
n_activate=$(count '(.path | endswith("/activate")) and .status == 200')
n_nonce=$(count '(.path | endswith("/nonce")) and .status == 200')
n_evidence=$(count '(.path | contains("/evidence")) and .status == 200 and .verdict_status == "trusted"')
n_other=$(count '.status != 200 and .status != 201')
if [ "$n_enroll" -eq 6 ] && [ "$n_activate" -eq 6 ] && [ "$n_evidence" -ge 6 ] && [ "$n_other" -eq 0 ]; then
	ok "6 machines enrolled through one verifier, activated through the other; $n_evidence of $n_nonce nonces from the first judged trusted by the second"
else
	bad "enroll $n_enroll, activate $n_activate, nonces $n_nonce, trusted evidence $n_evidence, other answers $n_other: $(jq -c 'select(.status != 200 and .status != 201)' "$RW/acks.jsonl" | head -3)"
fi

token=$("$VD" --db "$PG_URL" --new-token 2>"$RW/token.err") || fail "--new-token: $(cat "$RW/token.err")"
for v in a b; do
	curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:${VD_PORT[$v]}/v1/machines" >"$RW/list-$v.json" ||
		bad "GET /v1/machines from verifier $v"
done
if [ "$(jq -S . "$RW/list-a.json")" = "$(jq -S . "$RW/list-b.json")" ] &&
	[ "$(jq -r '[.machines[] | select(.status == "trusted")] | length' "$RW/list-a.json")" = 6 ]; then
	ok "both verifiers list the same fleet: 6 machines, all trusted"
else
	bad "the fleets differ: $(jq -c '[.machines[] | [.id, .status]]' "$RW/list-a.json") / $(jq -c '[.machines[] | [.id, .status]]' "$RW/list-b.json")"
fi
# A machine the second verifier judged, as the first one shows it.
id=$(jq -r '.machines[0].id' "$RW/list-b.json")
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:${VD_PORT[a]}/v1/machines/$id" >"$RW/show-a.json" || bad "GET /v1/machines/$id from a"
last=$(jq -r --arg id "$id" 'select(.machine_id == $id and .status == 200) | .nonce' "$RW/acks.jsonl" | tail -n 1)
if [ "$(jq -r '.status' "$RW/show-a.json")" = trusted ] && [ -n "$last" ] &&
	[ "$(db_sql "$PG_URL" "SELECT last_nonce FROM machines WHERE id = '$id'")" = "$last" ]; then
	ok "machine $id: trusted on the first verifier; its last attestation is the last nonce the second acknowledged"
else
	bad "machine $id as the first verifier shows it: $(head -c 300 "$RW/show-a.json"); last acknowledged nonce $last"
fi
vd_stop a
vd_stop b

check_acked "$PG_URL" "two verifiers"
check_machines "$PG_URL" "two verifiers"
echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
