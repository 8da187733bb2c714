#!/bin/bash
# The clients of mboot-verifierd (mboot fleet, mboot attest push) against the real service
# (build/mboot-verifierd, SQLite in a temp dir, --verbose so that its log shows every request
# that reaches it) and one real machine (a manufactured swtpm, the demo's recorded boot replayed
# into it, enrolled by `mboot attest push`). Every expected value comes from the server itself
# (its JSON read with curl and jq) or from outside tools (sha256sum, openssl): the bearer token,
# the policy's exact bytes, the table and the text shown, the server's error messages with their
# status; what is refused before anything is sent (http:// without --insecure, a token file
# others can read, a machine id that is not one), checked in the server's log; HTTPS with a
# private CA openssl makes here. What a real server never sends (an answer over 16 MiB or not
# JSON, control characters in an error, a redirect) comes from hostile-server.py.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
set -u -o pipefail
M=${MBOOT:?}
V=${MB_VERIFIERD:?}
D=${MB_FLEET_TESTS:-$(dirname "$0")}
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin
CMDLINE="root=PARTUUID=6443a6ae-e5e9-4df7-9a06-d1329e50f33c ro console=ttyS0 panic=-1" # the VM's
cd "$WORK" || exit 1
unset MBOOT_VERIFIER MBOOT_MACHINE_ID http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
VPID=
HPID=
stop_all() {
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
	swtpm_cleanup
}
trap stop_all EXIT
# expect WHAT RC GREP COMMAND...: the command exits RC and its stdout+stderr match GREP (ERE)
expect() {
	local what=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >out 2>&1 || rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$pattern" out; then ok "$what"
	else bad "$what: exit $rc (want $want), output: $(head -c 400 out | cat -v)"; fi
}
# unsent WHAT GREP MARK COMMAND...: refused with exit 2 and a message matching GREP, and no request
# naming MARK reached the server (its --verbose log has a line for every request).
unsent() {
	local what=$1 pattern=$2 mark=$3
	shift 3
	expect "$what" 2 "$pattern" "$@"
	sleep 0.1
	if grep -q -- "$mark" verifierd.log; then bad "$what: the server got it: $(grep -- "$mark" verifierd.log)"
	else ok "$what: nothing reached the server"; fi
}
# start_verifier ARGS...: mboot-verifierd on a free port of 127.0.0.1, its stderr in verifierd.log
start_verifier() {
	rm -f port
	"$V" --db "$DB" --listen 127.0.0.1:0 --port-file port --ek-ca-dir ekca --threads 2 --verbose "$@" \
		2>>verifierd.log &
	VPID=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
	[ -s port ] || fail "mboot-verifierd did not start: $(cat verifierd.log)"
}
stop_verifier() {
	kill "$VPID" && wait "$VPID"
	VPID=
}
# The machine, m1 in the messages: an id longer than the table's first column.
MID=m1-a-machine-with-a-long-name
# boot LOG: the machine m1 powered on, LOG replayed into its PCRs (and the log push sends)
boot() {
	BOOTED=$1
	swtpm_stop
	swtpm_serve "$SWTPM_DIR/m1/state" not-need-init # mboot log extend sends TPM2_Startup
	"$M" log extend --tcti "$TCTI" "$1" >extend.out 2>&1 || fail "log extend $1: $(cat extend.out)"
}
# push [ARGS]: mboot attest push from m1 (booted); output in push.out, rc in $rc
push() {
	rc=0
	"$M" attest push --machine-id "$MID" --ak-file "$WORK/ak-m1.json" --tcti "$TCTI" --log "$BOOTED" "$@" >push.out 2>push.err || rc=$?
}
# api METHOD PATH [curl args]: the server's own answer, read with curl and the token
api() {
	curl -s --max-time 10 -X "$1" -H "Authorization: Bearer $(cat token)" "${@:3}" "$URL$2"
}

