#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The 'oom' suite: each unit test, built with oom-alloc.c (its -oom twin), is run once to count
the allocations libmboot's own code makes and which of them is the first of its call path
(MB_FAIL_ALLOC=0 MB_OOM_PATHS=1), then again with allocation k failing (MB_FAIL_ALLOC=k).

One wall-clock budget for the whole suite (MB_OOM_BUDGET seconds, the counting runs included),
two runs at a time, shared by the tests by time spent (the test that has used least goes next),
in a fixed order, so that whatever the budget allows is a prefix of the same plan:
  1. the first allocation of each call path, of every test, before any sampling;
  2. then the other k of each test, an even sample refined by halving strides (N/2, then N/4
     and 3N/4, then the odd eighths, ...: any prefix is spread evenly over 1..N).
No randomness: a failing k fails again alone with MB_FAIL_ALLOC=k. For each test the output says
which k ran (as ranges) and how many were skipped for time.

A run may fail its cmocka assertions (the library returned the error; the test expected
success): that is fine. It is a finding when
  - the process crashes, or ASan/UBSan reports an error whose innermost frame of ours is in
    src/lib or src/shared (a crash in the test's own code after the error is the test's);
  - LeakSanitizer reports a block allocated through libmboot's code that the library leaked:
    either every test passed (nothing aborted, so nothing was dropped by the test), or the
    block was allocated under the same call of the test (the test's file:line) as the failed
    allocation: the call failed, so it had to free what it made. Blocks allocated under other
    calls were dropped by the test's own abort (cmocka leaves a test at its first failed
    assertion) and are not counted.
The sanitizers print their stacks unsymbolized (symbolizing each run's stacks doubled its time);
they are symbolized here through one llvm-symbolizer process, each address once.

Environment: MB_OOM_BUDGET seconds of wall time for the whole suite (default 180),
MB_OOM_JOBS runs at a time (default 2), MB_OOM_ALL=1 every k of every test whatever the time,
MB_OOM_SAMPLE=N at most N k of each test past its call paths (default 24), MB_OOM_ONLY=NAME[,NAME]
only those tests (e.g. test-policy), MB_OOM_KS=K[,K] only those k
(with MB_OOM_ONLY: a finding again, judged as the suite judges it).
"""
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, FIRST_COMPLETED, wait

FRAME = re.compile(r'^\s*#\d+ 0x[0-9a-f]+ in (\S+)\s+(.*)$')
RAW = re.compile(r'^\s*#\d+ 0x[0-9a-f]+\s+\((.+)\+(0x[0-9a-f]+)\)\s*$')
LIB = re.compile(r'(^|/)src/(lib|shared)/')
TEST = re.compile(r'(^|/)tests/unit/')
TIMEOUT = 60


class Symbolizer:
    """One llvm-symbolizer for the whole suite; each (module, offset) asked once."""

    def __init__(self, path):
        self.proc = subprocess.Popen([path, '--functions=linkage', '--inlining'],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.cache = {}
        self.lock = threading.Lock()

    def frames(self, module, off):
        key = (module, off)
        with self.lock:
            if key not in self.cache:
                self.proc.stdin.write('"%s" %s\n' % (module, off))
                self.proc.stdin.flush()
                out = []
                while True:
                    func = self.proc.stdout.readline()
                    if not func.strip():
                        break
                    loc = self.proc.stdout.readline().strip()
                    out.append((func.strip(), loc))
                self.cache[key] = out
            return self.cache[key]


SYMBOLIZER = None


def kind(loc):
    if LIB.search(loc):
        return 'lib'
    if TEST.search(loc):
        return 'test'
    return 'other'


def frames(lines):
    out = []
    for ln in lines:
        m = FRAME.match(ln)
        r = RAW.match(ln) if not m else None
        if m:
            out.append((m.group(1), m.group(2).strip()))
        elif r:
            # Our code is in the test's executable (the core is linked statically); libasan,
            # libc, jansson and OpenSSL are shared objects, not symbolized.
            if SYMBOLIZER and '.so' not in os.path.basename(r.group(1)):
                # A return address points past its call: one byte back is the call's line.
                off = '0x%x' % max(int(r.group(2), 16) - 1, 0)
                out.extend(SYMBOLIZER.frames(r.group(1), off) or [('??', r.group(1))])
            else:
                out.append(('??', r.group(1)))
        elif out and not ln.strip():
            break
    return out


def test_site(fr):
    """The test's own frames (tests/unit), innermost first: the call of the test the stack is
    under, with its callers (a helper of the test called from two places is two sites)."""
    site = tuple('%s %s' % (func, loc) for func, loc in fr if kind(loc) == 'test')
    return site or None


def same_site(a, b):
    """A leak's stack is recorded by the fast unwinder, which stops in cmocka (no frame
    pointers): its chain lacks main. Same call when the shorter chain begins the longer."""
    if not a or not b:
        return False
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def ours(fr):
    """The innermost frame in src/lib, src/shared or tests/unit, skipping libc and sanitizers:
    its kind and its function (a finding's name, kept when lines move)."""
    for func, loc in fr:
        if kind(loc) != 'other':
            return kind(loc), func
    return None, None


def known_findings():
    """known.txt: a finding not fixed yet, 'KEY  # why' a line; reported, not failed."""
    known = {}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'known.txt')) as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith('#'):
                key, _, why = ln.partition('#')
                known[key.strip()] = why.strip()
    return known


