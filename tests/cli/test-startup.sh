#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost: tpm2-tss, PCRE2, libqrencode, zstd, libcurl and libcryptsetup are dlopen()ed
# (src/shared/dl-lib.h) by the commands that use them, never loaded by 'mboot --version', 'hash'
# or 'log replay' (libcrypto, jansson and zlib are linked: almost every verb needs them). The dynamic
# loader's own account (LD_DEBUG=libs: one "calling init" per object it loads, dlopen()ed
# ones too) says what a process loaded. And when a library cannot be loaded, the command
# says which soname and why (the tool adds which Debian package ships it), with its usual exit
# code.
set -u -o pipefail

M=${MBOOT:?}
DATA=${MB_TESTDATA:?}
CC=${MB_CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

LOG=$DATA/corpus/tpm2-tss/binary_measurements_hcrtm.bin
LAZY='libtss2|libpcre2|libqrencode|libzstd|libcurl|libcryptsetup'

# loaded CMD...: the objects the process loaded, one basename a line
loaded() {
	LD_DEBUG=libs "$@" 2>&1 >/dev/null | sed -n 's|.*calling init: .*/\([^/ ]*\)$|\1|p' | sort -u
}

head -c 4096 /dev/urandom >"$T/small"
for cmd in "--version" "hash --alg sha256 $T/small" "hash --authenticode --alg sha256 /nonexistent.efi" \
	"log replay $LOG" "log show $LOG"; do
	# shellcheck disable=SC2086 # cmd is words
	libs=$(loaded "$M" $cmd | tr '\n' ' ')
	if [[ $libs != *libmboot* ]]; then
		bad "mboot $cmd: LD_DEBUG=libs shows no libmboot: '$libs' (the check sees nothing)"
	elif grep -Eq "$LAZY" <<<"$libs"; then
		bad "mboot $cmd loads $(grep -Eo "($LAZY)[^ ]*" <<<"$libs" | tr '\n' ' ')"
	else
		ok "mboot $cmd loads none of tpm2-tss, PCRE2, libqrencode, zstd, libcurl, libcryptsetup ($libs)"
	fi
done

# The commands that need them load them (and so the check above can see a dlopen()ed library).
loads() { # loads WHAT LIB CMD...: the process of CMD loaded LIB
	local what=$1 lib=$2 libs
	shift 2
	libs=$(loaded "$@" | tr '\n' ' ')
	if [[ $libs == *"$lib"* ]]; then ok "$what loads $lib"; else bad "$what loaded only: $libs"; fi
}
"$M" policy generate --from-log "$LOG" -o "$T/policy.json" >/dev/null || bad "policy generate failed"
loads "policy lint" libpcre2-8.so.0 "$M" policy lint "$T/policy.json"
loads "pcrs" libtss2-esys.so.0 "$M" pcrs --tcti "swtpm:path=$T/no-tpm"
loads "pcrs" libtss2-tctildr.so.0 "$M" pcrs --tcti "swtpm:path=$T/no-tpm"
mkdir -p "$T/root/etc"
echo x >"$T/root/etc/f"
loads "initramfs pack --compress zstd" libzstd.so.1 "$M" initramfs pack "$T/root" -o "$T/i.zst" --compress zstd
(umask 077 && echo token >"$T/token")
FLEET=(fleet list --server "http://127.0.0.1:1" --insecure --token-file "$T/token")
loads "fleet list" libcurl.so.4 "$M" "${FLEET[@]}"
truncate -s 1M "$T/not-luks"
loads "luks list" libcryptsetup.so.12 "$M" luks list "$T/not-luks"

# A library that cannot be loaded: a directory on LD_LIBRARY_PATH (searched first) holds a file
# by its soname that is not a library at all, or a library that lacks what mboot calls.
mkdir -p "$T/broken"
expect() { # expect WHAT CODE NEEDLE CMD...: exit CODE and NEEDLE on stderr
	local what=$1 code=$2 needle=$3 rc
	shift 3
	LD_LIBRARY_PATH=$T/broken "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq "$code" ] && { [ -z "$needle" ] || grep -qF -- "$needle" "$T/err"; }; then
		ok "$what: exit $rc, $(head -1 "$T/err")"
	else
		bad "$what: exit $rc (want $code), stderr: $(cat "$T/err")"
	fi
}
echo "not a library" >"$T/broken/libtss2-esys.so.0"
expect "tpm2-tss broken" 3 "tpm2-tss is needed and cannot be loaded (libtss2-esys.so.0): $T/broken/libtss2-esys.so.0:" \
	"$M" pcrs --tcti "swtpm:path=$T/no-tpm"
expect "tpm2-tss broken (the tool names its package)" 3 "mboot: hint: on Debian, apt-get install libtss2-esys-3.0.2-0" \
	"$M" pcrs --tcti "swtpm:path=$T/no-tpm"
echo 'int mb_not_pcre2;' >"$T/empty.c"
if $CC -shared -fPIC -Wl,-soname,libpcre2-8.so.0 -o "$T/broken/libpcre2-8.so.0" "$T/empty.c" 2>"$T/cc.err"; then
	expect "PCRE2 without its functions" 2 "PCRE2 is needed and cannot be loaded (libpcre2-8.so.0): it lacks pcre2_" \
		"$M" policy lint "$T/policy.json"
else
	bad "cannot build a library: $(cat "$T/cc.err")"
fi
echo "not a library" >"$T/broken/libzstd.so.1"
expect "zstd broken" 2 "zstd is needed and cannot be loaded" \
	"$M" initramfs pack "$T/root" -o "$T/j.zst" --compress zstd
if [ -e "$T/j.zst" ]; then bad "an archive was written without zstd"; else ok "no archive written without zstd"; fi
echo "not a library" >"$T/broken/libcurl.so.4"
expect "libcurl broken" 2 "libcurl is needed and cannot be loaded" \
	"$M" "${FLEET[@]}"
# Commands that do not need them work with all of them broken.
expect "hash with every lazy library broken" 0 "" "$M" hash --alg sha256 "$T/small"
expect "log replay with every lazy library broken" 0 "" "$M" log replay "$LOG"

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