# The machine and its manufacturer's CA, which the verifier trusts; the operator's token.
umask 077
swtpm_manufacture "$SWTPM_DIR/m1" sha1,sha256,sha384 # the banks the log lists (its Spec ID)
mkdir -p ekca
cp "$SWTPM_DIR/m1/ca/swtpm-localca-rootca-cert.pem" ekca/root.pem
cp "$SWTPM_DIR/m1/ca/issuercert.pem" ekca/issuer.pem
DB=sqlite:$WORK/verifier.db
"$V" --db "$DB" --new-token >token || fail "mboot-verifierd --new-token"
echo not-the-token >wrong
start_verifier --insecure
URL=http://127.0.0.1:$(cat port)
F=(--server "$URL" --token-file token --insecure)

# --- the token -----------------------------------------------------------------------------------
expect "a good token: fleet list, exit 0, the table's header" 0 "^ID +STATUS +LAST ATTESTATION +POLICY$" \
	"$M" fleet list "${F[@]}"
msg=$(curl -s --max-time 10 -H "Authorization: Bearer not-the-token" "$URL/v1/machines" | jq -r .error)
if [ -z "$msg" ] || [ "$msg" = null ]; then bad "the server gave no 401 message: '$msg'"; fi
expect "a wrong token: exit 2, the server's 401 and its message ('$msg')" 2 "HTTP 401: $msg$" \
	"$M" fleet list --server "$URL" --token-file wrong --insecure
expect "--insecure: said on stderr" 0 "warning: --insecure: plain HTTP" "$M" fleet list "${F[@]}"
# No token anywhere (a HOME without one): refused, naming the three places a token is taken from.
mkdir -p nohome home/.config/mboot xdg/mboot
expect "no token: refused, the three ways named" 2 \
	"needs an operator token: --token-file FILE, \\\$MBOOT_FLEET_TOKEN_FILE or ~/.config/mboot/fleet-token" \
	env HOME="$PWD/nohome" XDG_CONFIG_HOME= MBOOT_FLEET_TOKEN_FILE= "$M" fleet list --server "$URL" --insecure
expect "\$MBOOT_FLEET_TOKEN_FILE names the token file" 0 "^ID " \
	env HOME="$PWD/nohome" MBOOT_FLEET_TOKEN_FILE="$PWD/token" "$M" fleet list --server "$URL" --insecure
install -m 600 token home/.config/mboot/fleet-token
expect "the default: \$HOME/.config/mboot/fleet-token" 0 "^ID " \
	env HOME="$PWD/home" XDG_CONFIG_HOME= MBOOT_FLEET_TOKEN_FILE= "$M" fleet list --server "$URL" --insecure
install -m 600 wrong xdg/mboot/fleet-token
expect "\$XDG_CONFIG_HOME/mboot/fleet-token before ~/.config (a wrong token there: HTTP 401)" 2 "HTTP 401: " \
	env HOME="$PWD/home" XDG_CONFIG_HOME="$PWD/xdg" MBOOT_FLEET_TOKEN_FILE= "$M" fleet list --server "$URL" --insecure
expect "\$MBOOT_VERIFIER names the server" 0 "^ID " env MBOOT_VERIFIER="$URL" "$M" fleet list --token-file token --insecure

# --- refused before anything is sent ---------------------------------------------------------------
# First, that the log shows a request: the probe's line appears.
"$M" fleet show probe-logged "${F[@]}" >/dev/null 2>&1
sleep 0.1
if grep -q "GET /v1/machines/probe-logged 404" verifierd.log; then ok "the server's log names each request"
else bad "no line for the probe in the server's log: $(tail -3 verifierd.log)"; fi
unsent "http:// without --insecure: refused, exit 2" "plain http:// .*--insecure" unsent-plain \
	"$M" fleet show unsent-plain --server "$URL" --token-file token
unsent "attest push: http:// without --insecure" "plain http://" unsent-push-plain \
	"$M" attest push --server "$URL" --machine-id unsent-push-plain --ak-file ak-none.json --tcti "swtpm:path=$WORK/none"
