#!/usr/bin/env python3
# A stand-in for mboot-verifierd that answers fixed JSON (docs/api.md's shapes) and odd answers
# (too large, not JSON, an error), so that fleet-client.sh checks what the client does with each.
# Usage: fleet-stub.py PORTFILE LOGFILE [CERT KEY]: listens on 127.0.0.1, a free port written to
# PORTFILE; each request's method, path, Authorization and body SHA-256 appended to LOGFILE.
import hashlib
import json
import os
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = 'Bearer good-token'
MACHINE = {
    'id': 'm1', 'status': 'untrusted', 'enrolled': '2026-12-04T10:00:00Z',
    'last_attestation': '2026-12-04T10:05:00Z', 'interval': 600,
    'policy': 'ab' * 32, 'ak_name': '000b' + '11' * 32, 'ek_certificate_sha256': 'cd' * 32,
    'verdict': {'trusted': False, 'reasons': [
        {'name': 'policy-violated', 'detail': 'PCR 8 event 42: kernel_cmdline init=/bin/sh\x1b[31m'}]},
    'history': [{'at': '2026-12-04T10:05:00Z', 'trusted': False, 'reasons': 1},
                {'at': '2026-12-04T10:00:00Z', 'trusted': True, 'reasons': 0}],
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def answer(self, status, body, raw=False):
        data = body if raw else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except ConnectionError:
            pass  # the client hung up on a too large answer, as it should

    def handle_any(self):
        size = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(size) if size else b''
        with open(sys.argv[2], 'a') as log:
            log.write('%s %s %s %s\n' % (self.command, self.path, self.headers.get('Authorization'),
                                         hashlib.sha256(body).hexdigest()))
        if self.path.startswith('/v1/machines') and self.headers.get('Authorization') != TOKEN:
            return self.answer(401, {'error': 'missing or wrong token'})
        route = (self.command, self.path)
        if route == ('GET', '/v1/machines'):
            return self.answer(200, {'machines': [
                {'id': 'a-machine-with-a-long-name', 'status': 'trusted', 'enrolled': MACHINE['enrolled'],
                 'last_attestation': '2026-12-04T10:01:00Z', 'interval': 600, 'policy': '0123456789abcdef' * 4,
                 'reasons': 0, 'changed': None},
                {'id': 'm1', 'status': 'untrusted', 'enrolled': MACHINE['enrolled'], 'last_attestation': None,
                 'interval': 600, 'policy': None, 'reasons': 1, 'changed': None}]})
        if route == ('GET', '/v1/machines/m1'):
            return self.answer(200, MACHINE)
        if route == ('GET', '/v1/machines/huge'):
            return self.answer(200, b'"' + b'a' * (17 << 20) + b'"', raw=True)
        if route == ('GET', '/v1/machines/html'):
            return self.answer(502, b'<html>bad gateway</html>', raw=True)
        if route == ('PUT', '/v1/machines/m1/policy'):
            return self.answer(200, {'id': 'm1', 'policy': hashlib.sha256(body).hexdigest(), 'status': 'trusted'})
        if route in (('DELETE', '/v1/machines/m1'), ('POST', '/v1/machines/m1/revoke'),
                     ('DELETE', '/v1/machines/m1/policy')):
            return self.answer(200, {'id': 'm1'})
        return self.answer(404, {'error': 'unknown machine'})

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
if len(sys.argv) > 4:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
# the port file appears whole: written, then renamed
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
server.serve_forever()
