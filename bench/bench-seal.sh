#!/bin/bash
# mboot seal / unseal / reseal against the equivalent tpm2-tools command sequences, on the
# same private swtpm, for both parents mboot uses: the ECC P-256 SRK template (a
# TPM2_CreatePrimary at every use) and a persistent SRK at 0x81000001.
#
# For each operation it prints the wall time per operation (N runs each, interleaved,
# process start included: that is what a user or a kernel-install hook waits for) and the
# number of TPM commands sent, with the ratios tpm2-tools / mboot (> 1: mboot is faster /
# sends fewer commands). Commands are counted in a separate pass through
# tests/tpm/tpm-proxy.py (tpm2-tss's "cmd" TCTI; the proxy's own cost stays out of the
# timing), and listed per command code so the difference can be seen.
#
# The tpm2-tools sequences are made equivalent to what mboot does:
#   - same PCRs (sha256:0,2,4,7), same bank, same policy digests (checked: PolicyPCR and
#     PolicyOR digests are compared with the ones mboot stores), same sealed-object attributes
#     (fixedTPM|fixedParent, no userWithAuth; checked with tpm2_print);
#   - the same parent: tpm2_createprimary with mboot's SRK template (ECC P-256, AES-128-CFB,
#     noDA, unique = two 32-byte zero coordinates; checked: tpm2_load takes an object sealed
#     by mboot under it), or the same persistent SRK;
#   - TPM2_Create's secret is encrypted on the wire by a session salted with the parent
#     (tpm2_startauthsession --hmac-session -c PARENT, used with -P session:...), and
#     TPM2_Unseal's answer by the salted policy session. Differences: tpm2-tools' -c also
#     binds the session to the parent and turns on both encrypt and decrypt (mboot: salted,
#     unbound, one direction); mboot also uses a salted HMAC session for TPM2_Load, tpm2_load
#     an unsalted one of its own.
#   - swtpm has no resource manager, so whatever a tool leaves loaded stays loaded (3 object
#     and 3 session slots). The sequences refer to the template's primary by its transient
#     handle (no ContextLoad of a copy by every tool that uses it) and flush what is left at
#     the end, as mboot does: the cheapest correct tpm2-tools sequence without a resource
#     manager. tpm2_unseal takes the sealed object as tpm2_load's context file (a ContextLoad
#     of a copy: the object's handle is the TPM's choice). tpm2_createpolicy leaves its trial
#     session loaded, so `tpm2_flushcontext -l` follows it. Reseal flushes everything after
#     unsealing (TPM2_Create needs a free object slot) and, with the template, makes the
#     primary again, which is also what mboot's reseal does.
#     (Through /dev/tpmrm0 the kernel would flush at each process exit, and would instead
#     add its own context saves and loads around every command.)
#   - reseal passes the secret from tpm2_unseal to tpm2_create through a file (mboot keeps
#     it in locked memory): piping it would run the two tools' TPM commands concurrently.
#   - seal stores the PCR values (tpm2_pcrread -o; mboot keeps them in the sealed file).
# Every unseal's output is compared with the secret (also the one inside each tpm2-tools
# reseal); the last sealed and resealed objects of both are unsealed again at the end.
# Usage: bench/bench-seal.sh [BUILD_DIR] [N]   (defaults: build, 20)
set -eEu
export LC_ALL=C
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-20}
M=$(realpath "$B/mboot" 2>/dev/null) && [ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
command -v swtpm >/dev/null && command -v tpm2_createprimary >/dev/null && command -v jq >/dev/null &&
	command -v python3 >/dev/null || { echo "swtpm, tpm2-tools, jq and python3 are needed"; exit 2; }
. tests/tpm/swtpm-env.sh
set +u
PROXY=$PWD/tests/tpm/tpm-proxy.py
trap 'echo "bench-seal: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR
die() { echo "bench-seal: $*" >&2; exit 1; }

swtpm_start
W=$WORK
SEL=0,2,4,7
# A boot: the selected PCRs extended with the digests of some strings (by openssl).
for p in 0 2 4 7; do
	tpm2_pcrextend "$p:sha256=$(printf 'boot component %s' $p | openssl dgst -sha256 -r | cut -d' ' -f1)"
done
head -c 32 /dev/urandom > "$W/secret"
head -c 64 /dev/zero > "$W/zero64"

# The predicted next boot: PCRs 4 and 7 extended once more (values by openssl), as JSON for
# mboot (--values) and as the raw values in selection order for tpm2_createpolicy -f.
pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
E=$(printf 'the update' | openssl dgst -sha256 -r | cut -d' ' -f1)
declare -A NEXT
for p in 0 2 4 7; do
	NEXT[$p]=$(pcr_hex $p)
	case $p in 4 | 7) NEXT[$p]=$( { echo "${NEXT[$p]}" | xxd -r -p; echo "$E" | xxd -r -p; } |
		openssl dgst -sha256 -r | cut -d' ' -f1) ;;
	esac