chmod 0640 token
unsent "a token file the group can read: refused like ssh does" "permissions 0640 are too open" unsent-mode-group \
	"$M" fleet show unsent-mode-group "${F[@]}"
chmod 0604 token
unsent "a token file others can read: refused" "permissions 0604 are too open" unsent-mode-other \
	"$M" fleet show unsent-mode-other "${F[@]}"
chmod 0600 token
unsent "a machine id with '/' and '..': refused" "is not a machine id" unsent-id \
	"$M" fleet show ../unsent-id "${F[@]}"
unsent "policy set: a machine id that is not one" "is not a machine id" unsent-set \
	"$M" fleet policy set "unsent-set x" /dev/null "${F[@]}"
unsent "attest push: a machine id that is not one" "machine id 'unsent-push/x'" unsent-push/ \
	"$M" attest push --server "$URL" --insecure --machine-id unsent-push/x
unsent "attest push: \$MBOOT_MACHINE_ID checked too" "machine id 'unsent push'" "unsent push" \
	env MBOOT_MACHINE_ID='unsent push' "$M" attest push --server "$URL" --insecure
expect "another scheme: refused" 2 "not an https:// URL" "$M" fleet list --server "ftp://127.0.0.1/" --token-file token

# --- push usage errors ---------------------------------------------------------------------------
expect "attest push: --interval 0" 2 "--interval" "$M" attest push --server "$URL" --insecure --interval 0
expect "attest push: no --server and no \$MBOOT_VERIFIER" 2 "needs --server" "$M" attest push --machine-id m1
expect "attest push: an unknown option" 2 "unknown option|unrecognized" "$M" attest push --no-such-option
expect "attest push: a machine the server does not know, no TPM: exit 3 (the TPM)" 3 "TPM" \
	"$M" attest push --server "$URL" --insecure --machine-id nosuch --ak-file ak-none.json --tcti "swtpm:path=$WORK/none"

# --- unknown machines: the server's 404 and its message ---------------------------------------------
check404() { # check404 WHAT METHOD PATH FLEET-ARGS...: exit 2, the server's own 404 message
	local what=$1 method=$2 path=$3 m
	shift 3
	m=$(api "$method" "$path" | jq -r .error)
	if [ -z "$m" ] || [ "$m" = null ]; then bad "$what: the server gave no 404 message"; fi
	# Where it names a fix, the fix is a command to type.
	[ "$m" = "unknown machine nosuch ('mboot fleet list' lists the machines)" ] || bad "$what: the 404 says '$m'"
	expect "$what: exit 2, HTTP 404 and the server's message ('$m')" 2 \
		"HTTP 404: $(printf '%s' "$m" | sed 's/[][\.*^$()+?{}|]/\\&/g')$" "$M" fleet "$@" "${F[@]}"
}
check404 "show of an unknown machine" GET /v1/machines/nosuch show nosuch
check404 "revoke of an unknown machine" POST /v1/machines/nosuch/revoke revoke nosuch
check404 "forget of an unknown machine" DELETE /v1/machines/nosuch forget nosuch
check404 "policy clear of an unknown machine" DELETE /v1/machines/nosuch/policy policy clear nosuch

# --- a real machine: enrolled by attest push, its policy set, shown ---------------------------------
boot "$LOG"
push --server "$URL" --insecure --json
st=$(api GET "/v1/machines/$MID" | jq -r .status)
if [ "$rc:$(jq -r .status push.out)" = "1:$st" ] && [ "$st" = untrusted ]; then
	ok "attest push enrolls m1; without a policy it is untrusted (exit 1), as the server says"
