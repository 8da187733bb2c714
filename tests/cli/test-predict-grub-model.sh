#!/bin/bash
# predict runs GRUB's configs (src/lib/grub/grub-script.c) on a real boot: Debian's GRUB 2.06
# with its tpm module, configs made by Debian's grub-mkconfig scripts (tests/data/grub-model,
# PROVENANCE there).
# - The kernel bump grub-mkconfig made (boot-grub-next.cfg): the predicted PCR 8 is today's PCR 8
#   strings (as GRUB logged them) with the kernel version replaced, extended here with
#   sha256sum from zero, never with mboot's digest or extend code.
# - The kept copies (--grub-booted-dir: one file per config, named by the sha256 hex of the
#   measured path) do the same as --grub-cfg-booted.
# - The fallback after the update (boot-grub-both.cfg: update-grub's config with both kernels,
#   PROVENANCE): someone picks "Advanced options > ... with Linux OLD" (--grub-entry by numbers,
#   by title, by id, --grub-entry-kernel). GRUB measures no key press, so PCR 8 is today's strings
#   up to the first entry's definition, then the new config's definitions (built here from its
#   text: argv without quotes, $menuentry_id_option as --id, " {" + the block's raw lines + "}",
#   the rule checked on today's two definitions first), the submenu's and the entry's setparams
#   lines, then today's entry commands; PCR 9 is today's events with the new config's sha256sum.
#   A SPEC that names no entry or a submenu, a kernel no entry loads: exit 1, named.
# - A booted copy that is not what booted (its digest is not today's PCR 9 event): refused.
# - A booted copy the model does not reproduce today from: refused, the first differing
#   command named.
set -u
M=${MBOOT:?}
D=${MB_TESTDATA:?}/grub-model
ESP='(hd0,gpt1)/EFI/BOOT/grub.cfg'
BOOT='(hd0,gpt1)/boot/grub/grub.cfg'
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# Today's PCR 8 strings (event data, hex, label and NUL dropped), one a line, from the log.
"$M" log show --json "$D/log.bin" >"$W/log.json" || bad "log show"
jq -r '.events[] | select(.pcr == 8) | .data' "$W/log.json" | while read -r hex; do
	printf '%s' "$hex" | xxd -r -p | tr -d '\0' | sed -e 's/^grub_cmd: //' -e 's/^kernel_cmdline: //' | base64 -w0
	echo
done >"$W/today.b64"
[ "$(wc -l <"$W/today.b64")" -gt 30 ] || bad "today's log has its PCR 8 strings"
old=$(sed -n 's/.*vmlinuz-\([^ \t]*\).*/\1/p' "$D/boot-grub.cfg" | head -n 1)
new=$(sed -n 's/.*vmlinuz-\([^ \t]*\).*/\1/p' "$D/boot-grub-next.cfg" | head -n 1)
[ -n "$old" ] && [ -n "$new" ] && [ "$old" != "$new" ] || bad "the two configs name two kernels ($old, $new)"

# grub_fallback_extend STRINGS_B64: PCR 8 (sha256) from zero over each string's sha256sum
# shellcheck source=../grub-model-fallback.sh
. "${MB_SOURCE_ROOT:?}/tests/grub-model-fallback.sh"
# GRUB's strings for the next kernel: every occurrence of the version replaced
while read -r b; do printf '%s' "$b" | base64 -d | sed "s/$old/$new/g" | base64 -w0; echo; done <"$W/today.b64" >"$W/next.b64"
want_today=$(grub_fallback_extend "$W/today.b64")
want_next=$(grub_fallback_extend "$W/next.b64")
got_real=$(jq -r '.sha256["8"]' "$D/pcrs.json")
[ "$want_today" = "$got_real" ] && ok "today's PCR 8 strings replay to the PCR 8 the guest read ($got_real)" ||
	bad "replay of today's strings $want_today, TPM $got_real"

pcr8() { jq -r '.banks.sha256["8"] // empty' "$1"; }

