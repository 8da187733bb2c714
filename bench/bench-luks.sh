#!/bin/bash
# mboot's LUKS2 enrollment and unlock (docs/luks.md) against systemd's TPM2 enrollment and
# unlock, on the same private swtpm and LUKS2 image files, sealed to the same PCRs
# (sha256:0,2,4,7, extended first so that they are not zero):
#   enroll:  mboot luks enroll              vs  systemd-cryptenroll --tpm2-device=swtpm:path=...
#   unlock:  cryptsetup open --test-passphrase --token-only with mboot's token plugin, and
#            mboot luks unlock --test       vs  the equivalent tpm2-tools + cryptsetup sequence
#            (tpm2_createprimary, tpm2_load, tpm2_startauthsession, tpm2_policypcr,
#            tpm2_unseal | cryptsetup open --test-passphrase --key-file -), once on systemd's
#            token and once on mboot's; and systemd-cryptsetup attach up to where it needs
#            device-mapper.
# There is no dm-crypt here, so nothing is activated: cryptsetup --test-passphrase opens the
# keyslot with the unsealed key and stops. systemd-cryptsetup has no such test mode: its
# attach unseals the key (every TPM command of a real unlock) and then fails at device-mapper
# before it opens the keyslot, so its row is a lower bound (it misses the keyslot's PBKDF2, 1000
# iterations, about 1 ms). systemd 252's token plugin (libcryptsetup-token-systemd-tpm2.so)
# finds the TPM only through /sys/class/tpmrm, so `cryptsetup open --token-only` cannot reach
# the swtpm for systemd's token: systemd-cryptenroll and systemd-cryptsetup take the swtpm as
# a TCTI spec (tpm2-device=swtpm:path=...).
#
# What is the same on both sides (checked before anything is timed): the keyslot (PBKDF2
# SHA-512, 1000 iterations, both read from luksDump), the PolicyPCR digest of the sealed object
# (the tokens' digests compared), the passphrase keyslot that authorises the enrollment. What
# differs: systemd's parent is an ECC P-256 primary with an empty unique field and no noDA;
# mboot's is its SRK template (docs/seal.md); both make it with TPM2_CreatePrimary at every use.
# systemd-cryptenroll also unseals the new key once to check it. systemd 252 leaves a session
# loaded in the TPM after enroll and after attach (through /dev/tpmrm0 the kernel would flush
# it when the process closes the device): swtpm has no resource manager, so the bench flushes
# whatever any tool leaves, outside the timing, and says what was left.
# The tpm2-tools sequences get the token's sealed object out of the LUKS header before the
# timing (cryptsetup token export | jq | base64), which favours them; they pipe the unsealed
# key into cryptsetup (systemd's base64-encoded, as systemd-cryptsetup passes it) and flush
# the session and the primary they made, as bench/bench-seal.sh's sequences do.
#
# Time: the median of R runs (interleaved, the order alternating), process start included:
# that is what a boot or an administrator waits for; beside it the CPU time of the tool's
# processes (bash's `times`; the swtpm's own work is not in it), steadier on a busy machine. TPM commands: one separate run of each
# through bench/tpm-count-proxy.py (a unix-socket proxy in front of the swtpm that logs the
# command code of every command any client sends; its own cost stays out of the timing),
# listed per command code. Ratios: reference / mboot (> 1: mboot is cheaper).
# The plugin is the one just built: the bench runs in a private mount namespace (unshare -m)
# where libcryptsetup's plugin folder is a copy of the installed one plus mboot's plugin.
# Usage: bench/bench-luks.sh [BUILD_DIR] [R]   (defaults: build, 5)
set -eEu -o pipefail
export LC_ALL=C
SELF=$(realpath "$0")
cd "$(dirname "$0")/.."
B=${1:-build}
R=${2:-5}
[ "$R" -ge 1 ] 2>/dev/null || { echo "usage: bench/bench-luks.sh [BUILD_DIR] [R]"; exit 2; }
M=$(realpath "$B/mboot" 2>/dev/null) && [ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
PLUGIN=$(realpath "$B/src/luks-token/libcryptsetup-token-mboot.so" 2>/dev/null) && [ -f "$PLUGIN" ] ||
	{ echo "mboot was built without LUKS support (libcryptsetup): no $B/src/luks-token/libcryptsetup-token-mboot.so"; exit 2; }
for c in swtpm tpm2_createprimary cryptsetup jq python3 unshare; do
	command -v $c >/dev/null || { echo "swtpm, tpm2-tools, cryptsetup, jq, python3 and unshare are needed ($c is missing)"; exit 2; }
done
# Into a private mount namespace once, so that no timed command pays for one.
if [ -z "${MB_BENCH_LUKS_NS:-}" ]; then
	unshare -m -- true 2>/dev/null || { echo "unshare -m failed: root is needed (the plugin's bind mount)"; exit 2; }
	MB_BENCH_LUKS_NS=1 exec unshare -m -- "$SELF" "$@"
fi
SDENROLL=/usr/bin/systemd-cryptenroll
SDCRYPT=
for f in /usr/lib/systemd/systemd-cryptsetup /lib/systemd/systemd-cryptsetup; do
	[ -x "$f" ] && { SDCRYPT=$f; break; }
done
HAVE_SD=1
if [ ! -x "$SDENROLL" ] || [ -z "$SDCRYPT" ]; then
	HAVE_SD=0
	echo "note: systemd-cryptenroll or systemd-cryptsetup is not installed (Debian: the systemd package):"
	echo "      only the tpm2-tools + cryptsetup sequence is measured"
fi
. tests/tpm/swtpm-env.sh
set +u
trap 'echo "bench-luks: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR
die() { echo "bench-luks: $*" >&2; exit 1; }

swtpm_start
W=$WORK
SEL=0,2,4,7
for p in 0 2 4 7; do
	tpm2_pcrextend "$p:sha256=$(printf 'boot component %s' $p | openssl dgst -sha256 -r | cut -d' ' -f1)"
done
head -c 64 /dev/zero > "$W/zero64"
printf 'correct horse battery' > "$W/pw"
chmod 600 "$W/pw" # systemd-cryptenroll warns about a key file others can read

# The pristine image: a passphrase in keyslot 0 (PBKDF2, 1000 iterations: opening it to
# authorise an enrollment costs both tools the same ~1 ms).
truncate -s 20M "$W/pristine.img"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$W/pw" "$W/pristine.img"

# libcryptsetup's plugin folder, from cryptsetup itself: the path it tries for a token type
# that has no plugin. Replaced (in this namespace only) by a copy with mboot's plugin added.
cp "$W/pristine.img" "$W/probe.img"
echo '{"type":"mboot-bench-probe","keyslots":[]}' | cryptsetup token import "$W/probe.img"
TOKEN_DIR=$(cryptsetup --debug luksDump "$W/probe.img" 2>&1 |
	sed -n 's|^# Trying to load \(/.*\)/libcryptsetup-token-mboot-bench-probe\.so\.$|\1|p' | head -n 1)
[ -n "$TOKEN_DIR" ] || die "cryptsetup --debug does not say where it loads token plugins from"
HAVE_PLUGIN=1
if [ -d "$TOKEN_DIR" ]; then
	mkdir -p "$W/plugins"
	cp -a "$TOKEN_DIR/." "$W/plugins/"
	cp "$PLUGIN" "$W/plugins/"
	LIBDIR=$(dirname "$(realpath "$B/libmboot.so.0")")
	mount --bind "$W/plugins" "$TOKEN_DIR"
else # a mount needs a folder to cover, and the bench makes none outside its own
	HAVE_PLUGIN=0
	echo "note: no plugin folder $TOKEN_DIR: the plugin is not measured, mboot luks unlock --test stands for mboot"
fi

# The counting proxy; CT is the TCTI through it. Its control channel is swtpm's own.
PROXY_PID=
stop_proxy() { [ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null || true; }
# set +e: swtpm_stop's kill -9 fails when swtpm is gone already, and the folder must still go
trap 'set +e; trap - ERR; stop_proxy; swtpm_cleanup' EXIT
python3 bench/tpm-count-proxy.py "$W/count.sock" "$SWTPM_DIR/sock" "$W/trace" &
PROXY_PID=$!
ln -s "$SWTPM_DIR/sock.ctrl" "$W/count.sock.ctrl"
for _ in $(seq 100); do [ -S "$W/count.sock" ] && break; sleep 0.05; done
[ -S "$W/count.sock" ] || die "the counting proxy did not start"
CT="swtpm:path=$W/count.sock"

# ---- the tools. T is the TCTI: $TCTI (the swtpm) when timed, $CT when counted. ----
NPROC=0
m_enroll() { NPROC=1; TPM2TOOLS_TCTI=$T "$M" luks enroll "$1" --pcrs "$SEL" --key-file "$W/pw" > /dev/null; }
s_enroll() {
	NPROC=1
	"$SDENROLL" --unlock-key-file="$W/pw" --tpm2-device="$T" --tpm2-pcrs="${SEL//,/+}" "$1" 2> "$W/sd.err" ||
		{ cat "$W/sd.err" >&2; return 1; }
}
# The plugin finds libmboot through its RUNPATH ($ORIGIN/../..) in the build folder only:
# LD_LIBRARY_PATH stands in for an installed libmboot.
m_plugin() { NPROC=1; LD_LIBRARY_PATH=$LIBDIR TPM2TOOLS_TCTI=$T cryptsetup open --test-passphrase --token-only "$1" < /dev/null; }
m_cli() { NPROC=1; TPM2TOOLS_TCTI=$T "$M" luks unlock "$1" --test > /dev/null; }
s_attach() { # fails at device-mapper after the unseal: that it got there is checked
	NPROC=1
	! "$SDCRYPT" attach mboot-bench-luks "$1" - "tpm2-device=$T,headless=1" 2> "$W/sd.err" &&
		grep -q "Failed to activate with TPM2 acquired key" "$W/sd.err" ||
		{ echo "systemd-cryptsetup did not get to activation:" >&2; cat "$W/sd.err" >&2; return 1; }
}
# t_open PREFIX IMG: the tpm2-tools sequence on PREFIX.pub/.priv (from the token of IMG);
# PREFIX.parent holds tpm2_createprimary's arguments for that token's parent, PREFIX.encode
# the filter between tpm2_unseal and cryptsetup.
sas() { tpm2_startauthsession -Q -c 0x80000000 "$@" 2> "$W/sas.err" || { cat "$W/sas.err" >&2; return 1; }; }
t_open() {
	local -a parent
	read -r -a parent < "$1.parent"
	NPROC=7
	TPM2TOOLS_TCTI=$T tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes128cfb "${parent[@]}" -c "$W/t.prim" < "$W/zero64"
	TPM2TOOLS_TCTI=$T tpm2_load -Q -C 0x80000000 -u "$1.pub" -r "$1.priv" -c "$W/t.obj"
	TPM2TOOLS_TCTI=$T sas --policy-session -S "$W/t.pol"
	TPM2TOOLS_TCTI=$T tpm2_policypcr -Q -S "$W/t.pol" -l "sha256:$SEL"
	if [ "$(cat "$1.encode")" = base64 ]; then
		NPROC=$((NPROC + 2))
		TPM2TOOLS_TCTI=$T tpm2_unseal -c "$W/t.obj" -p "session:$W/t.pol" | base64 -w0 |
			cryptsetup open --test-passphrase --key-file - --key-slot 1 "$2"
	else
		NPROC=$((NPROC + 1))
		TPM2TOOLS_TCTI=$T tpm2_unseal -c "$W/t.obj" -p "session:$W/t.pol" |
			cryptsetup open --test-passphrase --key-file - --key-slot 1 "$2"
	fi
	TPM2TOOLS_TCTI=$T tpm2_flushcontext "$W/t.pol"
	TPM2TOOLS_TCTI=$T tpm2_flushcontext -t
}
t_sd() { t_open "$W/sd" "$1"; }
t_mb() { t_open "$W/mb" "$1"; }

# What a tool left in the TPM (transient objects, loaded sessions), then flushed.
left_over() {
	tpm2_getcap handles-transient | sed -n 's/^- //p'
	tpm2_getcap handles-loaded-session | sed -n 's/^- //p'
}
flush_all() { tpm2_flushcontext -t -l; }

# ---- command names: TPM2_CC_* from tpm2-tss's header, else the hex code ----
declare -A CCNAME
while read -r code name; do
	[ -n "${CCNAME[$code]:-}" ] || CCNAME[$code]=$name
done < <(sed -n 's/^#define TPM2_CC_\([A-Za-z0-9_]*\)[[:space:]]*((TPM2_CC) 0x\([0-9a-fA-F]*\)).*/\2 \1/p' \
	/usr/include/tss2/tss2_tpm2_types.h 2>/dev/null | awk '{ print tolower($1), $2 }')

declare -A US CPU CNT PROCS LEFT
# rows: KEY|operation|tool|the mboot row it is compared with|short name for the command table
ROWS=("enroll.m|enroll|mboot luks enroll||mb-enrl")
[ $HAVE_SD = 0 ] || ROWS+=("enroll.s|enroll|systemd-cryptenroll --tpm2-device|enroll.m|sd-enrl")
if [ $HAVE_PLUGIN = 1 ]; then
	U=unlock.m_plugin
	ROWS+=("unlock.m_plugin|unlock|cryptsetup --token-only, mboot plugin||mb-plug"
		"unlock.m_cli|unlock|mboot luks unlock --test|$U|mb-cli")
else
	U=unlock.m_cli
	ROWS+=("unlock.m_cli|unlock|mboot luks unlock --test||mb-cli")
fi
[ $HAVE_SD = 0 ] || ROWS+=("unlock.s_attach|unlock|systemd-cryptsetup attach (*)|$U|sd-att"
	"unlock.t_sd|unlock|tpm2-tools + cryptsetup, systemd's token|$U|tt-sd")
ROWS+=("unlock.t_mb|unlock|tpm2-tools + cryptsetup, mboot's token|$U|tt-mb")

# run KEY IMG: one run of a row's command
run() {
	case $1 in
	enroll.m) m_enroll "$2" ;;
	enroll.s) s_enroll "$2" ;;
	unlock.m_plugin) m_plugin "$2" ;;
	unlock.m_cli) m_cli "$2" ;;
	unlock.s_attach) s_attach "$2" ;;
	unlock.t_sd) t_sd "$2" ;;
	unlock.t_mb) t_mb "$2" ;;
	esac
}
# image KEY: the image a row works on (enroll: a fresh copy of the pristine image)
image() {
	case $1 in
	enroll.*) cp --sparse=always "$W/pristine.img" "$W/enroll.img"; echo "$W/enroll.img" ;;
	unlock.m_*|unlock.t_mb) echo "$W/m.img" ;;
	*) echo "$W/s.img" ;;
	esac
}
check_enrolled() { # check_enrolled IMG TYPE: token 0 of TYPE on keyslot 1
	cryptsetup token export --token-id 0 "$1" | jq -e --arg t "$2" '.type == $t and .keyslots == ["1"]' > /dev/null ||
		die "no $2 token 0 on keyslot 1 after enrolling"
}

