#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The libraries mboot dlopen()s, as packagers see them: every dl_lib table of the sources
# (src/shared/dl-lib.h: DL_LIB("SONAME", ...)) has its soname in an ELF .note.dlopen note of the
# binary that holds the table (the freedesktop "ELF dlopen metadata" format: owner "FDO", type
# 0x407c0c0a, a JSON array of {feature, description, priority, soname}), and no note names
# a soname the code does not dlopen(). The notes are read with readelf (hex dump of the
# section), parsed here by python, not by mboot. Also: dlopen() is called only by dl-lib.c, and
# libmboot.so does not reference abort() (the library never exits; sanitizer builds add their own
# references, so that check runs only in a plain build).
set -u -o pipefail

SRC=${MB_SOURCE_ROOT:?}
B=${MB_BUILD_ROOT:?}
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# notes FILE: the note's JSON entries, one "soname<TAB>feature<TAB>priority" a line
notes() {
	readelf -W -x .note.dlopen "$1" 2>/dev/null | python3 -c '
import json, re, struct, sys
data = bytearray()
for line in sys.stdin:
    m = re.match(r"\s*0x[0-9a-f]+\s+((?:[0-9a-f]{2,8}\s)+)", line)
    if m:
        data += bytes.fromhex("".join(m.group(1).split()))
off = 0
while off + 12 <= len(data):
    namesz, descsz, ntype = struct.unpack_from("<III", data, off)
    off += 12
    name = bytes(data[off:off + namesz]).rstrip(b"\0").decode()
    off += (namesz + 3) & ~3
    desc = bytes(data[off:off + descsz]).rstrip(b"\0").decode()
    off += (descsz + 3) & ~3
    if name != "FDO" or ntype != 0x407c0c0a:
        sys.exit("a note of owner %r type %#x" % (name, ntype))
    for e in json.loads(desc):
        if set(e) != {"feature", "description", "priority", "soname"} or \
           e["priority"] not in ("required", "recommended", "suggested") or not e["soname"]:
            sys.exit("bad entry %r" % e)
        for so in e["soname"]:
            print("%s\t%s\t%s" % (so, e["feature"], e["priority"]))
'
}

# tables DIR...: the sonames the sources under DIR dlopen() (their DL_LIB tables); libcurl's
# table (src/shared/curl-dl.c) is the tool's and the verifier's, not libmboot's: named as a file
tables() {
	grep -rhoE --exclude=curl-dl.c 'DL_LIB\("[^"]+"' "$@" | sed 's/DL_LIB("//; s/"$//' | sort -u
}

check() { # check BINARY SOURCE_DIR...
	local bin=$1 got want
	shift
	if ! got=$(notes "$bin"); then
		bad "$(basename "$bin"): .note.dlopen does not parse"
		return
	fi
	got=$(cut -f1 <<<"$got" | sort -u)
	if [ "${*: -1}" = CURL ]; then
		want=$( (tables "${@:1:$#-1}"; curl_table) | sort -u)
	else
		want=$(tables "$@")
	fi
	if [ -z "$want" ]; then
		bad "no DL_LIB table found under $* (the check sees nothing)"
	elif [ "$got" = "$want" ]; then
		ok "$(basename "$bin"): .note.dlopen names exactly what its code dlopen()s: $(tr '\n' ' ' <<<"$got")"
	else
		bad "$(basename "$bin"): notes name '$(tr '\n' ' ' <<<"$got")', the code dlopen()s '$(tr '\n' ' ' <<<"$want")'"
	fi
}
curl_table() { grep -hoE 'DL_LIB\("[^"]+"' "$SRC/src/shared/curl-dl.c" | sed 's/DL_LIB("//; s/"$//'; }
check "$B/libmboot.so" "$SRC/src/lib" "$SRC/src/shared"
check "$B/mboot" "$SRC/src/tool" CURL
if [ -x "$B/src/verifierd/mboot-verifierd" ]; then
	check "$B/src/verifierd/mboot-verifierd" "$SRC/src/verifierd" CURL
else
	echo "skip: mboot-verifierd not built"
fi

# One loader: no dlopen() outside src/shared/dl-lib.c (the token plugin is loaded by
# libcryptsetup, it loads nothing).
calls=$(cd "$SRC" && grep -rnE --include='*.[ch]' '(^|[^_[:alnum:]])dlopen[[:space:]]*\(' src include | grep -v '^src/shared/dl-lib\.c:' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -z "$calls" ]; then
	ok "dlopen() is called only in src/shared/dl-lib.c"
else
	bad "dlopen() outside src/shared/dl-lib.c: $calls"
fi

if [ -n "${MB_SANITIZE:-}" ] && [ "$MB_SANITIZE" != none ]; then
	echo "skip: abort() check in a sanitizer build ($MB_SANITIZE adds its own references)"
elif ! undef=$(nm -D --undefined-only "$B/libmboot.so") || [ -z "$undef" ]; then
	bad "nm -D --undefined-only $B/libmboot.so failed or printed nothing (the check sees nothing)"
elif grep -qw abort <<<"$undef"; then
	bad "libmboot.so references abort(): the library must return errors, never exit"
else
	ok "libmboot.so references no abort()"
fi

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
