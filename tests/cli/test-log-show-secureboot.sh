#!/bin/bash
# `mboot log show --json` of PCR 7 on real Secure Boot machines, against outside tools over the
# same bytes: tpm2_eventlog prints each variable's data; efitools' sig-list-to-certs splits the
# PK/KEK/db/dbx signature lists into certificates and hashes (counted by type), openssl names
# each certificate's CN; the SbatLevel CSV and the authority events' certificates likewise.
set -u
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
for t in tpm2_eventlog sig-list-to-certs openssl xxd jq; do
	command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/install-deps)"; exit 77; }
done
cn_of() { openssl x509 -inform DER -noout -subject -nameopt multiline,utf8,-esc_msb 2>/dev/null |
	sed -n 's/^ *commonName *= //p' | head -1; }

checked=0
for log in keylime-tests/mb_log_secureboot.bin keylime/create-mb-policy/binary_bios_measurements-secureboot \
	sbctl/t14_eventlog go-tpm-tools/ubuntu-2404-amd-sevsnp.bin go-attestation/sb_cert_eventlog; do
	f=$C/$log
	tpm2_eventlog "$f" >"$W/yaml" 2>/dev/null || { bad "$log: tpm2_eventlog fails"; continue; }
	"$M" log show --json "$f" >"$W/json" 2>/dev/null
	# "number type name hex" of every PCR 7 variable event, as tpm2_eventlog reads it
	awk '/^- EventNum:/ { n = $3 } /^  PCRIndex:/ { p = $2 } /^  EventType:/ { t = $2 } /UnicodeName:/ { name = $2 }
		/VariableData:/ && p == 7 { gsub(/"/, "", $2); print n, t, name, $2 }' "$W/yaml" >"$W/vars"
	while read -r n type name hex; do
		dec() { jq -c --argjson n "$n" ".events[] | select(.index == \$n) | .decoded | $1" "$W/json"; }
		rm -rf "$W/split" && mkdir "$W/split"
		printf '%s' "$hex" | xxd -r -p >"$W/split/value"
		case "$type:$name" in
		EV_EFI_VARIABLE_DRIVER_CONFIG:PK | EV_EFI_VARIABLE_DRIVER_CONFIG:KEK | EV_EFI_VARIABLE_DRIVER_CONFIG:db | EV_EFI_VARIABLE_DRIVER_CONFIG:dbx)
			(cd "$W/split" && sig-list-to-certs value e >/dev/null 2>&1)
			n_x509=$(find "$W/split" -name 'e-*.der' | wc -l)
			n_sha=$(find "$W/split" -name 'e-*.hash' | wc -l)
			want=$(jq -nc --argjson x "$n_x509" --argjson s "$n_sha" '[if $x > 0 then {x509: $x} else empty end,
				if $s > 0 then {sha256: $s} else empty end] | add // {}')
			got=$(dec '.signatures_by_type // {}')
			# the certificates' CNs in list order (sig-list-to-certs numbers them so)
			want_cn=$(for i in $(seq 0 $((n_x509 + n_sha - 1))); do
				[ -f "$W/split/e-$i.der" ] && cn_of <"$W/split/e-$i.der"; done | jq -R . | jq -sc .)
			got_cn=$(dec '[.signature_lists[].signatures[] | .subject_cn // empty]')
			if [ "$got" = "$want" ] && [ "$got_cn" = "$want_cn" ]; then
				checked=$((checked + 1))
			else
				bad "$log #$n $name: mboot $got $got_cn, sig-list-to-certs/openssl $want $want_cn"
			fi ;;
		EV_EFI_VARIABLE_AUTHORITY:SbatLevel)
			want=$(tr -d '\0' <"$W/split/value" | awk -F, 'NR > 1 && NF >= 2 { printf "%s%s:%d", s, $1, $2; s = " " }')
			got=$(dec '.sbat_level.revocations | map("\(.component):\(.generation)") | join(" ")' | jq -r .)
			want_date=$(head -1 "$W/split/value" | cut -d, -f3 | tr -d '\n\r')
			got_date=$(dec '.sbat_level.datestamp' | jq -r .)
			if [ "$got" = "$want" ] && [ "$got_date" = "$want_date" ]; then
				checked=$((checked + 1))
			else
				bad "$log #$n SbatLevel: mboot '$got' $got_date, the CSV '$want' $want_date"
			fi ;;
		EV_EFI_VARIABLE_AUTHORITY:*)
			# EFI_SIGNATURE_DATA (owner GUID + DER) or shim's bare certificate
			if [ "$(printf '%s' "$hex" | cut -c1-4)" = 3082 ]; then der=$hex; else der=$(printf '%s' "$hex" | cut -c33-); fi
			want=$(printf '%s' "$der" | xxd -r -p | cn_of)
			[ -n "$want" ] || continue
			got=$(dec '.signature.subject_cn' | jq -r .)
			if [ "$got" = "$want" ] && dec '.description' | grep -qF "verified the binary: x509 $want"; then
				checked=$((checked + 1))
			else
				bad "$log #$n $name: mboot CN '$got', openssl '$want'"
			fi ;;
		esac
	done <"$W/vars"
done
[ "$checked" -ge 30 ] && ok "$checked PCR 7 events of 5 real logs: signature counts by type, certificate CNs, SbatLevel as the outside tools read them" ||
	bad "only $checked events checked"

echo "log show secureboot: $fails failed"
[ "$fails" = 0 ]
