# shellcheck shell=bash disable=SC2034 # PLUGIN_DIR, HAVE_NS: read by the scripts that source this
# Sourced by the LUKS tests: with_plugin CMD... runs CMD where libcryptsetup finds the token
# plugin just built (and no other): a private mount namespace, the plugin's build folder
# bind-mounted over libcryptsetup's plugin folder. HAVE_NS=0 when there is no namespace.
# Also the helpers every LUKS test uses: expect_rc, pcr_hex, format.
PLUGIN_DIR=${MB_LUKS_PLUGIN_DIR:?built without LUKS support}
TOKEN_DIR=${MB_LUKS_TOKEN_DIR:?}
PRELOAD=
if [ "${MB_SANITIZE:-none}" != none ] && [ -n "${MB_CC:-}" ]; then
	# cryptsetup is not instrumented: the sanitizer runtime must come first for the plugin
	# (and for a preloaded shim in mboot)
	# shellcheck disable=SC2086 # MB_CC is a command line
	PRELOAD=$($MB_CC -print-file-name=libasan.so)
	[ -f "$PRELOAD" ] || PRELOAD=
fi
with_plugin() {
	# shellcheck disable=SC2016 # the inner shell's $1, $2, $@
	unshare -m -- env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$PLUGIN_DIR" "$TOKEN_DIR" "$@"
}
HAVE_NS=1
unshare -m -- true 2>/dev/null || { HAVE_NS=0; echo "note: no mount namespace (not root?): the plugin is not tested"; }

# shellcheck disable=SC2154 # rc: the caller's exit status
expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}
pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
format() { # format IMG: a small LUKS2 image with passphrase file $WORK/pw in keyslot 0, fast PBKDF
	rm -f "$1"
	truncate -s 20M "$1"
	cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$WORK/pw" "$1" ||
		fail "luksFormat $1"
}
