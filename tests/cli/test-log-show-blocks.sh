#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `mboot log show --json` of a long log, which two threads write in blocks of events
# (src/lib/replay/log-json.c, mb_event_log_write_json): every event once and in order, each with its own bytes. Python
# reads the JSON and the log file itself: "index" counts up from 0, "offset" + "record_size"
# reaches the next event's offset and the file's end, "data" is the hex of the record's last
# bytes, and the summary counts every event. Pretty, compact, and with --pcr. Then a copy of the
# log with the SHA-256 digest of one EV_EFI_ACTION event in every block of 256 broken: each
# event's "digest_check" and the summary's mismatches are what Python's hashlib says of the
# records, whichever thread wrote them.
set -u -o pipefail
: "${MBOOT:?}" "${MB_BUILD_ROOT:?}"
GEN=$MB_BUILD_ROOT/bench/gen-log
N=40000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

"$GEN" $N "$tmp/gen.log" || { echo "FAIL gen-log"; exit 1; }
for args in "--json" "--json --compact" "--json --pcr 1,4,8"; do
	# shellcheck disable=SC2086 # args is a list of options
	if ! "$MBOOT" log show $args "$tmp/gen.log" >"$tmp/out.json"; then
		echo "FAIL log show $args: exit $?"
		fails=$((fails + 1))
		continue
	fi
	if python3 - "$tmp/gen.log" "$tmp/out.json" "$args" "$N" <<'PY'; then
import json, sys
log = open(sys.argv[1], "rb").read()
doc = json.load(open(sys.argv[2]))
pcrs = None
if "--pcr" in sys.argv[3]:
    pcrs = {1, 4, 8}
events = doc["events"]
shown = 0
for ev in events:
    start, size = ev["offset"], ev["record_size"]
    data = bytes.fromhex(ev["data"])
    assert log[start + size - len(data):start + size] == data, ev["index"]
    if pcrs is not None:
        assert ev["pcr"] in pcrs, ev["index"]
# Without a selection: every event, in order, back to back to the end of the file.
if pcrs is None:
    assert [ev["index"] for ev in events] == list(range(len(events)))
    for a, b in zip(events, events[1:]):
        assert a["offset"] + a["record_size"] == b["offset"], b["index"]
    assert events[-1]["offset"] + events[-1]["record_size"] == len(log)
else:
    idx = [ev["index"] for ev in events]
    assert idx == sorted(set(idx)) and len(idx) > 0
assert doc["summary"]["events"] == int(sys.argv[4])
assert doc["summary"]["events_shown"] == len(events)
print("ok   log show %s: %d events" % (sys.argv[3], len(events)))
PY
		:
	else
		echo "FAIL log show $args: events missing, repeated, out of order or not their bytes"
		fails=$((fails + 1))
	fi
done
# Break the SHA-256 digest of the first EV_EFI_ACTION (digest = H(data)) of every block of 256.
if python3 - "$tmp/gen.log" "$tmp/broken.log" <<'PY'; then
import struct, sys
log = bytearray(open(sys.argv[1], "rb").read())
# Event 0: the TPM 1.2-format Spec ID event (PCR, type, SHA-1 digest, size, data).
off = 32 + struct.unpack_from("<I", log, 28)[0]
n, broken_block = 1, -1
while off < len(log):
    pcr, etype, count = struct.unpack_from("<III", log, off)
    p = off + 12
    for _ in range(count):
        alg = struct.unpack_from("<H", log, p)[0]
        size = {4: 20, 11: 32}[alg]
        if alg == 11 and etype == 0x80000007 and n // 256 != broken_block:
            log[p + 2] ^= 0x01
            broken_block = n // 256
        p += 2 + size
    off = p + 4 + struct.unpack_from("<I", log, p)[0]
    n += 1
open(sys.argv[2], "wb").write(log)
PY
	:
else
	echo "FAIL could not write the broken log"
	fails=$((fails + 1))
fi
for args in "--json" "--json --compact"; do
	# shellcheck disable=SC2086 # args is a list of options
	"$MBOOT" log show $args "$tmp/broken.log" >"$tmp/out.json"
	rc=$?
	if python3 - "$tmp/broken.log" "$tmp/out.json" "$args" <<'PY'; then
import hashlib, json, struct, sys
log = open(sys.argv[1], "rb").read()
doc = json.load(open(sys.argv[2]))
mismatched = []
for ev in doc["events"]:
    if ev["type_value"] != 0x80000007:
        continue
    data = bytes.fromhex(ev["data"])
    good = (ev["digests"]["sha1"] == hashlib.sha1(data).hexdigest() and
            ev["digests"]["sha256"] == hashlib.sha256(data).hexdigest())
    assert ev["digest_check"] == ("match" if good else "mismatch"), ev["index"]
    if not good:
        mismatched.append(ev["index"])
s = doc["summary"]
assert len(mismatched) > 100, len(mismatched)
assert s["digest_mismatches"] == len(mismatched), (s["digest_mismatches"], len(mismatched))
assert s["mismatched_events"] == mismatched[:32], s["mismatched_events"]
print("ok   log show %s of a log with %d broken digests: each event's check and the summary" % (sys.argv[3], len(mismatched)))
PY
		:
	else
		echo "FAIL log show $args (exit $rc): digest checks or summary differ from hashlib's"
		fails=$((fails + 1))
	fi
done

# The log is mapped: cut short while mboot waits on a full pipe, the pages it has yet to write
# are gone (SIGBUS). A clear message and exit 2, no core, no half-silent success.
cp "$tmp/gen.log" "$tmp/cut.log"
set +o pipefail
"$MBOOT" log show --json "$tmp/cut.log" 2>"$tmp/cut.err" | { sleep 2; truncate -s 1000 "$tmp/cut.log"; cat >/dev/null; }
rc=${PIPESTATUS[0]}
set -o pipefail
if [ "$rc" = 2 ] && grep -qx "mboot log show: the log was truncated while it was read" "$tmp/cut.err"; then
	echo "ok   a log truncated while it is written out: exit 2 and says so"
else
	echo "FAIL a log truncated while it is written out: exit $rc, $(cat "$tmp/cut.err")"
	fails=$((fails + 1))
fi
echo "$fails failures"
[ "$fails" = 0 ]
