#!/bin/bash
# The firmware-update window (docs/seal.md): mboot reseal --firmware-update adds a PolicyOR
# branch of PolicyPCR(the sealed PCRs but 0-3) and PolicyNV(mboot's NV counter == its value),
# whose digest must equal tpm2-tools' trial sessions (tpm2_policypcr, tpm2_policynv,
# tpm2_policyor). New firmware (PCR 0 extended otherwise after a reset) unseals once inside
# the window; 'mboot reseal' then seals to the new values and increments the counter (seen
# by tpm2_nvread), after which the window no longer unseals.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
NV=0x01800b00

sha() { printf '%s' "$1" | openssl dgst -sha256 -r | cut -d' ' -f1; }
F1=$(sha 'firmware 1.0')
F2=$(sha 'firmware 2.0')
F3=$(sha 'firmware 3.0')
A=$(sha 'this boot')
# A boot: firmware F into PCR 0, then the boot chain into PCR 7 (the same on every boot).
boot() { swtpm_reset; tpm2_startup -c || fail "startup"; tpm2_pcrextend "0:sha256=$1" "7:sha256=$A" || fail "extend"; }
counter() { tpm2_nvread "$NV" -s 8 | xxd -p; }

swtpm_start
boot "$F1"
printf 'disk\0key\n' > "$WORK/secret"
"$M" seal --pcrs 0,2,7 -i "$WORK/secret" -o "$WORK/sealed" || fail "seal"

# A window needs a PCR the firmware does not measure.
"$M" seal --pcrs 0,1 -i "$WORK/secret" -o "$WORK/fw-only" || fail "seal fw-only"
"$M" reseal -i "$WORK/fw-only" --firmware-update > "$WORK/out" 2>&1; rc=$?
{ [ $rc -eq 2 ] && grep -q "no PCR but the firmware" "$WORK/out"; } || fail "window on PCRs 0-1 only: exit $rc: $(cat "$WORK/out")"
tpm2_nvreadpublic 2>/dev/null | grep -qi "$NV" && fail "the refused window defined the counter"
echo "ok: no window for a secret sealed only to firmware PCRs (exit 2, the TPM untouched)"

"$M" reseal -i "$WORK/sealed" --firmware-update > "$WORK/out" || fail "reseal --firmware-update: $(cat "$WORK/out")"
grep -q "Firmware-update window open" "$WORK/out" || fail "no window message: $(cat "$WORK/out")"
c0=$(counter) || fail "tpm2_nvread of the counter"
[ "$(jq -r .policy.window.counter "$WORK/sealed")" = "$((16#$c0))" ] ||
	fail "window counter $(jq -r .policy.window.counter "$WORK/sealed"), tpm2_nvread $c0"
[ "$(jq -r '.policy.window["nv-index"]' "$WORK/sealed")" = "$NV" ] || fail "window nv-index"
[ "$(jq -c .policy.window.pcrs.selection "$WORK/sealed")" = "[7]" ] || fail "window PCRs $(jq -c .policy.window.pcrs.selection "$WORK/sealed")"
# tpm2_nvreadpublic: mboot's attributes (owner range index, counter, ownerwrite, owner/authread, no_da, written)
tpm2_nvreadpublic "$NV" > "$WORK/nvpub" || fail "tpm2_nvreadpublic"
grep -q "value: 0x22060012" "$WORK/nvpub" || fail "counter attributes: $(cat "$WORK/nvpub")"
echo "ok: the window records NV $NV at tpm2_nvread's value $((16#$c0)); attributes 0x22060012"

