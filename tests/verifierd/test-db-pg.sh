#!/bin/bash
# test-db's PostgreSQL half: a private server (pg-env.sh), and the FIFOs through which the
# test stops and starts it to check that one db handle reconnects by itself.
set -eu
# shellcheck source=tests/verifierd/pg-env.sh
. "$MB_FLEET_TESTS/pg-env.sh"
pg_start

mkfifo "$PG_DIR/req" "$PG_DIR/ack"
(
	while read -r cmd <"$PG_DIR/req"; do
		case $cmd in
		stop) pg_stop ;;
		start) pg_restart ;;
		*) echo "test-db-pg: unknown request $cmd" >&2; exit 1 ;;
		esac
		echo ok >"$PG_DIR/ack"
	done
) &
ctl=$!
rc=0
MB_TEST_PG_URL=$PG_URL MB_TEST_PG_CTL=$PG_DIR "$MB_TEST_DB" postgresql || rc=$?
# The loop waits on the FIFO: it would keep the test's output open.
kill "$ctl" 2>/dev/null || true
wait "$ctl" 2>/dev/null || true
exit "$rc"
