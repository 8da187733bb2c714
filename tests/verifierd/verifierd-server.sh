#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mboot-verifierd's server, from the outside: the refusals at startup (plain HTTP off loopback,
# no TLS, unknown --config keys, no EK CAs), HTTPS with a certificate openssl makes now, the
# body cap (413 before the body for a Content-Length, for a chunked body too), the idle timeout,
# the security headers, the token (401 without it, the one --new-token prints works and is not
# stored in the clear), and a clean stop on SIGTERM that answers the request in flight first.
set -eu -o pipefail

V=${MB_VERIFIERD:?}
T=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[ -s "$T/log" ] && sed 's/^/  server: /' "$T/log" >&2
	exit 1
}
ok() { echo "ok: $*"; }

DB="sqlite:$T/verifier.db"
MAX_BODY=1000
TIMEOUT=2

# start ARGS...: the service in the background on a free port of 127.0.0.1 ($port)
start() {
	rm -f "$T/port"
	"$V" --db "$DB" --allow-no-ek-cert --port-file "$T/port" --max-body "$MAX_BODY" \
		--connection-timeout "$TIMEOUT" --threads 2 "$@" 2>"$T/log" &
	pid=$!
	for _ in $(seq 100); do
		[ -s "$T/port" ] && break
		kill -0 "$pid" 2>/dev/null || fail "the service died at startup ($*)"
		sleep 0.1
	done
	port=$(cat "$T/port") || fail "no port file after 10 s"
}
# stop: SIGTERM, and the service exits 0 (under ASan: without a leak)
stop() {
	local rc=0
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	pid=
	[ "$rc" = 0 ] || fail "exit $rc after SIGTERM, not 0"
}
# refused WHAT ARGS...: the service exits 2 at startup, with a message matching WHAT
refused() {
	local what=$1 rc=0
	shift
	timeout 5 "$V" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "$* exited $rc, not 2: $(cat "$T/err")"
	grep -q -- "$what" "$T/err" || fail "$*: the message does not say '$what': $(cat "$T/err")"
}
# http URL [curl args...]: prints the status, the body in $T/body, the headers in $T/headers
http() {
	local url=$1
	shift
	curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 10 "$@" "$url" || true
}
header() { # header NAME: its value in the last answer
	tr -d '\r' <"$T/headers" | awk -v n="$(echo "$1" | tr '[:upper:]' '[:lower:]')" \
		'{ k = tolower($1) } k == n ":" { sub(/^[^:]*: */, ""); print }'
}
json_error() { # the answer is {"error": "..."} with a message
	jq -e '.error | type == "string" and length > 0' "$T/body" >/dev/null ||
		fail "$1: not a JSON error: $(head -c 300 "$T/body")"
}

# --- startup refusals ----------------------------------------------------------------------
refused loopback --listen 0.0.0.0:0 --insecure --allow-no-ek-cert --db "$DB"
refused loopback --listen '[::]:0' --insecure --allow-no-ek-cert --db "$DB"
ok "--insecure is refused on 0.0.0.0 and [::] (exit 2)"
refused --tls-cert --listen 127.0.0.1:0 --allow-no-ek-cert --db "$DB"
ok "without TLS files and without --insecure: exit 2, saying to pass --tls-cert"
refused --ek-ca-file --listen 127.0.0.1:0 --insecure --db "$DB"
ok "without EK CAs and without --allow-no-ek-cert: exit 2"
echo '{"listen": "127.0.0.1:0", "insecure": true, "allow_no_ek_cert": true, "no_such_option": 1}' >"$T/bad.json"
refused no_such_option --config "$T/bad.json"
echo '{"listen": "127.0.0.1:0", "insecure": "yes"}' >"$T/bad.json"
refused '"insecure"' --config "$T/bad.json"
echo '{"listen": "127.0.0.1:0", "config": "x.json"}' >"$T/bad.json"
refused '"config"' --config "$T/bad.json"
ok "--config: an unknown key, a wrong type, a key that is no option: exit 2 naming the key"
echo 'this is not a policy' >"$T/bad-policy"
refused --default-policy --listen 127.0.0.1:0 --insecure --allow-no-ek-cert --db "$DB" --default-policy "$T/bad-policy"
ok "a --default-policy that does not parse: exit 2"
refused 'no-such-dir' --listen 127.0.0.1:0 --insecure --allow-no-ek-cert --db "sqlite:$T/no-such-dir/x.db"
ok "a database that cannot be opened: exit 2 with its message"
refused 'is below --max-body' --listen 127.0.0.1:0 --insecure --allow-no-ek-cert --db "$DB" --max-body 2000 \
	--max-body-memory 1000
