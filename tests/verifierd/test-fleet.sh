#!/bin/bash
# The fleet in process (test-fleet.c) against a real machine: a manufactured swtpm (EK
# certificates from swtpm_localca) holding a real GRUB boot (ima-evm-utils' sample), the
# policy generated from that boot, and the same boot with init=/bin/sh added to the kernel's
# command line (what the C test extends into PCR 8 for the untrusted case).
# test-fleet.sh [postgresql]: on SQLite in the temp dir (default), or on a private PostgreSQL
# (pg-env.sh) whose schema three mboot-verifierd --new-token make at once first.
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
M=${MBOOT:?}
F=${MB_FORGE:?}
T=${MB_TEST_FLEET:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
KERNEL=/boot/vmlinuz-5.7.0-rc2+.signed
ARGS="root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb"
cd "$WORK" || exit 1

swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256" # reset: the boot below starts the TPM at its own locality
"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/
"$M" policy generate --from-log "$LOG" -o policy.json || fail "policy generate"
"$F" "$LOG" evil.bin append 8 grub_cmd "linux $KERNEL $ARGS init=/bin/sh" || fail "mb-forge"

db_url=
if [ "${1:-sqlite}" = postgresql ]; then
	# shellcheck source=tests/verifierd/pg-env.sh
	. "${MB_FLEET_TESTS:?}/pg-env.sh"
	pg_start
	db_url=$PG_URL
	# Verifiers starting together on an empty database: each migrates or finds it done.
	pids=()
	for i in 1 2 3; do
		"${MB_VERIFIERD:?}" --db "$PG_URL" --new-token >"token$i" 2>"token$i.err" &
		pids+=($!)
	done
	for i in 1 2 3; do
		wait "${pids[$((i - 1))]}" || fail "mboot-verifierd --new-token $i at once: $(cat "token$i.err")"
	done
	[ "$(pg_psql "SELECT count(*) FROM tokens")" = 3 ] || fail "three tokens stored: $(pg_psql "SELECT count(*) FROM tokens")"
	[ "$(pg_psql "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_version")" = 1,2,3,4,5,6,7 ] ||
		fail "schema_version: $(pg_psql "SELECT * FROM schema_version")"
	# One nonce key for all of them (a nonce one verifier gives, another checks).
	[ "$(pg_psql "SELECT count(*) || ':' || min(length(value)) FROM secrets WHERE name = 'nonce-key'")" = 1:64 ] ||
		fail "one 32-byte nonce key: $(pg_psql "SELECT name, length(value) FROM secrets")"
	echo "ok   three verifiers started at once on one PostgreSQL: one schema, one nonce key, three tokens"
	# The C test stops and starts the server through these to see 503s, then a reconnect.
	pg_control_serve
	export MB_PG_CONTROL=$PG_DIR
fi

# The firmware log as a machine names it once the verifier keeps its judgment (openssl's digest).
log_sha256=$(openssl dgst -sha256 -r "$LOG" | cut -d' ' -f1)
MB_FLEET_LOG_SHA256=$log_sha256 MB_FLEET_DB_URL=$db_url MB_FLEET_TCTI=$TCTI MB_FLEET_EK_CA=$WORK/ca MB_FLEET_LOG=$LOG MB_FLEET_EVIL_LOG=$WORK/evil.bin \
	MB_FLEET_POLICY=$WORK/policy.json MB_FLEET_DIR=$WORK "$T" || rc=$?
exit "${rc:-0}"