done
printf '{"banks": {"sha256": {"0": "%s", "2": "%s", "4": "%s", "7": "%s"}}}\n' \
	"${NEXT[0]}" "${NEXT[2]}" "${NEXT[4]}" "${NEXT[7]}" > "$W/next.json"
for p in 0 2 4 7; do echo "${NEXT[$p]}" | xxd -r -p; done > "$W/next.bin"

# ---- mboot: one process per operation ----
m_seal() { NPROC=1; "$M" seal --pcrs "$SEL" -i "$W/secret" -o "$1" --force; }
m_unseal() { NPROC=1; "$M" unseal -i "$1" > "$2"; }
m_reseal() { NPROC=1; "$M" reseal -i "$1" --values "$W/next.json" -o "$2" --force > /dev/null; }

# ---- tpm2-tools: PARENT is the parent's handle: 0x80000000 for the template's primary (the
# first object loaded into an empty TPM) or 0x81000001. tpm2_startauthsession -c HANDLE warns
# that it cannot check the key behind a handle (mboot does not either); its stderr is kept in a
# file and shown only on failure. ----
SRK_ATTRS='fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt'
NPROC=0
t() { NPROC=$((NPROC + 1)); "$@"; }
sas() { tpm2_startauthsession -Q -c "$PARENT" "$@" 2> "$W/sas.err" || { cat "$W/sas.err" >&2; return 1; }; }
t_parent() { # the template's primary (PARENT=0x80000000), or nothing for the persistent SRK
	[ "$PARENT" != 0x80000000 ] ||
		t tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes128cfb -a "$SRK_ATTRS" -u - -c "$W/t.prim" < "$W/zero64"
}
t_create() { # t_create POLICY_FILE SECRET_FILE OUT_PREFIX
	t sas --hmac-session -S "$W/t.hmac"
	t tpm2_create -Q -C "$PARENT" -P "session:$W/t.hmac" -L "$1" -a 'fixedtpm|fixedparent' -i "$2" \
		-u "$3.pub" -r "$3.priv"
	t tpm2_flushcontext "$W/t.hmac"
}
t_unseal() { # t_unseal IN_PREFIX OUT_FILE [OR_BRANCHES]
	t_parent
	t tpm2_load -Q -C "$PARENT" -u "$1.pub" -r "$1.priv" -c "$W/t.obj"
	t sas --policy-session -S "$W/t.pol"
	t tpm2_policypcr -Q -S "$W/t.pol" -l "sha256:$SEL"
	[ -z "${3:-}" ] || t tpm2_policyor -Q -S "$W/t.pol" -l "sha256:$3"
	t tpm2_unseal -c "$W/t.obj" -p "session:$W/t.pol" -o "$2"
	t tpm2_flushcontext "$W/t.pol"
	t tpm2_flushcontext -t
}
t_seal() { # t_seal OUT_PREFIX
	t_parent
	t tpm2_pcrread -Q "sha256:$SEL" -o "$W/t.pcrs"
	t tpm2_createpolicy -Q --policy-pcr -l "sha256:$SEL" -f "$W/t.pcrs" -L "$W/t.policy"
	t tpm2_flushcontext -l
	t_create "$W/t.policy" "$W/secret" "$1"
	[ "$PARENT" != 0x80000000 ] || t tpm2_flushcontext -t
}
t_reseal() { # t_reseal IN_PREFIX OUT_PREFIX: the secret in $W/t.secret on the way
	# Unseal leaves no free object slot (parent, object, tpm2_unseal's copy), and TPM2_Create
	# needs one: flush all, then make the template's primary again (as mboot's reseal does).
	t_unseal "$1" "$W/t.secret"
	t tpm2_createpolicy -Q --policy-pcr -l "sha256:$SEL" -L "$W/t.b0"
	t tpm2_createpolicy -Q --policy-pcr -l "sha256:$SEL" -f "$W/next.bin" -L "$W/t.b1"
	t tpm2_flushcontext -l
	t tpm2_startauthsession -Q -S "$W/t.trial"
	t tpm2_policyor -Q -S "$W/t.trial" -l "sha256:$W/t.b0,$W/t.b1" -L "$W/t.or"
	t tpm2_flushcontext "$W/t.trial"
	t_parent
	t_create "$W/t.or" "$W/t.secret" "$2"
	[ "$PARENT" != 0x80000000 ] || t tpm2_flushcontext -t
}