# tpm2-tools: branch 0 = PolicyPCR(0,2,7 now); window = PolicyPCR(7) + PolicyNV(counter eq); PolicyOR.
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,2,7 -L "$WORK/b0.dig" >/dev/null || fail "policypcr b0"
tpm2_flushcontext "$WORK/s.ctx"
echo "$c0" | xxd -r -p > "$WORK/operand"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:7 >/dev/null || fail "policypcr window"
tpm2_policynv -S "$WORK/s.ctx" -i "$WORK/operand" "$NV" eq -L "$WORK/w.dig" >/dev/null || fail "policynv"
tpm2_flushcontext "$WORK/s.ctx"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policyor -S "$WORK/s.ctx" -l "sha256:$WORK/b0.dig,$WORK/w.dig" -L "$WORK/or.dig" >/dev/null || fail "policyor"
tpm2_flushcontext "$WORK/s.ctx"
want=$(xxd -p -c 64 "$WORK/or.dig")
got=$(jq -r .policy.digest "$WORK/sealed")
[ "$got" = "$want" ] || fail "window PolicyOR digest $got, tpm2-tools trial $want"
echo "ok: the window's policy == tpm2_policypcr + tpm2_policynv + tpm2_policyor trial ($want)"

"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal on the old firmware"
cp "$WORK/sealed" "$WORK/sealed-window"

# New firmware: PCR 0 differs after the reset; the window releases the secret.
boot "$F2"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal on the new firmware inside the window"
echo "ok: new firmware (PCR 0 changed) unseals inside the window"

# The first good boot on the new firmware: reseal closes the window (counter + 1).
"$M" reseal -i "$WORK/sealed" > "$WORK/out" || fail "reseal on the new firmware: $(cat "$WORK/out")"
grep -q "Closed the firmware-update window" "$WORK/out" || fail "no close message: $(cat "$WORK/out")"
c1=$(counter)
[ $((16#$c1)) -eq $((16#$c0 + 1)) ] || fail "counter after reseal: tpm2_nvread $c1, was $c0"
jq -e .policy.window "$WORK/sealed" >/dev/null && fail "the resealed file keeps a window"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal of the resealed file"
"$M" unseal -i "$WORK/sealed-window" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "the old window file still unseals after the counter moved (exit $rc)"
grep -q "window is closed" "$WORK/out" || fail "closed window not said: $(cat "$WORK/out")"
echo "ok: reseal moved the counter ($((16#$c0)) -> $((16#$c1)), tpm2_nvread); the old window no longer unseals"

# Yet other firmware: the resealed file has no window, nothing unseals.
boot "$F3"
"$M" unseal -i "$WORK/sealed" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unseal on unexpected firmware after the window closed: exit $rc"
"$M" unseal -i "$WORK/sealed-window" > /dev/null 2>&1 && fail "the closed window unseals other firmware"
echo "ok: other firmware after the window closed: refused"

# --keep-window, then --close-window.
boot "$F2"
"$M" reseal -i "$WORK/sealed" --firmware-update > /dev/null || fail "second --firmware-update"
[ "$(jq -r .policy.window.counter "$WORK/sealed")" = "$((16#$c1))" ] || fail "second window counter"
cp "$WORK/sealed" "$WORK/second"
"$M" reseal -i "$WORK/second" --keep-window > "$WORK/out" || fail "reseal --keep-window"
[ "$(counter)" = "$c1" ] || fail "--keep-window moved the counter"
boot "$F3"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "window still open after --keep-window"
"$M" reseal --close-window > "$WORK/out" || fail "--close-window: $(cat "$WORK/out")"
[ $((16#$(counter))) -eq $((16#$c1 + 1)) ] || fail "--close-window did not increment"
"$M" unseal -i "$WORK/sealed" > /dev/null 2>&1 && fail "unsealed after --close-window"
echo "ok: --keep-window keeps the counter; --close-window closes the window"

# An index that is not mboot's counter: refused, left alone (exit 3).
tpm2_nvdefine 0x01800b07 -C o -s 8 -a "ownerread|ownerwrite|authread" >/dev/null || fail "nvdefine"
boot "$F3"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/other" || fail "seal"
"$M" reseal -i "$WORK/other" --firmware-update --nv-index 0x01800b07 > "$WORK/out" 2>&1; rc=$?
{ [ $rc -eq 3 ] && grep -q "not an mboot counter" "$WORK/out"; } || fail "foreign NV index: exit $rc: $(cat "$WORK/out")"
echo "ok: an NV index with other attributes is refused (exit 3)"
