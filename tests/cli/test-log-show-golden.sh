#!/bin/bash
# `mboot log show` (text and --json) of every corpus log, byte for byte against golden files.
# The goldens under tests/data/golden/log-show/ were first written by the implementation that built a
# json-c tree per event, before decoding moved to typed results: the rewrite must not change one
# byte. Regenerated twice since, deliberately: the footer (events, digest mismatches, replayed
# PCRs; "summary" in JSON) and the labels of alternative-form matches and uncheckable text
# (checked: nothing else changed); then systemd-boot's UTF-16 command lines, checked as logged
# (match, no label; only those events changed). json-c's replacement by jansson changed no byte of
# them (their compact JSON has no control character, which is now written \u00XX in upper case).
# MB_REGENERATE=1 rewrites them (only for a deliberate change of the output).
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}"
C=$MB_TESTDATA/corpus
G=$MB_TESTDATA/golden/log-show
fails=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${MB_REGENERATE:-}" = 1 ]; then
	rm -rf "$G"
	while IFS= read -r -d '' f; do
		rel=${f#"$C"/}
		"$MBOOT" log show --json --compact "$f" >"$tmp/json" 2>/dev/null || continue
		"$MBOOT" log show "$f" >"$tmp/text" 2>/dev/null || continue
		mkdir -p "$(dirname "$G/$rel")"
		gzip -n -9 <"$tmp/json" >"$G/$rel.json.gz"
		gzip -n -9 <"$tmp/text" >"$G/$rel.txt.gz"
	done < <(find "$C" -type f ! -name '*.md' -print0 | sort -z)
fi

while IFS= read -r -d '' g; do
	rel=${g#"$G"/}
	rel=${rel%.json.gz}
	n=$((n + 1))
	for mode in json txt; do
		if [ "$mode" = json ]; then
			"$MBOOT" log show --json --compact "$C/$rel" >"$tmp/out" 2>"$tmp/err"
		else
			"$MBOOT" log show "$C/$rel" >"$tmp/out" 2>"$tmp/err"
		fi
		rc=$?
		if [ $rc != 0 ]; then
			echo "FAIL $rel ($mode): exit $rc"; sed 's/^/  | /' "$tmp/err" | head -3
			fails=$((fails + 1))
		elif ! gzip -dc "$G/$rel.$mode.gz" | cmp -s - "$tmp/out"; then
			echo "FAIL $rel ($mode): differs from the golden output"
			gzip -dc "$G/$rel.$mode.gz" | diff - "$tmp/out" | head -6 | sed 's/^/  | /'
			fails=$((fails + 1))
		else
			echo "ok   $rel ($mode)"
		fi
	done
done < <(find "$G" -name '*.json.gz' -print0 | sort -z)

# The corpus holds more than 50 logs mboot reads: fewer goldens means they went missing.
if [ "$n" -lt 50 ]; then
	echo "FAIL only $n golden logs under $G"
	fails=$((fails + 1))
fi
echo "$n logs compared, $fails failures"
[ "$fails" = 0 ]