def run(exe, k, env):
    e = dict(env)
    e['MB_FAIL_ALLOC'] = str(k)
    if k == 0:
        e['MB_OOM_PATHS'] = '1'
    t = time.monotonic()
    try:
        p = subprocess.run([exe], env=e, capture_output=True, text=True, errors='replace',
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, '', 'timeout after %d s' % TIMEOUT, time.monotonic() - t
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def judge(k, rc, out, err):
    """Findings of one run with allocation k failing: a list of (key, text)."""
    if rc is None:
        return [('timeout', 'k=%d: %s' % (k, err))]
    lines = err.splitlines()
    found = []
    fail_site = None
    if 'oom: allocation %d fails here' % k in err:
        i = lines.index('oom: allocation %d fails here' % k)
        fail_site = test_site(frames(lines[i + 1:]))
    passed = re.search(r'\[  FAILED  \] \d+ test', out) is None and \
        re.search(r'\[  PASSED  \] \d+ test', out) is not None
    leak_report = False
    for i, ln in enumerate(lines):
        if 'ERROR: LeakSanitizer' in ln:
            leak_report = True
            continue
        m = re.search(r'ERROR: AddressSanitizer: (\S+)|runtime error: (.*)', ln)
        if m:
            what = m.group(1) or ('UBSan ' + m.group(2))
            where, site = ours(frames(lines[i + 1:]))
            if m.group(2):
                loc = ln.split(': runtime error')[0]
                where, site = kind(loc), ours(frames(lines[i + 1:]))[1] or loc
                what = 'UBSan'
            if where != 'test':
                found.append(('%s at %s' % (what, site), 'k=%d: %s\n%s\n%s' % (
                    k, ln, '\n'.join('    in %s %s' % f for f in frames(lines[i + 1:])[:20]),
                    '\n'.join(lines[i + 1:i + 30]))))
        # Only direct leaks: an indirect one hangs off a block someone still points to, as an
        # object the test made and dropped at its abort (the arena of a decoded event it holds).
        m = re.match(r'Direct leak of (\d+) byte', ln)
        if m:
            fr = frames(lines[i + 1:])
            if not any(kind(loc) == 'lib' for _, loc in fr):
                continue
            site = test_site(fr)
            if passed or (same_site(site, fail_site)):
                where = ours(fr)[1]
                found.append(('leak at %s' % where,
                              'k=%d: %s (allocation failed under %s)\n%s' %
                              (k, ln, ' < '.join(fail_site or ()), '\n'.join('    in %s %s' % f for f in fr))))
    if rc < 0 and not found and not leak_report and 'ERROR: AddressSanitizer' not in err \
            and 'runtime error' not in err:
        found.append(('signal %d' % -rc, 'k=%d: killed by signal %d\n%s' % (k, -rc, err[-3000:])))
    return found


def stride_order(ks):
    """ks (sorted) in an order whose every prefix is spread evenly over them: the middle one,
    then the quarters, then the odd eighths, ... (a fixed order, no seed)."""
    n = len(ks)
    if n == 0:
        return []
    out, seen = [], set()
    step = 1
    while step < n:
        step *= 2
    while step >= 1:
        for i in range(step // 2 if step > 1 else 0, n, step):
            if i not in seen:
                seen.add(i)
                out.append(ks[i])
        if step == 1:
            break
        step //= 2
    for i in range(n):
        if i not in seen:
            out.append(ks[i])
    return out


def ranges(ks):
    """Sorted ks as '1-84,90,97-99'."""
    out = []
    for k in sorted(ks):
        if out and out[-1][1] == k - 1:
            out[-1][1] = k
        else:
            out.append([k, k])
    return ','.join('%d' % a if a == b else '%d-%d' % (a, b) for a, b in out)


class Plan:
    def __init__(self, exe, n, paths, t0):
        self.exe, self.name, self.n, self.t0 = exe, os.path.basename(exe), n, t0
        firsts = sorted(k for k in set(paths) if 1 <= k <= n)
        rest = [k for k in range(1, n + 1) if k not in set(firsts)]
        self.paths = len(firsts)
        # At most MB_OOM_SAMPLE of the rest (default 24; MB_OOM_ALL=1: all): the set a run can
        # reach is then the same on a quiet machine as on the one that last saw it green; the
        # budget can only make it smaller.
        sample = len(rest) if os.environ.get('MB_OOM_ALL') == '1' else int(os.environ.get('MB_OOM_SAMPLE', '24'))
        self.queue = [(1, k) for k in stride_order(firsts)] + [(2, k) for k in stride_order(rest)[:sample]]
        chosen = [int(k) for k in os.environ.get('MB_OOM_KS', '').split(',') if k]
        if chosen:
            self.queue = [(2, k) for k in chosen if 1 <= k <= n]
        self.pos = 0
        self.spent = 0.0
        self.ran = []
        self.ran_paths = 0
        self.slowest = t0
        self.findings = {}

    def next_phase(self):
        return self.queue[self.pos][0] if self.pos < len(self.queue) else 3


def main():
    global SYMBOLIZER
    exes = sys.argv[1:]
    only = [s for s in os.environ.get('MB_OOM_ONLY', '').split(',') if s]
    if only:
        exes = [x for x in exes if os.path.basename(x)[:-len('-oom')] in only]
    budget = float(os.environ.get('MB_OOM_BUDGET', '180'))
    jobs = int(os.environ.get('MB_OOM_JOBS', '2'))
    every = os.environ.get('MB_OOM_ALL') == '1'
    env = dict(os.environ)
    sym = shutil.which('llvm-symbolizer')
    env['ASAN_OPTIONS'] = 'detect_leaks=1:abort_on_error=1:allocator_may_return_null=1'
    if sym:
        SYMBOLIZER = Symbolizer(sym)
        env['ASAN_OPTIONS'] += ':symbolize=0'
    env['UBSAN_OPTIONS'] = 'print_stacktrace=1:halt_on_error=1' + (':symbolize=0' if sym else '')
    start = time.monotonic()
    deadline = start + budget
    known = known_findings()
    bad_tests = 0
    # First every test once, counting its allocations and their call paths, and timing a run.
    plans = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for exe, (rc, out, err, t0) in zip(exes, pool.map(lambda x: run(x, 0, env), exes)):
            name = os.path.basename(exe)
            m = re.search(r'oom: (\d+) allocations', err)
            if rc != 0 or not m:
                print('FAIL: %s does not pass without a failed allocation (exit %s):\n%s%s' %
                      (name, rc, out[-2000:], err[-4000:]))
                bad_tests += 1
            elif int(m.group(1)) > 0:
                paths = [int(k) for k in re.findall(r'oom: path (\d+)', err)]
                plans.append(Plan(exe, int(m.group(1)), paths, max(t0, 0.01)))
            else:
                print('%s: no allocation by libmboot' % name)
    # Then the budget: the test that has spent least time in its current phase runs its next k.
    # A run is started only when it can end before the deadline (judged by that test's slowest
    # run so far).
    lock = threading.Lock()

    def pick():
        best = None
        for p in plans:
            if p.pos >= len(p.queue):
                continue
            if not every and time.monotonic() + p.slowest > deadline:
                continue
            key = (p.next_phase(), p.spent)
            if best is None or key < best[0]:
                best = (key, p)
        if best is None:
            return None
        p = best[1]
        phase, k = p.queue[p.pos]
        p.pos += 1
        p.spent += p.slowest  # reserved; corrected when it ends
        return p, phase, k

    def one(p, phase, k):
        rc, out, err, t = run(p.exe, k, env)
        found = judge(k, rc, out, err)
        with lock:
            p.spent += t - p.slowest
            p.slowest = max(p.slowest, t)
            p.ran.append(k)
            p.ran_paths += phase == 1
            for key, text in found:
                p.findings.setdefault(key, text)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = set()
        while True:
            with lock:
                while len(running) < jobs:
                    job = pick()
                    if job is None:
                        break
                    running.add(pool.submit(one, *job))
            if not running:
                break
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                f.result()
    findings = {}
    seen_known = set()
    total_runs = 0
    for p in plans:
        total_runs += len(p.ran)
        skipped = p.n - len(p.ran)
        new = [key for key in p.findings if key not in known]
        print('%s: %d allocations by libmboot on %d call paths, %.2f s a run; failed %d '
              '(%d first of a path), %d skipped for time: %s' %
              (p.name, p.n, p.paths, p.t0, len(p.ran), p.ran_paths, skipped,
               'ok' if not new else '%d finding(s)' % len(new)))
        print('  k = %s' % (ranges(p.ran) if skipped else '1-%d (all)' % p.n))
        for key, text in p.findings.items():
            if key in known:
                if key not in seen_known:
                    print('known: %s: %s (%s)' % (p.name, key, known[key]))
                seen_known.add(key)
            elif key not in findings:
                findings[key] = text
                print('FAIL: %s: %s\n%s\n  again: MB_FAIL_ALLOC=K %s\n' %
                      (p.name, key, text, p.exe))
    print('%d tests, %d runs with a failed allocation, %.0f s of a %.0f s budget: %d finding(s), '
          '%d known (known.txt)' % (len(exes), total_runs, time.monotonic() - start, budget,
                                     len(findings), len(seen_known)))
    return 1 if findings or bad_tests else 0


if __name__ == '__main__':
    sys.exit(main())