# The new config loads vmlinuz-$new and initrd.img-$new: without those files PCR 9 cannot be
# known (today's kernel digest would be a lie), PCR 8 can.
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" >"$W/next.json" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ "$(pcr8 "$W/next.json")" = "$want_next" ] && [ -z "$(jq -r '.banks.sha256["9"] // empty' "$W/next.json")" ] &&
	jq -e --arg k "vmlinuz-$new" --arg i "initrd.img-$new" '.unpredictable["9"] | contains($k) and contains($i)' "$W/next.json" >/dev/null &&
	ok "kernel bump without the files: PCR 8 is the replay of GRUB's strings for $new ($want_next), PCR 9 unpredictable naming both" ||
	bad "kernel bump without files: rc $rc, PCR 8 $(pcr8 "$W/next.json"), want $want_next; $(jq -c .unpredictable "$W/next.json") $(cat "$W/err")"
printf 'a kernel %s\n' "$new" >"$W/vmlinuz-$new"
printf 'an initrd %s\n' "$new" >"$W/initrd.img-$new"
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" \
	--kernel "$W/vmlinuz-$new" --initrd "$W/initrd.img-$new" >"$W/next.json" 2>"$W/err"
rc=$?
want9=$(grub_pcr9 "$W/log.json" "$D/boot-grub-next.cfg" "$W/vmlinuz-$new" "$W/initrd.img-$new")
[ $rc = 0 ] && [ "$(pcr8 "$W/next.json")" = "$want_next" ] && [ "$(jq -r '.banks.sha256["9"]' "$W/next.json")" = "$want9" ] &&
	ok "kernel bump: predicted PCR 8 is the replay of GRUB's strings for $new ($want_next), PCR 9 of sha256sum's digests ($want9)" ||
	bad "kernel bump: rc $rc, PCR 8 $(pcr8 "$W/next.json"), want $want_next; PCR 9 $(jq -r '.banks.sha256["9"]' "$W/next.json"), want $want9; $(cat "$W/err")"

# ---- the fallback: the old kernel picked from the new config's Advanced options ----------------
BOTH=$D/boot-grub-both.cfg
grub_fallback_expect "$W/log.json" "$D/boot-grub.cfg" "$BOTH" "$old" "$W"
[ -z "$FB_ERR" ] && ok "GRUB's strings for the fallback built by hand (today's definitions rebuilt from the text first)" ||
	bad "building the fallback's strings:$FB_ERR"
want_fb=$FB_PCR8
want_fb9=$FB_PCR9
[ "$FB_TODAY8" = "$got_real" ] || bad "the helper's replay of today's strings $FB_TODAY8, TPM $got_real"
grep -qF "vmlinuz-$old " "$BOTH" && grep -qF "vmlinuz-$new " "$BOTH" || bad "boot-grub-both.cfg names $old and $new"
sub_title=$(sed -n "s/^submenu '\([^']*\)'.*/\1/p" "$BOTH")
old_title=$(sed -n "s/^[[:blank:]]*menuentry '\([^']*$old\)'.*/\1/p" "$BOTH")
[ "$want_fb" != "$want_next" ] && [ "$want_fb" != "$want_today" ] || bad "the fallback's PCR 8 is its own"
pcr9() { jq -r '.banks.sha256["9"] // empty' "$1"; }
for pick in "--grub-entry=1>1" "--grub-entry=$sub_title>$old_title" \
	"--grub-entry=gnulinux-advanced-6D62-0001>gnulinux-$old-advanced-6D62-0001" \
	"--grub-entry-kernel=/boot/vmlinuz-$old"; do
	"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$BOTH" \
		--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" "$pick" \
		>"$W/fb.json" 2>"$W/err"
	rc=$?
	[ $rc = 0 ] && [ "$(pcr8 "$W/fb.json")" = "$want_fb" ] && [ "$(pcr9 "$W/fb.json")" = "$want_fb9" ] &&
		ok "fallback $pick: PCR 8 is the replay of GRUB's strings for the old entry ($want_fb), PCR 9 too" ||
		bad "fallback $pick: rc $rc, PCR 8 $(pcr8 "$W/fb.json") want $want_fb, PCR 9 $(pcr9 "$W/fb.json") want $want_fb9; $(cat "$W/err")"
