#!/bin/bash
# Prediction never lies (issue 15), on real logs of the corpus: an Ubuntu machine (shim + GRUB,
# the ESP's grub.cfg that loads /boot/grub/grub.cfg), a Fedora Secure Boot machine (shim + GRUB),
# a systemd-boot VM and a Windows VM.
# - A change that applies to no event of the log exits 1, names the option, prints no values.
# - A PCR the change moves in a way mboot does not compute exits 1, is named on stderr and has
#   no value on stdout (nor in --json banks).
# - --grub-cfg MEASURED_PATH=FILE replaces only the config GRUB measured under that path: PCR 9
#   is then today's events extended again with that event's digest replaced, computed here with
#   openssl, never with mboot's digest or extend code.
set -u
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
UBUNTU=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
SECUREBOOT=$C/keylime-tests/mb_log_secureboot.bin
SDBOOT=$C/tpm2-tools/event-sd-boot-fedora37.bin
WINDOWS=$C/go-attestation/windows_gcp_shielded_vm.bin
# Two EFI applications this machine has (scripts/install-deps), which none of these logs booted.
SHIM=/usr/lib/shim/shimx64.efi
SDBOOT_EFI=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

head -c 4096 /dev/urandom >"$W/file"
[ -r "$SHIM" ] && [ -r "$SDBOOT_EFI" ] || bad "$SHIM and $SDBOOT_EFI are needed (shim-unsigned, systemd-boot-efi)"

# unmatched WHAT LOG OPTION ARGS...: exit 1, "OPTION ... matched no event" on stderr, nothing on
# stdout; with --json, OPTION under "unmatched" and no values.
unmatched() {
	local what=$1 log=$2 opt=$3 rc jrc
	shift 3
	"$M" predict --log "$log" "$@" >"$W/out" 2>"$W/err"
	rc=$?
	"$M" predict --log "$log" "$@" --json >"$W/out.json" 2>/dev/null
	jrc=$?
	if [ $rc = 1 ] && [ $jrc = 1 ] && [ ! -s "$W/out" ] && grep -q -- "^mboot: $opt .*matched no event" "$W/err" &&
		jq -e --arg o "$opt" '(.unmatched | map(.option) | index($o)) != null and .banks == {}' "$W/out.json" >/dev/null; then
		ok "$what: exit 1, $opt named, no values"
	else
		bad "$what: rc $rc/$jrc, stdout $(head -c 100 "$W/out"), stderr $(head -c 300 "$W/err")"
	fi
}
unmatched "systemd-boot log, --kernel" "$SDBOOT" --kernel --kernel "$W/file"
unmatched "systemd-boot log, --kernel-path" "$SDBOOT" --kernel-path --kernel-path /vmlinuz-new
unmatched "systemd-boot log, --initrd-path" "$SDBOOT" --initrd-path --initrd-path /initrd-new
unmatched "systemd-boot log (no GRUB config), --grub-cfg FILE" "$SDBOOT" --grub-cfg --grub-cfg "$W/file"
unmatched "Windows log, --kernel" "$WINDOWS" --kernel --kernel "$W/file"
unmatched "Windows log, --initrd" "$WINDOWS" --initrd --initrd "$W/file"
unmatched "Windows log, --cmdline" "$WINDOWS" --cmdline --cmdline "quiet"
unmatched "Ubuntu GRUB log, a config path it never measured" "$UBUNTU" --grub-cfg \
	--grub-cfg "(hd0,gpt9)/boot/grub/grub.cfg=$W/file"
unmatched "Ubuntu GRUB log, --efi whose OLD never booted" "$UBUNTU" --efi --efi "$SDBOOT_EFI=$SHIM"
unmatched "Secure Boot log, --efi whose OLD never booted" "$SECUREBOOT" --efi --efi "$SDBOOT_EFI=$SHIM"
# One change that matched among others: still nothing printed.
unmatched "Ubuntu GRUB log, --cmdline applies but --efi does not" "$UBUNTU" --efi --cmdline "root=/dev/sda1 ro" \
	--efi "$SDBOOT_EFI=$SHIM"

