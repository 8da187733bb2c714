#!/bin/bash
# PostgreSQL stopped and started again under load: while it is down every answer is a 503 with
# a JSON error (or a 200 whose verdict is stored: none is acknowledged without its row), /healthz
# says 503; the verifier reconnects by itself and the machines' attestations succeed again.
set -u
# shellcheck source=tests/verifierd/pg-env.sh
. "$MB_FLEET_TESTS/pg-env.sh"
# shellcheck source=tests/verifierd/fleet-rel-lib.sh
. "$MB_FLEET_TESTS/fleet-rel-lib.sh"

rel_setup
pg_start
vd_start v "$PG_URL"
vd_wait v || fail "mboot-verifierd did not start"
proxy_start "127.0.0.1:${VD_PORT[v]}"

t0=$(now)
load_start 12 --machines 8 --rate 40 --concurrency 8
wait_acks_since "$t0" 20 || fail "no attestations under load: $(cat "$RW/load.out")"

pg_stop
t_down=$(now)
sleep 1.5
code=$(curl -s -o "$RW/healthz.json" -w '%{http_code}' "http://127.0.0.1:${VD_PORT[v]}/healthz")
if [ "$code" = 503 ] && [ -n "$(jq -r '.error // empty' "$RW/healthz.json" 2>/dev/null)" ]; then
	ok "/healthz while PostgreSQL is down: 503, $(jq -c . "$RW/healthz.json")"
else
	bad "/healthz while PostgreSQL is down: $code $(cat "$RW/healthz.json")"
fi
sleep 1
t_restart=$(now)
pg_restart
t_up=$(now)

# Every answer between the stop and the restart.
jq -c --argjson a "$t_down" --argjson b "$t_restart" 'select(.t >= $a and .t <= $b)' "$RW/acks.jsonl" >"$RW/outage"
n=$(wc -l <"$RW/outage")
# A JSON error of one line (docs/api.md): libpq's own messages span lines.
n503=$(jq -c 'select(.status == 503 and .json and (.error | type == "string") and (.error | length > 0)
	and (.error | test("[\n\t]") | not))' "$RW/outage" | wc -l)
others=$(jq -c 'select(.status != 503 and .status != 200)' "$RW/outage")
n200=$(jq -c 'select(.status == 200)' "$RW/outage" | wc -l)
if [ "$n503" -ge 10 ] && [ -z "$others" ] && [ "$((n503 + n200))" -eq "$n" ]; then
	ok "during the outage: $n503 answers 503 with a one-line JSON error, $n200 answers 200 (their rows checked below), nothing else"
else
	bad "during the outage: $n answers, $n503 of them 503 with a one-line JSON error; others: $(echo "$others" | head -3)"
fi
jq -r 'select(.status == 503) | .error' "$RW/outage" | sort | uniq -c | head -3

if wait_acks_since "$t_up" 20; then
	ok "after PostgreSQL's restart the verifier reconnected by itself: attestations succeed again"
else
	bad "no attestation succeeded after PostgreSQL's restart: $(acks_since "$t_up" | cut -c1-120 | sort | uniq -c | head -3)"
fi
load_wait
vd_stop v

check_acked "$PG_URL" "postgresql restarted"
check_machines "$PG_URL" "postgresql restarted"
echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