else bad "first push: exit $rc, $(head -c 300 push.out push.err), the server says '$st'"; fi
want="the machine has no policy: give it one with 'mboot fleet policy set $MID POLICY'"
if [ "$(api GET "/v1/machines/$MID" | jq -r '.verdict.reasons[] | select(.name == "no-policy") | .detail')" = "$want" ]
then ok "the no-policy reason names the command that gives the machine one"
else bad "no-policy reason: $(api GET "/v1/machines/$MID" | jq -c .verdict.reasons)"; fi
expect "fleet show of a machine that is not trusted: exit 1" 1 "^status: untrusted$" "$M" fleet show "$MID" "${F[@]}"
"$M" policy generate --from-log "$LOG" -o policy.json || bad "policy generate"
digest=$(sha256sum <policy.json | cut -d' ' -f1)
expect "fleet policy set: m1 judged again, trusted, the digest of the file's bytes" 0 "^$MID: policy $digest, status trusted$" \
	"$M" fleet policy set "$MID" policy.json "${F[@]}"
expect "fleet show of a trusted machine: exit 0" 0 "^status: trusted$" "$M" fleet show "$MID" "${F[@]}"
expect "fleet show --json of a trusted machine: exit 0" 0 '"status": "trusted"' "$M" fleet show "$MID" --json "${F[@]}"
if [ "$(api GET "/v1/machines/$MID" | jq -r .policy)" = "$digest" ] &&
	[ "$("$M" fleet show "$MID" --json "${F[@]}" 2>/dev/null | jq -r .policy)" = "$digest" ]; then
	ok "the policy the server holds (curl, fleet show --json) is sha256sum of the file: its exact bytes"
else bad "the server's policy digest is not $digest: $(api GET "/v1/machines/$MID")"; fi
echo '{"version": 1, "rules": [' >broken.json
unsent "fleet policy set with a broken policy: refused here, exit 2" "broken.json" "PUT /v1/machines/$MID/policy 4" \
	"$M" fleet policy set "$MID" broken.json "${F[@]}"

# The boot the demo's attacker makes (init=/bin/sh on the kernel's command line, the log as
# mboot predict writes it): the server's verdict names the event.
"$M" predict --log "$LOG" --cmdline "$CMDLINE init=/bin/sh" --write-log cmdline.log >/dev/null ||
	bad "predict --write-log (init=/bin/sh)"
boot cmdline.log
push --server "$URL" --insecure
api GET "/v1/machines/$MID" >server-m1.json
detail=$(jq -r '[.verdict.reasons[] | select(.name == "policy-violated") | .detail | select(test("init=/bin/sh"))][0]' server-m1.json)
if [ "$rc" = 1 ] && [ "$detail" != null ] && grep -qF "  policy-violated: $detail" push.out; then
	ok "attest push of the init=/bin/sh boot: exit 1, the server's reason printed ($detail)"
else bad "push of the init=/bin/sh boot: exit $rc, $(head -c 400 push.out push.err), the server: $detail"; fi