done
# the default entry of the same config: the new kernel, another PCR 8
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$BOTH" \
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" >"$W/fbdef.json" 2>"$W/err"
[ -n "$(pcr8 "$W/fbdef.json")" ] && [ "$(pcr8 "$W/fbdef.json")" != "$want_fb" ] &&
	ok "without --grub-entry: the default entry, another PCR 8" || bad "default of both: $(pcr8 "$W/fbdef.json"); $(cat "$W/err")"
# picks that name no entry (a number past the end, a submenu, an entry as a submenu, an unknown
# title) and a kernel no entry loads: exit 1, the option named, no values
for pick in "--grub-entry=2" "--grub-entry=1" "--grub-entry=0>1" "--grub-entry=$sub_title>nope" \
	"--grub-entry-kernel=/boot/vmlinuz-0.0.0-none"; do
	"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$BOTH" \
		--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" "$pick" \
		>"$W/nope.json" 2>"$W/err"
	rc=$?
	[ $rc = 1 ] && [ -z "$(pcr8 "$W/nope.json")" ] &&
		jq -e --arg o "${pick%%=*}" '[.unmatched[] | select(.option == $o)] | length == 1' "$W/nope.json" >/dev/null &&
		ok "$pick names no entry to boot: exit 1, named" || bad "$pick: rc $rc; $(cat "$W/nope.json" "$W/err")"
done
# without the configs that booted the model does not run: PCR 8 unpredictable, not the default's
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$BOTH" --grub-entry '1>1' \
	>"$W/nomodel.json" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ -z "$(pcr8 "$W/nomodel.json")" ] && ok "--grub-entry without the booted configs: PCR 8 unpredictable" ||
	bad "--grub-entry without model: rc $rc $(jq -c .unpredictable "$W/nomodel.json")"

# the kept copies: named by the sha256 hex of the measured path
mkdir "$W/kept"
cp "$D/esp-grub.cfg" "$W/kept/$(printf '%s' "$ESP" | sha256sum | cut -c1-64)"
cp "$D/boot-grub.cfg" "$W/kept/$(printf '%s' "$BOOT" | sha256sum | cut -c1-64)"
"$M" predict --log "$D/log.bin" --json --grub-booted-dir "$W/kept" --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--kernel "$W/vmlinuz-$new" --initrd "$W/initrd.img-$new" >"$W/kept.json" 2>"$W/err"
rc=$?
[ $rc = 0 ] && [ "$(pcr8 "$W/kept.json")" = "$want_next" ] && ok "kept copies in --grub-booted-dir: the same PCR 8" ||
	bad "kept copies: rc $rc, PCR 8 $(pcr8 "$W/kept.json"); $(cat "$W/err")"

# the unchanged config through the model: today's PCR 8 again
"$M" predict --log "$D/log.bin" --json --grub-booted-dir "$W/kept" --grub-cfg "$BOOT=$D/boot-grub.cfg" \
	>"$W/same.json" 2>"$W/err"
[ "$(pcr8 "$W/same.json")" = "$want_today" ] && ok "the config that booted predicts today's PCR 8" ||
	bad "same config: PCR 8 $(pcr8 "$W/same.json"); $(cat "$W/err")"

# a booted copy that is not what booted
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$D/boot-grub-next.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" >"$W/wrong.json" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ -z "$(pcr8 "$W/wrong.json")" ] &&
	jq -e '.unpredictable["8"] | contains("does not hash to today")' "$W/wrong.json" >/dev/null &&
	ok "a booted copy that did not boot: PCR 8 unpredictable, said why" ||
	bad "wrong copy: rc $rc $(jq -c .unpredictable "$W/wrong.json")"

