#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The 'oom' suite: each unit test, built with oom-alloc.c (its -oom twin), is run once to count
the allocations libmboot's own code makes (MB_FAIL_ALLOC=0), then again with allocation k
failing (MB_FAIL_ALLOC=k) for k = 1..N, or for N evenly spaced k when a test makes more than
its share of the time budget allows (said in the output).

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

Environment: MB_OOM_BUDGET seconds of wall time for the whole suite (default 150),
MB_OOM_JOBS runs at a time (default 2), MB_OOM_ALL=1 every k of every test whatever the time,
MB_OOM_ONLY=NAME[,NAME] only those tests (e.g. test-policy).
"""
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

FRAME = re.compile(r'^\s*#\d+ 0x[0-9a-f]+ in (\S+)\s+(.*)$')
LIB = re.compile(r'(^|/)src/(lib|shared)/')
TEST = re.compile(r'(^|/)tests/unit/')
TIMEOUT = 120


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
        if m:
            out.append((m.group(1), m.group(2).strip()))
        elif out and not ln.strip():
            break
    return out


def test_site(fr):
    """The innermost frame in the test's own file: the call of the test the stack is under."""
    for func, loc in fr:
        if kind(loc) == 'test':
            return '%s %s' % (func, loc)
    return None


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
                found.append(('%s at %s' % (what, site),
                              'k=%d: %s\n%s' % (k, what, '\n'.join(lines[i:i + 25]))))
        # Only direct leaks: an indirect one hangs off a block someone still points to, as an
        # object the test made and dropped at its abort (the arena of a decoded event it holds).
        m = re.match(r'Direct leak of (\d+) byte', ln)
        if m:
            fr = frames(lines[i + 1:])
            if not any(kind(loc) == 'lib' for _, loc in fr):
                continue
            site = test_site(fr)
            if passed or (fail_site is not None and site == fail_site):
                where = ours(fr)[1]
                found.append(('leak at %s' % where,
                              'k=%d: %s (allocation failed under %s)\n%s' %
                              (k, ln, fail_site, '\n'.join(lines[i + 1:i + 1 + len(fr)]))))
    if rc < 0 and not found and not leak_report and 'ERROR: AddressSanitizer' not in err \
            and 'runtime error' not in err:
        found.append(('signal %d' % -rc, 'k=%d: killed by signal %d\n%s' % (k, -rc, err[-3000:])))
    return found


def main():
    exes = sys.argv[1:]
    only = [s for s in os.environ.get('MB_OOM_ONLY', '').split(',') if s]
    if only:
        exes = [x for x in exes if os.path.basename(x)[:-len('-oom')] in only]
    budget = float(os.environ.get('MB_OOM_BUDGET', '150'))
    jobs = int(os.environ.get('MB_OOM_JOBS', '2'))
    every = os.environ.get('MB_OOM_ALL') == '1'
    env = dict(os.environ)
    env['ASAN_OPTIONS'] = 'detect_leaks=1:abort_on_error=1:allocator_may_return_null=1'
    env['UBSAN_OPTIONS'] = 'print_stacktrace=1:halt_on_error=1'
    start = time.monotonic()
    findings = {}
    known = known_findings()
    seen_known = set()
    bad_tests = 0
    total_runs = 0
    # First every test once, counting: its allocations and how long a run takes.
    counted = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for exe, (rc, out, err, t0) in zip(exes, pool.map(lambda x: run(x, 0, env), exes)):
            name = os.path.basename(exe)
            m = re.search(r'oom: (\d+) allocations', err)
            if rc != 0 or not m:
                print('FAIL: %s does not pass without a failed allocation (exit %s):\n%s%s' %
                      (name, rc, out[-2000:], err[-4000:]))
                bad_tests += 1
            elif int(m.group(1)) > 0:
                counted.append((exe, int(m.group(1)), max(t0, 0.01)))
            else:
                print('%s: no allocation by libmboot' % name)
    # Then the time left shared out: a test that needs less than its share (every k) leaves
    # the rest to the others; at least 3 runs each.
    left = (budget - (time.monotonic() - start)) * jobs
    plan = {}
    todo = sorted(counted, key=lambda c: c[1] * c[2])
    for i, (exe, n, t0) in enumerate(todo):
        share = left / (len(todo) - i)
        runs = n if every else min(n, max(3, int(share / t0)))
        plan[exe] = runs
        left -= runs * t0
    for exe, n, t0 in counted:
        name = os.path.basename(exe)
        runs = plan[exe]
        if runs >= n:
            ks = list(range(1, n + 1))
            how = 'all %d' % n
        else:
            ks = sorted({1 + (i * n) // runs for i in range(runs)})
            how = '%d of %d, one in %d (the time budget)' % (len(ks), n, n // len(ks))
        mine = {}
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for k, res in zip(ks, pool.map(lambda k: run(exe, k, env), ks)):
                for key, text in judge(k, res[0], res[1], res[2]):
                    mine.setdefault(key, text)
        total_runs += len(ks)
        new = [key for key in mine if key not in known]
        print('%s: %d allocations by libmboot, %.2f s a run; failed %s: %s' %
              (name, n, t0, how, 'ok' if not new else '%d finding(s)' % len(new)))
        for key, text in mine.items():
            if key in known:
                if key not in seen_known:
                    print('known: %s: %s (%s)' % (name, key, known[key]))
                seen_known.add(key)
            elif key not in findings:
                findings[key] = text
                print('FAIL: %s: %s\n%s\n' % (name, key, text))
        sys.stdout.flush()
    print('%d tests, %d runs with a failed allocation, %.0f s: %d finding(s), %d known (known.txt)' %
          (len(exes), total_runs, time.monotonic() - start, len(findings), len(seen_known)))
    return 1 if findings or bad_tests else 0


if __name__ == '__main__':
    sys.exit(main())
