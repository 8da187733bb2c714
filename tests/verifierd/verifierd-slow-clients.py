#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# mboot-verifierd under slow clients (issue 28), the real service on 127.0.0.1 with SQLite:
#   headers  40 connections (the whole --max-connections) trickle a header line a byte every
#            0.5 s, faster than the idle timeout: each is closed by --header-timeout, and a
#            normal client waiting for a connection is served once they are
#   keep-alive  a connection answered once, then trickling its next request: closed too
#   per-ip   40 connections from one address: all but --max-connections-per-ip are refused at
#            once, and a normal client from another address is served meanwhile, quickly
#   bodies   24 chunked bodies of almost --max-body each, then a byte every 0.5 s: the
#            service's VmRSS grows by less than --max-body-memory and a margin, not by the 24
#            bodies; each connection is closed by --body-timeout, and an operator call
#            (GET /v1/machines with a token) is answered meanwhile, quickly
# The attackers bind to addresses of 127.0.0.0/8 of their own (one each unless the check says),
# so that the per-address limit is not what stops them. Everything stays on loopback and ends
# within about 30 s.
#
# MB_OLD_VERIFIERD=1 leaves out the options that came with these limits, to watch the checks
# fail against a service built before them.
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

V = os.environ['MB_VERIFIERD']
OLD = os.environ.get('MB_OLD_VERIFIERD') == '1'
IDLE = 2            # --connection-timeout: the trickles below send faster than this
HEADER_TIMEOUT = 3
BODY_TIMEOUT = 4
MAX_BODY = 4 * 1024 * 1024
BODY_MEMORY = 16 * 1024 * 1024
MAX_CONNECTIONS = 40
PER_IP = 8
SLACK = 1.5         # seconds a cut may come after its deadline (the watchdog wakes every 0.2 s)

failures = []


def check(ok, what):
    print(('ok: ' if ok else 'FAIL: ') + what, flush=True)
    if not ok:
        failures.append(what)


class Service:
    def __init__(self, tmp):
        self.tmp = tmp
        db = 'sqlite:' + os.path.join(tmp, 'verifier.db')
        out = subprocess.run([V, '--db', db, '--new-token'], check=True, capture_output=True, text=True)
        self.token = out.stdout.strip()
        port_file = os.path.join(tmp, 'port')
        args = [V, '--listen', '127.0.0.1:0', '--insecure', '--allow-no-ek-cert', '--db', db,
                '--port-file', port_file, '--threads', '2', '--connection-timeout', str(IDLE),
                '--max-body', str(MAX_BODY), '--max-connections', str(MAX_CONNECTIONS)]
        if not OLD:
            args += ['--header-timeout', str(HEADER_TIMEOUT), '--body-timeout', str(BODY_TIMEOUT),
                     '--max-body-memory', str(BODY_MEMORY), '--max-connections-per-ip', str(PER_IP)]
        env = dict(os.environ)
        # Under ASan freed blocks wait in a quarantine (256 MiB by default): keep it small so that
        # VmRSS shows what is in use.
        env['ASAN_OPTIONS'] = env.get('ASAN_OPTIONS', '') + ':quarantine_size_mb=4'
        self.log = open(os.path.join(tmp, 'log'), 'w')
        self.proc = subprocess.Popen(args, stderr=self.log, env=env)
        for _ in range(100):
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            if self.proc.poll() is not None:
                sys.exit('the service died at startup: ' + open(os.path.join(tmp, 'log')).read())
            time.sleep(0.1)
        with open(port_file) as f:
            self.port = int(f.read())

    def rss_kib(self):
        with open('/proc/%d/status' % self.proc.pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = 'killed'
        self.log.close()
        check(rc == 0, 'the service exits 0 on SIGTERM afterwards (exit %s)' % rc)
        if rc != 0:
            sys.stderr.write(open(os.path.join(self.tmp, 'log')).read()[-3000:])


class Slow:
    """One connection that sent `head` and then sends `trickle` a byte at a time."""

    def __init__(self, port, source, head, trickle):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((source, 0))
        self.start = time.monotonic()
        self.sock.connect(('127.0.0.1', port))
        self.closed = None      # when the service ended it (monotonic)
        self.answer = b''
        self.trickle = trickle
        self.sent = 0
        try:
            self.sock.sendall(head)
        except OSError:
            self.closed = time.monotonic()
        self.sock.setblocking(False)

    def tick(self):
        if self.closed is not None:
            return
        try:
            self.sock.send(self.trickle[self.sent % len(self.trickle):][:1])
            self.sent += 1
        except BlockingIOError:
            pass
        except OSError:
            self.ended()

    def readable(self):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b''
        if data:
            self.answer += data
        else:
            self.ended()

    def ended(self):
        if self.closed is None:
            self.closed = time.monotonic()
            self.sock.close()

    def close(self):
        if self.closed is None:
            self.sock.close()


class Curl:
    """A normal client (curl from 127.0.0.1), running while the slow ones trickle."""

    def __init__(self, port, path, token=None, max_time=15):
        args = ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', str(max_time),
                'http://127.0.0.1:%d%s' % (port, path)]
        if token:
            args[1:1] = ['-H', 'Authorization: Bearer ' + token]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        self.started = time.monotonic()
        self.took = None

    def poll(self):
        if self.took is None and self.proc.poll() is not None:
            self.took = time.monotonic() - self.started

    def result(self):
        """(HTTP status, seconds it took): curl's own --max-time ends it."""
        out, _ = self.proc.communicate()
        self.poll()
        return out.strip(), self.took


