# shellcheck shell=bash
# Sourced by the fleet's reliability tests (fleet-kill.sh, fleet-pg-restart.sh,
# fleet-two-verifiers.sh): mboot-verifierd processes on 127.0.0.1, the load (bench/fleet-load's
# software machines, through ack-proxy.py, which logs what each machine was told), and the
# checks of the database against that log. Source pg-env.sh first when the test uses PostgreSQL.
#
#   rel_setup                    policy, EK CA, the work dir $RW
#   vd_start NAME DBURL [PORT]   a verifier (its port in VD_PORT[NAME]), waits for /healthz
#   vd_kill9 NAME / vd_stop NAME
#   proxy_start UPSTREAM[,UPSTREAM2]   the recording proxy ($PROXY_URL, log $RW/acks.jsonl)
#   load_start SECONDS [fleet-load options]   fleet-load in the background ($LOAD_PID)
#   db_sql DBURL SQL             rows as a|b|c lines (sqlite3 or psql)
#   check_acked DBURL            every acknowledged verdict stored, with its trusted value
#   check_machines DBURL         every machine row agrees with its last attestation

set -u
M=${MBOOT:?}
B=${MB_BUILD_ROOT:?}
FLEET_LOAD=$B/bench/fleet-load
VD=$B/src/verifierd/mboot-verifierd
REL_LOG=${MB_TESTDATA:?}/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
[ -x "$VD" ] || { echo "SKIP: mboot-verifierd not built"; exit 77; }
[ -x "$FLEET_LOAD" ] || { echo "SKIP: bench/fleet-load not built (libcurl missing)"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

RW=$(mktemp -d "${TMPDIR:-/tmp}/mboot-fleet-rel.XXXXXX")
declare -A VD_PID VD_PORT
PROXY_PID=
LOAD_PID=
failures=0

ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	failures=$((failures + 1))
}
fail() {
	echo "FAIL: $*"
	local f
	for f in "$RW"/vd-*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
	done
	exit 1
}

