#!/bin/bash
# No secret on disk or on the wire: seal, unseal and reseal run under strace, every write
# recorded in full (-s 4096 -xx); the secret's bytes appear in no write at all, except
# unseal's own output (fd 1 here, and the -o file's fd). The TPM socket carries it
# encrypted (salted sessions, parameter encryption), so it is not there either.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
command -v strace >/dev/null || fail "strace is not installed (scripts/install-deps installs it)"

swtpm_start
tpm2_pcrextend "7:sha256=$(printf '%064x' 7)" || fail "extend"
head -c 48 /dev/urandom > "$WORK/secret"
needle=$(xxd -p -c 256 "$WORK/secret" | head -c 48 | sed 's/../\\x&/g') # the first 24 bytes, as strace -xx prints them
hexs() { printf '%s' "$1" | xxd -p -c 4096 | sed 's/../\\x&/g'; } # a path as strace -xx prints it
# LeakSanitizer cannot run under ptrace (ASan builds): leaks are checked by the other seal tests.
tr() { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -s 4096 -xx -e trace=openat,write,writev,pwrite64,sendto,sendmsg -o "$WORK/trace" "$@"; }

tr "$M" seal --pcrs 7 -i "$WORK/secret" -o "$WORK/sealed" || fail "seal under strace"
[ -s "$WORK/trace" ] || fail "strace recorded nothing"
grep -q '^[0-9]* *write(' "$WORK/trace" || fail "no write recorded (the TPM commands are writes)"
grep -qF "openat(AT_FDCWD, \"$(hexs "$WORK/sealed")" "$WORK/trace" || fail "the sealed file's open was not recorded"
grep -F -- "$needle" "$WORK/trace" && fail "seal wrote the secret somewhere"
echo "ok: seal: the secret is in none of $(grep -c "write(" "$WORK/trace") recorded writes (file and TPM socket)"

tr "$M" unseal -i "$WORK/sealed" > "$WORK/out" || fail "unseal under strace"
cmp "$WORK/out" "$WORK/secret" || fail "unsealed bytes differ"
n=$(grep -cF -- "$needle" "$WORK/trace")
[ "$n" -ge 1 ] || fail "the output write was not recorded: the needle is wrong"
grep -F -- "$needle" "$WORK/trace" | grep -v '^[0-9]* *write(1, ' && fail "unseal wrote the secret elsewhere than stdout"
echo "ok: unseal: the secret is written to stdout only ($n write), not to the TPM socket"

tr "$M" unseal -i "$WORK/sealed" -o "$WORK/out2" || fail "unseal -o under strace"
cmp "$WORK/out2" "$WORK/secret" || fail "unseal -o bytes differ"
fd=$(grep -F "openat(AT_FDCWD, \"$(hexs "$WORK/out2")\"" "$WORK/trace" | sed -n 's/.* = \([0-9]*\)$/\1/p')
[ -n "$fd" ] || fail "no openat of the output file"
grep -F -- "$needle" "$WORK/trace" | grep -v "^[0-9]* *write($fd, " && fail "unseal -o wrote the secret elsewhere"
grep -cF -- "$needle" "$WORK/trace" >/dev/null || fail "unseal -o: no write of the secret recorded"
echo "ok: unseal -o: the secret is written to the output file's fd ($fd) only"

printf '{"banks": {"sha256": {"7": "%064x"}}}\n' 9 > "$WORK/next.json"
tr "$M" reseal -i "$WORK/sealed" --values "$WORK/next.json" > /dev/null || fail "reseal under strace"
grep -F -- "$needle" "$WORK/trace" && fail "reseal wrote the secret somewhere"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal after reseal"
echo "ok: reseal: the secret is in no write"

# Signed policies: seal --authorized-by and unseal --signature, and policy sign (the private key).
openssl genrsa -out "$WORK/rel.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$WORK/rel.pem" -pubout -out "$WORK/rel.pub" 2>/dev/null || fail "openssl rsa"
tr "$M" seal --authorized-by "$WORK/rel.pub" -i "$WORK/secret" -o "$WORK/sealed-auth" || fail "seal --authorized-by under strace"
grep -F -- "$needle" "$WORK/trace" && fail "seal --authorized-by wrote the secret somewhere"
"$M" pcrs --json > "$WORK/now.json"
# the key's base64 body: a line of the PEM, as strace -xx would print it
keyneedle=$(hexs "$(sed -n 5p "$WORK/rel.pem")")
tr "$M" policy sign --key "$WORK/rel.pem" --pcrs 7 --values "$WORK/now.json" -o "$WORK/now.sig" >/dev/null || fail "policy sign under strace"
grep -F -- "$keyneedle" "$WORK/trace" && fail "policy sign wrote the private key somewhere"
tr "$M" unseal -i "$WORK/sealed-auth" --signature "$WORK/now.sig" > "$WORK/out3" || fail "unseal --signature under strace"
cmp "$WORK/out3" "$WORK/secret" || fail "unseal --signature bytes differ"
grep -F -- "$needle" "$WORK/trace" | grep -v '^[0-9]* *write(1, ' && fail "unseal --signature wrote the secret elsewhere than stdout"
echo "ok: signed policies: seal, policy sign (its private key) and unseal --signature write no secret but unseal's output"
