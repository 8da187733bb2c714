#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Functions the code in src/ and include/ must not call (the library, the tool and the shared
# helpers: the code that reads what users and machines give it):
#   atoi atol atoll atof        no error report: "12abc", "" and overflow all give a number
#   sprintf vsprintf            unbounded writes: snprintf, asprintf
#   strcpy strcat gets          unbounded writes: memcpy with a known length, snprintf
#   sscanf strtok               unchecked partial parses; strtok is not reentrant
#   strtol strtoul strtoll strtoull strtoimax strtoumax ... only when checked: the call passes
#     an end pointer (not NULL), and the call's line or one of the 3 lines after it tests
#     errno or that end pointer (*end, end ==, end !=). A heuristic by grep: it cannot prove
#     the test is right, only that there is one to read in review.
# tests/, bench/ and fuzz/ are not checked: they parse only the project's own fixtures and
# arguments, and a wrong parse there fails a test instead of passing bad input on.
# Comments are left out (/* ... */ within a line, // to its end, lines starting with /* or *).
set -u -o pipefail

SRC=${MB_SOURCE_ROOT:?}
cd "$SRC" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Known occurrences left in files other work owns, each with why; any further one fails.
# FILE FUNCTION COUNT
allowed="
"

files=$(find src include -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "FAIL: no sources under $SRC/src"; exit 1; }

banned='atoi|atol|atoll|atof|sprintf|vsprintf|strcpy|strcat|gets|sscanf|strtok'
# One awk over every file (a process or three a file made this test take a minute on a busy
# machine). Each line is read without its comments: /* ... */ on the line, // to the end, a
# line starting with /* or *. Prints "B FILE:LINE:CODE" for a banned call and "U FILE:LINE:
# WHY: CODE" for an unchecked strto*: an end pointer, then errno or that pointer tested on the
# call's line or the next 3.
# shellcheck disable=SC2086 # $files: the paths, one word each (no spaces under src/, include/)
report=$(awk -v banned="$banned" '
function check_strto(   c, n, s, end, text, i) {
	for (c = 1; c <= nc; c++) {
		n = calls[c]
		s = line[n]
		end = ""
		if (match(s, /strto[a-z]+[[:space:]]*\([^,]*,[[:space:]]*&[A-Za-z_][A-Za-z0-9_]*/)) {
			end = substr(s, RSTART, RLENGTH)
			sub(/.*&/, "", end)
		}
		if (end == "") {
			print "U " file ":" n ": no end pointer: " s
			continue
		}
		text = ""
		for (i = n; i <= n + 3; i++)
			text = text "\n" line[i]
		if (text ~ /errno/ || text ~ ("\\*" end "([^A-Za-z0-9_]|$)") ||
		    text ~ ("(^|[^A-Za-z0-9_*&])" end "[[:space:]]*[!=]=") || text ~ ("[!=]=[[:space:]]*" end "([^A-Za-z0-9_]|$)"))
			continue
		print "U " file ":" n ": neither errno nor " end " tested after: " s
	}
}
FNR == 1 {
	if (NR > 1)
		check_strto()
	file = FILENAME
	nc = 0
	delete line
}
{
	s = $0
	gsub(/\/\*.*\*\//, "", s)
	sub(/\/\/.*/, "", s)
	sub(/^[[:space:]]*(\/\*|\*).*/, "", s)
	line[FNR] = s
	if (s ~ ("(^|[^A-Za-z0-9_])(" banned ")[[:space:]]*\\("))
		print "B " file ":" FNR ":" s
	if (s ~ /(^|[^A-Za-z0-9_])strto[a-z]+[[:space:]]*\(/)
		calls[++nc] = FNR
}
END { if (NR > 0) check_strto() }' $files)
hits=$(printf '%s\n' "$report" | sed -n 's/^B //p')
unchecked=$(printf '%s\n' "$report" | sed -n 's/^U //p')

while IFS= read -r hit; do
	[ -n "$hit" ] || continue
	file=${hit%%:*}
	fn=$(printf '%s\n' "${hit#*:*:}" | grep -o -E "(^|[^A-Za-z0-9_])($banned)[[:space:]]*\(" | head -n 1 |
		sed -E 's/^[^A-Za-z0-9_]//; s/[[:space:]]*\($//')
	allow=$(printf '%s\n' "$allowed" | awk -v f="$file" -v fn="$fn" '$1 == f && $2 == fn { print $3 }')
	if [ -n "$allow" ]; then
		n=$(printf '%s\n' "$hits" | grep -c -E "^$file:[0-9]+:.*(^|[^A-Za-z0-9_])${fn}[[:space:]]*\(")
		[ "$n" -le "$allow" ] && continue
	fi
	bad "banned $fn(): $hit"
done <<<"$hits"
[ -z "$unchecked" ] || while IFS= read -r u; do bad "unchecked strto*: $u"; done <<<"$unchecked"

[ "$fail" -eq 0 ] || exit 1
echo "ok: src/ and include/ ($(echo "$files" | wc -l) files) call none of atoi atol atoll atof sprintf vsprintf strcpy strcat gets sscanf strtok, and check every strto* call"
