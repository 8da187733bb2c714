#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An IMA runtime list's template hashes and PCR 10, computed here with hashlib from the kernel's
rules (security/integrity/ima), independently of mboot: the outside values test-ima.sh compares
`mboot ima` with. Usage: ima-ref.py LOG -> one line an entry "N ok|bad|violation", then
"pcr10 BANK recomputed|padded HEX" lines for sha1, sha256 (and "boot_aggregate ALG HEX")."""
import hashlib
import struct
import sys

SIZES = {20: 'sha1', 32: 'sha256', 48: 'sha384', 64: 'sha512'}


def fields_of_ascii(tmpl, toks):
    def dng(tok):
        algo, hexd = tok.split(':', 1)
        return algo.encode() + b':\0' + bytes.fromhex(hexd)
    if tmpl == 'ima':
        return 'legacy', [bytes.fromhex(toks[0]), ' '.join(toks[1:]).encode()]
    tail = {'ima-ng': 0, 'ima-sig': 1, 'ima-buf': 1, 'ima-modsig': 3}[tmpl]
    name = ' '.join(toks[1:len(toks) - tail]).encode() + b'\0'
    out = [dng(toks[0]), name]
    for t in toks[len(toks) - tail:]:
        out.append(b'' if t == '' else (dng(t) if ':' in t else bytes.fromhex(t)))
    return 'ng', out


def entries(path):
    data = open(path, 'rb').read()
    if data[:1].isdigit():
        for line in data.decode().splitlines():
            if not line:
                continue
            toks = line.split(' ')
            kind, f = fields_of_ascii(toks[2], toks[3:])
            yield int(toks[0]), bytes.fromhex(toks[1]), kind, f
        return
    hs, pos = 20, 0
    while len(data) - pos >= 8 + hs:
        pcr, = struct.unpack_from('<I', data, pos)
        th = data[pos + 4:pos + 4 + hs]
        nl, = struct.unpack_from('<I', data, pos + 4 + hs)
        pos += 8 + hs
        name = data[pos:pos + nl].decode()
        pos += nl
        if name == 'ima':
            d = data[pos:pos + 20]
            ln, = struct.unpack_from('<I', data, pos + 20)
            yield pcr, th, 'legacy', [d, data[pos + 24:pos + 24 + ln]]
            pos += 24 + ln
        else:
            ln, = struct.unpack_from('<I', data, pos)
            td = data[pos + 4:pos + 4 + ln]
            pos += 4 + ln
            f, p = [], 0
            while p < len(td):
                fl, = struct.unpack_from('<I', td, p)
                f.append(td[p + 4:p + 4 + fl])
                p += 4 + fl
            yield pcr, th, 'ng', f


def thash(alg, kind, f):
    h = hashlib.new(alg)
    if kind == 'legacy':
        h.update(f[0] + f[1] + b'\0' * (256 - len(f[1])))
    else:
        for x in f:
            h.update(struct.pack('<I', len(x)) + x)
    return h.digest()


def main():
    ents = list(entries(sys.argv[1]))
    banks = ['sha1', 'sha256']
    rec = {b: b'\0' * hashlib.new(b).digest_size for b in banks}
    pad = dict(rec)
    for i, (pcr, th, kind, f) in enumerate(ents):
        talg = SIZES[len(th)]
        viol = th == b'\0' * len(th)
        if viol:
            print(i, 'violation')
        else:
            print(i, 'ok' if thash(talg, kind, f) == th else 'bad')
        if pcr != 10:
            continue
        for b in banks:
            n = hashlib.new(b).digest_size
            if viol:
                rc = pd = b'\xff' * n
            else:
                rc = th if b == talg else thash(b, kind, f)
                pd = (th + b'\0' * n)[:n]
            rec[b] = hashlib.new(b, rec[b] + rc).digest()
            pad[b] = hashlib.new(b, pad[b] + pd).digest()
    for b in banks:
        print('pcr10', b, 'recomputed', rec[b].hex())
        print('pcr10', b, 'padded', pad[b].hex())
    if len(sys.argv) > 2:
        # a tsspcrread dump: boot_aggregate over PCRs 0-7 (sha1) or 0-9 (other banks), and 0-7
        vals, bank = {}, None
        for line in open(sys.argv[2]):
            if line.startswith('pcrread:'):
                bank = line.split()[-1]
                vals[bank] = {}
            elif ':' in line and bank:
                k, v = line.split(':')
                vals[bank][int(k)] = bytes.fromhex(v.strip())
        for b in vals:
            for last in ((7,) if b == 'sha1' else (9, 7)):
                h = hashlib.new(b)
                for i in range(last + 1):
                    h.update(vals[b][i])
                print('boot_aggregate', b, '0-%d' % last, h.hexdigest())
            print('recorded', b, '10', vals[b][10].hex())


main()
