#!/bin/bash
# The verifier's web page in a real browser: mboot-verifierd (plain HTTP on 127.0.0.1, SQLite in
# a temp dir) with two real machines on a manufactured swtpm, enrolled and attested through the
# API with mboot and curl: one booted as its policy says (trusted), one whose boot ran a GRUB
# command the policy does not know, "init=/bin/sh" and a hostile <img onerror> string in it
# (untrusted). Headless Chromium loads the page with the token in the address's fragment; its
# DOM must list both machines with the statuses the API gives, highlight exactly the events the
# verdict names (numbers taken from the API's JSON) with the why beside them, and show the
# hostile string as text only. Screenshots: meson-logs/fleet-web-{fleet,machine}.png.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
M=${MBOOT:?}
D=${MB_VERIFIERD:?}
F=${MB_FORGE:?}
LOGS=${MB_BUILD_ROOT:?}/meson-logs
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
# Were it parsed as HTML, its image would fail to load (CSP: img-src data:) and the handler, which
# the CSP allows (inline script), would mark the body: not alert(), whose dialog would hang
# headless Chromium instead of failing the test.
HOSTILE='<img src=x onerror="document.body.setAttribute('"'data-xss'"', 1)">'
GOOD=web-good
EVIL=web-evil
# scripts/install-deps installs them all: a missing one is a failure, not a skip.
CHROMIUM=$(command -v chromium || command -v chromium-browser) || fail "chromium is not installed (scripts/install-deps)"
for t in jq curl python3; do
	command -v $t >/dev/null || fail "$t is not installed (scripts/install-deps)"
done
cd "$WORK" || exit 1

VD_PID=
cleanup() {
	if [ -n "$VD_PID" ]; then
		kill "$VD_PID" 2>/dev/null
		wait "$VD_PID" 2>/dev/null
	fi
	swtpm_cleanup
}
trap cleanup EXIT

# The machines' TPM, the known-good boot in it, its policy; the other boot's log.
swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256" # reset: the boot below starts the TPM at its own locality
"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/
"$M" policy generate --from-log "$LOG" -o policy.json || fail "policy generate"
# Two firmware sets: this boot's values (firmware-1) and another real machine's release.
"$M" policy add-firmware policy.json --from-log "$C/go-tpm-tools/arch-linux-workstation.bin" --name other-release \
	>/dev/null || fail "policy add-firmware"
"$F" "$LOG" evil.bin append 8 grub_cmd "linux /boot/vmlinuz ro init=/bin/sh $HOSTILE" || fail "mb-forge"
appended=$("$M" log show --json evil.bin | jq '.events[-1].index')

# The verifier. A free port from the kernel; the service binds it right after.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
DB=sqlite:$WORK/verifier.db
token=$("$D" --db "$DB" --new-token 2>newtoken.err) || fail "--new-token: $(cat newtoken.err)"
[ -n "$token" ] || fail "--new-token printed nothing"
"$D" --allow-ek-reuse --listen "127.0.0.1:$port" --db "$DB" --ek-ca-dir ca --default-policy policy.json --insecure \
	>verifierd.log 2>&1 &
VD_PID=$!
for _ in $(seq 100); do
	curl -sf "$URL/healthz" >/dev/null && break
	kill -0 "$VD_PID" 2>/dev/null || fail "mboot-verifierd exited: $(cat verifierd.log)"
	sleep 0.1
done
curl -sf "$URL/healthz" >/dev/null || fail "mboot-verifierd does not answer on $URL: $(cat verifierd.log)"