# ---- command names: TPM2_CC_* from tpm2-tss's header, else the hex code ----
declare -A CCNAME
while read -r code name; do
	[ -n "${CCNAME[$code]:-}" ] || CCNAME[$code]=TPM2_$name
done < <(sed -n 's/^#define TPM2_CC_\([A-Za-z0-9_]*\)[[:space:]]*((TPM2_CC) 0x\([0-9a-fA-F]*\)).*/\2 \1/p' \
	/usr/include/tss2/tss2_tpm2_types.h 2>/dev/null | awk '{ print tolower($1), $2 }')

check_secret() { cmp -s "$1" "$W/secret" || die "$2 did not return the secret"; }
b64file() { jq -r ".$2" "$1" | base64 -d; }
attrs_policy() { tpm2_print -t TPM2B_PUBLIC "$1" | sed -n '/^attributes:/{n;p};/^authorization policy:/p'; }

declare -A US CNT PROCS
now() { echo "${EPOCHREALTIME/./}"; }
tm() { # tm KEY COMMAND...: adds the wall time (µs) of COMMAND to US[KEY]
	local k=$1; shift; local s=${EPOCHREALTIME/./}; "$@"; local e=${EPOCHREALTIME/./}; US[$k]=$(( ${US[$k]:-0} + e - s )); }

run_variant() { # run_variant NAME: PARENT and PARENT_JSON set
	local v=$1 i op who f
	# Equivalence checks, once: same policy digests, same object attributes, same parent.
	m_seal "$W/m.sealed"
	t_seal "$W/t.sealed"
	[ "$(jq -c .parent "$W/m.sealed")" = "$PARENT_JSON" ] || die "mboot sealed under $(jq -c .parent "$W/m.sealed")"
	[ "$(jq -r .policy.digest "$W/m.sealed")" = "$(xxd -p -c 64 "$W/t.policy")" ] ||
		die "PolicyPCR digests differ: mboot $(jq -r .policy.digest "$W/m.sealed"), tpm2_createpolicy $(xxd -p -c 64 "$W/t.policy")"
	b64file "$W/m.sealed" public > "$W/m.pub"
	b64file "$W/m.sealed" private > "$W/m.priv"
	[ "$(attrs_policy "$W/m.pub")" = "$(attrs_policy "$W/t.sealed.pub")" ] || die "sealed objects differ in attributes or policy"
	t_unseal "$W/m" "$W/out" # tpm2-tools unseals mboot's object: the same parent key
	check_secret "$W/out" "tpm2-tools unseal of mboot's sealed object"
	m_reseal "$W/m.sealed" "$W/m.resealed"
	t_reseal "$W/t.sealed" "$W/t.resealed"
	[ "$(jq -r .policy.digest "$W/m.resealed")" = "$(xxd -p -c 64 "$W/t.or")" ] || die "PolicyOR digests differ"

	# Counting pass: one operation each through the proxy.
	export TPM2TOOLS_TCTI="cmd:python3 $PROXY $SWTPM_DIR/sock 0 0 $W/trace"
	for op in seal unseal reseal; do
		for who in m t; do
			: > "$W/trace"
			NPROC=0
			case $op in
			seal) ${who}_seal "$W/$who.sealed" ;;
			unseal) ${who}_unseal "$W/$who.sealed" "$W/out"; check_secret "$W/out" "$who unseal" ;;
			reseal) ${who}_reseal "$W/$who.sealed" "$W/$who.resealed" ;;
			esac
			cp "$W/trace" "$W/trace.$v.$op.$who"
			CNT[$v.$op.$who]=$(wc -l < "$W/trace")
			PROCS[$v.$op.$who]=$NPROC
		done
	done
	export TPM2TOOLS_TCTI=$TCTI

	# Timing pass, interleaved; the order alternates.
	for ((i = 0; i < N; i++)); do
		for who in $( ((i % 2)) && echo t m || echo m t); do
			tm "$v.seal.$who" ${who}_seal "$W/$who.s$i"
			tm "$v.unseal.$who" ${who}_unseal "$W/$who.sealed" "$W/out"
			check_secret "$W/out" "$who unseal (run $i)"
			tm "$v.reseal.$who" ${who}_reseal "$W/$who.sealed" "$W/$who.r$i"
			[ $who = m ] || check_secret "$W/t.secret" "tpm2-tools reseal's unseal (run $i)"
		done
	done
	# The last sealed and resealed objects unseal (the OR branch of the current boot).
	f=$((N - 1))
	m_unseal "$W/m.s$f" "$W/out"
	check_secret "$W/out" "mboot unseal of the last seal"
	m_unseal "$W/m.r$f" "$W/out"
	check_secret "$W/out" "mboot unseal of the last reseal"
	t_unseal "$W/t.s$f" "$W/out"
	check_secret "$W/out" "tpm2-tools unseal of the last seal"
	t_unseal "$W/t.r$f" "$W/out" "$W/t.b0,$W/t.b1"
	check_secret "$W/out" "tpm2-tools unseal of the last reseal"
	rm -f "$W"/m.s[0-9]* "$W"/m.r[0-9]* "$W"/t.s[0-9]* "$W"/t.r[0-9]*
}

