#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The conventions of a command-line tool: `mboot --version`, `mboot version` and `mboot -V`
# print the same line (the version meson gives the project); `mboot help COMMAND [SUB]` prints
# exactly what `mboot COMMAND [SUB] --help` prints, for every command `mboot --help` lists.
set -u -o pipefail
M=${MBOOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
same_help() { # same_help COMMAND [SUB]: `mboot help COMMAND [SUB]` = `mboot COMMAND [SUB] --help`
	"$M" "$@" --help >"$T/want" 2>&1
	if "$M" help "$@" >"$T/got" 2>&1 && cmp -s "$T/want" "$T/got"; then
		ok "mboot help $* = mboot $* --help"
	else
		bad "mboot help $* differs from mboot $* --help: $(head -2 "$T/got")"
	fi
}

want="mboot $(meson introspect --projectinfo "${MB_BUILD_ROOT:?}" | jq -r .version)"
for v in --version version -V; do
	if out=$("$M" $v 2>&1) && [ "$out" = "$want" ]; then ok "mboot $v: $out"; else bad "mboot $v: '$out', want '$want'"; fi
done

commands=$("$M" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(echo "$commands" | wc -w)" -ge 10 ] || bad "mboot --help lists only: $commands"
for c in $commands; do
	[ "$c" = version ] || same_help "$c"
done
same_help log show

"$M" help frobnicate >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "unknown command 'frobnicate'" "$T/err"; then ok "mboot help frobnicate: exit 2, named"
else bad "mboot help frobnicate: exit $rc, $(cat "$T/err")"; fi
if grep -q "^Usage: mboot COMMAND" <<<"$("$M" help)"; then ok "mboot help alone: the overview"; else bad "mboot help alone"; fi

# No colour, on a terminal too (so NO_COLOR holds trivially): util-linux's script(1) gives mboot
# a pty with a colour TERM; a log with a mismatch and a failed verify are where tools colour.
if command -v script >/dev/null; then
	L=${MB_SOURCE_ROOT:?}/tests/data/corpus/go-attestation/ebs_event_missing_eventlog
	for cmd in "--help" "log show $L" "log replay $L" "verify --log $L --pcrs $L.pcrs.json" "seal --bogus"; do
		TERM=xterm-256color script -qec "$M $cmd" /dev/null >"$T/tty" 2>&1 </dev/null
		if grep -q $'\x1b' "$T/tty"; then bad "mboot $cmd on a terminal writes escape sequences"
		else ok "mboot ${cmd%% /*} on a terminal: no escape sequence"; fi
	done
fi

[ "$fails" = 0 ] || { echo "help: $fails failed"; exit 1; }
echo "help: all passed"
