#!/bin/bash
# The fleet verifier under load (docs/fleet-bench.md): mboot-verifierd --insecure on 127.0.0.1,
# the default policy generated from a real boot (ima-evm-utils' GRUB machine, 162 events), and
# bench/fleet-load's software machines (EK certificate from a CA of their own, ECC P-256 AK,
# real TPMS_ATTEST quotes of that boot's PCR values, the boot's log) enrolling and attesting
# through the HTTP API; one swtpm machine (mboot attest enroll / activate / quote + curl) mixed
# in during the paced runs. Runs: SQLite with one verifier, PostgreSQL (a private one,
# tests/verifierd/pg-env.sh) with one and with two verifiers sharing the database; each at the
# pace of MACHINES machines attesting once a minute (open loop) and at saturation. Reference in
# the same run: mb_attest_verify in a loop on the same evidence (bench/bench-attest, one core),
# the in-process ceiling; and one `mboot attest verify` process per attestation.
# Usage: bench/bench-fleet.sh [BUILD_DIR] [MACHINES]   (defaults: build, 10000)
# Environment: DURATION (paced runs, s, default 60), SAT_DURATION (default 20), SAT_MACHINES
# (machines in the saturation runs, default 200), CONCURRENCY (saturation threads, default 32),
# PERF=1 (perf record of the verifier during PostgreSQL's saturation run, its enrollment included), KEEP=DIR (the JSON).
set -eEu
export LC_ALL=C
cd "$(dirname "$0")/.."
SRC=$(pwd)
B=$(realpath "${1:-build}")
N=${2:-10000}
DURATION=${DURATION:-60}
SAT_DURATION=${SAT_DURATION:-20}
SAT_MACHINES=${SAT_MACHINES:-200}
CONCURRENCY=${CONCURRENCY:-32}
M=$B/mboot
VD=$B/src/verifierd/mboot-verifierd
FL=$B/bench/fleet-load
BA=$B/bench/bench-attest
for x in "$M" "$VD" "$FL" "$BA"; do
	[ -x "$x" ] || { echo "build first (meson setup $B && ninja -C $B): no $x"; exit 2; }
done
LOG=$SRC/tests/data/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
RATE=$(echo "$N / 60" | bc -l)
export MB_BUILD_ROOT=$B
# shellcheck source=../tests/tpm/swtpm-env.sh
. tests/tpm/swtpm-env.sh
# shellcheck source=../tests/verifierd/pg-env.sh
. tests/verifierd/pg-env.sh
cd "$WORK"
VPIDS=()
stop_verifiers() {
	local p
	for p in "${VPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${VPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	VPIDS=()
}
# Both EXIT traps (swtpm's, PostgreSQL's) run after the verifiers stop.
PREV_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")
# shellcheck disable=SC2064
trap "stop_verifiers; $PREV_TRAP" EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_verifiers DB COUNT: COUNT verifiers on DB; URLS (comma-separated), PIDS (comma-separated)
start_verifiers() {
	local db=$1 count=$2 i port u
	URLS="" PIDS=""
	for ((i = 0; i < count; i++)); do
		port=$(free_port)
		"$VD" --allow-ek-reuse --listen "127.0.0.1:$port" --db "$db" --ek-ca-file ekca.pem --default-policy policy.json \
			--interval 60 --insecure >"verifier-$i.log" 2>&1 &
		VPIDS+=($!)
		u=http://127.0.0.1:$port
		for _ in $(seq 100); do
			curl -sf "$u/healthz" >/dev/null 2>&1 && break
			kill -0 "${VPIDS[-1]}" 2>/dev/null || { cat "verifier-$i.log"; echo "mboot-verifierd exited"; exit 1; }
			sleep 0.1
		done
		URLS=${URLS:+$URLS,}$u PIDS=${PIDS:+$PIDS,}${VPIDS[-1]}
	done
}

