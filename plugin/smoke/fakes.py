#!/usr/bin/env python3
"""Smoke-test fakes for the filter in real Envoy: a minimal control service
(snapshot, long-poll feed, entries, and /admin/forget to append a forgotten
event) and an upstream that echoes the last user message as a chat answer
and records what it received. Loopback only; stops when its parent stops."""
import hashlib, hmac, json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

CONTROL_PORT, UPSTREAM_PORT, RECORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
SALT = bytes.fromhex("00112233445566778899aabbccddeeff")
lock = threading.Condition()
state = {"generation": 1, "events": [],
         "entries": [{"id": "01" * 16, "value": "Mario Rossi", "surrogate": "Laura Bianchi",
                      "kind": "name", "generation": 1}]}

def retired(surrogate):
    # Same derivation as latet-core keyed_hash::retired_hash is not needed
    # for the smoke: a retired hash only makes restore *count* declines.
    h = hmac.new(SALT, b"latet/retired/v1" + surrogate.encode(), hashlib.sha256).hexdigest()[:32]
    return {"hash": h, "lead": 0}

class Control(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        if self.headers.get("authorization") != "Bearer smoke-token":
            return self.send(401, {"error": "token"})
        url = urlparse(self.path)
        with lock:
            if url.path == "/_latet/gateway/v1/snapshot":
                return self.send(200, {"version": 1, "generation": state["generation"], "seq": len(state["events"]),
                                       "retired_salt": SALT.hex(), "retired": [], "entries": state["entries"]})
            if url.path == "/_latet/gateway/v1/events":
                q = parse_qs(url.query); after = int(q["after"][0]); wait = int(q["wait_ms"][0]) / 1000
                lock.wait_for(lambda: len(state["events"]) > after, timeout=min(wait, 2))
                return self.send(200, {"status": "events", "version": 1, "head": len(state["events"]),
                                       "events": state["events"][after:]})
        self.send(404, {})
    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers.get("content-length", 0)) or 0) or b"{}")
        with lock:
            if self.path == "/admin/forget":
                gone = [e for e in state["entries"] if e["value"] == data["value"]]
                state["entries"] = [e for e in state["entries"] if e not in gone]
                state["generation"] += 1
                state["events"].append({"seq": len(state["events"]) + 1, "type": "forgotten",
                                        "ids": [e["id"] for e in gone],
                                        "retired": [retired(e["surrogate"]) for e in gone],
                                        "generation": state["generation"]})
                lock.notify_all()
                return self.send(200, {"forgotten": len(gone)})
            if self.path == "/_latet/gateway/v1/entries":
                out = []
                for i, v in enumerate(data["values"]):
                    e = {"id": hashlib.sha256(v["value"].encode()).hexdigest()[:32], "value": v["value"],
                         "surrogate": "surrogate%d@example.org" % (len(state["entries"]) + i), "kind": v["kind"],
                         "generation": state["generation"]}
                    out.append(e)
                state["entries"] += out
                return self.send(200, {"version": 1, "generation": state["generation"], "entries": out})
        self.send(404, {})

class Upstream(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        n = self.headers.get("content-length")
        raw = self.rfile.read(int(n)) if n else b""
        if not n:  # chunked
            raw = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0: self.rfile.readline(); break
                raw += self.rfile.read(size); self.rfile.readline()
        with open(RECORD, "ab") as f: f.write(raw + b"\n")
        content = json.loads(raw)["messages"][-1]["content"]
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "echo: " + content}}]}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)

for port, handler in [(CONTROL_PORT, Control), (UPSTREAM_PORT, Upstream)]:
    threading.Thread(target=ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever, daemon=True).start()
print("ready", flush=True)
while True: time.sleep(3600)