# unpredictable WHAT LOG PCRS ARGS...: exit 1, no change unmatched; each of PCRS (a JSON list of
# strings) named on stderr with no line on stdout; --json: exactly PCRS under "unpredictable",
# absent from every bank, and some other PCR still has its value.
unpredictable() {
	local what=$1 log=$2 want=$3 rc jrc p missing=""
	shift 3
	"$M" predict --log "$log" "$@" >"$W/out" 2>"$W/err"
	rc=$?
	"$M" predict --log "$log" "$@" --json >"$W/out.json" 2>/dev/null
	jrc=$?
	for p in $(jq -r '.[]' <<<"$want"); do
		grep -q "^mboot: PCR $p cannot be predicted" "$W/err" && ! grep -qE "^ *$p *:" "$W/out" || missing="$missing $p"
	done
	if [ $rc = 1 ] && [ $jrc = 1 ] && [ -z "$missing" ] && ! grep -q "matched no event" "$W/err" &&
		grep -qE '^ *0 *:' "$W/out" &&
		jq -e --argjson w "$want" '(.unpredictable | keys) == $w and .unmatched == [] and
			([.banks[] | keys[]] | map(select(. as $k | $w | index($k))) | length) == 0' "$W/out.json" >/dev/null; then
		ok "$what: exit 1, PCR $(jq -r 'join(", ")' <<<"$want") named and without a value"
	else
		bad "$what: rc $rc/$jrc, not named or printed:$missing; $(jq -c .unpredictable "$W/out.json" | head -c 400)"
	fi
}
# a kernel updated in place (the name GRUB loads today): PCR 4 only
mkdir -p "$W/new"
cp "$W/file" "$W/new/vmlinuz-5.7.0-rc2+"
cp "$W/file" "$W/new/vmlinuz-5.14.10-300.fc35.x86_64"
unpredictable "Ubuntu GRUB log (shim measured the kernel into PCR 4), --kernel" "$UBUNTU" '["4"]' \
	--kernel "$W/new/vmlinuz-5.7.0-rc2+"
unpredictable "Secure Boot log (shim measured the kernel into PCR 4), --kernel" "$SECUREBOOT" '["4"]' \
	--kernel "$W/new/vmlinuz-5.14.10-300.fc35.x86_64"
# a kernel under another name (update-grub's new version) and no new config or --kernel-path:
# GRUB's linux command and kernel_cmdline will name a path nobody gave, so PCR 8 has no value
# either (it used to keep today's path and print a value the next boot does not have)
unpredictable "Ubuntu GRUB log, --kernel named otherwise (PCR 8: the path GRUB will load)" "$UBUNTU" '["4","8"]' \
	--kernel "$W/file"
grep -q "^mboot: PCR 8 cannot be predicted (no value printed): the kernel $W/file is not a file GRUB loads today (/boot/vmlinuz-5.7.0-rc2+)" \
	"$W/err" && ok "... the reason names both files" || bad "PCR 8's reason: $(cat "$W/err")"
unpredictable "Ubuntu GRUB log, --initrd named otherwise (PCR 8: the path GRUB will load)" "$UBUNTU" '["8"]' \
	--initrd "$W/file"
unpredictable "Secure Boot log, --kernel named otherwise" "$SECUREBOOT" '["4","8"]' --kernel "$W/file"
unpredictable "systemd-boot log, --initrd (PCR 12 command line)" "$SDBOOT" '["12"]' --initrd "$W/file"
unpredictable "systemd-boot log, --cmdline (PCR 12 command line)" "$SDBOOT" '["12"]' --cmdline "quiet"
# An older systemd-boot (sbctl's T480s, event 44) measured the command line into PCR 8 as UTF-16
# ending in one NUL byte (xxd: "... 2000 00"): the same command line, as `log show` reads it.
unpredictable "older systemd-boot log, --cmdline (PCR 8 command line, odd length)" \
	"$C/sbctl/t480s_eventlog" '["8"]' --cmdline "quiet"
printf 'linux /boot/vmlinuz-new root=/dev/sda1 ro\n' >"$W/main.cfg"
unpredictable "Ubuntu GRUB log, a /boot/grub/grub.cfg without today's commands" "$UBUNTU" '["8"]' \
	--grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/main.cfg"
# The systemd-boot log and a new kernel (the issue's case: exit 0, PCR 12 unchanged, no note):
# --kernel is named as matching nothing, and PCR 12 as unpredictable.
"$M" predict --log "$SDBOOT" --kernel "$W/file" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$W/out" ] && grep -q "^mboot: --kernel .*matched no event" "$W/err" &&
	grep -q "^mboot: PCR 12 cannot be predicted.*systemd-boot" "$W/err" &&
	ok "systemd-boot log, --kernel: exit 1, --kernel matched nothing, PCR 12 unpredictable" ||
	bad "systemd-boot --kernel: rc $rc $(cat "$W/err")"