post() { # post PATH [FILE]: the body to out.json; prints the status code
	curl -sS -o out.json -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary "@${2:-/dev/null}" "$URL$1"
}
# attest ID LOG: the machine ID enrolls (a new AK), activates, and sends the evidence of LOG.
attest() {
	local id=$1 log=$2 code nonce
	"$M" attest enroll --tcti "$TCTI" --ak-file "ak-$id.json" -o "request-$id.json" || fail "attest enroll $id"
	jq -n --arg id "$id" --slurpfile r "request-$id.json" '{machine_id: $id, request: $r[0]}' >"enroll-$id.json"
	code=$(post /v1/enroll "enroll-$id.json")
	[ "$code" = 201 ] || fail "POST /v1/enroll $id: $code $(cat out.json)"
	jq .challenge out.json >"challenge-$id.json"
	"$M" attest activate --tcti "$TCTI" --ak-file "ak-$id.json" -i "challenge-$id.json" -o "response-$id.json" ||
		fail "attest activate $id"
	code=$(post "/v1/enroll/$id/activate" "response-$id.json")
	[ "$code" = 200 ] || fail "POST activate $id: $code $(cat out.json)"
	code=$(post "/v1/machines/$id/nonce")
	[ "$code" = 200 ] || fail "POST nonce $id: $code $(cat out.json)"
	nonce=$(jq -r .nonce out.json)
	"$M" quote --tcti "$TCTI" --ak-file "ak-$id.json" --nonce "$nonce" --log "$log" -o "evidence-$id.json" ||
		fail "quote $id"
	code=$(post "/v1/machines/$id/evidence?nonce=$nonce" "evidence-$id.json")
	[ "$code" = 200 ] || fail "POST evidence $id: $code $(cat out.json)"
	jq -r .status out.json
}
check "$GOOD, booted as its policy says, is trusted" test "$(attest $GOOD "$LOG")" = trusted
swtpm_reset # the machine reboots into the other boot
"$M" log extend --tcti "$TCTI" evil.bin >extend2.out 2>&1 || fail "log extend evil.bin: $(cat extend2.out)"
check "$EVIL, whose boot ran an unknown GRUB command, is untrusted" test "$(attest $EVIL evil.bin)" = untrusted

api() { curl -sSf -H "Authorization: Bearer $token" "$URL$1"; }
api /v1/machines >machines.json || fail "GET /v1/machines"
api /v1/machines/$EVIL >evil.json || fail "GET /v1/machines/$EVIL"
api /v1/machines/$EVIL/events >evil-events.json || fail "GET /v1/machines/$EVIL/events"
# The events the verdict names: the policy's violations (and no PCR that failed to replay).
named=$(jq -r '[.verdict.policy.violations[].event] | unique | join(" ")' evil.json)
check "the verdict names the appended GRUB command, event $appended of evil.bin (named: $named)" \
	test "$named" = "$appended"
"$M" log show --json evil.bin | jq -S '.events' >evil-show.json
check "each event of the API is the event of \`mboot log show --json\` with broken, why and changed after it" \
	test "$(jq -S '[.events[] | del(.broken, .why, .changed)]' evil-events.json)" = "$(cat evil-show.json)" -a \
	"$(jq -c '[.events[] | keys_unsorted[-3:]] | unique' evil-events.json)" = '[["broken","why","changed"]]'
check "the page is served with the CSP it is written for" \
	grep -qi "^content-security-policy: default-src 'none'; script-src 'unsafe-inline'" \
	<(curl -sS -D - -o page.html "$URL/")

