#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A self-consistent IMA list for test-ima-policy.sh, computed with hashlib (the kernel's rules
# written again): the paths of a real list (ima-ng lines), each file digest a SHA-256 derived
# from the path and its recorded digest, a boot_aggregate over PCRs 0-9 of a tpm2_eventlog PCR
# dump (PCR 8 absent: zeros), every template hash SHA-256 of the fields, and the dump again with
# PCR 8 and PCR 10 (the list replayed) added.
#   ima-policy-ref.py SRC_LIST PCRS_IN OUT_LIST OUT_PCRS [--tamper N | --edit N] [--drop N]
# --tamper N: entry N's file digest changed, its template hash recomputed (the list stays
# consistent, PCR 10 follows it); --edit N: the digest changed, the template hash kept (the
# entry no longer matches its fields). --drop N: entry N left out of the list but still in PCR 10.
# --sig N HEX: entry N an ima-sig entry with that signature field (its template hash over the
# three fields). --modsig N ALGO:HEX HEX: entry N an ima-modsig entry, sig empty, with that
# d-modsig and modsig (its template hash over the five fields). --digest N: print entry N's
# "path digest-hex" only (what to sign).
# Prints "path digest" of the changed entry.
import hashlib
import struct
import sys


def fields(algo, digest, path):
    d = algo.encode() + b':\0' + digest
    n = path.encode() + b'\0'
    return [d, n]


def thash(f):
    h = hashlib.sha256()
    for x in f:
        h.update(struct.pack('<I', len(x)) + x)
    return h.digest()


def main():
    src, pcrs_in, out_list, out_pcrs = sys.argv[1:5]
    opts = sys.argv[5:]
    tamper = int(opts[opts.index('--tamper') + 1]) if '--tamper' in opts else -1
    edit = int(opts[opts.index('--edit') + 1]) if '--edit' in opts else -1
    drop = int(opts[opts.index('--drop') + 1]) if '--drop' in opts else -1
    sig_n = int(opts[opts.index('--sig') + 1]) if '--sig' in opts else -1
    sig = bytes.fromhex(opts[opts.index('--sig') + 2]) if '--sig' in opts else b''
    mod_n = int(opts[opts.index('--modsig') + 1]) if '--modsig' in opts else -1
    if mod_n >= 0:
        malgo, mhex = opts[opts.index('--modsig') + 2].split(':')
        dmod = malgo.encode() + b':\0' + bytes.fromhex(mhex)
        modsig = bytes.fromhex(opts[opts.index('--modsig') + 3])
    want_digest = int(opts[opts.index('--digest') + 1]) if '--digest' in opts else -1
    pcrs = {}
    for line in open(pcrs_in):
        if ':' in line and line.strip()[0].isdigit():
            k, v = line.split(':')
            pcrs[int(k)] = bytes.fromhex(v.strip()[2:])
    pcrs.setdefault(8, b'\0' * 32)
    agg = hashlib.sha256(b''.join(pcrs[i] for i in range(10))).digest()
    ents = [('boot_aggregate', agg)]
    for line in open(src).read().splitlines():
        tok = line.split(' ', 4)
        if len(tok) < 5 or tok[2] != 'ima-ng' or tok[4] == 'boot_aggregate':
            continue
        algo, hexd = tok[3].split(':')
        ents.append((tok[4], hashlib.sha256(tok[4].encode() + bytes.fromhex(hexd)).digest()))
    pcr10 = b'\0' * 32
    out = []
    if want_digest >= 0:
        print(ents[want_digest][0], ents[want_digest][1].hex())
        return
    for i, (path, digest) in enumerate(ents):
        th = thash(fields('sha256', digest, path))
        if i == sig_n:
            th = thash(fields('sha256', digest, path) + [sig])
        if i == mod_n:
            th = thash(fields('sha256', digest, path) + [b'', dmod, modsig])
        if i in (tamper, edit):
            digest = hashlib.sha256(b'tampered' + digest).digest()
            if i == tamper:
                th = thash(fields('sha256', digest, path))
            print(path, 'sha256:' + digest.hex())
        pcr10 = hashlib.sha256(pcr10 + th).digest()
        if i == sig_n:
            out.append('10 %s ima-sig sha256:%s %s %s\n' % (th.hex(), digest.hex(), path, sig.hex()))
        elif i == mod_n:
            out.append('10 %s ima-modsig sha256:%s %s  %s %s\n' % (th.hex(), digest.hex(), path,
                                                                   opts[opts.index('--modsig') + 2], modsig.hex()))
        elif i != drop:
            out.append('10 %s ima-ng sha256:%s %s\n' % (th.hex(), digest.hex(), path))
    open(out_list, 'w').write(''.join(out))
    pcrs[10] = pcr10
    with open(out_pcrs, 'w') as f:
        f.write('  sha256:\n')
        for k in sorted(pcrs):
            f.write('    %-2d : 0x%s\n' % (k, pcrs[k].hex()))


main()