# extend_all BANK DIGESTS...: a PCR from zeros, extended with each hex digest, by openssl.
extend_all() {
	local bank=$1 pcr d
	shift
	pcr=$(printf '%0*d' $(($(printf '%s' "$1" | wc -c))) 0)
	for d in "$@"; do
		pcr=$(printf '%s%s' "$pcr" "$d" | xxd -r -p | openssl dgst "-$bank" -binary | xxd -p -c 64)
	done
	echo "$pcr"
}
# expected_pcr9 LOG BANK INDEX FILE: PCR 9 of LOG's events with event INDEX's digest replaced by
# the digest of FILE (sha256sum / sha1sum).
expected_pcr9() {
	local log=$1 bank=$2 index=$3 file=$4 new
	new=$("${bank}sum" <"$file" | cut -d' ' -f1)
	# shellcheck disable=SC2046 # one word per digest
	extend_all "$bank" $("$M" log show --json --pcr 9 "$log" |
		jq -r --arg b "$bank" --argjson i "$index" --arg n "$new" '.events[] | if .index == $i then $n else .digests[$b] end')
}

# The systemd-boot log's --initrd: PCR 9 is its one event, the EFI stub's initrd tag (#25), now
# H(initrd).
"$M" predict --log "$SDBOOT" --initrd "$W/file" --json >"$W/sd.json" 2>/dev/null
want=$(expected_pcr9 "$SDBOOT" sha256 25 "$W/file")
[ "$(jq -r '.banks.sha256["9"]' "$W/sd.json")" = "$want" ] &&
	ok "systemd-boot log, --initrd: PCR 9 = openssl's extend of sha256sum of the initrd ($want)" ||
	bad "systemd-boot --initrd PCR 9: $(jq -r '.banks.sha256["9"]' "$W/sd.json") != $want"

# Debian/Ubuntu's two configs: (hd0,gpt1)/EFI/ubuntu/grub.cfg (event 44, the ESP stub) and
# (hd0,gpt2)/boot/grub/grub.cfg (event 52). A bare FILE is ambiguous.
"$M" predict --log "$UBUNTU" --grub-cfg "$W/main.cfg" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 2 ] && [ ! -s "$W/out" ] &&
	grep -qF '(hd0,gpt1)/EFI/ubuntu/grub.cfg, (hd0,gpt2)/boot/grub/grub.cfg' "$W/err" &&
	ok "two configs measured, --grub-cfg FILE: exit 2, both measured paths named" || bad "ambiguous --grub-cfg: rc $rc $(cat "$W/err")"
path_of() { "$M" log show --json --pcr 9 "$UBUNTU" | jq -r --argjson i "$1" '.events[] | select(.index == $i) | .decoded.path'; }
[ "$(path_of 44)" = "(hd0,gpt1)/EFI/ubuntu/grub.cfg" ] && [ "$(path_of 52)" = "(hd0,gpt2)/boot/grub/grub.cfg" ] ||
	bad "the sample log's configs are not events 44 and 52"

# A new ESP stub that runs today's commands (the PCR 8 commands between the two config events),
# with a comment more: only event 44 changes; PCR 8 stays predictable; exit 0.
"$M" log show --json --pcr 8 "$UBUNTU" | jq -r '.events[] | select(.index > 44 and .index < 52) | .decoded.text' >"$W/stub.cfg"
echo "# the new ESP stub" >>"$W/stub.cfg"
"$M" predict --log "$UBUNTU" --grub-cfg "(hd0,gpt1)/EFI/ubuntu/grub.cfg=$W/stub.cfg" --json --write-log "$W/stub.bin" \
	>"$W/stub.json" 2>"$W/err"; rc=$?
good=1
for bank in sha1 sha256; do
	want=$(expected_pcr9 "$UBUNTU" $bank 44 "$W/stub.cfg")
	got=$(jq -r --arg b "$bank" '.banks[$b]["9"]' "$W/stub.json")
	[ "$got" = "$want" ] || { good=0; bad "$bank PCR 9 after a new stub: $got != $want"; }
done
[ $rc = 0 ] && [ "$(jq -c .changed "$W/stub.json")" = "[9]" ] && [ "$(jq -c .unpredictable "$W/stub.json")" = "{}" ] &&
	diff <("$M" log show --json --pcr 9 "$UBUNTU" | jq -c '.events[] | select(.index != 44) | [.index, .digests, .data]') \
		<("$M" log show --json --pcr 9 "$W/stub.bin" | jq -c '.events[] | select(.index != 44) | [.index, .digests, .data]') >/dev/null && [ $good = 1 ] &&
	ok "--grub-cfg (hd0,gpt1)/EFI/ubuntu/grub.cfg=STUB: exit 0, only event 44 replaced, PCR 9 (sha1, sha256) = openssl's replay" ||
	bad "new stub: rc $rc $(jq -c '[.changed, .unpredictable]' "$W/stub.json") $(head -3 "$W/err")"

