#!/bin/bash
# The clients of mboot-verifierd (mboot fleet, mboot attest push) against a stand-in server
# (fleet-stub.py, plain HTTP and HTTPS with a private CA made here by openssl): what reaches the
# server (the bearer token, the policy's bytes), how answers are shown (the table, the reasons,
# the server's error message with its status), and what is refused before anything is sent
# (http:// without --insecure, a token file others can read, a certificate from another CA, an
# answer over 16 MiB or not JSON, a machine id that is not one). No TPM is needed.
set -u -o pipefail
M=${MBOOT:?}
D=${MB_FLEET_TESTS:-$(dirname "$0")}
T=$(mktemp -d "${TMPDIR:-/tmp}/mboot-fleet-client.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
unset MBOOT_VERIFIER MBOOT_MACHINE_ID http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }
# expect WHAT RC GREP COMMAND...: the command exits RC and its stdout+stderr match GREP (ERE)
expect() {
	local what=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >"$T/out" 2>&1 || rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$pattern" "$T/out"; then ok "$what"
	else bad "$what: exit $rc (want $want), output: $(head -c 400 "$T/out")"; fi
}
start_stub() { # start_stub NAME [CERT KEY]: PORT_NAME set
	python3 "$D/fleet-stub.py" "$T/$1.port" "$T/requests.log" "${@:2}" &
	PIDS+=($!)
	for _ in $(seq 100); do [ -s "$T/$1.port" ] && break; sleep 0.05; done
	[ -s "$T/$1.port" ] || { echo "FAIL: the stub server did not start"; exit 1; }
}

umask 077
echo good-token >"$T/token"
echo wrong-token >"$T/wrong"
start_stub plain
URL=http://127.0.0.1:$(cat "$T/plain.port")
F=(--server "$URL" --token-file "$T/token" --insecure)

expect "http:// without --insecure: refused, exit 2" 2 "plain http:// .*--insecure" \
	"$M" fleet list --server "$URL" --token-file "$T/token"
if [ ! -s "$T/requests.log" ]; then ok "nothing was sent over http:// without --insecure"
else bad "a request reached the server without --insecure: $(cat "$T/requests.log")"; fi
expect "--insecure: said on stderr" 0 "warning: --insecure: plain HTTP" "$M" fleet list "${F[@]}"
expect "another scheme: refused" 2 "not an https:// URL" "$M" fleet list --server "ftp://127.0.0.1/" --token-file "$T/token"

chmod 0640 "$T/token"
expect "a token file the group can read: refused like ssh does" 2 "permissions 0640 are too open" "$M" fleet list "${F[@]}"
chmod 0600 "$T/token"
expect "no --token-file: refused" 2 "needs --token-file" "$M" fleet list --server "$URL" --insecure
expect "a wrong token: exit 2, HTTP 401 and the server's message" 2 "HTTP 401: missing or wrong token" \
	"$M" fleet list --server "$URL" --token-file "$T/wrong" --insecure
if grep -q "^GET /v1/machines Bearer good-token " "$T/requests.log"; then
	ok "the token file's first line is sent as the bearer token"
else bad "no 'Bearer good-token' in: $(cat "$T/requests.log")"; fi

