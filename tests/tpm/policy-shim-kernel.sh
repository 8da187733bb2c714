#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `mboot policy generate --kernel` under Secure Boot: shim verifies the kernel GRUB's linux
# command loads and measures it into PCR 4 by its Authenticode digest (Debian's GRUB twice: a
# real Debian 12 boot, tests/vm's secureboot scenario). The known-good log: the real GRUB boot
# of tests/data/grub-model (no Secure Boot) with that kernel's EV_EFI_BOOT_SERVICES_APPLICATION
# appended twice after its linuxefi command, pesign's digest of a PE standing in for the kernel
# (mb-forge append-event). The PCR values verify checks against are tpm2_eventlog's replay of
# each log. No TPM is needed.
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}" "${MB_FORGE:?}"
G=$MB_TESTDATA/grub-model
PE=/usr/lib/shim/mmx64.efi.signed    # the kernel's stand-in: a PE, signed
OTHER=/usr/lib/shim/fbx64.efi.signed # another PE
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
command -v pesign >/dev/null || { echo "FAIL pesign is not installed (scripts/install-deps)"; exit 1; }
command -v tpm2_eventlog >/dev/null || { echo "FAIL tpm2_eventlog is not installed"; exit 1; }
[ -r "$PE" ] && [ -r "$OTHER" ] || { echo "FAIL $PE or $OTHER missing (shim-signed)"; exit 1; }
AUTH=$(pesign -h -i "$PE" | awk '{ print $2 }')
OTHER_AUTH=$(pesign -h -i "$OTHER" | awk '{ print $2 }')
[ ${#AUTH} = 64 ] && [ ${#OTHER_AUTH} = 64 ] || { echo "FAIL pesign -h: '$AUTH' '$OTHER_AUTH'"; exit 1; }

# UEFI_IMAGE_LOAD_EVENT: location, length, link-time address, device path length 4, End node
printf '\0\0\0\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\4\0\0\0\0\0\0\0\177\377\4\0' >"$tmp/load-event"
app() { # app IN OUT SHA256: IN with an EV_EFI_BOOT_SERVICES_APPLICATION of that digest appended
	"$MB_FORGE" "$1" "$2" append-event 4 0x80000003 "$tmp/load-event" "sha256=$3" || bad "mb-forge append-event $2"
}
app "$G/log.bin" "$tmp/one.bin" "$AUTH"
app "$tmp/one.bin" "$tmp/sb.bin" "$AUTH"          # the real chain's shape: the kernel twice
app "$tmp/sb.bin" "$tmp/third.bin" "$AUTH"        # a third time
app "$tmp/one.bin" "$tmp/other.bin" "$OTHER_AUTH" # the kernel, then another binary
for l in sb third other; do
	tpm2_eventlog "$tmp/$l.bin" 2>/dev/null | sed -n '/^pcrs:/,$p' | sed 1d >"$tmp/$l.pcrs"
	[ -s "$tmp/$l.pcrs" ] || bad "tpm2_eventlog cannot replay $l.bin"
done
# verify LOG POLICY: exit code in $rc, the verdict in $tmp/v.json
verify() {
	"$MBOOT" verify --log "$tmp/$1.bin" --pcrs "$tmp/$1.pcrs" --no-userspace-log --policy "$tmp/$2" --json >"$tmp/v.json" 2>"$tmp/err"
	rc=$?
}
# generate OUT [ARGS...]: the policy of the release with kernel $PE, from sb.bin. PCR 9 is left
# out: the PE stands in for the kernel only in PCR 4 (the log's GRUB read the real kernel and
# initrd, which are not here).
generate() {
	local out=$1
	shift
	"$MBOOT" policy generate --from-log "$tmp/sb.bin" --kernel "$PE" --initrd "$G/boot-grub.cfg" \
		--grub-cfg "(hd0,gpt1)/boot/grub/grub.cfg=$G/boot-grub.cfg" "$@" -o "$tmp/full-$out" --force 2>"$tmp/err" ||
		bad "policy generate $*: exit $? $(cat "$tmp/err")"
	jq 'del(.pcrs["9"])' "$tmp/full-$out" >"$tmp/$out"
}
kernel_rules() { jq -c --arg d "$1" '[.pcrs["4"].rules[]? | select(any(.digests[]?; .sha256 == $d)) | [.max, .required]]' "$tmp/$2"; }

# Without --efi: PCR 4 is judged by rules (the log's own events, less its kernel's, and the
# kernel's), not by the log's value, which would hold the old kernel.
generate p.json
got=$(kernel_rules "$AUTH" p.json)
[ "$got" = '[[2,true]]' ] && ok "--kernel: one PCR 4 rule with pesign's digest of the kernel, required, max 2 (the log's count)" ||
	bad "--kernel: PCR 4 kernel rules $got: $(jq -c '.pcrs["4"]' "$tmp/p.json")"
got=$(jq -c '[.pcrs["4"].rules[] | [.type, .max]]' "$tmp/p.json")
[ "$got" = '[["EV_EFI_ACTION",1],["EV_SEPARATOR",1],["EV_EFI_BOOT_SERVICES_APPLICATION",1],["EV_EFI_BOOT_SERVICES_APPLICATION",2]]' ] &&
	ok "--kernel: PCR 4 rules: the action, the separator, GRUB once, the kernel twice" || bad "--kernel: PCR 4 rules $got"
verify sb p.json
[ $rc = 0 ] && [ "$(jq -c '[.verified, .policy.ok]' "$tmp/v.json")" = '[true,true]' ] &&
	ok "the boot the policy was generated from meets it (exit 0)" ||
	bad "the known-good boot: exit $rc $(jq -c '.policy.violations' "$tmp/v.json") $(cat "$tmp/err")"
verify third p.json
[ $rc = 1 ] && jq -e '[.policy.violations[]] | length == 1 and (.[0] | .pcr == 4 and (.reason | test("already matched its maximum number of times")))' "$tmp/v.json" >/dev/null &&
	ok "a third kernel event: exit 1, PCR 4's kernel rule at its maximum" ||
	bad "third kernel event: exit $rc $(jq -c '.policy.violations' "$tmp/v.json")"
verify other p.json
[ $rc = 1 ] && jq -e --arg d "$OTHER_AUTH" '[.policy.violations[] | select(.event)] | length == 1 and (.[0] | .pcr == 4 and .digest == $d and (.reason | endswith("no rule of the policy allows it")))' "$tmp/v.json" >/dev/null &&
	ok "another binary after the kernel: exit 1, its event allowed by no rule" ||
	bad "other binary: exit $rc $(jq -c '.policy.violations' "$tmp/v.json")"

# --efi naming the kernel too: still one rule, the log's count (not 1, nor 1 + 2).
generate e.json --efi "$PE"
got=$(kernel_rules "$AUTH" e.json)
[ "$got" = '[[2,true]]' ] && ok "--efi KERNEL --kernel KERNEL: one rule, max 2" || bad "--efi KERNEL: kernel rules $got"
verify sb e.json
# no --efi for the log's GRUB image (not here): its event (#23, before the linux command) alone
# is a violation
[ $rc = 1 ] && jq -e --arg d "$AUTH" '[.policy.violations[]] | length == 1 and (.[0] | .pcr == 4 and .event == 23 and .digest != $d)' "$tmp/v.json" >/dev/null &&
	ok "--efi KERNEL: the kernel's two events allowed, only GRUB's (not given) violates" ||
	bad "--efi KERNEL: exit $rc $(jq -c '.policy.violations' "$tmp/v.json")"

# A log without the kernel in PCR 4 (no shim): no kernel rule; PCR 4 its value, as before.
"$MBOOT" policy generate --from-log "$G/log.bin" --kernel "$PE" --initrd "$G/boot-grub.cfg" \
	--grub-cfg "(hd0,gpt1)/boot/grub/grub.cfg=$G/boot-grub.cfg" -o "$tmp/n.json" 2>"$tmp/err" || bad "generate, no shim: $(cat "$tmp/err")"
[ "$(jq -c '.pcrs["4"] | keys' "$tmp/n.json")" = '["values"]' ] && ok "a log without the kernel in PCR 4: PCR 4 its value, no kernel rule" ||
	bad "no shim: PCR 4 $(jq -c '.pcrs["4"]' "$tmp/n.json")"
"$MBOOT" policy generate --from-log "$G/log.bin" --kernel "$PE" --initrd "$G/boot-grub.cfg" --efi "$OTHER" \
	--grub-cfg "(hd0,gpt1)/boot/grub/grub.cfg=$G/boot-grub.cfg" -o "$tmp/n.json" --force 2>"$tmp/err" || bad "generate --efi, no shim: $(cat "$tmp/err")"
got=$(kernel_rules "$AUTH" n.json)
[ "$got" = '[]' ] && ok "a log without the kernel in PCR 4, --efi: no kernel rule" || bad "no shim, --efi: kernel rules $got"

# The kernel must be a PE when the log says shim measured it: exit 2, the file named.
"$MBOOT" policy generate --from-log "$tmp/sb.bin" --kernel "$G/boot-grub.cfg" --initrd "$G/boot-grub.cfg" \
	--grub-cfg "(hd0,gpt1)/boot/grub/grub.cfg=$G/boot-grub.cfg" -o "$tmp/x.json" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "boot-grub.cfg" "$tmp/err" && [ ! -e "$tmp/x.json" ] && ok "a kernel that is not a PE under shim: exit 2 ($(head -c 200 "$tmp/err"))" ||
	bad "not a PE: exit $rc $(cat "$tmp/err")"

echo "policy shim kernel: $fails failed"
[ "$fails" = 0 ]
