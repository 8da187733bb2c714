#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `mboot log show --json` of a long log, which two threads write in blocks of events
# (src/tool/log-show-json.c): every event once and in order, each with its own bytes. Python
# reads the JSON and the log file itself: "index" counts up from 0, "offset" + "record_size"
# reaches the next event's offset and the file's end, "data" is the hex of the record's last
# bytes, and the summary counts every event. Pretty, compact, and with --pcr.
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
echo "$fails failures"
[ "$fails" = 0 ]