# A new /boot/grub/grub.cfg: only event 52 changes (PCR 8 is then unpredictable, PCR 9 is not).
"$M" predict --log "$UBUNTU" --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/main.cfg" --json --write-log "$W/main.bin" \
	>"$W/main.json" 2>/dev/null; rc=$?
want=$(expected_pcr9 "$UBUNTU" sha256 52 "$W/main.cfg")
[ $rc = 1 ] && [ "$(jq -r '.banks.sha256["9"]' "$W/main.json")" = "$want" ] &&
	diff <("$M" log show --json --pcr 9 "$UBUNTU" | jq -c '.events[] | select(.index != 52) | [.index, .digests, .data]') \
		<("$M" log show --json --pcr 9 "$W/main.bin" | jq -c '.events[] | select(.index != 52) | [.index, .digests, .data]') >/dev/null &&
	ok "--grub-cfg (hd0,gpt2)/boot/grub/grub.cfg=FILE: only event 52 replaced; PCR 9 = openssl's replay ($want)" ||
	bad "new main config: rc $rc PCR 9 $(jq -r '.banks.sha256["9"]' "$W/main.json") != $want"
# Both, each by its path.
"$M" predict --log "$UBUNTU" --grub-cfg "(hd0,gpt1)/EFI/ubuntu/grub.cfg=$W/stub.cfg" \
	--grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/main.cfg" --write-log "$W/both.bin" >/dev/null 2>&1
"$M" log show --json --pcr 9 "$W/both.bin" | jq -r '.events[] | select(.index == 44 or .index == 52) | .digests.sha256' >"$W/both"
printf '%s\n%s\n' "$(sha256sum <"$W/stub.cfg" | cut -d' ' -f1)" "$(sha256sum <"$W/main.cfg" | cut -d' ' -f1)" | cmp -s - "$W/both" &&
	ok "two --grub-cfg MEASURED_PATH=FILE: each config event carries its own file's sha256sum" || bad "both configs: $(cat "$W/both")"
# The same config twice, or a bare FILE beside another: a usage error.
"$M" predict --log "$UBUNTU" --grub-cfg "$W/stub.cfg" --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/main.cfg" >/dev/null 2>&1
[ $? = 2 ] && ok "a bare --grub-cfg FILE beside another: exit 2" || bad "bare FILE beside another"

# policy generate: the same rule. The ESP stub's digest is carried over from the log, the new
# /boot/grub/grub.cfg's digest replaces the old one's.
old_stub=$("$M" log show --json --pcr 9 "$UBUNTU" | jq -r '.events[] | select(.index == 44) | .digests.sha256')
old_main=$("$M" log show --json --pcr 9 "$UBUNTU" | jq -r '.events[] | select(.index == 52) | .digests.sha256')
new_main=$(sha256sum <"$W/main.cfg" | cut -d' ' -f1)
# the kernel a PE: on this log shim measures it into PCR 4, by its Authenticode digest
gen() { "$M" policy generate --kernel /usr/lib/shim/mmx64.efi.signed --initrd "$W/file" --from-log "$UBUNTU" "$@"; }
gen --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/main.cfg" >"$W/policy.json" 2>"$W/err"; rc=$?
[ $rc = 0 ] && grep -q "$new_main" "$W/policy.json" && grep -q "$old_stub" "$W/policy.json" && ! grep -q "$old_main" "$W/policy.json" &&
	ok "policy generate --grub-cfg (hd0,gpt2)/boot/grub/grub.cfg=FILE: the stub's digest kept, the main config's replaced" ||
	bad "policy generate with MEASURED_PATH: rc $rc $(head -2 "$W/err")"
gen --grub-cfg "$W/main.cfg" >/dev/null 2>"$W/err"; rc=$?
[ $rc = 2 ] && grep -qF '(hd0,gpt1)/EFI/ubuntu/grub.cfg, (hd0,gpt2)/boot/grub/grub.cfg' "$W/err" &&
	ok "policy generate --grub-cfg FILE with two configs in the log: exit 2, both named" || bad "policy generate bare FILE: rc $rc $(cat "$W/err")"
gen --grub-cfg "(hd0,gpt9)/grub.cfg=$W/main.cfg" >/dev/null 2>"$W/err"; rc=$?
[ $rc = 2 ] && grep -qF '(hd0,gpt9)/grub.cfg' "$W/err" && ok "policy generate: a MEASURED_PATH the log never measured: exit 2, named" ||
	bad "policy generate unknown path: rc $rc $(cat "$W/err")"

echo "predict honesty: $fails failed"
[ "$fails" = 0 ]