"$M" fleet show "$MID" --json "${F[@]}" >show.json 2>/dev/null
if [ "$(jq -S . show.json)" = "$(jq -S . server-m1.json)" ]; then ok "fleet show --json: the server's answer"
else bad "fleet show --json differs from the server's: $(head -c 400 show.json)"; fi
# fleet show's text, made here from the server's answer (control characters, if any, left out).
jq -r '"machine: \(.id)", "status: \(.status)", "enrolled: \(.enrolled)",
	"last attestation: \(.last_attestation // "never")", "interval: \(.interval) s",
	"policy: \(.policy // "none (never trusted)")",
	"last verdict: \(if .verdict.trusted then "trusted" else "NOT TRUSTED" end)",
	(.verdict.reasons[] | "  \(.name): \(.detail)"),
	(if .since_trusted == null then empty else
		"since the last trusted attestation:\(if (.since_trusted | length) == 0 then " the same events" else "" end)",
		(.since_trusted[] | "  PCR \(.pcr) \(.change): \(if .event == null then "trusted event \(.trusted_event)"
			else "event \(.event)" end) \(.type): \(.description)") end),
	"history (newest first):",
	(.history[] | "  \(.at)  \(if .trusted then "trusted" else "not trusted (\(.reasons) reason(s))" end)"),
	(if (.audit // []) | length == 0 then empty else "operator actions (newest first):",
		(.audit[] | "  \(.at)  \(.operator) \(.action)\(if .detail == null then "" else " \(.detail)" end)") end)' \
	server-m1.json | tr -d '\000-\011\013-\037\177' >show.want
"$M" fleet show "$MID" "${F[@]}" >show.txt 2>/dev/null; rc=$?
if [ "$rc" = 1 ] && cmp -s show.want show.txt && grep -qF "  policy-violated: $detail" show.txt; then
	ok "fleet show: the server's status, verdict, reasons and history"
else bad "fleet show: exit $rc (want 1), $(diff show.want show.txt | head -20 | cat -v)"; fi

# fleet list: each row the server's id, status, last attestation and the policy's first 12 digits
api GET /v1/machines >server-list.json
"$M" fleet list "${F[@]}" >list.txt 2>/dev/null
want=$(jq -r '.machines[] | [.id, .status, (.last_attestation // "-"), ((.policy // "-")[:12])] | join(" ")' server-list.json)
# (the first column as wide as the longest id: the header's STATUS above the row's)
if [ -n "$want" ] && [ "$(awk 'NR > 1 { print $1, $2, $3, $4 }' list.txt)" = "$want" ] &&
	head -1 list.txt | grep -Eq "^ID {${#MID}}STATUS " && grep -Eq "^$MID  [a-z]" list.txt &&
	[ "$(jq -r --arg id "$MID" '.machines[] | select(.id == $id) | .policy[:12]' server-list.json)" = "${digest:0:12}" ]; then
	ok "fleet list: a row for m1 ($want), as the server lists it"
else bad "fleet list: $(cat list.txt), the server: $want"; fi
"$M" fleet list --json "${F[@]}" >list.json 2>/dev/null
if [ "$(jq -S . list.json)" = "$(jq -S . server-list.json)" ]; then ok "fleet list --json: the server's answer"
else bad "fleet list --json: $(head -c 400 list.json)"; fi

# --- HTTPS: a private CA made here; the client trusts it only when told (--ca-file) ------------------
stop_verifier
mkcert() { # mkcert NAME CN: a CA NAME-ca.pem/.key
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$2" \
		-keyout "$1-ca.key" -out "$1-ca.pem" 2>/dev/null || bad "openssl: CA $1"
}
mkcert test "test CA"
mkcert other "another CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout srv.key -out srv.csr 2>/dev/null || bad "openssl: server key"
printf 'subjectAltName=IP:127.0.0.1\n' >ext
openssl x509 -req -in srv.csr -CA test-ca.pem -CAkey test-ca.key -CAcreateserial -days 2 \
	-extfile ext -out srv.pem 2>/dev/null || bad "openssl: server certificate"
start_verifier --tls-cert srv.pem --tls-key srv.key
S=https://127.0.0.1:$(cat port)
U=$URL
URL=$S
ids=$(api GET /v1/machines --cacert test-ca.pem | jq -r '.machines[].id')
"$M" fleet list --server "$S" --token-file token --ca-file test-ca.pem >list-tls.txt 2>out
if [ "$(awk 'NR > 1 { print $1 }' list-tls.txt)" = "$ids" ] && [ "$ids" = "$MID" ]; then
	ok "https with the private CA (--ca-file): fleet list lists m1, as curl --cacert does"
else bad "https with --ca-file: $(cat list-tls.txt out)"; fi
unsent "https without --ca-file: the certificate is not trusted, exit 2" "(SSL|TLS).*certificate" unsent-tls-noca \
	"$M" fleet show unsent-tls-noca --server "$S" --token-file token
unsent "https with a certificate of another CA: refused" "(SSL|TLS).*certificate" unsent-tls-other \
	"$M" fleet show unsent-tls-other --server "$S" --token-file token --ca-file other-ca.pem
unsent "https, --insecure does not turn verification off" "(SSL|TLS).*certificate" unsent-tls-insecure \
	"$M" fleet show unsent-tls-insecure --server "$S" --token-file token --insecure
unsent "https to a name not in the certificate (localhost): refused" "target host name" unsent-tls-name \
	"$M" fleet show unsent-tls-name --server "https://localhost:$(cat port)" --token-file token --ca-file test-ca.pem
boot "$LOG"
push --server "$S" --ca-file test-ca.pem
if [ "$rc:$(cut -c1-8 push.out | head -1)" = "0:trusted:" ] && [ "$(api GET "/v1/machines/$MID" --cacert test-ca.pem | jq -r .status)" = trusted ]; then
	ok "attest push over https with --ca-file: the good boot, trusted (exit 0), as the server says"
else bad "push over https: exit $rc, $(head -c 400 push.out push.err)"; fi
push --server "$S"
if [ "$rc" = 2 ] && grep -q certificate push.err; then ok "attest push over https without --ca-file: refused, exit 2"
else bad "push over https without --ca-file: exit $rc, $(head -c 400 push.err)"; fi

# revoke, forget on the real machine
expect "fleet revoke m1" 0 "^$MID: revoked" "$M" fleet revoke "$MID" --server "$S" --token-file token --ca-file test-ca.pem
if [ "$(api GET "/v1/machines/$MID" --cacert test-ca.pem | jq -r .status)" = revoked ]; then ok "the server says m1 is revoked"
else bad "m1 not revoked at the server"; fi
expect "fleet forget m1" 0 "^$MID: forgotten" "$M" fleet forget "$MID" --server "$S" --token-file token --ca-file test-ca.pem
if [ "$(api GET /v1/machines --cacert test-ca.pem | jq '.machines | length')" = 0 ]; then ok "the server knows no machine now"
else bad "m1 not forgotten at the server"; fi
kill -0 "$VPID" 2>/dev/null || bad "mboot-verifierd died: $(tail -5 verifierd.log)"
stop_verifier
URL=$U

# --- what a real server never sends: hostile-server.py ---------------------------------------------
python3 "$D/hostile-server.py" hostile.port hostile.log &
HPID=$!
for _ in $(seq 100); do [ -s hostile.port ] && break; sleep 0.05; done
[ -s hostile.port ] || fail "hostile-server.py did not start"
H=(--server "http://127.0.0.1:$(cat hostile.port)" --token-file token --insecure)
expect "an answer over 16 MiB: refused, exit 2" 2 "larger than 16 MiB" "$M" fleet show huge "${H[@]}"
expect "an answer that is not JSON: exit 2, said with the status" 2 "HTTP 502, and the answer is not JSON" \
	"$M" fleet show html "${H[@]}"
expect "an error message with control characters: printed without them" 2 "HTTP 404: unknown\[2J machine$" \
	"$M" fleet show control "${H[@]}"
if ! grep -q $'[\e\r\a\x7f]' out; then ok "no control character reached the terminal"
else bad "control characters printed: $(cat -v out)"; fi
expect "a redirect: not followed, exit 2 with its status" 2 "HTTP 302" "$M" fleet show moved "${H[@]}"
if grep -q "^GET /v1/machines/moved$" hostile.log && ! grep -q followed hostile.log; then
	ok "the redirect's target was never asked for"
else bad "requests: $(cat hostile.log)"; fi

# The machine-side tool talks HTTP through libcurl and nothing more: no web server, no database
# client. libcurl is dlopen()ed by the verbs above (they worked), not linked into every mboot.
needed=$(readelf -d "$M" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
all=$(ldd "$M" 2>/dev/null | awk '{ print $1 }' | tr '\n' ' ')
if [[ $needed != *libcurl* ]] && ! grep -Eq 'libcurl|microhttpd|sqlite|libpq' <<<"$all"; then
	ok "mboot links neither libcurl (loaded when it talks HTTP) nor a web server or database library, not even indirectly ($needed)"
else bad "mboot's libraries: $all"; fi

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
