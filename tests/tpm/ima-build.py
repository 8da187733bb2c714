#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A kernel's binary IMA list written with hashlib (the kernel's rules written again, for
# tpm-attest-ima.sh): ima-ng entries on PCR 10, each SHA-1 template hash over the template data
# (each field as u32 little-endian length and bytes: d-ng "sha256:" NUL digest, n-ng path NUL),
# as binary_runtime_measurements holds them. For each entry it prints what the kernel (5.11 on)
# extends: "sha1=<template hash>,sha256=<SHA-256 of the template data>", for tpm2_pcrextend.
#   ima-build.py new PCRREAD LIST PATH=FILE...   boot_aggregate (SHA-256 over PCRs 0-9 of the
#                                                sha256 bank, tpm2_pcrread's output) and entries
#   ima-build.py add LIST PATH=FILE...           entries appended
#   ima-build.py tamper LIST OUT drop|path|digest N   entry N dropped, its path or file digest
#                                                edited (the template hash kept)
#   ima-build.py last LIST N                     entry N-1's template hash (hex)
import hashlib
import re
import struct
import sys


def template_data(digest, path):
    d = b'sha256:\0' + digest
    n = path.encode() + b'\0'
    return struct.pack('<I', len(d)) + d + struct.pack('<I', len(n)) + n


def entry(data):
    name = b'ima-ng'
    th = hashlib.sha1(data).digest()
    blob = struct.pack('<I', 10) + th + struct.pack('<I', len(name)) + name + struct.pack('<I', len(data)) + data
    print('sha1=%s,sha256=%s' % (th.hex(), hashlib.sha256(data).hexdigest()))
    return blob


def files(args):
    out = b''
    for a in args:
        path, f = a.split('=', 1)
        out += entry(template_data(hashlib.sha256(open(f, 'rb').read()).digest(), path))
    return out


def entries(blob):
    i, out = 0, []
    while i < len(blob):
        start = i
        i += 24
        (nlen,) = struct.unpack_from('<I', blob, i)
        i += 4 + nlen
        (dlen,) = struct.unpack_from('<I', blob, i)
        i += 4 + dlen
        out.append(bytearray(blob[start:i]))
    return out


def main():
    cmd = sys.argv[1]
    if cmd == 'new':
        pcrs = {}
        in_sha256 = False
        for line in open(sys.argv[2]):
            if re.match(r'^\s*sha256\s*:', line):
                in_sha256 = True
                continue
            m = re.match(r'^\s*(\d+)\s*:\s*0x([0-9A-Fa-f]+)', line)
            if in_sha256 and m:
                pcrs[int(m.group(1))] = bytes.fromhex(m.group(2))
        agg = hashlib.sha256(b''.join(pcrs[i] for i in range(10))).digest()
        blob = entry(template_data(agg, 'boot_aggregate')) + files(sys.argv[4:])
        open(sys.argv[3], 'wb').write(blob)
    elif cmd == 'add':
        open(sys.argv[2], 'ab').write(files(sys.argv[3:]))
    elif cmd == 'tamper':
        es = entries(open(sys.argv[2], 'rb').read())
        mode, n = sys.argv[4], int(sys.argv[5])
        if mode == 'drop':
            del es[n]
        elif mode == 'path':
            e = es[n]
            e[len(e) - 2] ^= 0x01  # the path's last character
        elif mode == 'digest':
            es[n][24 + 4 + 6 + 4 + 4 + 8] ^= 0x01  # the digest's first byte, after "sha256:" NUL
        open(sys.argv[3], 'wb').write(b''.join(bytes(e) for e in es))
    elif cmd == 'last':
        es = entries(open(sys.argv[2], 'rb').read())
        print(bytes(es[int(sys.argv[3]) - 1][4:24]).hex())


main()