# an edited copy: its digest is not today's either (the model's own refusal of a config it does
# not reproduce today from, naming the first differing command, is tests/unit/test-grub-script.c)
{ echo 'insmod extra'; cat "$D/boot-grub.cfg"; } >"$W/edited.cfg"
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$W/edited.cfg" --grub-cfg-booted "$ESP=$D/esp-grub.cfg" >"$W/edited.json" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ -z "$(pcr8 "$W/edited.json")" ] && ok "an edited booted copy: refused (exit 1, no PCR 8)" ||
	bad "edited copy: rc $rc $(jq -c .unpredictable "$W/edited.json")"

# no copy: today's line by line check, which cannot follow grub-mkconfig's config
"$M" predict --log "$D/log.bin" --json --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	>"$W/none.json" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ -z "$(pcr8 "$W/none.json")" ] && ok "no booted copy: PCR 8 unpredictable as before" ||
	bad "no copy: rc $rc $(jq -c .unpredictable "$W/none.json")"

# input errors: a booted copy under a path the log never measured; with --cmdline
"$M" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "(hd0,gpt9)/grub.cfg=$D/boot-grub.cfg" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 2 ] && grep -qF '(hd0,gpt9)/grub.cfg: today' "$W/err" && ok "a booted copy under an unmeasured path: exit 2, named" ||
	bad "unmeasured path: rc $rc $(cat "$W/err")"
"$M" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--grub-cfg-booted "$BOOT=$D/boot-grub.cfg" --cmdline quiet >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 2 ] && grep -qF -- '--cmdline' "$W/err" && ok "--grub-cfg-booted with --cmdline: exit 2" ||
	bad "with --cmdline: rc $rc $(cat "$W/err")"

# Memory is bounded like steps (GRUB_MODEL_MAX_BYTES): a 243 KB config that copies a 240 KB
# variable 900 times (each copy also a measured `set`) needed about 0.5 GB before; now the model
# stops at 4 MiB, PCR 8 unpredictable with the reason, exit 1. A protective `ulimit -v` where
# ASan (which reserves terabytes) is not in the binary.
rss_max_kb=65536
asan=false
if ldd "$M" 2>/dev/null | grep -q libasan; then rss_max_kb=262144; asan=true; fi
words=$(seq -f 'w%g' 30 | tr '\n' ' ')
{
	printf 'set a=%s\n' "$(head -c 240000 /dev/zero | tr '\0' x)"
	printf 'for i in %s; do\n for j in %s; do\n  set "v$i$j=$a"\n done\ndone\n' "$words" "$words"
	cat "$D/boot-grub-next.cfg"
} >"$W/copies.cfg"
(
	$asan || ulimit -v 2000000
	/usr/bin/time -f %M -o "$W/rss" "$M" predict --log "$D/log.bin" --json --grub-booted-dir '' \
		--grub-cfg "$BOOT=$W/copies.cfg" --grub-cfg-booted "$BOOT=$D/boot-grub.cfg" \
		--grub-cfg-booted "$ESP=$D/esp-grub.cfg" >"$W/copies.json" 2>"$W/err"
)
rc=$?
kb=$(tail -n 1 "$W/rss")
[ $rc = 1 ] && [ -z "$(pcr8 "$W/copies.json")" ] && [ "$kb" -lt $rss_max_kb ] &&
	jq -e '.unpredictable["8"] | contains("take more than 4 MiB")' "$W/copies.json" >/dev/null &&
	ok "a $(stat -c %s "$W/copies.cfg")-byte config copying a big variable: PCR 8 unpredictable, said why, $kb KiB" ||
	bad "big variable copied: rc $rc, $kb KiB (max $rss_max_kb), $(jq -c .unpredictable "$W/copies.json" 2>/dev/null) $(tail -c 300 "$W/err")"

echo "predict grub model: $fails failed"
[ "$fails" = 0 ]
