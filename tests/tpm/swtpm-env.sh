# shellcheck shell=bash
# Sourced by the tpm suite's tests: a private swtpm on a unix socket in a temp dir,
# always stopped on exit.
#
#   swtpm_start            start (startup-clear: ready for commands, locality 0)
#   swtpm_start_noinit     start without TPM2_Startup (`mboot log extend` starts it)
#   swtpm_banks "sha1 sha256"
#                          allocate exactly these PCR banks (tpm2_pcrallocate lists
#                          every bank, the others as :none, since an unlisted bank
#                          keeps its allocation), then reset the TPM through the
#                          control channel (swtpm_ioctl -i). The TPM then waits for
#                          TPM2_Startup, which `mboot log extend` sends at the log's
#                          StartupLocality: tpm2-tss's swtpm TCTI sets the locality
#                          with CMD_SET_LOCALITY on the control channel.
#   swtpm_stop
#   swtpm_start_ek_enroll NAME
#                          a swtpm manufactured as a TPM vendor would: EKs with EK certificates
#                          (swtpm_setup --tpm2 --create-ek-cert) signed by a CA of its own
#                          (swtpm_localca, with a private config: nothing in /etc or /var/lib).
#                          $SWTPM_DIR/NAME/ca/ holds the CA (swtpm-localca-rootca-cert.pem, the
#                          root; issuercert.pem, the intermediate), $SWTPM_DIR/NAME/state the TPM.
#                          The same NAME again restarts that TPM (same EKs); another NAME is another
#                          TPM under another CA. RSA 2048 EK: 0x81010001, certificate in NV
#                          0x01c00002; ECC P-384 EK (high range, userWithAuth): 0x81010016,
#                          certificate 0x01c00016. Started with startup-clear.
# After swtpm_start*, TCTI and TPM2TOOLS_TCTI name the TPM.

set -u
command -v swtpm >/dev/null || { echo "SKIP: swtpm not installed"; exit 77; }
command -v tpm2_pcrread >/dev/null || { echo "SKIP: tpm2-tools not installed"; exit 77; }

SWTPM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mboot-swtpm.XXXXXX")
SWTPM_PID=
WORK=$SWTPM_DIR/work
mkdir -p "$WORK"

swtpm_stop() {
	if [ -n "$SWTPM_PID" ] && kill -0 "$SWTPM_PID" 2>/dev/null; then
		kill "$SWTPM_PID" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$SWTPM_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$SWTPM_PID" 2>/dev/null || true # gone already: under set -e a failure here would skip the cleanup
	fi
	SWTPM_PID=
}

swtpm_cleanup() {
	swtpm_stop
	rm -rf "$SWTPM_DIR"
}
trap swtpm_cleanup EXIT

# swtpm_serve STATE FLAGS: swtpm on the state folder STATE, on $SWTPM_DIR's sockets.
swtpm_serve() {
	local state=$1 flags=$2
	rm -f "$SWTPM_DIR/sock" "$SWTPM_DIR/sock.ctrl"
	# In a subshell, so that the test's shell does not report a killed job.
	( swtpm socket --tpm2 \
		--server type=unixio,path="$SWTPM_DIR/sock" \
		--ctrl type=unixio,path="$SWTPM_DIR/sock.ctrl" \
		--tpmstate dir="$state" --flags "$flags" \
		--log file="$SWTPM_DIR/swtpm.log" </dev/null &
	  echo $! > "$SWTPM_DIR/pid" )
	SWTPM_PID=$(cat "$SWTPM_DIR/pid")
	for _ in $(seq 50); do
		[ -S "$SWTPM_DIR/sock" ] && [ -S "$SWTPM_DIR/sock.ctrl" ] && break
		sleep 0.1
	done
	[ -S "$SWTPM_DIR/sock.ctrl" ] || { echo "FAIL: swtpm did not start"; cat "$SWTPM_DIR/swtpm.log"; exit 1; }
	TCTI="swtpm:path=$SWTPM_DIR/sock"
	export TPM2TOOLS_TCTI=$TCTI
}

swtpm_run() {
	local flags=$1 state=$SWTPM_DIR/state
	swtpm_stop
	rm -rf "$state"
	mkdir -p "$state"
	swtpm_serve "$state" "$flags"
}

swtpm_start() { swtpm_run not-need-init,startup-clear; }

