#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The documents README.md, HACKING.md and docs/*.md cite are in this repository: every link
# target ](path) and every other name ending in .md resolves, relative to the citing document
# or to the root of the tree. (docs/reference/ holds reference texts that cite their own
# sources; they are not checked.)
set -u -o pipefail
cd "${MB_SOURCE_ROOT:?}" || exit 1
fail=0
n=0
for doc in README.md HACKING.md docs/*.md; do
	dir=$(dirname "$doc")
	# link targets (without #anchor), then bare names ending in .md outside links
	targets=$( {
		grep -oE '\]\([^)#]+' "$doc" | sed 's/^](//' | grep -vE '^[a-z]+:'
		sed -E 's/\[[^]]*\]\([^)]*\)//g' "$doc" | grep -oE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b'
	} | sort -u)
	for t in $targets; do
		n=$((n + 1))
		[ -e "$dir/$t" ] || [ -e "$t" ] || { echo "FAIL $doc cites $t: no such file in the tree"; fail=1; }
	done
done
[ "$fail" = 0 ] || exit 1
echo "ok: the $n documents cited by README.md, HACKING.md and docs/*.md are in the tree"
