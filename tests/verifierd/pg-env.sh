# shellcheck shell=bash
# Sourced by the fleet suite's tests: a private PostgreSQL 15 in a temp dir, run as an
# unprivileged user (initdb and postgres refuse root: as root the server runs as nobody),
# reachable only through a Unix socket in that dir (listen_addresses='': no TCP at all),
# fsync on, trust authentication for local connections. Always stopped on exit.
# Source it after swtpm-env.sh: its EXIT trap runs the one it finds.
#
#   pg_start     initdb (first time), start the server, create the database; then
#                PG_URL is the URL mboot-verifierd --db takes:
#                postgresql:///mboot?host=$PG_DIR&user=mboot
#   pg_stop      a clean, fast shutdown (pg_ctl -m fast: sessions are cut, in-flight
#                transactions roll back)
#   pg_restart   pg_stop, then start the same cluster again
#   pg_kill      kill -9 of the postmaster (crash: the next start recovers from the WAL)
#   pg_psql SQL  run SQL through psql on the test's database, unaligned tuples only
#
# Speed: initdb spends its time bootstrapping the catalogs, not in fsync. The first test
# of a build initdb's a template under $MB_BUILD_ROOT (synced, as initdb does without -N),
# every test then copies it and syncs the copy (initdb --sync-only) before the server
# starts. MB_PG_NO_TEMPLATE=1 runs initdb afresh every time.

set -u
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
{ [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; } || { echo "SKIP: PostgreSQL 15 not installed ($PG_BIN)"; exit 77; }

PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mboot-pg.XXXXXX")
PG_DATA=$PG_DIR/data
PG_LOG=$PG_DIR/server.log
PG_DB=mboot
PG_USER=mboot
PG_URL="postgresql:///$PG_DB?host=$PG_DIR&user=$PG_USER"
export PG_URL PG_DIR
PG_STARTED=0

# Whatever the test's shell trapped on EXIT before (swtpm-env.sh's cleanup) still runs.
PG_PREV_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")

# pg_as CMD...: CMD as the server's user (nobody when the test runs as root).
if [ "$(id -u)" = 0 ]; then
	chown nobody: "$PG_DIR"
	pg_as() { setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups -- "$@"; }
else
	pg_as() { "$@"; }
fi

pg_fail() {
	echo "FAIL: PostgreSQL: $*"
	[ -f "$PG_LOG" ] && tail -n 30 "$PG_LOG"
	exit 1
}

pg_initdb() {
	local template=
	local -a args=(-U "$PG_USER" -A trust -E UTF8 --locale=C)

	if [ "${MB_PG_NO_TEMPLATE:-0}" != 1 ] && [ -n "${MB_BUILD_ROOT:-}" ] && [ -d "$MB_BUILD_ROOT" ]; then
		template=$MB_BUILD_ROOT/tests/verifierd/pg-template-$("$PG_BIN/pg_ctl" --version | awk '{print $3}')
	fi
	if [ -z "$template" ]; then
		pg_as "$PG_BIN/initdb" -D "$PG_DATA" "${args[@]}" >"$PG_DIR/initdb.log" 2>&1 ||
			{ cat "$PG_DIR/initdb.log"; pg_fail "initdb failed"; }
		return
	fi
	if [ ! -f "$template/PG_VERSION" ]; then
		# Built in our own temp dir, then renamed into place: tests running at the same
		# time either see the whole template or none (the loser's rename fails, harmlessly).
		mkdir -p "$(dirname "$template")"
		pg_as "$PG_BIN/initdb" -D "$PG_DIR/template" "${args[@]}" >"$PG_DIR/initdb.log" 2>&1 ||
			{ cat "$PG_DIR/initdb.log"; pg_fail "initdb failed"; }
		mv -T "$PG_DIR/template" "$template" 2>/dev/null || rm -rf "$PG_DIR/template"
	fi
	cp -a "$template" "$PG_DATA"
	[ "$(id -u)" = 0 ] && chown -R nobody: "$PG_DATA"
	chmod 700 "$PG_DATA"
	# What initdb without -N does last: every file of the cluster on disk.
	pg_as "$PG_BIN/initdb" --sync-only -D "$PG_DATA" >/dev/null || pg_fail "initdb --sync-only failed"
}

pg_server_start() {
	pg_as "$PG_BIN/pg_ctl" start -w -t 30 -D "$PG_DATA" -l "$PG_LOG" -o "-c listen_addresses='' \
-c unix_socket_directories='$PG_DIR' -c fsync=on -c synchronous_commit=on -c full_page_writes=on \
-c shared_buffers=32MB -c max_connections=200 -c log_min_messages=warning" >/dev/null ||
		pg_fail "the server did not start"
	PG_STARTED=1
}

pg_start() {
	[ -f "$PG_DATA/PG_VERSION" ] || pg_initdb
	pg_server_start
	pg_psql_db postgres "CREATE DATABASE $PG_DB" >/dev/null || pg_fail "CREATE DATABASE failed"
	# The URL the service gets must be one libpq takes as it is.
	[ "$("$PG_BIN/psql" -X -At -d "$PG_URL" -c 'SELECT current_user')" = "$PG_USER" ] ||
		pg_fail "psql does not accept $PG_URL"
}

pg_stop() {
	[ "$PG_STARTED" = 1 ] || return 0
	pg_as "$PG_BIN/pg_ctl" stop -w -t 30 -m fast -D "$PG_DATA" >/dev/null || pg_fail "the server did not stop"
	PG_STARTED=0
}

pg_restart() {
	pg_stop
	pg_server_start
}

pg_kill() {
	local pid
	pid=$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 0
	kill -9 "$pid" 2>/dev/null
	# The backends notice their postmaster's death and exit; the next start waits for them.
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	PG_STARTED=0
}

pg_psql_db() {
	local dbname=$1
	shift
	"$PG_BIN/psql" -X -At -v ON_ERROR_STOP=1 -d "postgresql:///$dbname?host=$PG_DIR&user=$PG_USER" -c "$*"
}

pg_psql() {
	pg_psql_db "$PG_DB" "$@"
}

# pg_control_serve: a C test stops and starts the server through two FIFOs in $PG_DIR ("stop"
# or "start" written to req, "ok" read back from ack; tests/verifierd/pg-control.c). Runs in
# the background; PG_CONTROL_PID is killed by pg_cleanup (the loop holds the test's output open).
PG_CONTROL_PID=
pg_control_serve() {
	mkfifo "$PG_DIR/req" "$PG_DIR/ack"
	(
		while read -r cmd <"$PG_DIR/req"; do
			case $cmd in
			stop) pg_stop ;;
			start) pg_restart ;;
			*) echo "pg-env: unknown request $cmd" >&2; exit 1 ;;
			esac
			echo ok >"$PG_DIR/ack"
		done
	) &
	PG_CONTROL_PID=$!
}

pg_cleanup() {
	if [ -n "$PG_CONTROL_PID" ]; then
		kill "$PG_CONTROL_PID" 2>/dev/null || true
		wait "$PG_CONTROL_PID" 2>/dev/null || true
	fi
	if [ "$PG_STARTED" = 1 ]; then
		pg_as "$PG_BIN/pg_ctl" stop -w -t 10 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || pg_kill
	fi
	rm -rf "$PG_DIR"
	[ -z "$PG_PREV_TRAP" ] || eval "$PG_PREV_TRAP"
}
trap pg_cleanup EXIT