ok "--max-body-memory below --max-body: exit 2"
S=(--listen 127.0.0.1:0 --insecure --allow-no-ek-cert --db "$DB")
printf 'sixteen bytes ok\n' >"$T/notify.key"
printf 'too short\n' >"$T/notify.short"
refused 'needs --notify-secret-file' "${S[@]}" --notify http://127.0.0.1:9/hook
refused 'not an http:// or https:// URL' "${S[@]}" --notify ftp://127.0.0.1/x --notify-secret-file "$T/notify.key"
refused 'not an http:// or https:// URL' "${S[@]}" --notify file:///etc/passwd --notify-secret-file "$T/notify.key"
refused 'no host' "${S[@]}" --notify http:///x --notify-secret-file "$T/notify.key"
refused 'fewer than 16' "${S[@]}" --notify https://127.0.0.1/x --notify-secret-file "$T/notify.short"
refused 'notify-secret-file' "${S[@]}" --notify https://127.0.0.1/x --notify-secret-file "$T/no-such-key"
refused "'0' is not a number from 1 to 20" "${S[@]}" --notify-tries 0
echo '{"listen": "127.0.0.1:0", "insecure": true, "allow_no_ek_cert": true, "notify": "gopher://x/"}' >"$T/bad.json"
refused 'not an http:// or https:// URL' --config "$T/bad.json" --notify-secret-file "$T/notify.key" --db "$DB"
ok "--notify: only http:// and https:// URLs with a host, a key of 16 bytes or more, needed: exit 2"

# --- the operator token ----------------------------------------------------------------------
token=$("$V" --db "$DB" --new-token 2>"$T/err") || fail "--new-token: $(cat "$T/err")"
[ "${#token}" -ge 20 ] || fail "--new-token printed '$token'"
[ -s "$T/verifier.db" ] || fail "--new-token made no database"
for f in "$T"/verifier.db*; do
	! grep -qF "$token" "$f" || fail "the token is stored in the clear in $f"
done
! sqlite3 "$T/verifier.db" .dump | grep -qF "$token" || fail "the token is in the database's dump"
ok "--new-token prints a token; the database does not hold it"

# --- plain HTTP on loopback ------------------------------------------------------------------
echo '{"listen": "127.0.0.1:0", "insecure": true, "interval": 300}' >"$T/config.json"
start --config "$T/config.json" --verbose
grep -q "listening on 127.0.0.1:$port\$" "$T/log" || fail "no 'listening on 127.0.0.1:$port' line"
[ "$(http "http://127.0.0.1:$port/healthz")" = 200 ] || fail "/healthz: $(cat "$T/body")"
jq -e '.ok == true and .db == "sqlite"' "$T/body" >/dev/null || fail "/healthz body: $(cat "$T/body")"
[ "$(header Content-Type)" = application/json ] || fail "/healthz Content-Type: $(header Content-Type)"
[ "$(header Cache-Control)" = no-store ] || fail "no Cache-Control: no-store"
[ "$(header X-Content-Type-Options)" = nosniff ] || fail "no X-Content-Type-Options: nosniff"
ok "--config's listen and insecure work; /healthz 200 {ok, db: sqlite}, no-store, nosniff"

[ "$(http "http://127.0.0.1:$port/")" = 200 ] || fail "GET /: $(head -c 300 "$T/body")"
case "$(header Content-Type)" in text/html*) ;; *) fail "GET / is $(header Content-Type)" ;; esac
csp=$(header Content-Security-Policy)
case "$csp" in *"default-src 'none'"*"frame-ancestors 'none'"*) ;; *) fail "the page's CSP is '$csp'" ;; esac
ok "the page (text/html) carries a strict Content-Security-Policy"

