#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every shell script of the tree passes shellcheck (warnings and errors; the style notes are
# left to review): files named *.sh or *.bash, files whose first line runs sh, bash or dash
# (hooks, scripts/, .ci/run), and the bash completion. The files are those git tracks, else
# those under the source root outside build folders. Skipped (exit 77) when shellcheck is not installed.
set -u -o pipefail
cd "${MB_SOURCE_ROOT:?}" || exit 1
command -v shellcheck >/dev/null || { echo "SKIP: shellcheck is not installed (apt-get install shellcheck)"; exit 77; }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files)
else
	files=$(find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
fi
scripts=()
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case "$f" in
	*.sh | *.bash | completion/mboot) scripts+=("$f") ;;
	*) head -n 1 "$f" 2>/dev/null | grep -qE '^#!.*(/|env )(ba|da)?sh([[:space:]]|$)' && scripts+=("$f") ;;
	esac
done <<<"$files"
[ "${#scripts[@]}" -ge 40 ] || { echo "FAIL: only ${#scripts[@]} shell scripts found under $PWD"; exit 1; }

# Each file once, in parallel: xargs -P runs one shellcheck per core on batches of 8 files (one
# process for all of them took two and a half minutes: shellcheck -x follows every sourced
# file, and a single process uses one core).
out=${TMPDIR:-/tmp}/shellcheck.$$
if ! printf '%s\0' "${scripts[@]}" |
	xargs -0 -n 8 -P "$(nproc 2>/dev/null || echo 2)" shellcheck -x -S warning -f gcc >"$out" 2>&1; then
	echo "FAIL: shellcheck found:"
	cat "$out"
	rm -f "$out"
	exit 1
fi
rm -f "$out"
echo "ok: shellcheck -S warning passes on ${#scripts[@]} shell scripts"