# browse URL NAME [shot]: Chromium's DOM of the page into NAME.html; with shot, its screenshot
# into meson-logs too.
# Only 127.0.0.1 resolves; nothing in the background reaches out.
browse() {
	local url=$1 name=$2 profile
	profile=$(mktemp -d "$WORK/chromium.XXXXXX")
	# shellcheck disable=SC2054 # the commas are inside one flag's value
	local flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$profile"
		--no-first-run --no-default-browser-check --disable-background-networking --disable-sync
		--disable-component-update --disable-default-apps --disable-extensions --disable-breakpad
		--metrics-recording-only --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
		--window-size=1280,1600 --virtual-time-budget=5000)
	timeout 60 "$CHROMIUM" "${flags[@]}" --dump-dom "$url" >"$name.html" 2>>chromium.log ||
		bad "chromium --dump-dom $name (exit $?)"
	[ "${3:-}" != shot ] || timeout 60 "$CHROMIUM" "${flags[@]}" --screenshot="$LOGS/fleet-web-$name.png" \
		"$url" >/dev/null 2>>chromium.log || bad "chromium --screenshot $name (exit $?)"
	rm -rf "$profile"
}
# dom_facts FILE: what the page shows, one fact a line, read with an HTML parser:
#   machine ID STATUS BADGE    a row of the fleet table
#   broken INDEX WHY           a highlighted row of the boot chain (tr class="broken")
#   hostile-text INDEX         a chain row whose text holds the hostile string, as text
#   element TAG                every img, iframe, object, embed, svg and script element (the page
#                              has one script, its own, and makes none of the others)
#   form-shown                 the token form is visible
#   count STATUS N             the number of machines of a status, above the fleet table
#   reason NAME                a reason of the machine's last verdict
#   history VERDICT            a row of the machine's history (its badge)
#   notice TEXT                the page's message (errors from the API)
#   script-ran                 the body has the attribute the hostile string's handler sets
#   firmware-set TEXT          the firmware set the last verdict names
dom_facts() {
	python3 - "$1" "$HOSTILE" <<'PY'
import sys
from html.parser import HTMLParser

class Facts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack = []    # (tag, attrs) of the open elements
        self.row = None    # the open <tr>: {"attrs", "text", "why", "badge"}
        self.out = []

    def inside(self, key, value):
        return any(a.get(key) == value for _, a in self.stack)

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag in ("img", "iframe", "object", "embed", "svg", "script"):
            self.out.append("element " + tag)
        if tag == "body" and "data-xss" in a:
            self.out.append("script-ran")
        if tag == "form" and a.get("id") == "token-form" and "hidden" not in a:
            self.out.append("form-shown")
        if tag == "tr":
            self.row = {"attrs": a, "text": "", "why": "", "badge": ""}
        if tag not in ("br", "meta", "link", "input", "img"):
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        while self.stack:
            t, a = self.stack.pop()
            if t == tag:
                break
        if tag == "tr" and self.row is not None:
            r, a = self.row, self.row["attrs"]
            if self.inside("id", "fleet") and "data-id" in a:
                self.out.append("machine %s %s %s" % (a["data-id"], a.get("data-status", ""), r["badge"]))
            if self.inside("id", "history") and any(t == "tbody" for t, _ in self.stack):
                self.out.append("history " + r["badge"])
            if self.inside("id", "events"):
                if "broken" in a.get("class", "").split():
                    self.out.append("broken %s %s" % (a.get("data-index", "?"), r["why"]))
                if sys.argv[2] in r["text"]:
                    self.out.append("hostile-text %s" % a.get("data-index", "?"))
            self.row = None

    def handle_data(self, data):
        if self.inside("id", "notice"):
            self.out.append("notice " + data)
        tags = [t for t, _ in self.stack]
        classes = [c for _, a in self.stack for c in a.get("class", "").split()]
        if "count" in classes:
            status = [a["data-status"] for t, a in self.stack if t == "li" and "data-status" in a]
            self.out.append("count %s %s" % (status[-1] if status else "?", data))
        if self.inside("id", "reasons") and tags and tags[-1] == "code":
            self.out.append("reason " + data)
        if self.inside("id", "firmware-set"):
            self.out.append("firmware-set " + data)
        if self.row is None:
            return
        self.row["text"] += data
        if "why" in classes:
            self.row["why"] += data
        if "badge" in classes:
            self.row["badge"] += data

p = Facts()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print("\n".join(p.out))
PY
}

# The fleet, the token in the fragment.
browse "$URL/#token=$token" fleet shot
dom_facts fleet.html >fleet.facts
for id in $GOOD $EVIL; do
	want=$(jq -r --arg id "$id" '.machines[] | select(.id == $id) | .status' machines.json)
	check "the fleet view lists $id as $want, its badge saying so (API: $want)" \
		grep -qx "machine $id $want $want" fleet.facts
done
check "the fleet view lists exactly the API's machines ($(jq -c '[.machines[].id]' machines.json))" \
	test "$(sed -n 's/^machine \([^ ]*\) .*/\1/p' fleet.facts | paste -sd,)" = \
	"$(jq -r '[.machines[].id] | join(",")' machines.json)"