def run(conns, seconds, client=None, sample=None, every=0.5):
    """Trickle on every open connection for `seconds`, or until all are closed."""
    end = time.monotonic() + seconds
    next_send = time.monotonic() + every
    while time.monotonic() < end:
        live = [c for c in conns if c.closed is None]
        if not live:
            break
        r, _, _ = select.select([c.sock for c in live], [], [], 0.05)
        for c in live:
            if c.sock in r:
                c.readable()
        if time.monotonic() >= next_send:
            for c in conns:
                c.tick()
            next_send += every
        if client:
            client.poll()
        if sample:
            sample()


def test_headers(svc):
    head = b'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '
    conns = [Slow(svc.port, '127.0.0.%d' % (10 + i), head, b'abcdefgh') for i in range(MAX_CONNECTIONS)]
    time.sleep(0.3)
    client = Curl(svc.port, '/healthz', max_time=HEADER_TIMEOUT + 4)
    run(conns, HEADER_TIMEOUT + 5, client)
    lasted = [(c.closed if c.closed is not None else time.monotonic()) - c.start for c in conns]
    still = sum(c.closed is None for c in conns)
    for c in conns:
        c.close()
    check(still == 0 and max(lasted) <= HEADER_TIMEOUT + SLACK,
          '%d connections trickling header bytes every 0.5 s (idle timeout %d s) are closed after '
          'at most %.1f s (--header-timeout %d; still open: %d)'
          % (MAX_CONNECTIONS, IDLE, max(lasted), HEADER_TIMEOUT, still))
    status, took = client.result()
    check(status == '200' and took <= HEADER_TIMEOUT + SLACK,
          'a client that found every connection taken is served once they are cut: %s after %.1f s'
          % (status, took))


def test_keep_alive(svc):
    head = b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nX-Slow: '
    c = Slow(svc.port, '127.0.3.1', head, b'abcdefgh')
    run([c], HEADER_TIMEOUT + 5)
    lasted = (c.closed if c.closed is not None else time.monotonic()) - c.start
    c.close()
    check(c.answer.startswith(b'HTTP/1.1 200 ') and c.closed is not None and lasted <= HEADER_TIMEOUT + SLACK,
          'a kept-alive connection trickling its second request is closed after %.1f s (answered '
          'first: %s)' % (lasted, c.answer[:12]))


def test_per_ip(svc):
    head = b'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '
    conns = [Slow(svc.port, '127.0.1.1', head, b'abcdefgh') for _ in range(MAX_CONNECTIONS)]
    client = Curl(svc.port, '/healthz', max_time=3)
    run(conns, 2, client)
    refused = sum(c.closed is not None for c in conns)
    for c in conns:
        c.close()
    check(refused == MAX_CONNECTIONS - PER_IP,
          '%d connections from one address: %d closed at once (--max-connections-per-ip %d)'
          % (MAX_CONNECTIONS, refused, PER_IP))
    status, took = client.result()
    check(status == '200' and took < 1.5,
          'meanwhile a client from another address is served: %s after %.2f s' % (status, took))


def test_bodies(svc):
    n = 24
    chunk = b'x' * 65536
    body = (b'%x\r\n' % len(chunk) + chunk + b'\r\n') * (MAX_BODY // len(chunk) - 1)
    head = (b'POST /v1/enroll HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
            b'Transfer-Encoding: chunked\r\n\r\n')
    base = svc.rss_kib()
    peak = [base]
    conns = []
    for i in range(n):
        conns.append(Slow(svc.port, '127.0.2.%d' % (10 + i), head + body, b'1\r\nx\r\n'))
        peak[0] = max(peak[0], svc.rss_kib())
    client = Curl(svc.port, '/v1/machines', token=svc.token, max_time=10)

    def sample():
        peak[0] = max(peak[0], svc.rss_kib())
    run(conns, BODY_TIMEOUT + 5, client, sample)
    lasted = [(c.closed if c.closed is not None else time.monotonic()) - c.start for c in conns]
    still = sum(c.closed is None for c in conns)
    for c in conns:
        c.close()
    grown = (peak[0] - base) // 1024
    bound = (BODY_MEMORY // 1048576) + 16
    check(grown <= bound,
          '%d chunked bodies of %.1f MiB each, held open: VmRSS grew by %d MiB at most (bound: '
          '--max-body-memory %d MiB + 16)' % (n, len(body) / 1048576, grown, BODY_MEMORY >> 20))
    check(still == 0 and max(lasted) <= HEADER_TIMEOUT + BODY_TIMEOUT + SLACK,
          'each is closed within %.1f s of its start, trickling (--body-timeout %d; still open: %d)'
          % (max(lasted), BODY_TIMEOUT, still))
    status, took = client.result()
    check(status == '200' and took < 2,
          'meanwhile GET /v1/machines with the token: %s after %.2f s' % (status, took))


def main():
    tmp = tempfile.mkdtemp()
    try:
        svc = Service(tmp)
        try:
            test_headers(svc)
            test_keep_alive(svc)
            test_per_ip(svc)
            test_bodies(svc)
        finally:
            svc.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        sys.exit('%d check(s) failed' % len(failures))


main()
