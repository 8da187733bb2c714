#!/usr/bin/env python3
# Webhook receivers for mboot-verifierd --notify (docs/api.md "Webhooks"), on 127.0.0.1 only:
#  - a good one (http.server): checks each POST's X-Mboot-Signature with python's hmac module
#    (HMAC-SHA256 under the secret over X-Mboot-Timestamp "." body), answers 500 while the
#    file FAILFILE holds a number above 0 (taking one off), else 204, and appends every try as
#    one JSON line to TRIESFILE: {"t", "status", "sig_ok", "fresh", "headers", "body"};
#  - a hanging one: accepts, reads, never answers; each connection appends a line to HANGLOG.
# Usage: notify-receiver.py SECRETFILE PORTFILE HANGPORTFILE TRIESFILE FAILFILE HANGLOG
import hashlib
import hmac
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET_FILE, PORT_FILE, HANG_PORT_FILE, TRIES, FAIL_FILE, HANG_LOG = sys.argv[1:7]
with open(SECRET_FILE, 'rb') as f:
    secret = f.read()
if secret.endswith(b'\n'):
    secret = secret[:-1]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
        ts = self.headers.get('X-Mboot-Timestamp', '')
        want = 'sha256=' + hmac.new(secret, ts.encode() + b'.' + body, hashlib.sha256).hexdigest()
        sig_ok = hmac.compare_digest(want, self.headers.get('X-Mboot-Signature', ''))
        fresh = ts.isdigit() and abs(time.time() - int(ts)) <= 300
        with lock:
            try:
                with open(FAIL_FILE) as f:
                    fails = int(f.read().strip() or 0)
            except FileNotFoundError:
                fails = 0
            status = 500 if fails > 0 else 204
            if fails > 0:
                with open(FAIL_FILE, 'w') as f:
                    f.write('%d\n' % (fails - 1))
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            with open(TRIES, 'a') as f:
                f.write(json.dumps({'t': time.time(), 'status': status, 'sig_ok': sig_ok, 'fresh': fresh,
                                    'path': self.path, 'headers': dict(self.headers.items()),
                                    'body': parsed}) + '\n')
        self.send_response(status)
        self.send_header('Content-Length', '0')
        self.end_headers()


def hang(sock):
    held = []
    while True:
        conn, _ = sock.accept()
        held.append(conn)  # never answered, never closed: the verifier's try must time out
        conn.settimeout(5)
        try:
            first = conn.recv(65536)
        except OSError:
            first = b''
        with open(HANG_LOG, 'a') as f:
            f.write('%f %s\n' % (time.time(), first.split(b'\r\n', 1)[0].decode(errors='replace')))


def main():
    hang_sock = socket.socket()
    hang_sock.bind(('127.0.0.1', 0))
    hang_sock.listen(16)
    threading.Thread(target=hang, args=(hang_sock,), daemon=True).start()
    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    for path, port in ((HANG_PORT_FILE, hang_sock.getsockname()[1]), (PORT_FILE, server.server_address[1])):
        with open(path + '.tmp', 'w') as f:
            f.write('%d\n' % port)
        # renamed into place: the test reads it only once it is whole
        os.rename(path + '.tmp', path)
    server.serve_forever()


main()