check "the fleet view counts the machines per status as the API's list does" \
	test "$(sed -n 's/^count //p' fleet.facts | sort | paste -sd,)" = \
	"$(jq -r '[.machines | group_by(.status)[] | "\(.[0].status) \(length)"] | sort | join(",")' machines.json)"
check "the fleet view did not ask for the token" test "$(grep -c '^form-shown' fleet.facts)" = 0

# The untrusted machine: the broken events highlighted, the hostile string text only.
browse "$URL/#/machines/$EVIL&token=$token" machine shot
dom_facts machine.html >machine.facts
check "the machine view highlights exactly the events the verdict names ($named)" \
	test "$(sed -n 's/^broken \([^ ]*\).*/\1/p' machine.facts | paste -sd' ')" = "$named"
why=$(jq -r --argjson i "$appended" '.events[] | select(.index == $i) | .why' evil-events.json)
check "the highlighted event shows the API's why beside it ($why)" \
	grep -qF "broken $appended ⚠ broken: $why" machine.facts
check "the API marks the same events broken as the verdict names" \
	test "$(jq -r '[.events[] | select(.broken) | .index] | join(" ")' evil-events.json)" = "$named"
check "the hostile string is shown as text in the broken event's row" grep -qx "hostile-text $appended" machine.facts
for f in fleet machine; do
	check "the $f view has no element from the hostile string (elements: $(grep '^element' $f.facts | cut -d' ' -f2 | paste -sd,))" \
		test "$(grep '^element' $f.facts | paste -sd,)" = "element script"
	check "the $f view ran no script from the hostile string" test "$(grep -c '^script-ran' $f.facts)" = 0
done
check "the machine view lists the verdict's reasons ($(jq -c '[.verdict.reasons[].name]' evil.json))" \
	test "$(sed -n 's/^reason //p' machine.facts | paste -sd,)" = "$(jq -r '[.verdict.reasons[].name] | join(",")' evil.json)"
check "the machine view's history is the API's ($(jq -c '[.history[].trusted]' evil.json))" \
	test "$(sed -n 's/^history //p' machine.facts | paste -sd,)" = \
	"$(jq -r '[.history[] | if .trusted then "trusted" else "untrusted" end] | join(",")' evil.json)"
check "the machine view names the firmware set the verdict matched ($(jq -c .verdict.policy.firmware_set evil.json), this boot's)" \
	test "$(sed -n 's/^firmware-set //p' machine.facts):$(jq -r .verdict.policy.firmware_set evil.json)" = firmware-1:firmware-1
check "the machine view names the machine" grep -q "<span class=\"mono\" id=\"machine-id\">$EVIL</span>" machine.html

# A wrong token: the page says what the API said and asks for another.
refused=$(curl -sS -H "Authorization: Bearer not-$token" "$URL/v1/machines" | jq -r .error)
browse "$URL/#token=not-$token" refused
dom_facts refused.html >refused.facts
check "a refused token brings the token form back" grep -qx form-shown refused.facts
check "and the page shows the API's 401 error as text ($refused)" grep -qF "401: $refused" refused.facts

for name in fleet machine; do
	png=$LOGS/fleet-web-$name.png
	check "the $name screenshot is a non-empty PNG ($png)" \
		test "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a -a \
		"$(stat -c %s "$png" 2>/dev/null || echo 0)" -gt 10000
done

# The service stops cleanly on SIGTERM, and (in the ASan build) without a sanitizer report.
kill -TERM "$VD_PID"
rc=0
wait "$VD_PID" || rc=$?
VD_PID=
check "mboot-verifierd stops on SIGTERM with exit 0 (exit $rc)" test "$rc" = 0
check "mboot-verifierd's log has no sanitizer report" \
	test "$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' verifierd.log)" = 0

if [ "$failures" -gt 0 ]; then
	echo "--- fleet.facts"; cat fleet.facts
	echo "--- machine.facts"; cat machine.facts
	echo "--- refused.facts"; cat refused.facts
	echo "--- verifierd.log"; tail -n 20 verifierd.log
fi
echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