rel_cleanup() {
	local name
	[ -z "$LOAD_PID" ] || kill "$LOAD_PID" 2>/dev/null
	for name in "${!VD_PID[@]}"; do
		[ -z "${VD_PID[$name]}" ] || kill -9 "${VD_PID[$name]}" 2>/dev/null
	done
	[ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$RW"
}
# pg-env.sh's trap (when sourced before) runs after ours.
REL_PREV_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")
trap 'rel_cleanup; [ -z "$REL_PREV_TRAP" ] || eval "$REL_PREV_TRAP"' EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

rel_setup() {
	"$M" policy generate --from-log "$REL_LOG" -o "$RW/policy.json" >/dev/null || fail "policy generate"
	"$FLEET_LOAD" --make-ca "$RW/ca" >/dev/null || fail "fleet-load --make-ca"
}

# vd_start NAME DBURL [PORT]: the same NAME again (after a kill) reuses its port. With
# VD_GATE set to a file, the verifier waits for a shared lock on it before it starts (bash
# takes the lock, then becomes the verifier: the pid stays the same): a test holding the
# lock exclusively starts several at the same moment by letting go.
vd_start() {
	local name=$1 url=$2 port=${3:-${VD_PORT[$1]:-}}
	[ -n "$port" ] || port=$(free_port)
	VD_PORT[$name]=$port
	# shellcheck disable=SC2016 # expanded by the inner bash
	bash -c '[ -z "$1" ] || flock -s 9; shift; exec "$@"' vd "${VD_GATE:-}" \
		"$VD" --allow-ek-reuse --listen "127.0.0.1:$port" --db "$url" --ek-ca-file "$RW/ca/ca.pem" \
		--default-policy "$RW/policy.json" --insecure 9<"${VD_GATE:-/dev/null}" >>"$RW/vd-$name.log" 2>&1 &
	VD_PID[$name]=$!
}

# vd_wait NAME: until its /healthz answers 200 (10 s).
vd_wait() {
	local name=$1
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:${VD_PORT[$name]}/healthz" >/dev/null 2>&1 && return 0
		kill -0 "${VD_PID[$name]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

vd_kill9() {
	kill -9 "${VD_PID[$1]}" 2>/dev/null
	wait "${VD_PID[$1]}" 2>/dev/null
	VD_PID[$1]=
}

vd_stop() {
	kill "${VD_PID[$1]}" 2>/dev/null
	wait "${VD_PID[$1]}" 2>/dev/null
	VD_PID[$1]=
}

proxy_start() {
	python3 "$MB_FLEET_TESTS/ack-proxy.py" "$RW/proxy.port" "$RW/acks.jsonl" "$1" 2>"$RW/proxy.err" &
	PROXY_PID=$!
	for _ in $(seq 50); do
		[ -f "$RW/proxy.port" ] && break
		sleep 0.1
	done
	[ -f "$RW/proxy.port" ] || fail "ack-proxy did not start: $(cat "$RW/proxy.err")"
	PROXY_URL=http://127.0.0.1:$(cat "$RW/proxy.port")
}

# load_start SECONDS [OPTIONS...]: fleet-load's machines enroll, then attest for SECONDS.
load_start() {
	local seconds=$1
	shift
	"$FLEET_LOAD" --url "$PROXY_URL" --ca "$RW/ca" --log "$REL_LOG" --ek-pool 2 --duration "$seconds" "$@" \
		--json "$RW/load.json" >"$RW/load.out" 2>&1 &
	LOAD_PID=$!
}

load_wait() {
	wait "$LOAD_PID"
	LOAD_PID=
}

# acks_since T: evidence answers logged at or after time T (seconds since the epoch), as
# "status nonce verdict_status" lines.
acks_since() {
	jq -r --argjson t "$1" 'select((.path | contains("/evidence")) and .t >= $t) |
		"\(.status) \(.nonce) \(.verdict_status)"' "$RW/acks.jsonl"
}

# wait_acks_since T N: until N evidence answers of 200 were logged since T (30 s).
wait_acks_since() {
	for _ in $(seq 300); do
		[ "$(acks_since "$1" | grep -c '^200 ')" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

now() { date +%s.%N; }

db_sql() {
	local url=$1 sql=$2
	case $url in
	sqlite:*) sqlite3 -batch "${url#sqlite:}" "$sql" ;;
	*) "${PG_BIN:-/usr/lib/postgresql/15/bin}/psql" -X -At -v ON_ERROR_STOP=1 -d "$url" -c "$sql" ;;
	esac
}

# Every evidence answered 200 names its attestation by its nonce: that row is in the
# database, for that machine, with the trusted value the machine was told.
check_acked() {
	local url=$1 label=$2 n missing wrong
	jq -r 'select((.path | contains("/evidence")) and .status == 200) |
		"\(.nonce)|\(if .verdict_status == "trusted" then 1 else 0 end)"' "$RW/acks.jsonl" | sort >"$RW/acked"
	db_sql "$url" "SELECT nonce, trusted FROM attestations" | sort >"$RW/stored"
	n=$(wc -l <"$RW/acked")
	missing=$(join -t '|' -v 1 <(cut -d'|' -f1 "$RW/acked") <(cut -d'|' -f1 "$RW/stored") | wc -l)
	wrong=$(comm -23 "$RW/acked" "$RW/stored" | wc -l)
	if [ "$n" -gt 0 ] && [ "$missing" -eq 0 ] && [ "$wrong" -eq 0 ]; then
		ok "$label: all $n verdicts acknowledged with 200 are stored, trusted as told"
	else
		bad "$label: $n acknowledged, $missing not stored, $wrong stored otherwise than told"
		comm -23 "$RW/acked" "$RW/stored" | head -5
	fi
}

# Nothing half-written: every machine's last attestation exists, is its own, at the same time,
# and the status says what that attestation's verdict said; no attestation of no machine; no
# machine with attestations but none recorded as its last.
check_machines() {
	local url=$1 label=$2 bad_rows
	bad_rows=$(db_sql "$url" "
		SELECT 'last', m.id FROM machines m WHERE m.last_nonce IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM attestations a WHERE a.nonce = m.last_nonce AND a.machine_id = m.id
			AND a.at = m.last_attestation
			AND m.status = CASE WHEN a.trusted = 1 THEN 'trusted' ELSE 'untrusted' END)
		UNION ALL
		SELECT 'orphan', a.nonce FROM attestations a WHERE NOT EXISTS (
			SELECT 1 FROM machines m WHERE m.id = a.machine_id)
		UNION ALL
		SELECT 'unrecorded', m.id FROM machines m WHERE m.last_nonce IS NULL AND EXISTS (
			SELECT 1 FROM attestations a WHERE a.machine_id = m.id)")
	if [ -z "$bad_rows" ] && [ "$(db_sql "$url" "SELECT count(*) FROM machines WHERE last_nonce IS NOT NULL")" -gt 0 ]; then
		ok "$label: every machine row agrees with its last attestation ($(db_sql "$url" "SELECT count(*) FROM machines") machines)"
	else
		bad "$label: machine rows that disagree with their attestations (or none attested): $(echo "$bad_rows" | head -5 | paste -sd' ')"
	fi
}
