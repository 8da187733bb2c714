#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/build DIR [MESON OPTIONS]: a new DIR is set up with the options; an existing one is
# reconfigured with them (they were silently ignored), and left alone without options.
# meson and ninja are stand-ins on PATH that record their arguments: what is checked is what
# the script asks of them, not a second build of the tree.
set -u -o pipefail
S=${MB_SOURCE_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

mkdir "$T/bin"
for tool in meson ninja; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$tool" "$T" >"$T/bin/$tool"
	chmod +x "$T/bin/$tool"
done
run() { : >"$T/calls"; PATH=$T/bin:$PATH "$S/scripts/build" "$@" || bad "scripts/build $* failed"; }

run "$T/new" -Dwerror=true
if [ "$(cat "$T/calls")" = "meson setup $T/new -Dwerror=true
ninja -C $T/new" ]; then ok "a new folder: meson setup with the options, then ninja"
else bad "a new folder: $(cat "$T/calls")"; fi

mkdir "$T/old" && touch "$T/old/build.ninja"
run "$T/old" -Db_sanitize=address -Dbuildtype=debug
if [ "$(cat "$T/calls")" = "meson setup --reconfigure $T/old -Db_sanitize=address -Dbuildtype=debug
ninja -C $T/old" ]; then ok "an existing folder: reconfigured with the options, then ninja"
else bad "an existing folder with options: $(cat "$T/calls")"; fi

run "$T/old"
if [ "$(cat "$T/calls")" = "ninja -C $T/old" ]; then ok "an existing folder, no options: only ninja"
else bad "an existing folder without options: $(cat "$T/calls")"; fi

[ "$fails" = 0 ] || { echo "build script: $fails failed"; exit 1; }
echo "build script: all passed"
