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
		kill -9 "$SWTPM_PID" 2>/dev/null
	fi
	SWTPM_PID=
}

swtpm_cleanup() {
	swtpm_stop
	rm -rf "$SWTPM_DIR"
}
trap swtpm_cleanup EXIT

swtpm_run() {
	local flags=$1 state=$SWTPM_DIR/state
	swtpm_stop
	rm -rf "$state"
	mkdir -p "$state"
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

swtpm_start() { swtpm_run not-need-init,startup-clear; }
swtpm_start_noinit() { swtpm_run not-need-init; }

swtpm_reset() { swtpm_ioctl --unix "$SWTPM_DIR/sock.ctrl" -i >/dev/null; }

swtpm_banks() {
	local want=" $1 " spec="" b
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
