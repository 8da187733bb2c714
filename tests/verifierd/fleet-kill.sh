#!/bin/bash
# kill -9 of mboot-verifierd under load, twice, then restart (on SQLite or PostgreSQL, $1):
# every verdict a machine was told with a 200 is in the database with the trusted value it was
# told (the answer comes after the commit), nothing is half-written (each machine row agrees
# with its last attestation: the verdict's rows are one transaction), and the same machines
# attest again after each restart.
set -u
BACKEND=${1:?usage: fleet-kill.sh sqlite|postgresql}
if [ "$BACKEND" = postgresql ]; then
	# shellcheck source=tests/verifierd/pg-env.sh
	. "$MB_FLEET_TESTS/pg-env.sh"
fi
# shellcheck source=tests/verifierd/fleet-rel-lib.sh
. "$MB_FLEET_TESTS/fleet-rel-lib.sh"

rel_setup
if [ "$BACKEND" = postgresql ]; then
	pg_start
	URL=$PG_URL
else
	URL=sqlite:$RW/verifier.db
fi
vd_start v "$URL"
vd_wait v || fail "mboot-verifierd did not start"
proxy_start "127.0.0.1:${VD_PORT[v]}"

t0=$(now)
load_start 20 --machines 8 --rate 40 --concurrency 8
wait_acks_since "$t0" 20 || fail "no attestations under load: $(cat "$RW/load.out")"
for round in 1 2; do
	vd_kill9 v
	sleep 0.3
	vd_start v "$URL"
	vd_wait v || fail "mboot-verifierd did not restart after kill -9 (round $round)"
	t_up=$(now)
	if wait_acks_since "$t_up" 20; then
		n_machines=$(jq -r --argjson t "$t_up" 'select((.path | contains("/evidence")) and .t >= $t and .status == 200)
			| .machine_id' "$RW/acks.jsonl" | sort -u | wc -l)
		ok "round $round: after kill -9 and restart, attestations succeed again ($n_machines of 8 machines within 20 answers)"
	else
		bad "round $round: no attestation succeeded after the restart"
	fi
done
load_wait
vd_kill9 v

check_acked "$URL" "$BACKEND"
check_machines "$URL" "$BACKEND"
n_lost=$(acks_since 0 | grep -cv '^200 ')
echo "     ($(acks_since 0 | grep -c '^200 ') evidence answers 200, $n_lost others while the verifier was down or restarting)"
if [ "$(acks_since 0 | grep '^200 ' | grep -vc ' trusted$')" -eq 0 ]; then
	ok "every acknowledged verdict is trusted (the machines' boot, the default policy)"
else
	bad "untrusted verdicts: $(acks_since 0 | grep '^200 ' | grep -v ' trusted$' | head -3)"
fi

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
