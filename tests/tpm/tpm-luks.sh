#!/bin/bash
# mboot luks and the cryptsetup token plugin (docs/luks.md) on LUKS2 images in files, on a
# swtpm holding a real boot (ima-evm-utils' GRUB machine, replayed by `mboot log extend`):
# enroll adds a keyslot and an "mboot" token that cryptsetup itself shows; the token's sealed
# object holds tpm2_pcrread's values; the key it unseals to opens the new keyslot for
# cryptsetup (--key-file) and is in no file, not even in the image; `cryptsetup open
# --test-passphrase --token-only` (the plugin, bind-mounted over libcryptsetup's plugin folder
# inside `unshare -m`: nothing is installed) and `mboot luks unlock --test` succeed on that
# boot and fail on another one (init=/bin/sh on the kernel command line), naming PCR 8 and the
# kernel command line event (from the event summary the token keeps, checked against tpm2_eventlog);
# hostile tokens are input errors (exit 2), never a crash; remove never leaves the device
# without a passphrase keyslot. No device-mapper here: only the --test paths run.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
command -v cryptsetup >/dev/null || { echo "SKIP: cryptsetup not installed"; exit 77; }
. "${MB_TPM_TESTS:-$(dirname "$0")}/luks-plugin.sh"
[ -f "$PLUGIN_DIR/libcryptsetup-token-mboot.so" ] || fail "no plugin in $PLUGIN_DIR"


LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
swtpm_start
swtpm_banks "sha1 sha256"
boot() { # boot LOG: a reset and that boot's measurements
	swtpm_reset
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}
boot "$LOG"
printf 'correct horse' > "$WORK/pw"
IMG=$WORK/disk.img
format "$IMG"

# 1. enroll: a keyslot and a token, as cryptsetup itself reads them; nothing else written.
snapshot() { # every file under $SWTPM_DIR but the image, the TPM's own and the command's out/err, with its digest
	find "$SWTPM_DIR" -type f ! -name disk.img ! -path '*/state/*' ! -name swtpm.log ! -name out ! -name err \
		-exec sha256sum {} + | sort
}
before=$(snapshot)
"$M" luks enroll "$IMG" --pcrs 0,4,7,8,9 --key-file "$WORK/pw" --log "$LOG" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks enroll"
grep -q "token 0, keyslot 1: a new key sealed to PCRs 0,4,7,8,9" "$WORK/out" || fail "enroll said: $(cat "$WORK/out")"
[ "$(snapshot)" = "$before" ] || fail "enroll changed or wrote a file besides the image: $(diff <(echo "$before") <(snapshot))"
cryptsetup luksDump "$IMG" > "$WORK/dump" || fail "luksDump"
grep -q '^  0: mboot$' "$WORK/dump" || fail "luksDump shows no mboot token 0: $(cat "$WORK/dump")"
grep -q '^  1: luks2$' "$WORK/dump" || fail "no keyslot 1"
grep -q '^  0: luks2$' "$WORK/dump" || fail "the passphrase keyslot 0 is gone"
cryptsetup token export --token-id 0 "$IMG" > "$WORK/token.json" || fail "token export"
jq -e '.type == "mboot" and .keyslots == ["1"] and .mboot.version == 1 and .mboot.sealed.kind == "mboot-sealed"
	and (.mboot.sealed | has("eventlog") | not) and .mboot.sealed.pcrs.bank == "sha256"
	and .mboot.sealed.pcrs.selection == [0, 4, 7, 8, 9]' "$WORK/token.json" >/dev/null ||
	fail "token: $(cat "$WORK/token.json")"