# The swtpm machine: enrolled through the API with mboot's own commands and curl.
post() { curl -s -o "$2" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$3" "$1"; }
swtpm_enroll() { # swtpm_enroll URL ID
	local u=$1 id=$2
	jq -n --arg id "$id" --slurpfile r request.json '{machine_id: $id, request: $r[0]}' >enroll.json
	[ "$(post "$u/v1/enroll" enrolled.json enroll.json)" = 201 ] || { cat enrolled.json; exit 1; }
	jq .challenge enrolled.json >challenge.json
	"$M" attest activate --tcti "$TCTI" --ak-file ak.json -i challenge.json -o response.json --force
	[ "$(post "$u/v1/enroll/$id/activate" activated.json response.json)" = 200 ] || { cat activated.json; exit 1; }
}
# swtpm_attest URL ID UNTIL OUT: attest about once a second until the time UNTIL (date +%s);
# one line per attestation in OUT: status, verdict, milliseconds (nonce + quote + evidence)
swtpm_attest() {
	local u=$1 id=$2 until=$3 out=$4 t0 t1 st nonce
	: >"$out"
	while [ "$(date +%s)" -lt "$until" ]; do
		t0=$(date +%s%N)
		echo '' >empty.json
		[ "$(post "$u/v1/machines/$id/nonce" nonce.json empty.json)" = 200 ] || { echo "nonce - 0" >>"$out"; continue; }
		nonce=$(jq -r .nonce nonce.json)
		"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce "$nonce" --log "$LOG" -o evidence.json --force
		st=$(post "$u/v1/machines/$id/evidence?nonce=$nonce" verdict.json evidence.json)
		t1=$(date +%s%N)
		echo "$st $(jq -r .status verdict.json 2>/dev/null) $(((t1 - t0) / 1000000))" >>"$out"
		sleep 1
	done
}
swtpm_summary() { # the swtpm machine's line of the report
	sort -n -k3 "$1" | awk '{ n++; if ($1 == 200 && $2 == "trusted") ok++; ms[n] = $3 }
	     END { printf "swtpm machine: %d attestations, %d trusted, median %d ms (quote included)\n",
	           n, ok, n ? ms[int((n + 1) / 2)] : 0 }'
}

echo "setup: policy, EK CA, swtpm machine, PostgreSQL"
"$M" policy generate --from-log "$LOG" -o policy.json
"$FL" --make-ca ca
swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$LOG" >/dev/null
"$M" attest enroll --tcti "$TCTI" --ak-file ak.json -o request.json
cat ca/ca.pem "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" >ekca.pem
cd / # the server runs as nobody, who may not enter $WORK
pg_start
cd "$WORK"
mkdir -p results

# run NAME DB VERIFIERS: the paced run (with the swtpm machine), then saturation
run() {
	local name=$1 db=$2 count=$3 until perf_pid=
	start_verifiers "$db" "$count"
	echo "== $name: $count verifier(s), $N machines once a minute ($(printf %.1f "$RATE")/s) for $DURATION s"
	swtpm_enroll "${URLS%%,*}" "swtpm-$name"
	until=$(($(date +%s) + DURATION + 60))  # enrollment of the fleet comes first
	swtpm_attest "${URLS%%,*}" "swtpm-$name" "$until" "results/swtpm-$name.txt" &
	local swtpm_job=$!
	"$FL" --url "$URLS" --ca ca --log "$LOG" --machines "$N" --id-prefix "$name-" --enroll-jobs 4 \
		--rate "$RATE" --duration "$DURATION" --pid "$PIDS" --json "results/$name-rate.json" || true
	kill "$swtpm_job" 2>/dev/null || true
	wait "$swtpm_job" 2>/dev/null || true
	swtpm_summary "results/swtpm-$name.txt"
	echo "== $name: $count verifier(s), saturation ($CONCURRENCY concurrent machines of $SAT_MACHINES) for $SAT_DURATION s"
	if [ "${PERF:-0}" = 1 ] && [ "$name" = pg1 ]; then
		perf record -q -g -o "$WORK/perf.data" -p "${PIDS%%,*}" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	"$FL" --url "$URLS" --ca ca --log "$LOG" --machines "$SAT_MACHINES" --id-prefix "$name-sat-" --enroll-jobs 4 \
		--saturate --concurrency "$CONCURRENCY" --duration "$SAT_DURATION" --pid "$PIDS" \
		--json "results/$name-sat.json" || true
	if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
	stop_verifiers
}
run sqlite1 "sqlite:$WORK/verifier.db" 1
run pg1 "$PG_URL" 1
run pg2 "$PG_URL" 2

echo "== reference: the same evidence judged in-process and by one process each"
mkdir -p ref
"$FL" --self-check --log "$LOG" --policy policy.json --keep ref >/dev/null
NONCE=$(cat ref/nonce)
inproc=$("$BA" ref/evidence.json ref/machine.json "$NONCE" policy.json 5 | awk '{print $2}')
t0=$(date +%s.%N)
for ((i = 0; i < 100; i++)); do
	"$M" attest verify ref/evidence.json --machine ref/machine.json --nonce "$NONCE" --policy policy.json >/dev/null
done
per_proc=$(echo "100 / ($(date +%s.%N) - $t0)" | bc -l)

echo
printf '%-34s %9s %8s %8s %8s %6s %s\n' run "att/s" "p50 ms" "p99 ms" errors "gen %" \
	"verifier CPU % / peak RSS MiB"
for f in results/*-rate.json results/*-sat.json; do
	printf '%-34s %9.1f %8.1f %8.1f %8s %6.0f %s\n' "$(basename "$f" .json)" "$(jq .per_second "$f")" \
		"$(jq .p50_ms "$f")" "$(jq .p99_ms "$f")" "$(jq '[.errors[]] | add // 0' "$f")" \
		"$(jq .generator_cpu_percent "$f")" \
		"$(jq -r '[.verifiers[] | "\(.cpu_percent) / \(.peak_rss_kib / 1024 | floor)"] | join(", ")' "$f")"
done
printf '%-34s %9.0f\n' "in-process ceiling (1 core)" "$inproc"
printf '%-34s %9.1f\n' "mboot attest verify, one process each" "$per_proc"
for n in pg1 pg2; do
	printf 'ratio %s saturation / in-process ceiling: %.2f   / one process each: %.1f\n' "$n" \
		"$(echo "$(jq .per_second "results/$n-sat.json") / $inproc" | bc -l)" \
		"$(echo "$(jq .per_second "results/$n-sat.json") / $per_proc" | bc -l)"
done
echo "aims: $N machines once a minute with p99 < 100 ms; >= 2000 attestations/s at saturation on PostgreSQL"
if [ "${PERF:-0}" = 1 ] && [ -f perf.data ]; then
	echo "== where the PostgreSQL verifier's time goes (perf, the saturation run)"
	perf report -q -i perf.data --no-children --sort dso,symbol -g none 2>/dev/null | head -25
fi
[ -z "${KEEP:-}" ] || cp -r results "$KEEP"
