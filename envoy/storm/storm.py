#!/usr/bin/env python3
"""Load with a forget storm, against a running gateway (envoy/run.sh).

Agents send chat requests (half streamed) through Envoy, each naming one
value of a pool in a fixed frame `[[N]] Contact <value> now.`; a forgetter
forgets one used value a second through the admin API. Afterwards every
request the fake LLM recorded (GET /_fake/requests) is checked:

  unmasked   a pool value written in a recorded body
  stale      a request sent after a forget reached Envoy (forget call
             returned + GRACE) that used a surrogate the value had before
  errors     an answer other than 200, or a 503 that is not one of the
             filter's configured failure answers (latet_*)

Prints requests, forgets, violations; exits 1 when there is any.
Bounded (stops by itself), loopback only, stdlib only.
"""
import argparse
import http.client
import json
import random
import re
import sys
import threading
import time

FRAME = re.compile(r"\[\[(\d+)\]\] Contact (.*?) now\.")


def call(port, method, path, body=None, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gateway", type=int, required=True)
    p.add_argument("--control", type=int, required=True)
    p.add_argument("--fake", type=int, required=True)
    p.add_argument("--admin-token", required=True)
    p.add_argument("--key", default="demo")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--agents", type=int, default=8)
    p.add_argument("--grace-ms", type=float, default=500,
                   help="time from a forget call's return until it must have reached Envoy")
    a = p.parse_args()

    run_id = random.randrange(10**6)
    pool = [f"agent{run_id}.user{i}@storm-{i % 7}.example.org" for i in range(400)]
    used, used_lock = [], threading.Lock()
    sent = {}  # n -> (value, t_send, status, body prefix)
    sent_lock = threading.Lock()
    forgets = []  # (value, t_start, t_done)
    stop_at = time.monotonic() + a.seconds
    counter = iter(range(10**9))
    counter_lock = threading.Lock()

    def agent(seed):
        rng = random.Random(seed)
        while time.monotonic() < stop_at:
            with counter_lock:
                n = next(counter)
            with used_lock:
                forgotten = {f[0] for f in forgets}
                # Mostly values already used (resent history), some new.
                if used and rng.random() < 0.7:
                    value = rng.choice(used)
                else:
                    value = rng.choice(pool)
            stream = rng.random() < 0.5
            body = json.dumps({
                "model": "storm", "stream": stream,
                "messages": [{"role": "user", "content": f"[[{n}]] Contact {value} now."}],
            })
            t_send = time.monotonic()
            try:
                status, answer = call(a.gateway, "POST", "/v1/chat/completions", body,
                                      {"content-type": "application/json"})
            except OSError as e:
                status, answer = 0, str(e).encode()
            with sent_lock:
                sent[n] = (value, t_send, status, answer[:200])
            if status == 200:
                with used_lock:
                    if value not in used:
                        used.append(value)

    def forgetter():
        next_at = time.monotonic() + 1
        while time.monotonic() < stop_at - 0.5:
            time.sleep(max(0, next_at - time.monotonic()))
            next_at += 1
            with used_lock:
                done = {f[0] for f in forgets}
                candidates = [v for v in used if v not in done]
            if not candidates:
                continue
            value = random.choice(candidates)
            t_start = time.monotonic()
            status, answer = call(a.control, "POST", f"/_latet/admin/v1/keys/{a.key}/forget",
                                  json.dumps({"values": [value]}),
                                  {"authorization": f"Bearer {a.admin_token}",
                                   "content-type": "application/json"})
            t_done = time.monotonic()
            if status != 200:
                print(f"storm: forget call answered {status}", file=sys.stderr)
                continue
            with used_lock:
                forgets.append((value, t_start, t_done))

    call(a.fake, "DELETE", "/_fake/requests")
    threads = [threading.Thread(target=agent, args=(i,)) for i in range(a.agents)]
    threads.append(threading.Thread(target=forgetter))
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    status, log = call(a.fake, "GET", "/_fake/requests", timeout=120)
    recorded = json.loads(log) if status == 200 else []
    pool_set = set(pool)
    surrogates_seen = {}  # n -> surrogate
    unmasked = 0
    for req in recorded:
        body = req.get("body", "")
        if any(v in body for v in pool_set if v.split("@")[0] in body):
            unmasked += 1
        for m in FRAME.finditer(body):
            surrogates_seen[int(m.group(1))] = m.group(2)
    # A value's surrogates before its forget started, from requests answered before it.
    stale = remasked = 0
    for value, t_start, t_done in forgets:
        before = {surrogates_seen[n] for n, (v, t, s, _) in sent.items()
                  if v == value and n in surrogates_seen and t < t_start}
        for n, (v, t, s, _) in sent.items():
            if v == value and t > t_done + a.grace_ms / 1000 and n in surrogates_seen:
                if surrogates_seen[n] in before:
                    stale += 1
                else:
                    remasked += 1
    errors = failure_answers = 0
    for n, (v, t, s, answer) in sent.items():
        if s == 200:
            continue
        if s == 503 and b"latet_" in answer:
            failure_answers += 1
        else:
            errors += 1
    print(f"requests {len(sent)} recorded {len(recorded)} forgets {len(forgets)} "
          f"failure_answers {failure_answers}")
    # The check must not be vacuous: frames were read, and forgotten values
    # came back with new surrogates.
    unchecked = int(not surrogates_seen or (forgets and remasked == 0))
    print(f"framed {len(surrogates_seen)} resent_after_forget_with_new_surrogate {remasked}"
          f"{' (check was vacuous!)' if unchecked else ''}")
    errors += unchecked
    print(f"violations {unmasked + stale + errors} (unmasked {unmasked}, stale {stale}, errors {errors})")
    return 1 if unmasked + stale + errors else 0


if __name__ == "__main__":
    sys.exit(main())
