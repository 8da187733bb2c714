#!/bin/bash
# The load generator against the real service, briefly, so that it cannot rot: mboot-verifierd on
# 127.0.0.1 (SQLite, the EK CA of fleet-load --make-ca, the policy of the boot the machines
# report as the default policy); a handful of software machines enroll through the API (EK
# certificate chain, credential activated in software) and attest for a few seconds; every
# attestation is answered 200 "trusted". A fleet whose EKs come from another CA is refused.
set -eu
M=${MBOOT:?}
B=${MB_BUILD_ROOT:?}
FL=$B/bench/fleet-load
VD=$B/src/verifierd/mboot-verifierd
LOG=${MB_TESTDATA:?}/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
[ -x "$FL" ] || { echo "SKIP: bench/fleet-load not built (libcurl missing)"; exit 77; }
[ -x "$VD" ] || { echo "SKIP: mboot-verifierd not built"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/fleet-load-service.XXXXXX")
VPID=
cleanup() {
	[ -z "$VPID" ] || kill "$VPID" 2>/dev/null || true
	[ -z "$VPID" ] || wait "$VPID" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ ! -f "$W/vd.log" ] || tail -20 "$W/vd.log"; exit 1; }

"$M" policy generate --from-log "$LOG" -o "$W/policy.json"
"$FL" --make-ca "$W/ca"
"$FL" --make-ca "$W/other-ca"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$VD" --allow-ek-reuse --listen "127.0.0.1:$PORT" --db "sqlite:$W/verifier.db" --ek-ca-file "$W/ca/ca.pem" \
	--default-policy "$W/policy.json" --insecure > "$W/vd.log" 2>&1 &
VPID=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
	kill -0 "$VPID" 2>/dev/null || fail "mboot-verifierd exited"
	sleep 0.1
done
U=http://127.0.0.1:$PORT

"$FL" --url "$U" --ca "$W/ca" --log "$LOG" --machines 6 --ek-pool 2 --rate 8 --duration 3 --concurrency 4 \
	--pid "$VPID" --json "$W/rate.json" > "$W/rate.out" 2>&1 || { cat "$W/rate.out"; fail "rate run"; }
cat "$W/rate.out"
n=$(jq -r '.attestations' "$W/rate.json")
if [ "$n" -lt 20 ] || [ "$(jq -r '.trusted' "$W/rate.json")" != "$n" ]; then fail "rate run: $(cat "$W/rate.json")"; fi
[ "$(jq -r '.verifiers[0].peak_rss_kib > 0' "$W/rate.json")" = true ] || fail "no RSS of the verifier"

"$FL" --url "$U" --ca "$W/ca" --log "$LOG" --machines 3 --id-prefix sat- --saturate --concurrency 2 --duration 2 \
	--json "$W/sat.json" > "$W/sat.out" 2>&1 || { cat "$W/sat.out"; fail "saturate run"; }
[ "$(jq -r '.attestations > 0 and .trusted == .attestations' "$W/sat.json")" = true ] || fail "saturate: $(cat "$W/sat.json")"

# EKs whose certificates chain to another CA: enrollment refused (403), fleet-load stops (2)
rc=0
"$FL" --url "$U" --ca "$W/other-ca" --log "$LOG" --machines 1 --id-prefix stranger- --rate 1 --duration 1 \
	> "$W/other.out" 2>&1 || rc=$?
if [ "$rc" != 2 ] || ! grep -q "enroll stranger-000000: 403" "$W/other.out"; then
	fail "another CA: exit $rc, $(cat "$W/other.out")"
fi
echo "ok"