# ---- the enrolled images, and the equivalence checks ----
T=$TCTI
cp --sparse=always "$W/pristine.img" "$W/m.img"
m_enroll "$W/m.img"
check_enrolled "$W/m.img" mboot
cryptsetup token export --token-id 0 "$W/m.img" > "$W/m.token"
jq -r .mboot.sealed.public "$W/m.token" | base64 -d > "$W/mb.pub"
jq -r .mboot.sealed.private "$W/m.token" | base64 -d > "$W/mb.priv"
echo "-a fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt -u -" > "$W/mb.parent"
echo raw > "$W/mb.encode"
kdf() { cryptsetup luksDump --dump-json-metadata "$1" | jq -c '.keyslots."1" | {kdf: (.kdf | del(.salt)), af, key_size}'; }
if [ $HAVE_SD = 1 ]; then
	cp --sparse=always "$W/pristine.img" "$W/s.img"
	s_enroll "$W/s.img"
	flush_all
	check_enrolled "$W/s.img" systemd-tpm2
	cryptsetup token export --token-id 0 "$W/s.img" > "$W/s.token"
	# tpm2-blob: TPM2B_PRIVATE, then TPM2B_PUBLIC
	jq -r '."tpm2-blob"' "$W/s.token" | base64 -d > "$W/sd.blob"
	psize=$((0x$(head -c 2 "$W/sd.blob" | xxd -p) + 2))
	head -c "$psize" "$W/sd.blob" > "$W/sd.priv"
	tail -c +$((psize + 1)) "$W/sd.blob" > "$W/sd.pub"
	echo "-a fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|decrypt" > "$W/sd.parent"
	echo base64 > "$W/sd.encode"
	[ "$(jq -r '."tpm2-pcrs" | map(tostring) | join(",")' "$W/s.token")" = "$SEL" ] &&
		[ "$(jq -r '."tpm2-pcr-bank"' "$W/s.token")" = sha256 ] || die "systemd sealed to other PCRs: $(cat "$W/s.token")"
	[ "$(jq -r '."tpm2-policy-hash"' "$W/s.token")" = "$(jq -r .mboot.sealed.policy.digest "$W/m.token")" ] ||
		die "the PolicyPCR digests differ: systemd $(jq -r '."tpm2-policy-hash"' "$W/s.token"), mboot $(jq -r .mboot.sealed.policy.digest "$W/m.token")"
	[ "$(kdf "$W/s.img")" = "$(kdf "$W/m.img")" ] || die "the keyslots differ: systemd $(kdf "$W/s.img"), mboot $(kdf "$W/m.img")"
