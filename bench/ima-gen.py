#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A realistic binary IMA list for bench/bench-ima.sh, written with hashlib by the kernel's rules
# (docs/ima.md): entry after entry, little-endian, u32 PCR 10, the SHA-1 template hash, u32 6,
# "ima-ng", u32 template-data length, then d-ng (u32 length, "sha256:" NUL digest) and n-ng
# (u32 length, path NUL). The first entry is boot_aggregate: SHA-256 over PCRs 0-9 of the
# sha256 bank (Linux 5.8 on). PCR values in tpm2_pcrread's form: PCRs 0-9 derived from their
# numbers, PCR 10 the list replayed: the sha1 bank by the SHA-1 template hashes, the sha256
# bank by the SHA-256 of each entry's template data (Linux 5.11 on).
#   ima-gen.py N LIST PCRS [POLICY PATHS]
# POLICY: a policy whose "ima" section allows every path of the list with its digest, and
# others up to PATHS paths in all (an allowlist of a whole distribution, most never run).
import hashlib
import json
import struct
import sys

DIRS = ['/usr/lib/x86_64-linux-gnu/', '/usr/bin/', '/usr/lib/python3/dist-packages/', '/usr/libexec/',
        '/usr/lib/systemd/', '/usr/share/perl5/', '/usr/lib/x86_64-linux-gnu/gconv/']


def path(i):
    d = DIRS[i % len(DIRS)]
    return '%spkg%04d/lib%s-%d.so.%d' % (d, i // 64, hashlib.sha1(b'%d' % i).hexdigest()[:8], i, i % 7)


def entry(pcr10, digest, name):
    d = b'sha256:\0' + digest
    n = name.encode() + b'\0'
    data = struct.pack('<I', len(d)) + d + struct.pack('<I', len(n)) + n
    th1 = hashlib.sha1(data).digest()
    th256 = hashlib.sha256(data).digest()
    pcr10[0] = hashlib.sha1(pcr10[0] + th1).digest()
    pcr10[1] = hashlib.sha256(pcr10[1] + th256).digest()
    return struct.pack('<I', 10) + th1 + struct.pack('<I', 6) + b'ima-ng' + struct.pack('<I', len(data)) + data


def main():
    n, out_list, out_pcrs = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    pcrs = {'sha1': [hashlib.sha1(b'pcr%d' % i).digest() for i in range(10)],
            'sha256': [hashlib.sha256(b'pcr%d' % i).digest() for i in range(10)]}
    pcr10 = [b'\0' * 20, b'\0' * 32]
    out = [entry(pcr10, hashlib.sha256(b''.join(pcrs['sha256'])).digest(), 'boot_aggregate')]
    digests = {}
    for i in range(n):
        p = path(i)
        digests[p] = hashlib.sha256(b'content of ' + p.encode()).digest()
        out.append(entry(pcr10, digests[p], p))
    open(out_list, 'wb').write(b''.join(out))
    with open(out_pcrs, 'w') as f:
        for k, bank in enumerate(('sha1', 'sha256')):
            f.write('  %s:\n' % bank)
            for i, v in enumerate(pcrs[bank] + [pcr10[k]]):
                f.write('    %-2d: 0x%s\n' % (i, v.hex().upper()))
    if len(sys.argv) > 5:
        allow = {p: ['sha256:' + d.hex()] for p, d in digests.items()}
        for i in range(n, int(sys.argv[5])):
            p = path(i)
            allow[p] = ['sha256:' + hashlib.sha256(b'content of ' + p.encode()).hexdigest()]
        json.dump({'version': 1, 'pcrs': {}, 'ima': {'digests': allow}}, open(sys.argv[4], 'w'), indent=1)


main()
