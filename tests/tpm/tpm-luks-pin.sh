#!/bin/bash
# TPM + PIN on LUKS2 (docs/luks.md, "TPM + PIN"): mboot luks enroll --pin on a LUKS2 image file;
# the token's policy digest is a tpm2-tools trial session's PolicyPCR + PolicyAuthValue;
# `cryptsetup open --test-passphrase --token-only` with the plugin opens the image only with the
# right PIN, which cryptsetup itself asks for ("Enter token PIN:", on a pseudo-terminal driven by
# python's pty, and from stdin); a wrong PIN moves the TPM's lockout counter (tpm2_getcap);
# `mboot luks unlock --test` wants the PIN too; list says the token needs one.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
. "${MB_TPM_TESTS:-$(dirname "$0")}/luks-plugin.sh"
M=${MBOOT:?}
[ -f "$PLUGIN_DIR/libcryptsetup-token-mboot.so" ] || fail "no plugin in $PLUGIN_DIR"

lockout_counter() {
	echo $(( $(tpm2_getcap properties-variable | sed -n 's/^TPM2_PT_LOCKOUT_COUNTER: *//p' | tr -d ' ') ))
}
# on_pty INPUT CMD...: CMD on a new pseudo-terminal (its stdin, stdout and stderr), INPUT typed
# after each prompt that ends in "PIN: "; the terminal's output goes to $WORK/pty.
on_pty() {
	python3 - "$@" <<'PY'
import os, pty, select, signal, sys, termios, time
inp = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out = b""
sent = 0
deadline = time.time() + 60
while time.time() < deadline:
    # never a blocking read: a command that hangs is killed at the deadline, not waited for
    if not select.select([fd], [], [], max(0.0, deadline - time.time()))[0]:
        break
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if out.count(b"PIN: ") > sent:
        sent += 1
        # cryptsetup prints the prompt, then turns echo off, flushing what was typed: type only
        # once echo is off (the master reads the terminal's modes), as a person would after it
        wait = time.time() + 10
        while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < wait:
            time.sleep(0.02)
        os.write(fd, inp + b"\n")
if time.time() >= deadline:
    out += b"\n[on_pty: killed after 60 s]\n"
    os.kill(pid, signal.SIGKILL)
_, status = os.waitpid(pid, 0)
open(os.environ["WORK"] + "/pty", "wb").write(out)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
export WORK

swtpm_start
tpm2_dictionarylockout -s -n 10 -t 1000 -l 1000 >/dev/null || fail "tpm2_dictionarylockout -s"
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"
printf 'correct horse' > "$WORK/pw"
printf '2468\n' > "$WORK/pin"
printf '1357\n' > "$WORK/wrong"
IMG=$WORK/disk.img
truncate -s 20M "$IMG"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$WORK/pw" "$IMG" ||
	fail "luksFormat"

# 1. enroll --pin: the token's sealed object is PolicyPCR + PolicyAuthValue, as tpm2-tools computes it.
"$M" luks enroll "$IMG" --pcrs 0,7 --pin-file "$WORK/pin" --key-file "$WORK/pw" --log none >/dev/null 2>"$WORK/err" ||
	fail "luks enroll --pin: $(cat "$WORK/err")"
cryptsetup token export --token-id 0 "$IMG" > "$WORK/token.json" || fail "token export"
[ "$(jq -r .mboot.sealed.policy.pin "$WORK/token.json")" = true ] || fail "token has no policy.pin"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 >/dev/null || fail "tpm2_policypcr"
tpm2_policyauthvalue -S "$WORK/s.ctx" -L "$WORK/pol.dig" >/dev/null || fail "tpm2_policyauthvalue"
tpm2_flushcontext "$WORK/s.ctx" >/dev/null
[ "$(jq -r .mboot.sealed.policy.digest "$WORK/token.json")" = "$(xxd -p -c 64 "$WORK/pol.dig")" ] ||
	fail "token policy digest is not tpm2_policypcr + tpm2_policyauthvalue's"
"$M" luks list "$IMG" --json > "$WORK/list" || fail "luks list"
[ "$(jq -r '.tokens[0].pin' "$WORK/list")" = true ] || fail "list --json: $(cat "$WORK/list")"
"$M" luks list "$IMG" | grep -q "PIN: needed" || fail "list does not say the PIN"
echo "ok: enroll --pin: token policy == tpm2_policypcr + tpm2_policyauthvalue trial; list says pin"

# 2. mboot luks unlock --test: the right PIN opens, a wrong one is exit 1 and counted.
"$M" luks unlock "$IMG" --test --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err" ||
	fail "unlock --test --pin-file: $(cat "$WORK/err")"
printf '2468\n' | "$M" luks unlock "$IMG" --test >/dev/null 2>"$WORK/err" || fail "unlock --test, PIN on stdin: $(cat "$WORK/err")"
before=$(lockout_counter)
"$M" luks unlock "$IMG" --test --pin-file "$WORK/wrong" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "unlock with a wrong PIN"
[ "$(lockout_counter)" -eq $((before + 1)) ] || fail "lockout counter $before -> $(lockout_counter)"
grep -q "wrong PIN (the TPM counts failed attempts: $((10 - before - 1)) more before lockout)" "$WORK/err" ||
	fail "wrong PIN message: $(cat "$WORK/err")"
echo "ok: luks unlock --test: right PIN opens (file, stdin); wrong PIN exit 1, lockout counter $before -> $((before + 1))"

# 3. The plugin: cryptsetup asks for the token PIN and passes it (cryptsetup_token_open_pin).
if [ "$HAVE_NS" = 1 ]; then
	on_pty 2468 unshare -m -- sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$PLUGIN_DIR" "$TOKEN_DIR" \
		env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		cryptsetup open --test-passphrase --token-only "$IMG"; rc=$?
	cp "$WORK/pty" "$WORK/err"
	expect_rc 0 "cryptsetup --token-only, the right PIN typed on a terminal"
	grep -q "Enter token PIN" "$WORK/pty" || fail "cryptsetup did not ask for the token PIN: $(cat "$WORK/pty")"
	grep -q 2468 "$WORK/pty" && fail "the PIN was echoed"
	before=$(lockout_counter)
	on_pty 1357 unshare -m -- sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$PLUGIN_DIR" "$TOKEN_DIR" \
		env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		cryptsetup open --test-passphrase --token-only --tries 1 "$IMG"; rc=$?
	cp "$WORK/pty" "$WORK/err"
	[ "$rc" -ne 0 ] || fail "cryptsetup --token-only opened with a wrong PIN"
	grep -q "wrong PIN" "$WORK/pty" || fail "the plugin does not say wrong PIN: $(cat "$WORK/pty")"
	[ "$(lockout_counter)" -eq $((before + 1)) ] || fail "plugin: lockout counter $before -> $(lockout_counter)"
	printf '2468\n' | with_plugin cryptsetup open --test-passphrase --token-only "$IMG" 2>"$WORK/err"; rc=$?
	expect_rc 0 "cryptsetup --token-only, the PIN on stdin"
	with_plugin cryptsetup open --test-passphrase --token-only "$IMG" </dev/null 2>"$WORK/err"; rc=$?
	[ "$rc" -ne 0 ] || fail "cryptsetup --token-only opened with no PIN"
	echo "ok: plugin: cryptsetup asks 'Enter token PIN:' and opens with the right PIN (pty, stdin); a wrong one is refused, counted"
fi

# 4. The right PIN on a boot with other PCRs: refused, PCR named, not counted.
tpm2_pcrextend "7:sha256=$(printf '%064x' 8)" || fail "tpm2_pcrextend"
before=$(lockout_counter)
"$M" luks unlock "$IMG" --test --pin-file "$WORK/pin" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "unlock with the right PIN, PCR 7 changed"
grep -q "PCR 7 (sha256) differs" "$WORK/err" || fail "PCR 7 not named: $(cat "$WORK/err")"
[ "$(lockout_counter)" -eq "$before" ] || fail "a PCR refusal was counted"
if [ "$HAVE_NS" = 1 ]; then
	printf '2468\n' | with_plugin cryptsetup open --test-passphrase --token-only "$IMG" 2>"$WORK/err"; rc=$?
	[ "$rc" -ne 0 ] || fail "cryptsetup --token-only opened on another boot"
fi
echo "ok: the right PIN with PCR 7 changed opens nothing (unlock exit 1 naming PCR 7; plugin refuses)"

# 5. Locked out on this boot, back in with the passphrase (luks reseal --key-file): a PIN token
#    is not replaced by one without the PIN; refused, nothing changed.
cp "$IMG" "$WORK/before.img"
"$M" luks reseal "$IMG" --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" </dev/null; rc=$?
expect_rc 2 "reseal --key-file of a PIN token"
grep -q "sealed with a PIN: the new one needs the PIN too" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
cmp -s "$IMG" "$WORK/before.img" || fail "a refused reseal --key-file changed the image"
echo "ok: reseal --key-file of a PIN token: refused (no key without the PIN), the image unchanged"
