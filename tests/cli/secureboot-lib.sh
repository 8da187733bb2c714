# shellcheck shell=bash disable=SC2034 # GUID_*, n_*: read by the scripts that source this
# Sourced by the Secure Boot tests (test-predict-secureboot, test-policy-secureboot): what they
# know of keylime's mb_log_secureboot.bin (a real Secure Boot machine with shim) from outside
# mboot, tpm2_eventlog's reading of it, and how they compute an event and a PCR with openssl.
# The test sets LOG, then calls sb_begin (or sets W and calls sb_need_tools and sb_read_log).
#   var_data N                 the VariableData hex of event N, as tpm2_eventlog prints it
#   sha256_hex < FILE          its SHA-256, lowercase hex
#   replay PCR N DIGEST        PCR replayed from tpm2_eventlog's sha256 digests, event N's
#                              replaced by DIGEST (N = -1: none)
#   var_event GUID NAME FILE   a UEFI_VARIABLE_DATA (GUID hex, UTF-16 NAME, FILE's bytes) on stdout
#   esl_hdr SIZE HDRSIZE SIGSIZE  an EFI_SIGNATURE_LIST header (x509 type) in hex; the sizes as
#                              little-endian hex words (SIZE a number)
#   n_db, n_dbx, n_sbat, n_mok the numbers of the db, dbx, SbatLevel and MokList events
GUID_SECDB=cbb219d73a3d9645a3bcdad00e67656f
GUID_SHIM=50ab5d6046e00043abb63dd810dd8b23

# sb_begin [TOOL...]: what both tests start with: a scratch folder W (removed on exit), fails, ok and bad,
# the tools, and tpm2_eventlog's reading of LOG.
sb_begin() {
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
	fails=0
	ok() { echo "ok   $*"; }
	bad() { echo "FAIL $*"; fails=$((fails + 1)); }
	sb_need_tools "$@"
	sb_read_log
}

sb_need_tools() {
	local t
	for t in tpm2_eventlog cert-to-efi-sig-list sign-efi-sig-list hash-to-efi-sig-list openssl xxd jq "$@"; do
		command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/install-deps)"; exit 77; }
	done
}

# tpm2_eventlog's YAML into $W/log.yaml, "number pcr sha256-digest" of each extending event into
# $W/digests, and the event numbers above; exits 1 (said) when it cannot.
sb_read_log() {
	tpm2_eventlog "$LOG" >"$W/log.yaml" 2>/dev/null || { echo "FAIL tpm2_eventlog cannot read $LOG"; exit 1; }
	awk '/^- EventNum:/ { n = $3 } /^  PCRIndex:/ { p = $2 } /^  EventType:/ { t = $2 }
		/AlgorithmId: sha256/ { want = 1; next }
		want && /Digest:/ { gsub(/"/, "", $2); if (t != "EV_NO_ACTION") print n, p, $2; want = 0 }' \
		"$W/log.yaml" >"$W/digests"
	n_db=$(awk '/^- EventNum:/ { n = $3 } /UnicodeName: db$/ { print n; exit }' "$W/log.yaml")
	n_dbx=$(awk '/^- EventNum:/ { n = $3 } /UnicodeName: dbx$/ { print n; exit }' "$W/log.yaml")
	n_sbat=$(awk '/^- EventNum:/ { n = $3 } /UnicodeName: SbatLevel$/ { print n; exit }' "$W/log.yaml")
	n_mok=$(awk '/^- EventNum:/ { n = $3 } /"MokList\\0"/ { print n; exit }' "$W/log.yaml")
	[ -n "$n_db" ] && [ -n "$n_dbx" ] && [ -n "$n_sbat" ] && [ -n "$n_mok" ] ||
		{ echo "FAIL tpm2_eventlog shows no db/dbx/SbatLevel/MokList event ($n_db/$n_dbx/$n_sbat/$n_mok)"; exit 1; }
}

var_data() { awk -v n="$1" '/^- EventNum:/ { on = ($3 == n) } on && /VariableData:/ { gsub(/"/, "", $2); print $2 }' "$W/log.yaml"; }
sha256_hex() { openssl dgst -sha256 -binary | xxd -p -c 256; }
replay() {
	local pcr=$1 num=$2 new=$3 v n p d
	v=$(printf '%064d' 0)
	while read -r n p d; do
		[ "$p" = "$pcr" ] || continue
		[ "$n" = "$num" ] && d=$new
		v=$(printf '%s%s' "$v" "$d" | xxd -r -p | sha256_hex)
	done <"$W/digests"
	echo "$v"
}
le64() { printf '%016x' "$1" | sed 's/../& /g' | awk '{ for (i = NF; i > 0; i--) printf "%s", $i }'; }
var_event() {
	local guid=$1 name=$2 file=$3
	{ printf '%s%s%s' "$guid" "$(le64 ${#name})" "$(le64 "$(stat -c %s "$file")")"
	  printf '%s' "$name" | iconv -f ascii -t utf-16le | xxd -p | tr -d '\n'
	  xxd -p "$file" | tr -d '\n'; } | xxd -r -p
}
esl_hdr() { printf '%s' "a159c0a5e494a74a87b5ab155c2bf072$(printf '%08x' "$1" | sed 's/../& /g' | awk '{ for (i = NF; i > 0; i--) printf "%s", $i }')$2$3"; }