[ "$(http "http://127.0.0.1:$port/v1/machines")" = 401 ] || fail "no token: not 401"
json_error "no token"
[ "$(http "http://127.0.0.1:$port/v1/machines" -H "Authorization: Bearer not-$token")" = 401 ] ||
	fail "a wrong token: not 401"
json_error "wrong token"
[ "$(http "http://127.0.0.1:$port/v1/machines" -H "Authorization: Bearer $token")" = 200 ] ||
	fail "the new token: $(cat "$T/body")"
jq -e '.machines == []' "$T/body" >/dev/null || fail "GET /v1/machines: $(cat "$T/body")"
ok "operator call: 401 JSON without a token or with a wrong one, 200 with --new-token's"
seq 32 | xargs -P 8 -I{} curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 \
	-H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/machines" >"$T/codes" || true
[ "$(sort "$T/codes" | uniq -c | tr -s ' ')" = " 32 200" ] ||
	fail "32 operator calls, 8 at once: $(sort "$T/codes" | uniq -c | tr '\n' ' ')"
ok "32 operator calls, 8 at once over 2 threads: all 200"
code=$(http "http://127.0.0.1:$port/v1/machines%00/x" -H "Authorization: Bearer $token")
[ "$code" = 404 ] || fail "/v1/machines%00/x answered $code, not 404 (did %00 cut the path short?)"
json_error "%00"
ok "a %00 in the path does not cut it short (404, not the list)"

[ "$(http "http://127.0.0.1:$port/v1/machines" -X PATCH -H "Authorization: Bearer $token")" = 404 ] ||
	fail "PATCH is not 404"
json_error "PATCH"
ok "an unsupported method: 404 JSON"

# A Content-Length over the cap is answered before any of the body is sent.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/enroll HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n' \
	$((MAX_BODY + 1)) >&3
answer=$(timeout 5 cat <&3 | tr -d '\r') || true
exec 3<&-
case "$answer" in "HTTP/1.1 413 "*'"error"'*) ;; *) fail "Content-Length over the cap, no body sent: '$answer'" ;; esac
head -c "$((MAX_BODY + 1))" /dev/zero | tr '\0' x >"$T/big"
[ "$(http "http://127.0.0.1:$port/v1/enroll" --data-binary "@$T/big")" = 413 ] || fail "a body over the cap"
json_error "413"
ok "413 JSON for a Content-Length over --max-body, before the body is read"

head -c "$MAX_BODY" /dev/zero | tr '\0' x >"$T/fits"
[ "$(http "http://127.0.0.1:$port/v1/enroll" -H 'Transfer-Encoding: chunked' --data-binary "@$T/fits")" = 400 ] ||
	fail "a chunked body of exactly the cap is not the fleet's 400: $(cat "$T/body")"
[ "$(http "http://127.0.0.1:$port/v1/enroll" -H 'Transfer-Encoding: chunked' --data-binary "@$T/big")" = 413 ] ||
	fail "a chunked body over the cap is not 413"
json_error "chunked 413"
ok "a chunked body reaches the fleet up to --max-body (400: not an enrollment), 413 JSON over it"

# Half a request line, then silence: cut off after --connection-timeout.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /heal' >&3
t0=$(date +%s%N)
rc=0
timeout 10 cat <&3 >/dev/null || rc=$?
elapsed=$((($(date +%s%N) - t0) / 1000000))
exec 3<&-
[ "$rc" = 0 ] || fail "a silent client was not disconnected within 10 s"
[ "$elapsed" -ge $((TIMEOUT * 1000 - 200)) ] || fail "a silent client was disconnected after $elapsed ms, before the timeout"
ok "a silent client is disconnected after $elapsed ms (--connection-timeout $TIMEOUT)"

# A request in flight at SIGTERM is answered: half its body before the signal, half after.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/enroll HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{}' >&3
sleep 0.3
kill -TERM "$pid"
sleep 0.3
printf '  ' >&3
answer=$(timeout 5 head -n 1 <&3 | tr -d '\r') || true
exec 3<&-
case "$answer" in "HTTP/1.1 400 "*) ;; *) fail "the request in flight at SIGTERM got '$answer'" ;; esac
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM"
grep -q 'POST /v1/enroll 400' "$T/log" || fail "--verbose logged no line for the request"
ok "SIGTERM: the request in flight is answered, then exit 0; --verbose logs each request"

# --- the connection limit ----------------------------------------------------------------------
start --listen 127.0.0.1:0 --insecure --threads 1 --max-connections 2 --connection-timeout 5
exec 4<>"/dev/tcp/127.0.0.1/$port" 5<>"/dev/tcp/127.0.0.1/$port"
sleep 0.3
code=$(http "http://127.0.0.1:$port/healthz" --max-time 1)
[ "$code" = 000 ] || fail "a third connection over --max-connections 2 was answered $code"
exec 4<&- 5<&-
[ "$(http "http://127.0.0.1:$port/healthz")" = 200 ] || fail "no answer once the 2 connections closed"
stop
ok "--max-connections 2: a third connection waits unanswered, and is served once the others close"

# --- the memory of all bodies --------------------------------------------------------------------
# One request holds 800 bytes of its body (a buffer of --max-body + 1 = 1001 bytes); a second
# announcing 600 more than the 1500 of --max-body-memory leave is answered 503 before its body.
start --listen 127.0.0.1:0 --insecure --max-body-memory 1500
x800=$(head -c 800 /dev/zero | tr '\0' x)
exec 4<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/enroll HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n%s' "$x800" >&4
sleep 0.3
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/enroll HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n' >&3
answer=$(timeout 5 cat <&3 | tr -d '\r') || true
exec 3<&-
case "$answer" in "HTTP/1.1 503 "*'"error"'*) ;; *) fail "a body over what --max-body-memory leaves: '$answer'" ;; esac
printf '%s' "${x800:0:100}" >&4
answer=$(timeout 5 head -n 1 <&4 | tr -d '\r') || true
exec 4<&-
case "$answer" in "HTTP/1.1 400 "*) ;; *) fail "the request holding the memory got '$answer'" ;; esac
[ "$(http "http://127.0.0.1:$port/v1/enroll" --data-binary "$x800")" = 400 ] ||
	fail "the memory was not given back: $(cat "$T/body")"
stop
ok "--max-body-memory: 503 JSON before the body for a request that does not fit, served once memory is free"

# --- HTTPS -------------------------------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
start --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
[ "$(http "https://127.0.0.1:$port/healthz" --cacert "$T/cert.pem")" = 200 ] || fail "HTTPS /healthz"
jq -e '.ok == true' "$T/body" >/dev/null || fail "HTTPS /healthz body: $(cat "$T/body")"
code=$(http "http://127.0.0.1:$port/healthz")
[ "$code" = 000 ] || fail "plain HTTP to the TLS port answered $code"
code=$(http "https://127.0.0.1:$port/healthz")
[ "$code" = 000 ] || fail "HTTPS without trusting the certificate answered $code"
ok "HTTPS with a certificate made now: 200; plain HTTP and an untrusted certificate fail"
# TLS 1.2 and 1.3 only (RFC 8996). The clients are allowed the old versions and ciphers
# (OpenSSL's SECLEVEL=0), so that the refusal is the service's.
for max in 1.0 1.1; do
	code=$(http "https://127.0.0.1:$port/healthz" --cacert "$T/cert.pem" --tlsv1.0 --tls-max "$max" \
		--ciphers 'DEFAULT@SECLEVEL=0')
	[ "$code" = 000 ] || fail "curl --tls-max $max: answered $code, the handshake was not refused"
done
for v in tls1 tls1_1; do
	! timeout 5 openssl s_client -connect "127.0.0.1:$port" "-$v" -cipher 'DEFAULT@SECLEVEL=0' \
		</dev/null >"$T/s_client" 2>&1 || fail "openssl s_client -$v: a handshake: $(grep -a 'Protocol\|Cipher' "$T/s_client")"
done
[ "$(http "https://127.0.0.1:$port/healthz" --cacert "$T/cert.pem" --tlsv1.2 --tls-max 1.2)" = 200 ] ||
	fail "TLS 1.2 is not served"
[ "$(http "https://127.0.0.1:$port/healthz" --cacert "$T/cert.pem" --tlsv1.3)" = 200 ] || fail "TLS 1.3 is not served"
timeout 5 openssl s_client -connect "127.0.0.1:$port" -tls1_2 </dev/null >"$T/s_client" 2>&1 ||
	fail "openssl s_client -tls1_2: $(tail -n 3 "$T/s_client")"
stop
ok "TLS 1.0 and 1.1 are refused in the handshake (curl --tls-max, openssl s_client); 1.2 and 1.3 served"
refused --tls-key --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --allow-no-ek-cert --db "$DB"
refused 'exclude' --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" --insecure \
	--allow-no-ek-cert --db "$DB"
ok "--tls-cert without --tls-key, or with --insecure: exit 2"

# --- IPv6 loopback (when the machine has it) ---------------------------------------------------
if ! grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
	echo "skip: no IPv6 loopback"
else
	start --listen '[::1]:0' --insecure
	grep -q "listening on \[::1\]:$port\$" "$T/log" || fail "no 'listening on [::1]:$port' line"
	[ "$(http "http://[::1]:$port/healthz")" = 200 ] || fail "/healthz over [::1]"
	stop
	ok "[::1]:PORT with --insecure: 200"
fi

# --- the systemd unit --------------------------------------------------------------------------
unit=${MB_BUILD_ROOT:?}/hooks/mboot-verifierd.service
if [ ! -f "$unit" ]; then
	echo "skip: no mboot-verifierd.service in the build"
elif ! command -v systemd-analyze >/dev/null; then
	echo "skip: no systemd-analyze"
else
	grep -qx 'ProtectSystem=strict' "$unit" || fail "the unit is not ProtectSystem=strict"
	grep -qx 'StateDirectory=mboot' "$unit" || fail "the unit has no StateDirectory=mboot"
	sed "s|^ExecStart=[^ ]*|ExecStart=$V|" "$unit" >"$T/mboot-verifierd.service"
	if ! systemd-analyze verify --man=no "$T/mboot-verifierd.service" >"$T/analyze.log" 2>&1 ||
		[ -s "$T/analyze.log" ]; then
		fail "systemd-analyze verify: $(cat "$T/analyze.log")"
	fi
	ok "mboot-verifierd.service passes systemd-analyze verify"
fi
