#!/usr/bin/env python3
# A hostile or broken verifier: it answers only what mboot-verifierd never sends, so that
# fleet-client.sh sees what the client does with it (everything a real server can say is tested
# against the real one). GET /v1/machines/ followed by:
#   huge      200, a JSON string over 16 MiB (the client stops reading at 16 MiB)
#   html      502, an HTML page (not JSON)
#   control   404, an error message with terminal control characters (the client strips them)
#   moved     302 to /v1/machines/followed (the client does not follow redirects)
# Usage: hostile-server.py PORTFILE LOGFILE: listens on 127.0.0.1, a free port written to
# PORTFILE; each request's method and path appended to LOGFILE.
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def answer(self, status, data, headers=()):
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except ConnectionError:
            pass  # the client hung up on the too large answer, as it should

    def handle_any(self):
        size = int(self.headers.get('Content-Length') or 0)
        if size:
            self.rfile.read(size)
        with open(sys.argv[2], 'a') as log:
            log.write('%s %s\n' % (self.command, self.path))
        if self.path == '/v1/machines/huge':
            return self.answer(200, b'"' + b'a' * (17 << 20) + b'"')
        if self.path == '/v1/machines/html':
            return self.answer(502, b'<html>bad gateway</html>')
        if self.path == '/v1/machines/control':
            return self.answer(404, json.dumps({'error': 'unknown\x1b[2J machine\r\x07\x7f'}).encode())
        if self.path == '/v1/machines/moved':
            return self.answer(302, json.dumps({'error': 'moved'}).encode(),
                               [('Location', '/v1/machines/followed')])
        return self.answer(500, json.dumps({'error': 'hostile-server: no such route'}).encode())

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
# the port file appears whole: written, then renamed
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
server.serve_forever()
