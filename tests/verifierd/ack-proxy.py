#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the machines were told: an HTTP proxy between the load generator and mboot-verifierd
that writes one JSON line per answer it passed on (time, method, path, status, whether the body
was JSON with an "error", and for evidence the nonce and status of the verdict). A 200 for
evidence is logged only once the verifier's whole answer is in: it is a verdict acknowledged to
a machine. Upstream unreachable: 502 to the client, logged with status 0.

  ack-proxy.py PORTFILE LOG UPSTREAM[,UPSTREAM2]

Listens on 127.0.0.1 (an ephemeral port, written to PORTFILE). With two upstreams the proxy
splits each machine's conversation between them: enroll and nonce go to the first, activate
and evidence to the second (any verifier must answer for any machine).
"""
import http.client
import http.server
import json
import os
import sys
import threading
import time

PORTFILE, LOG, UPSTREAMS = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
log_lock = threading.Lock()
log_file = open(LOG, "a", buffering=1)
local = threading.local()


def upstream_for(path):
    if len(UPSTREAMS) == 1:
        return UPSTREAMS[0]
    second = path.endswith("/activate") or "/evidence" in path
    return UPSTREAMS[1 if second else 0]


def connection(target):
    conns = getattr(local, "conns", None)
    if conns is None:
        conns = local.conns = {}
    if target not in conns:
        host, port = target.rsplit(":", 1)
        conns[target] = http.client.HTTPConnection(host, int(port), timeout=30)
    return conns[target]


def drop(target):
    conn = local.conns.pop(target, None)
    if conn:
        conn.close()


def forward(method, path, headers, body):
    """The upstream's (status, headers, body), or None when it cannot be reached."""
    target = upstream_for(path)
    for attempt in (0, 1):
        conn = connection(target)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()
        except (ConnectionError, http.client.HTTPException, OSError):
            drop(target)
            # A kept-alive connection the verifier closed (it was restarted): once more on a
            # new one. A refused connection fails again and is the answer.
            if attempt:
                return None
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        got = forward(self.command, self.path, headers, body)
        entry = {"t": time.time(), "method": self.command, "path": self.path}
        if got is None:
            status, rheaders, rbody = 502, [("Content-Type", "application/json")], b'{"error": "proxy: no upstream"}'
            entry["status"] = 0
        else:
            status, rheaders, rbody = got
            entry["status"] = status
        try:
            doc = json.loads(rbody) if rbody else None
        except ValueError:
            doc = None
        entry["json"] = isinstance(doc, dict)
        entry["error"] = doc.get("error") if isinstance(doc, dict) else None
        if "/evidence" in self.path and isinstance(doc, dict):
            entry["nonce"] = doc.get("nonce")
            entry["verdict_status"] = doc.get("status")
            entry["machine_id"] = doc.get("machine_id")
        if "/evidence" in self.path:
            entry["asked_nonce"] = self.path.split("nonce=", 1)[-1]
        # Logged before the client has it: a 200 here is one the verifier committed to.
        with log_lock:
            log_file.write(json.dumps(entry) + "\n")
        self.send_response(status)
        for k, v in rheaders:
            if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(rbody)))
        self.end_headers()
        self.wfile.write(rbody)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


server = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