fi

# ---- counting pass: each row once through the proxy; what it leaves in the TPM ----
T=$CT
for row in "${ROWS[@]}"; do
	k=${row%%|*}
	img=$(image "$k")
	: > "$W/trace"
	run "$k" "$img"
	cp "$W/trace" "$W/trace.$k"
	CNT[$k]=$(wc -l < "$W/trace")
	PROCS[$k]=$NPROC
	LEFT[$k]=$(left_over | wc -l)
	flush_all
done
# Every command the tools send counted: the same commands go to the swtpm directly below.
T=$TCTI

# The CPU time (user + system, ms) of all the shell's finished children: bash's `times`, run
# in this shell (a subshell's children would be others), second line "XmY.YYYs XmY.YYYs".
# Sets CPU_MS (called without $(...), which would run it in a subshell).
children_cpu_ms() {
	local u s
	times > "$W/times"
	{ read -r _ _; read -r u s; } < "$W/times"
	CPU_MS=$(echo "$u $s" | tr 'ms' '  ' | awk '{ printf "%d\n", ($1 * 60 + $2 + $3 * 60 + $4) * 1000 + 0.5 }')
}

# ---- timing pass: R runs, interleaved, the order alternating ----
start=${EPOCHREALTIME/./}
for ((i = 0; i < R; i++)); do
	order=("${ROWS[@]}")
	if ((i % 2)); then
		order=()
		for ((j = ${#ROWS[@]} - 1; j >= 0; j--)); do order+=("${ROWS[j]}"); done
	fi
	for row in "${order[@]}"; do
		k=${row%%|*}
		img=$(image "$k")
		children_cpu_ms
		c0=$CPU_MS
		s=${EPOCHREALTIME/./}
		run "$k" "$img"
		e=${EPOCHREALTIME/./}
		US[$k]="${US[$k]:-} $((e - s))"
		children_cpu_ms
		CPU[$k]="${CPU[$k]:-} $((CPU_MS - c0))"
		case $k in
		enroll.m) check_enrolled "$img" mboot ;;
		enroll.s) check_enrolled "$img" systemd-tpm2 ;;
		esac
		[ "${LEFT[$k]}" = 0 ] || flush_all
	done
done
end=${EPOCHREALTIME/./}

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A MED MCPU
for row in "${ROWS[@]}"; do
	k=${row%%|*}
	MED[$k]=$(median <<<"${US[$k]}")
	MCPU[$k]=$(median <<<"${CPU[$k]}")
done

echo "mboot luks vs systemd 252 and tpm2-tools on one swtpm (unix socket, no resource manager),"
echo "LUKS2 image files, sealed to sha256:$SEL; median of R=$R runs, process start included."
echo "Ratios: reference / mboot (> 1: mboot cheaper)."
echo
printf '%-9s %-42s %8s %7s %5s %5s | %6s %6s %6s\n' "" "" "wall" "CPU" "TPM" "" "ratios" "" ""
printf '%-9s %-42s %8s %7s %5s %5s | %6s %6s %6s\n' operation tool "ms" "ms" cmds procs wall CPU cmds
for row in "${ROWS[@]}"; do
	IFS='|' read -r k op label ref _ <<<"$row"
	printf '%-9s %-42s %8.1f %7d %5d %5d |' "$op" "$label" "$(echo "${MED[$k]} / 1000" | bc -l)" "${MCPU[$k]}" \
		"${CNT[$k]}" "${PROCS[$k]}"
	[ -z "$ref" ] || printf ' %5.2fx %5.2fx %5.2fx' "$(echo "${MED[$k]} / ${MED[$ref]}" | bc -l)" \
		"$(echo "${MCPU[$k]} / (${MCPU[$ref]} + (${MCPU[$ref]} == 0))" | bc -l)" "$(echo "${CNT[$k]} / ${CNT[$ref]}" | bc -l)"
	echo
done
echo "wall: what the user waits for, the swtpm's work included; CPU: user + system time of the"
echo "tool's processes (not the swtpm's), steadier when the machine is busy."
[ $HAVE_SD = 0 ] || echo "(*) stops at device-mapper, after the unseal and before the keyslot: a lower bound"
echo
# counts by trace file and command code, in one pass
declare -A BYCODE
while read -r f c n; do BYCODE[${f#"$W/trace."}.$c]=$n; done < <(
	awk '{ n[FILENAME " " $1]++ } END { for (k in n) print k, n[k] }' "$W"/trace.*.*)
echo "TPM commands by command code:"
printf '  %-20s' ""
for row in "${ROWS[@]}"; do printf ' %7s' "${row##*|}"; done
echo
for c in $(cat "$W"/trace.*.* | sort -u); do
	printf '  %-20s' "${CCNAME[$c]:-0x$c}"
	for row in "${ROWS[@]}"; do printf ' %7s' "${BYCODE[${row%%|*}.$c]:-0}"; done
	echo
done
printf '  %-20s' total
for row in "${ROWS[@]}"; do printf ' %7s' "${CNT[${row%%|*}]}"; done
echo
for row in "${ROWS[@]}"; do
	IFS='|' read -r k _ label _ <<<"$row"
	[ "${LEFT[$k]}" = 0 ] || echo "note: $label leaves ${LEFT[$k]} handle(s) loaded in the TPM (flushed by the bench, untimed)"
done
printf 'every unlock opened keyslot 1; timed part %.1f s\n' "$(echo "($end - $start) / 1000000" | bc -l)"