for p in 0 4 7 8 9; do
	[ "$(jq -r ".mboot.sealed.pcrs.values[\"$p\"]" "$WORK/token.json")" = "$(pcr_hex $p)" ] ||
		fail "token's PCR $p is not tpm2_pcrread's"
done
cryptsetup open --test-passphrase --key-file "$WORK/pw" --key-slot 0 "$IMG" || fail "the passphrase no longer opens keyslot 0"
# The event summary: a 4-byte header (the PCRs: 0,4,7,8,9 = 0x391) and 13 bytes an event,
# one per event of tpm2_eventlog's reading of the log in those PCRs (EV_NO_ACTION extends nothing).
tpm2_eventlog "$LOG" > "$WORK/log.yaml" 2>/dev/null || fail "tpm2_eventlog $LOG"
n_events=$(awk '/PCRIndex:/ { p = $2 } /EventType:/ { if ($2 != "EV_NO_ACTION" && p ~ /^(0|4|7|8|9)$/) n++ } END { print n }' "$WORK/log.yaml")
jq -r .mboot.events "$WORK/token.json" | base64 -d > "$WORK/events.bin" || fail "mboot.events is not base64: $(cat "$WORK/token.json")"
[ "$(stat -c %s "$WORK/events.bin")" = $((4 + 13 * n_events)) ] ||
	fail "the event summary is $(stat -c %s "$WORK/events.bin") bytes, not 4 + 13 x $n_events events"
[ "$(head -c 4 "$WORK/events.bin" | xxd -p)" = 91030000 ] || fail "the summary's PCRs: $(head -c 4 "$WORK/events.bin" | xxd -p)"
# the kernel command line event of that boot: its PCR, type (EV_IPL, 0x0d) and sha256 digest's first 8 bytes
cmdline_event() { # cmdline_event YAML: "NUMBER SHA256" of GRUB's kernel_cmdline event, as tpm2_eventlog reads it
	awk '/EventNum:/ { n = $3 } /AlgorithmId: sha256/ { getline; gsub(/"/, "", $2); d = $2 }
		/kernel_cmdline:/ { print n, d; exit }' "$1"
}
read -r good_cmdline_num good_cmdline_digest < <(cmdline_event "$WORK/log.yaml")
[ -n "$good_cmdline_digest" ] || fail "no kernel_cmdline event in tpm2_eventlog's output"
xxd -p -c 13 -s 4 "$WORK/events.bin" | grep -qx "080d000000${good_cmdline_digest:0:16}" ||
	fail "the summary has no record of event $good_cmdline_num (PCR 8, EV_IPL, ${good_cmdline_digest:0:16})"
token_size=$(stat -c %s "$WORK/token.json")
echo "note: the token with its summary of $n_events events is $token_size bytes (the LUKS2 JSON area: 12288)"
[ "$token_size" -lt 4096 ] || fail "the token is $token_size bytes: over the 4 KiB it should take of a 12 KiB area"
echo "ok: enroll: keyslot 1 and token 0 (luksDump, token export), sealed to tpm2_pcrread's values, no event log but a summary of tpm2_eventlog's $n_events events; no other file changed"

# 2. The key: what the token's sealed object unseals to opens keyslot 1 for cryptsetup, and its
#    bytes are in no file (the image keeps only the keyslot's encrypted material).
jq .mboot.sealed "$WORK/token.json" > "$WORK/key.sealed"
"$M" unseal -i "$WORK/key.sealed" > "$SWTPM_DIR/key" 2>"$WORK/err" || fail "unseal the token's object: $(cat "$WORK/err")"
[ "$(stat -c %s "$SWTPM_DIR/key")" = 32 ] || fail "the key is not 32 bytes"
cryptsetup open --test-passphrase --key-file "$SWTPM_DIR/key" --key-slot 1 "$IMG" || fail "the sealed key does not open keyslot 1"
cryptsetup open --test-passphrase --key-file "$SWTPM_DIR/key" --key-slot 0 "$IMG" 2>/dev/null && fail "the key opens keyslot 0"
KEYHEX=$(xxd -p -c 64 "$SWTPM_DIR/key")
for f in "$WORK"/*; do
	xxd -p "$f" | tr -d '\n' | grep -q "$KEYHEX" && fail "the key's bytes are in $f"
	grep -qi "$KEYHEX" "$f" && fail "the key's hex is in $f"
	grep -qF "$(base64 -w0 < "$SWTPM_DIR/key")" "$f" && fail "the key's base64 is in $f"
done
grep -A8 '^  1: luks2' "$WORK/dump" | grep -q 'PBKDF: *pbkdf2' || fail "keyslot 1 is not PBKDF2"
echo "ok: the token's key opens keyslot 1 (cryptsetup --key-file), not keyslot 0; its bytes are in no file, not in the image"

# 3. unlock --test and the plugin on this boot.
"$M" luks unlock "$IMG" --test > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks unlock --test"
grep -q "token 0's key opens keyslot 1" "$WORK/out" || fail "unlock said: $(cat "$WORK/out")"
"$M" luks list "$IMG" > "$WORK/out" || fail "luks list"
grep -q "PCRs: sha256:0,4,7-9" "$WORK/out" || fail "list: $(cat "$WORK/out")"
"$M" luks list "$IMG" --json | jq -e --argjson n "$n_events" '.tokens == [{"token": 0, "keyslot": 1, "policy": "pcr", "bank": "sha256",
	"pcrs": [0, 4, 7, 8, 9], "events": $n, "events_pcrs": [0, 4, 7, 8, 9]}]' >/dev/null ||
	fail "list --json: $("$M" luks list "$IMG" --json)"
if [ "$HAVE_NS" = 1 ]; then
	with_plugin cryptsetup luksDump "$IMG" > "$WORK/dump" 2>"$WORK/err" || fail "luksDump with the plugin: $(cat "$WORK/err")"
	grep -q "PCRs: sha256:0,4,7-9" "$WORK/dump" || fail "luksDump with the plugin: $(sed -n '/Tokens/,$p' "$WORK/dump")"
	grep -q "events: $n_events (PCRs 0,4,7-9)" "$WORK/dump" || fail "luksDump with the plugin: $(sed -n '/Tokens/,$p' "$WORK/dump")"
	with_plugin cryptsetup open --test-passphrase --token-only "$IMG" </dev/null 2>"$WORK/err"; rc=$?
	expect_rc 0 "cryptsetup open --test-passphrase --token-only"
	with_plugin cryptsetup open --test-passphrase --token-only --token-type mboot "$IMG" </dev/null 2>"$WORK/err"; rc=$?
	expect_rc 0 "cryptsetup open --token-type mboot"
	echo "ok: this boot: unlock --test, list; with the plugin luksDump shows the PCRs and cryptsetup --token-only opens"
fi

# 4. Another boot (init=/bin/sh on the kernel command line): refused, PCR 8 named with the TPM's value.
"$M" predict --log "$LOG" --cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh" \
	--write-log "$WORK/evil.bin" >/dev/null || fail "predict for the other boot"
boot "$WORK/evil.bin"
tpm2_eventlog "$WORK/evil.bin" > "$WORK/evil.yaml" 2>/dev/null || fail "tpm2_eventlog evil.bin"
read -r cmdline_num cmdline_digest < <(cmdline_event "$WORK/evil.yaml")
if [ -z "$cmdline_num" ] || [ "$cmdline_digest" = "$good_cmdline_digest" ]; then fail "no changed kernel_cmdline event in evil.bin"; fi
# "PCR 8: changed: sealed event K of PCR 8: EV_IPL, sha256 <the sealed prefix>… → #N EV_IPL: kernel_cmdline: ... init=/bin/sh"
names_cmdline() { # names_cmdline FILE: the refusal names today's kernel_cmdline event, tpm2_eventlog's number
	grep -q "^PCR 8: changed: sealed event [0-9]* of PCR 8: EV_IPL, sha256 ${good_cmdline_digest:0:16}… → #$cmdline_num EV_IPL: kernel_cmdline: .* init=/bin/sh$" "$1"
}
"$M" luks unlock "$IMG" --test --log "$WORK/evil.bin" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "luks unlock --test on the init=/bin/sh boot"
names_cmdline "$WORK/err" || fail "unlock does not name event $cmdline_num (kernel_cmdline): $(cat "$WORK/err")"
grep -q "^PCR [0-9]*: changed: .* → #[0-9]* EV_IPL: grub_cmd: linux .*init=/bin/sh$" "$WORK/err" || fail "the grub_cmd linux event is not named: $(cat "$WORK/err")"
[ "$(grep -c '^PCR 8: changed: ' "$WORK/err")" = 3 ] || fail "not exactly the 3 changed events (two linux commands, kernel_cmdline): $(cat "$WORK/err")"
grep -q "^PCR 8 (sha256) differs: sealed to $(jq -r '.mboot.sealed.pcrs.values["8"]' "$WORK/token.json"), now $(pcr_hex 8)$" "$WORK/err" ||
	fail "PCR 8 not named with tpm2_pcrread's value: $(cat "$WORK/err")"
grep -Eq "^PCR (0|4|7|9) " "$WORK/err" && fail "an unchanged PCR is named: $(cat "$WORK/err")"
[ -s "$WORK/out" ] && fail "a refused unlock printed on stdout: $(cat "$WORK/out")"
if [ "$HAVE_NS" = 1 ]; then
	with_plugin cryptsetup open --test-passphrase --token-only "$IMG" </dev/null 2>"$WORK/err"; rc=$?
	[ "$rc" -ne 0 ] || fail "cryptsetup --token-only opened on the other boot"
	[ "$rc" -lt 128 ] || fail "cryptsetup died (exit $rc): $(cat "$WORK/err")"
	grep -q "mboot: token 0: the disk key is not released on this boot" "$WORK/err" || fail "no refusal from the plugin: $(cat "$WORK/err")"
	grep -q "^PCR 8 (sha256) differs: .*, now $(pcr_hex 8)$" "$WORK/err" || fail "the plugin does not name PCR 8: $(cat "$WORK/err")"
	# the plugin reads the system's log: evil.bin, on a tmpfs over securityfs in the namespace
	# shellcheck disable=SC2016 # the inner shell's $1, $@
	with_plugin sh -c 'mount -t tmpfs tmpfs /sys/kernel/security && mkdir /sys/kernel/security/tpm0 &&
		cp "$1" /sys/kernel/security/tpm0/binary_bios_measurements && shift && exec "$@"' sh "$WORK/evil.bin" \
		cryptsetup open --test-passphrase --token-only "$IMG" </dev/null 2>"$WORK/err"; rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then fail "cryptsetup with today's log: exit $rc: $(cat "$WORK/err")"; fi
	names_cmdline "$WORK/err" || fail "the plugin does not name event $cmdline_num (kernel_cmdline): $(cat "$WORK/err")"
	grep -q "ESYS\|esys" "$WORK/err" && fail "tpm2-tss's own log lines reach cryptsetup's stderr: $(cat "$WORK/err")"
	# without --token-only cryptsetup then asks for a passphrase: the explanation comes first
	printf 'correct horse' | with_plugin cryptsetup open --test-passphrase "$IMG" 2>"$WORK/err"; rc=$?
	expect_rc 0 "cryptsetup open with the passphrase after the token's refusal"
	grep -q "PCR 8 (sha256) differs" "$WORK/err" || fail "no explanation before the passphrase: $(cat "$WORK/err")"
fi
boot "$LOG"
"$M" luks unlock "$IMG" --test >/dev/null 2>"$WORK/err" || fail "unlock back on the good boot: $(cat "$WORK/err")"
echo "ok: another boot: unlock --test exits 1 naming PCR 8 only (sealed and tpm2_pcrread's value) and tpm2_eventlog's kernel_cmdline event; the plugin refuses and says the same; back on the good boot it opens"

# 5. Input errors: a wrong passphrase, not LUKS2, LUKS1; nothing changed.
cp "$IMG" "$WORK/copy.img"
printf 'wrong' > "$WORK/bad-pw"
"$M" luks enroll "$IMG" --pcrs 7 --key-file "$WORK/bad-pw" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll with a wrong passphrase"
grep -q "the passphrase opens no keyslot" "$WORK/err" || fail "wrong passphrase not said: $(cat "$WORK/err")"
cmp -s "$IMG" "$WORK/copy.img" || fail "a refused enroll changed the image"
# an event log of another boot than the values sealed to: its summary would name wrong events
"$M" luks enroll "$IMG" --pcrs 0,8 --key-file "$WORK/pw" --log "$WORK/evil.bin" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll with the log of another boot"
grep -q "the event log does not replay to the sha256 value of PCR 8 sealed to" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
cmp -s "$IMG" "$WORK/copy.img" || fail "a refused enroll changed the image"
head -c 1M /dev/zero > "$WORK/zero.img"
"$M" luks enroll "$WORK/zero.img" --pcrs 7 --key-file "$WORK/pw" 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll on a non-LUKS file"
grep -q "not a LUKS2 device" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
truncate -s 4M "$WORK/luks1.img"
cryptsetup luksFormat -q --type luks1 --pbkdf-force-iterations 1000 --key-file "$WORK/pw" "$WORK/luks1.img" || fail "luks1 format"
"$M" luks enroll "$WORK/luks1.img" --pcrs 7 --key-file "$WORK/pw" 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll on LUKS1"
"$M" luks enroll "$IMG" --pcrs none --key-file "$WORK/pw" 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll --pcrs none"
"$M" luks unlock "$WORK/zero.img" --test 2>"$WORK/err"; rc=$?
expect_rc 2 "unlock of a non-LUKS file"
"$M" luks unlock "$WORK/copy.img" 2>"$WORK/err"; rc=$?
expect_rc 2 "unlock with neither NAME nor --test"
# a header whose JSON area another token fills: the new token does not fit, and no keyslot stays
cp "$WORK/copy.img" "$WORK/full.img"
# the largest filler token that fits, to 250 bytes: less room is left than a token needs (~1 KiB)
for size in $(seq 12000 -250 6000); do
	printf '{"type":"filler","keyslots":[],"x":"%s"}' "$(head -c "$size" /dev/zero | tr '\0' a)" |
		cryptsetup token import --token-id 9 "$WORK/full.img" 2>/dev/null && break
done
cryptsetup token export --token-id 9 "$WORK/full.img" >/dev/null || fail "no filler token fits"
cryptsetup luksDump "$WORK/full.img" | grep -c ': luks2$' > "$WORK/slots.before"
"$M" luks enroll "$WORK/full.img" --pcrs 7 --key-file "$WORK/pw" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll into a full header"
grep -q "LUKS2 JSON metadata area (12288 bytes)" "$WORK/err" || fail "no room not said: $(cat "$WORK/err")"
[ "$(cryptsetup luksDump "$WORK/full.img" | grep -c ': luks2$')" = "$(cat "$WORK/slots.before")" ] ||
	fail "a keyslot stayed after the token did not fit"
# room for the keyslot (~500 bytes of JSON) but not for the token (~1 KiB): the keyslot just
# added is destroyed again
filler() { printf '{"type":"filler","keyslots":[],"x":"%s"}' "$(head -c "$1" /dev/zero | tr '\0' a)"; }
cp "$WORK/copy.img" "$WORK/tight.img"
for size in $(seq 12000 -50 6000); do
	filler "$size" | cryptsetup token import --token-id 9 "$WORK/tight.img" 2>/dev/null && break
done
cryptsetup token remove --token-id 9 "$WORK/tight.img" || fail "filler token remove"
filler $((size - 700)) | cryptsetup token import --token-id 9 "$WORK/tight.img" || fail "smaller filler"
cp "$WORK/tight.img" "$WORK/tight.copy"
"$M" luks enroll "$WORK/tight.img" --pcrs 7 --key-file "$WORK/pw" > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "enroll with room for the keyslot but not the token"
grep -q "the token ([0-9]* bytes) does not fit in the LUKS2 JSON metadata area (12288 bytes" "$WORK/err" ||
	fail "not said: $(cat "$WORK/err")"
[ "$(cryptsetup luksDump "$WORK/tight.img" | grep -c ': luks2$')" = "$(cryptsetup luksDump "$WORK/tight.copy" | grep -c ': luks2$')" ] ||
	fail "the keyslot stayed after its token did not fit: $(cryptsetup luksDump "$WORK/tight.img" | sed -n '/Keyslots/,/Tokens/p')"
echo "ok: a wrong passphrase, a non-LUKS file, LUKS1, --pcrs none, a full header: exit 2, nothing changed (no keyslot left behind)"

# 6. Hostile tokens (written with cryptsetup token import): exit 2 naming the field, never a crash.
sealed=$(jq -c .mboot.sealed "$WORK/token.json")
n=0
while IFS= read -r tok; do
	n=$((n + 1))
	cp "$WORK/copy.img" "$WORK/hostile.img"
	cryptsetup token import --token-id 3 "$WORK/hostile.img" <<<"$tok" 2>"$WORK/err" || fail "token import $n: $(cat "$WORK/err")"
	"$M" luks unlock "$WORK/hostile.img" --test --token 3 > /dev/null 2>"$WORK/err"; rc=$?
	expect_rc 2 "unlock of hostile token $n ($tok)"
	grep -q "token 3: .*field\|token 3: .*line" "$WORK/err" || fail "hostile token $n: no field named: $(cat "$WORK/err")"
	"$M" luks list "$WORK/hostile.img" > "$WORK/out" 2>&1; rc=$?
	expect_rc 2 "list with hostile token $n"
	grep -q "Token 3: malformed" "$WORK/out" || fail "list: $(cat "$WORK/out")"
	if [ "$HAVE_NS" = 1 ]; then
		with_plugin cryptsetup open --test-passphrase --token-only --token-id 3 "$WORK/hostile.img" </dev/null 2>"$WORK/err"; rc=$?
		if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then fail "plugin on hostile token $n: exit $rc: $(cat "$WORK/err")"; fi
		grep -q "mboot: .*malformed" "$WORK/err" || fail "plugin on hostile token $n: $(cat "$WORK/err")"
		with_plugin cryptsetup luksDump "$WORK/hostile.img" > "$WORK/out" 2>&1 || fail "luksDump of hostile token $n"
		grep -q "malformed mboot token" "$WORK/out" || fail "luksDump of hostile token $n: $(sed -n '/Tokens/,$p' "$WORK/out")"
	fi
done <<EOF
{"type":"mboot","keyslots":["1"]}
{"type":"mboot","keyslots":["1"],"mboot":{"version":2,"sealed":$sealed}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":$sealed,"extra":1}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":{"kind":"mboot-sealed","version":1}}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":$(jq -c '.public = "AAAA"' <<<"$sealed")}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":$(jq -c '.pcrs.values["8"] = "00"' <<<"$sealed")}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":$(jq -c '.policy.digest = ("0" * 64)' <<<"$sealed")}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":"$(jq -r .public <<<"$sealed")"}}
{"type":"mboot","keyslots":["1"],"mboot":{"version":1,"sealed":{"a":{"b":{"c":{"d":{"e":{"f":{"g":1}}}}}}}}}
EOF
echo "ok: $n hostile tokens: unlock and list exit 2 naming the field; the plugin refuses them and luksDump says malformed, no crash"

# 6b. Hostile event summaries ("mboot.events"): exit 2 naming the field and what is wrong.
rec8=$(printf '080d000000%016x' 0)                  # one event record: PCR 8, EV_IPL, a digest prefix
summary() { xxd -r -p | base64 -w0; }               # summary HEX...: base64 of the bytes
n=0
while IFS='|' read -r events said; do
	n=$((n + 1))
	cp "$WORK/copy.img" "$WORK/hostile.img"
	jq -c --argjson e "$events" '.mboot.events = $e | .keyslots = ["1"]' "$WORK/token.json" |
		cryptsetup token import --token-id 3 "$WORK/hostile.img" 2>"$WORK/err" || fail "token import $n: $(cat "$WORK/err")"
	"$M" luks unlock "$WORK/hostile.img" --test --token 3 > /dev/null 2>"$WORK/err"; rc=$?
	expect_rc 2 "unlock of a token with hostile summary $n ($said)"
	grep -q "token 3: field \"mboot.events\".*$said" "$WORK/err" || fail "hostile summary $n: not said ($said): $(cat "$WORK/err")"
	if [ "$HAVE_NS" = 1 ]; then
		with_plugin cryptsetup open --test-passphrase --token-only --token-id 3 "$WORK/hostile.img" </dev/null 2>"$WORK/err"; rc=$?
		if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then fail "plugin on hostile summary $n: exit $rc: $(cat "$WORK/err")"; fi
		grep -q "mboot: .*malformed.*mboot.events" "$WORK/err" || fail "plugin on hostile summary $n: $(cat "$WORK/err")"
	fi
done <<EOF
"$(echo 910300 | summary)"|shorter than its 4-byte header
"$(echo "91030000${rec8:0:24}" | summary)"|not a 4-byte header and 13-byte records
"$(echo "93030000" | summary)"|PCR 1 is summarised but not sealed to
"$(echo "10000000$rec8" | summary)"|event 0 is of PCR 8, which is not summarised
"$(echo "91030000$(for _ in $(seq 257); do printf %s "$rec8"; done)" | summary)"|257 events, more than 256
"not base64!"|is not valid base64
5|is not a string
EOF
echo "ok: $n hostile event summaries (truncated, wrong length, a PCR not sealed, one not summarised, over the cap, not base64): exit 2 naming mboot.events"

# 7. remove: the token and its keyslot; never the last way in without a TPM.
cp "$IMG" "$WORK/r.img"
"$M" luks enroll "$WORK/r.img" --pcrs 7 --key-file "$WORK/pw" > /dev/null 2>"$WORK/err" || fail "second enroll: $(cat "$WORK/err")"
cryptsetup token export --token-id 1 "$WORK/r.img" | jq -e '.keyslots == ["2"]' >/dev/null || fail "second token is not keyslot 2's"
"$M" luks remove "$WORK/r.img" --token 0 > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks remove --token 0"
grep -q "token 0 and keyslot 1 removed" "$WORK/out" || fail "remove said: $(cat "$WORK/out")"
cryptsetup luksDump "$WORK/r.img" > "$WORK/dump"
grep -q '^  1: luks2$' "$WORK/dump" && fail "keyslot 1 is still there"
grep -q '^  0: mboot$' "$WORK/dump" && fail "token 0 is still there"
grep -q '^  1: mboot$' "$WORK/dump" || fail "token 1 went too"
grep -q '^  0: luks2$' "$WORK/dump" || fail "keyslot 0 went too"
cryptsetup luksKillSlot -q "$WORK/r.img" 0 || fail "luksKillSlot 0"
cp "$WORK/r.img" "$WORK/r.copy"
"$M" luks remove "$WORK/r.img" --token 1 > /dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "remove of the last way in"
grep -q "no keyslot opened by a passphrase would remain" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
cmp -s "$WORK/r.img" "$WORK/r.copy" || fail "a refused remove changed the image"
"$M" luks remove "$WORK/r.img" --token 7 2>"$WORK/err"; rc=$?
expect_rc 2 "remove of a missing token"
cryptsetup token import --token-id 5 "$WORK/r.img" <<<'{"type":"other","keyslots":[]}' || fail "import other"
"$M" luks remove "$WORK/r.img" --token 5 2>"$WORK/err"; rc=$?
expect_rc 2 "remove of another type's token"
grep -q 'not "mboot"' "$WORK/err" || fail "not said: $(cat "$WORK/err")"
echo "ok: remove takes the token and its keyslot only; refuses to leave no passphrase keyslot, a missing token, another type's token"

# 8. Signed policies: enroll --authorized-by; unlock with a signature of this boot's PCRs, not
#    on another boot; the token names the key as tpm2_loadexternal does.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$WORK/rsa.pem" 2>/dev/null || fail "openssl genpkey"
openssl rsa -in "$WORK/rsa.pem" -pubout -out "$WORK/rsa.pub" 2>/dev/null || fail "openssl rsa -pubout"
format "$WORK/a.img"
"$M" luks enroll "$WORK/a.img" --authorized-by "$WORK/rsa.pub" --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" ||
	fail "enroll --authorized-by: $(cat "$WORK/err")"
tpm2_loadexternal -C o -G rsa -u "$WORK/rsa.pub" -n "$WORK/rsa.name" -c "$WORK/rsa.ctx" >/dev/null || fail "tpm2_loadexternal"
tpm2_flushcontext -t >/dev/null 2>&1
"$M" luks list "$WORK/a.img" > "$WORK/out" || fail "list"
grep -q "signing key: $(xxd -p -c 64 "$WORK/rsa.name")$" "$WORK/out" || fail "the signing key is not tpm2_loadexternal's name: $(cat "$WORK/out")"
"$M" pcrs --json > "$WORK/now.json" || fail "pcrs --json"
"$M" policy sign --key "$WORK/rsa.pem" --pcrs 7,8 --values "$WORK/now.json" -o "$WORK/good.sig" >/dev/null 2>&1 || fail "policy sign"
"$M" luks unlock "$WORK/a.img" --test 2>"$WORK/err"; rc=$?
expect_rc 2 "unlock of an --authorized-by token without a signature"
grep -q "no signature given" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
"$M" luks unlock "$WORK/a.img" --test --signature "$WORK/good.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "unlock --signature on the signed boot"
grep -q "token 0's key opens keyslot 1" "$WORK/out" || fail "unlock said: $(cat "$WORK/out")"
# the plugin takes the signed policies of a folder ($MBOOT_SIGNATURE_DIR; /etc/mboot/signatures)
if [ $HAVE_NS = 1 ]; then
	MBOOT_SIGNATURE_DIR=$WORK/nosuch with_plugin cryptsetup open --test-passphrase --token-only --token-id 0 \
		"$WORK/a.img" </dev/null 2>"$WORK/err"; rc=$?
	[ "$rc" -ne 0 ] || fail "the plugin opened an --authorized-by token with no signature folder"
	grep -q "sealed to signed policies, and $WORK/nosuch cannot be read" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
	mkdir "$WORK/sigs"
	printf '{"version": 1}' > "$WORK/sigs/0-bad.sig"
	cp "$WORK/good.sig" "$WORK/sigs/6.1.0-27.sig"
	cp "$WORK/good.sig" "$WORK/sigs/ignored.txt.old"
	MBOOT_SIGNATURE_DIR=$WORK/sigs with_plugin cryptsetup open --test-passphrase --token-only --token-id 0 \
		"$WORK/a.img" </dev/null 2>"$WORK/err"; rc=$?
	expect_rc 0 "cryptsetup --token-only with the signature folder"
	grep -q "$WORK/sigs/0-bad.sig: " "$WORK/err" || fail "the malformed signature file is not named: $(cat "$WORK/err")"
	echo "ok: the plugin opens an --authorized-by token with a signed policy of \$MBOOT_SIGNATURE_DIR, names a malformed one, refuses without the folder"
fi
# beside it a token sealed to PCR values: each token is tried, whatever kind the other is
"$M" luks enroll "$WORK/a.img" --pcrs 0,7,8 --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" || fail "second enroll: $(cat "$WORK/err")"
"$M" luks unlock "$WORK/a.img" --test > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "unlock without a signature, with a PCR token beside"
grep -q "token 1's key opens keyslot 2" "$WORK/out" || fail "unlock said: $(cat "$WORK/out")"
"$M" luks unlock "$WORK/a.img" --test --signature "$WORK/good.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "unlock --signature with a PCR token beside"
grep -q "token 0's key opens keyslot 1" "$WORK/out" || fail "unlock said: $(cat "$WORK/out")"
boot "$WORK/evil.bin"
"$M" luks unlock "$WORK/a.img" --test --signature "$WORK/good.sig" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "unlock --signature on another boot"
grep -q "PCR 8 (sha256) differs: signed" "$WORK/err" || fail "PCR 8 not named: $(cat "$WORK/err")"
if [ $HAVE_NS = 1 ]; then
	MBOOT_SIGNATURE_DIR=$WORK/sigs with_plugin cryptsetup open --test-passphrase --token-only --token-id 0 \
		"$WORK/a.img" </dev/null 2>"$WORK/err"; rc=$?
	[ "$rc" -ne 0 ] || fail "the plugin opened the --authorized-by token on another boot"
	grep -q "PCR 8 (sha256) differs: signed" "$WORK/err" || fail "plugin: PCR 8 not named: $(cat "$WORK/err")"
fi
printf '{"version": 1}' > "$WORK/bad.sig"
"$M" luks unlock "$WORK/a.img" --test --signature "$WORK/bad.sig" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "unlock with a malformed signature file"
boot "$LOG"
echo "ok: --authorized-by: the token names tpm2_loadexternal's key; unlock needs a signature, opens with one of this boot's PCRs (also beside a PCR token), exits 1 naming PCR 8 on another boot"

exit 0