swtpm_start_ek_enroll() {
	local d=$SWTPM_DIR/$1
	swtpm_stop
	[ -d "$d/state" ] || swtpm_manufacture "$d" sha256
	swtpm_serve "$d/state" not-need-init,startup-clear
}
swtpm_start_noinit() { swtpm_run not-need-init; }

swtpm_reset() { swtpm_ioctl --unix "$SWTPM_DIR/sock.ctrl" -i >/dev/null; }

swtpm_banks() {
	local want=" $1 " spec='' b
	for b in sha1 sha256 sha384 sha512; do
		case $want in
		*" $b "*) spec="$spec+$b:all" ;;
		*) spec="$spec+$b:none" ;;
		esac
	done
	tpm2_pcrallocate "${spec#+}" >/dev/null || { echo "FAIL: tpm2_pcrallocate ${spec#+}"; exit 1; }
	swtpm_reset
}

fail() { echo "FAIL: $*"; exit 1; }
# Tests that go on after a failed check: ok, bad, check, then `[ "$failures" -eq 0 ]` at the end.
failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { # check WHAT COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# swtpm_start_ek_cert [BANKS]
#   a manufactured TPM: swtpm_setup --tpm2 --create-ek-cert (RSA 2048 and ECC EKs with
#   certificates in NV) with swtpm_localca and a private config and CA under $SWTPM_DIR
#   (never /var/lib/swtpm-localca), PCR banks BANKS (default sha1,sha256); then start
#   swtpm from the state it made (startup-clear). SWTPM_EK_CA is the CA's root certificate,
#   SWTPM_EK_ISSUER the intermediate that signed the EK certificates.
swtpm_start_ek_cert() {
	swtpm_stop
	rm -rf "$SWTPM_DIR/ek"
	swtpm_manufacture "$SWTPM_DIR/ek" "${1:-sha1,sha256}"
	SWTPM_EK_CA=$SWTPM_DIR/ek/ca/swtpm-localca-rootca-cert.pem
	SWTPM_EK_ISSUER=$SWTPM_DIR/ek/ca/issuercert.pem
	[ -s "$SWTPM_EK_CA" ] || fail "swtpm_localca made no CA in $SWTPM_DIR/ek/ca"
	[ -s "$SWTPM_EK_ISSUER" ] || fail "swtpm_localca made no issuer certificate in $SWTPM_DIR/ek/ca"
	swtpm_serve "$SWTPM_DIR/ek/state" not-need-init,startup-clear
}

# swtpm_manufacture DIR BANKS: what a TPM vendor does, into DIR/state: swtpm_setup --tpm2
#   --create-ek-cert (RSA 2048 and ECC EKs with certificates in NV), signed by swtpm_localca
#   with a private config and CA in DIR/ca (never /var/lib/swtpm-localca); PCR banks BANKS.
swtpm_manufacture() {
	local d=$1 banks=$2
	if ! command -v swtpm_setup >/dev/null || ! command -v swtpm_localca >/dev/null; then
		echo "SKIP: swtpm_setup or swtpm_localca not installed"
		exit 77
	fi
	mkdir -p "$d/ca" "$d/state"
	printf '%s\n' "statedir = $d/ca" "signingkey = $d/ca/signkey.pem" \
		"issuercert = $d/ca/issuercert.pem" "certserial = $d/ca/certserial" > "$d/localca.conf"
	printf '%s\n' "--platform-manufacturer mboot-test" "--platform-version 2.1" \
		"--platform-model swtpm" > "$d/localca.options"
	printf '%s\n' "create_certs_tool = $(command -v swtpm_localca)" \
		"create_certs_tool_config = $d/localca.conf" \
		"create_certs_tool_options = $d/localca.options" "active_pcr_banks = $banks" > "$d/setup.conf"
	# TMPDIR, XDG_CONFIG_HOME: swtpm_setup's own files stay in the test's directory too
	TMPDIR=$d XDG_CONFIG_HOME=$d swtpm_setup --tpm2 --tpm-state "$d/state" --create-ek-cert \
		--config "$d/setup.conf" --logfile "$d/setup.log" >/dev/null 2>&1 ||
		{ cat "$d/setup.log"; echo "FAIL: swtpm_setup --create-ek-cert"; exit 1; }
}
