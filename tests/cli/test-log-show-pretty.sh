#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `mboot log show --json` (pretty) byte for byte against Python's own pretty print
# (json.dumps(indent=2), tests/cli/json-pretty.py) of `--json --compact`, on a generated log of many events (bench/gen-log) and on every corpus log.
# The compact bytes are held by the goldens (test-log-show-golden.sh); this holds the layout.
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}" "${MB_BUILD_ROOT:?}"
PRETTY=$(dirname "$0")/json-pretty.py
GEN=$MB_BUILD_ROOT/bench/gen-log
C=$MB_TESTDATA/corpus
fails=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

# same LOG LABEL: pretty output == Python's re-indentation of the compact output.
same() {
	"$MBOOT" log show --json "$1" >"$tmp/pretty" 2>/dev/null || return 1
	"$MBOOT" log show --json --compact "$1" >"$tmp/compact" || { bad "$2: --compact exit $?"; return 0; }
	if ! "$PRETTY" <"$tmp/compact" >"$tmp/want"; then
		bad "$2: Python does not read the compact output"
	elif ! cmp -s "$tmp/want" "$tmp/pretty"; then
		bad "$2: --json differs from Python's pretty print of --compact"
		diff "$tmp/want" "$tmp/pretty" | head -8 | sed 's/^/  | /'
	else
		n=$((n + 1))
		echo "ok   $2 ($(wc -l <"$tmp/pretty") lines)"
	fi
}

# 20,000 events: every event shape gen-log makes, many times over, through many buffer flushes.
"$GEN" 20000 "$tmp/gen.log" || { echo "FAIL gen-log"; exit 1; }
same "$tmp/gen.log" "generated log of 20000 events" || bad "generated log: log show --json failed"
while IFS= read -r -d '' f; do
	same "$f" "${f#"$C"/}" # logs mboot refuses are the goldens' business
done < <(find "$C" -type f ! -name '*.md' ! -name '*.json' -print0 | sort -z)
[ "$n" -ge 50 ] || bad "only $n logs compared"
echo "$n logs compared, $fails failures"
[ "$fails" = 0 ]
