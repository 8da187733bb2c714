#!/bin/bash
# mboot against tpm2-tools on the same private swtpm (4 banks active):
#   mboot pcrs --json     vs  tpm2_pcrread        (all PCRs of all banks)
#   mboot measure --file  vs  tpm2_pcrevent PCR   (extend every bank with a file's digests)
# N runs of each, interleaved, process start included (that is what a user waits for);
# prints ms per call and the ratio (tpm2-tools time / mboot time: > 1 means mboot is faster).
# mboot measure also appends a record to its log under a lock; tpm2_pcrevent logs nothing.
# Usage: bench/bench-tpm.sh [BUILD_DIR] [N]   (defaults: build, 200)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-200}
M=$B/mboot
[ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
command -v swtpm >/dev/null && command -v tpm2_pcrread >/dev/null || { echo "swtpm and tpm2-tools are needed"; exit 2; }
export MB_TPM_TESTS=tests/tpm
. tests/tpm/swtpm-env.sh
set +u
swtpm_start
head -c 65536 /dev/urandom > "$WORK/blob"

now() { date +%s%N; }
time_loop() { # time_loop COMMAND... : total ns of N runs
	local s e i
	s=$(now)
	for ((i = 0; i < N; i++)); do "$@" >/dev/null || { echo "failed: $*" >&2; exit 1; }; done
	e=$(now)
	echo $((e - s))
}
row() { # row LABEL MBOOT_NS REF_NS REFNAME
	printf '%-34s %10.2f ms %10.2f ms (%s)  ratio %.2fx\n' "$1" "$(echo "$2 / $N / 1000000" | bc -l)" \
		"$(echo "$3 / $N / 1000000" | bc -l)" "$4" "$(echo "$3 / $2" | bc -l)"
}

# Warm up (page cache, swtpm state files).
"$M" pcrs --json >/dev/null; tpm2_pcrread >/dev/null

m=$(time_loop "$M" pcrs --json)
r=$(time_loop tpm2_pcrread)
echo "N=$N calls each, swtpm on a unix socket, sha1+sha256+sha384+sha512 active (96 PCR values)"
row "pcrs: all PCRs, all banks" "$m" "$r" tpm2_pcrread

m=$(time_loop "$M" pcrs --bank sha256 --pcr 0-7 --json)
r=$(time_loop tpm2_pcrread sha256:0,1,2,3,4,5,6,7)
row "pcrs: sha256 PCRs 0-7" "$m" "$r" tpm2_pcrread

m=$(time_loop "$M" measure --pcr 16 --file "$WORK/blob" --log "$WORK/measure.log")
r=$(time_loop tpm2_pcrevent 16 "$WORK/blob")
row "measure 64 KiB file into PCR 16" "$m" "$r" tpm2_pcrevent

# Both must have extended PCR 16 by the same digests: N mboot then N tpm2-tools events.
jq --seq -r '.digests[] | select(.hashAlg == "sha256") | .digest' < "$WORK/measure.log" 2>/dev/null | sort -u |
	grep -qx "$(sha256sum "$WORK/blob" | cut -d' ' -f1)" || { echo "measure recorded a wrong digest"; exit 1; }
