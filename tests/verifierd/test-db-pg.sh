#!/bin/bash
# test-db's PostgreSQL half: a private server (pg-env.sh), and the FIFOs through which the
# test stops and starts it (pg_control_serve) to check that one db handle reconnects by itself.
set -eu
# shellcheck source=tests/verifierd/pg-env.sh
. "$MB_FLEET_TESTS/pg-env.sh"
pg_start

pg_control_serve
rc=0
MB_TEST_PG_URL=$PG_URL MB_PG_CONTROL=$PG_DIR "$MB_TEST_DB" postgresql || rc=$?
exit "$rc"