"$M" fleet list "${F[@]}" >"$T/list" 2>/dev/null
if [ "$(awk 'NR > 1 { print $1, $2, $3, $4 }' "$T/list")" = "a-machine-with-a-long-name trusted 2026-12-04T10:01:00Z 0123456789ab
m1 untrusted - -" ] && head -1 "$T/list" | grep -q "^ID  *STATUS  *LAST ATTESTATION  *POLICY$"; then
	ok "fleet list: a table of id, status, last attestation, the policy's first 12 hex digits"
else bad "fleet list: $(cat "$T/list")"; fi
expect "fleet list --json: the server's answer" 0 '"id": "m1"' "$M" fleet list --json "${F[@]}"

"$M" fleet show m1 "${F[@]}" >"$T/show" 2>&1
if grep -q "^status: untrusted$" "$T/show" && grep -q "^  policy-violated: PCR 8 event 42: kernel_cmdline init=/bin/sh\[31m$" "$T/show" &&
	grep -q "^  2026-12-04T10:05:00Z  not trusted (1 reason(s))$" "$T/show" && ! grep -q $'\x1b' "$T/show"; then
	ok "fleet show: status, the last verdict's reasons (control characters left out), history"
else bad "fleet show: $(cat -v "$T/show")"; fi
"$M" fleet show m1 --json "${F[@]}" >"$T/show.json" 2>/dev/null
if [ "$(jq -r '.status + " " + .verdict.reasons[0].name' "$T/show.json")" = "untrusted policy-violated" ]; then
	ok "fleet show --json: status and the verdict's reasons"
else bad "fleet show --json: $(cat "$T/show.json")"; fi
expect "fleet show of an unknown machine: exit 2, HTTP 404 and the message" 2 "HTTP 404: unknown machine" \
	"$M" fleet show nosuch "${F[@]}"
expect "an answer over 16 MiB: refused, exit 2" 2 "larger than 16 MiB" "$M" fleet show huge "${F[@]}"
expect "an answer that is not JSON: exit 2, said with the status" 2 "HTTP 502, and the answer is not JSON" \
	"$M" fleet show html "${F[@]}"
expect "a machine id with a '/': refused before sending" 2 "is not a machine id" "$M" fleet show ../x "${F[@]}"

"$M" policy generate --from-log "${MB_TESTDATA:?}/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin" -o "$T/policy.json" ||
	bad "policy generate"
expect "fleet policy set: the file's bytes are what the server received (its SHA-256)" 0 \
	"^m1: policy $(sha256sum <"$T/policy.json" | cut -d' ' -f1), status trusted$" \
	"$M" fleet policy set m1 "$T/policy.json" "${F[@]}"
echo '{"version": 1, "rules": [' >"$T/broken.json"
expect "fleet policy set with a broken policy: refused here, exit 2" 2 "broken.json" \
	"$M" fleet policy set m1 "$T/broken.json" "${F[@]}"
expect "fleet policy clear" 0 "^m1: no policy" "$M" fleet policy clear m1 "${F[@]}"
expect "fleet revoke" 0 "^m1: revoked" "$M" fleet revoke m1 "${F[@]}"
expect "fleet forget" 0 "^m1: forgotten" "$M" fleet forget m1 "${F[@]}"
if grep -q "^DELETE /v1/machines/m1/policy " "$T/requests.log" && grep -q "^POST /v1/machines/m1/revoke " "$T/requests.log" &&
	grep -q "^DELETE /v1/machines/m1 " "$T/requests.log"; then ok "policy clear, revoke, forget: the API's calls"
else bad "calls: $(cat "$T/requests.log")"; fi
MBOOT_VERIFIER=$URL expect "--server from \$MBOOT_VERIFIER" 0 "^m1 " "$M" fleet list --token-file "$T/token" --insecure

# HTTPS: a private CA; the client trusts it only when told (--ca-file), never the certificate alone.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca \
	-keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null || bad "openssl: CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$T/srv.key" -out "$T/srv.csr" 2>/dev/null || bad "openssl: server key"
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
	-extfile "$T/ext" -out "$T/srv.pem" 2>/dev/null || bad "openssl: server certificate"
start_stub tls "$T/srv.pem" "$T/srv.key"
S=https://127.0.0.1:$(cat "$T/tls.port")
expect "https with the private CA (--ca-file): works" 0 "^m1 " "$M" fleet list --server "$S" --token-file "$T/token" --ca-file "$T/ca.pem"
expect "https without --ca-file: the certificate is not trusted, exit 2" 2 "certificate" \
	"$M" fleet list --server "$S" --token-file "$T/token"
expect "https, --insecure does not turn verification off" 2 "certificate" \
	"$M" fleet list --server "$S" --token-file "$T/token" --insecure
expect "https to the server's name not in its certificate: refused" 2 "certificate|subject|name" \
	"$M" fleet list --server "https://localhost:$(cat "$T/tls.port")" --token-file "$T/token" --ca-file "$T/ca.pem"

# attest push: refused before the TPM is touched.
expect "attest push: http:// without --insecure" 2 "plain http://" "$M" attest push --server "$URL" --machine-id m1 \
	--ak-file "$T/ak.json" --tcti "swtpm:path=$T/none"
expect "attest push: a machine id that is not one" 2 "machine id 'a/b'" "$M" attest push --server "$S" --machine-id a/b
expect "attest push: --interval 0" 2 "--interval" "$M" attest push --server "$S" --interval 0
expect "attest push: no --server and no \$MBOOT_VERIFIER" 2 "needs --server" "$M" attest push --machine-id m1
MBOOT_MACHINE_ID='bad id' expect "attest push: \$MBOOT_MACHINE_ID checked too" 2 "machine id 'bad id'" \
	"$M" attest push --server "$S"
expect "attest push: a machine the stub does not know, no TPM: exit 3 (the TPM)" 3 "TPM" \
	"$M" attest push --server "$URL" --insecure --machine-id m1 --ak-file "$T/ak.json" --tcti "swtpm:path=$T/none"

# The machine-side tool talks HTTP through libcurl and nothing more: no web server, no database client.
needed=$(readelf -d "$M" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
all=$(ldd "$M" 2>/dev/null | awk '{ print $1 }' | tr '\n' ' ')
if [[ $needed == *libcurl* ]] && ! grep -Eq 'microhttpd|sqlite|libpq' <<<"$all"; then
	ok "mboot links libcurl, and no web server or database library, not even indirectly ($needed)"
else bad "mboot's libraries: $needed"; fi

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