ms() { echo "$1 / $N / 1000" | bc -l; }
report() { # report VARIANT TITLE
	local v=$1 op mt tt c
	echo
	echo "== $2"
	printf '%-9s|%32s |%41s | %s\n' "" "mboot " "tpm2-tools " "tpm2-tools / mboot"
	printf '%-9s|%10s %10s %10s |%10s %10s %10s %9s | %8s %8s\n' operation "total ms" "ms/op" "TPM cmds" \
		"total ms" "ms/op" "TPM cmds" processes time cmds
	for op in seal unseal reseal; do
		mt=${US[$v.$op.m]} tt=${US[$v.$op.t]}
		printf '%-9s|%10.1f %10.2f %10d |%10.1f %10.2f %10d %9d | %7.2fx %7.2fx\n' "$op" \
			"$(echo "$mt / 1000" | bc -l)" "$(ms "$mt")" "${CNT[$v.$op.m]}" \
			"$(echo "$tt / 1000" | bc -l)" "$(ms "$tt")" "${CNT[$v.$op.t]}" "${PROCS[$v.$op.t]}" \
			"$(echo "$tt / $mt" | bc -l)" "$(echo "${CNT[$v.$op.t]} / ${CNT[$v.$op.m]}" | bc -l)"
	done
	echo "TPM commands by command code, mboot / tpm2-tools:"
	printf '  %-24s %11s %11s %11s\n' "" seal unseal reseal
	for c in $(cat "$W"/trace."$v".* | sort -u); do
		printf '  %-24s' "${CCNAME[$c]:-0x$c}"
		for op in seal unseal reseal; do
			printf ' %5s / %-3s' "$(awk -v c="$c" '$1 == c { n++ } END { print n + 0 }' "$W/trace.$v.$op.m")" \
				"$(awk -v c="$c" '$1 == c { n++ } END { print n + 0 }' "$W/trace.$v.$op.t")"
		done
		echo
	done
	printf '  %-24s' total
	for op in seal unseal reseal; do printf ' %5s / %-3s' "${CNT[$v.$op.m]}" "${CNT[$v.$op.t]}"; done
	echo
}

# Warm up (page cache).
"$M" pcrs --bank sha256 --pcr 0 > /dev/null; tpm2_pcrread sha256:0 > /dev/null

start=$(now)
PARENT=0x80000000 PARENT_JSON='{"template":"ecc-p256-srk"}'
run_variant tmpl
# The persistent SRK: the same template, made persistent at 0x81000001 (tpm2-tools).
tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes128cfb -a "$SRK_ATTRS" -u - -c "$W/srk.ctx" < "$W/zero64"
tpm2_evictcontrol -Q -C o -c 0x80000000 0x81000001
tpm2_flushcontext -t
PARENT=0x81000001 PARENT_JSON='{"handle":"0x81000001"}'
run_variant pers
end=$(now)

echo "mboot seal/unseal/reseal vs tpm2-tools sequences: N=$N runs of each, interleaved, on one swtpm"
echo "(unix socket, no resource manager), sha256 PCRs $SEL, a 32-byte secret; reseal = unseal, then"
echo "seal to PolicyOR(current, predicted). time and cmds ratios: tpm2-tools / mboot (> 1: mboot ahead)."
report tmpl "parent: ECC P-256 SRK from the template (TPM2_CreatePrimary at every use)"
report pers "parent: persistent SRK at 0x81000001"
echo
printf 'every unseal returned the secret; bench time %.1f s\n' "$(echo "($end - $start) / 1000000" | bc -l)"
