#!/usr/bin/env python3
"""Helpers of envoy/bench.sh (standard library only). Subcommands:

  bodies DIR                 write the request bodies (chat-2k.json, ...)
  preload ...                add synthetic values to a key's vault (entries API)
  snapshot ...               time the snapshot GET in both forms (compact, as
                             the filter pulls it, and JSON); entries, raw bytes
  stream ...                 streaming TTFB/TTLB, interleaved between listeners
  forget ...                 forget propagation over N forgets
  check ...                  one masked + restored round trip through the filter
  report ...                 BENCHMARKS.json and BENCHMARKS.md from the results
  added ...                  added p50 per listener and cell (BENCH_ONLY=history)
  vaults-yaml                envoy.yaml with a second Latet listener on a
                             second key (BENCH_ONLY=history), stdin to stdout

Every value here is synthetic (generated from its index); none is printed.
Results are JSON on stdout; progress on stderr.
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import time
import urllib.request

import before_after
import perf_targets
from perf_targets import ratio

FIRST = ["Mario", "Laura", "Giulia", "Paolo", "Ana", "José", "Lucía", "Javier", "Hans", "Greta",
         "Jürgen", "Claire", "Élodie", "Pierre", "John", "Emily", "Oliver", "Sofia", "Marco", "Elena"]
LAST = ["Rossi", "Bianchi", "García", "Martínez", "Müller", "Schmidt", "Dubois", "Moreau", "Smith",
        "Brown", "Ferrari", "Romano", "López", "Weber", "Fischer", "Laurent", "Taylor", "Conti"]

FILLER = ("Please review the quarterly figures below and tell me whether the "
          "supplier contract needs to be renegotiated before the end of the month; the team "
          "already checked the delivery dates and the invoices look consistent with the order. ")

# (name, approximate bytes, vault values in it): the three sizes.
SIZES = [("2k", 2_000, 4), ("20k", 20_000, 40), ("200k", 200_000, 400)]

# Bodies use values among the first BODY_POOL entries, so the same bodies
# serve every vault size; forgets use values beyond it.
BODY_POOL = 1_000


def log(*parts):
    print("bench.py:", *parts, file=sys.stderr, flush=True)


def value_of(i):
    """The i-th synthetic value and its kind: names, e-mails, phones in turn."""
    first = FIRST[(i * 7 + i // 20) % len(FIRST)]
    last = LAST[(i * 13 + i // 18) % len(LAST)]
    kind = i % 3
    if kind == 0:
        return "name", f"{first} {last}{i}"
    if kind == 1:
        return "email", f"{first.lower()}.{last.lower()}{i}@acme{i % 97}.it"
    return "phone", f"+39 347 {i % 1000:03} {i // 1000:04}"


def chat_body(size, values, stream, pool):
    """An OpenAI Chat request of about `size` bytes holding `values` vault
    values; every message starts with the marker `@@U@@` (post.lua)."""
    per_message = size // values
    messages = []
    for m in range(values):
        _, value = value_of((m * 7919) % pool)
        text = "@@U@@ "
        while len(text) + len(value) + 40 < per_message:
            text += FILLER
        text = text[: max(per_message - len(value) - 40, 6)]
        text += " Contact: " + value + "."
        messages.append({"role": "user" if m % 2 == 0 else "assistant", "content": text})
    # The fake LLM answers the last user message: make it the last message.
    if messages[-1]["role"] != "user":
        messages[-1]["role"] = "user"
    body = {"model": "gpt-4o", "messages": messages}
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False)


def cmd_bodies(args):
    os.makedirs(args.dir, exist_ok=True)
    pool = min(BODY_POOL, args.pool)
    for name, size, values in SIZES:
        for stream in (False, True):
            path = os.path.join(args.dir, f"chat-{name}{'-stream' if stream else ''}.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(chat_body(size, values, stream, pool))
    print(json.dumps({"dir": args.dir, "pool": pool}))


def read_token(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def post_json(url, token, body, timeout=300):
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def cmd_preload(args):
    token = read_token(args.token)
    url = args.control.rstrip("/") + "/_latet/gateway/v1/entries"
    t0 = time.perf_counter()
    created = 0
    for start in range(args.start, args.end, 1000):
        batch = [value_of(i) for i in range(start, min(start + 1000, args.end))]
        answer = post_json(url, token, {"version": 1, "values": [
            {"kind": k, "value": v} for k, v in batch]})
        created += len(answer.get("entries", []))
    seconds = time.perf_counter() - t0
    log(f"preloaded values {args.start}..{args.end} in {seconds:.1f} s")
    print(json.dumps({"values": args.end - args.start, "entries_answered": created,
                      "seconds": seconds}))


# What the filter's poller sends in `Accept` for the compact snapshot
# (SNAPSHOT_MEDIA_TYPE in core/src/wire/compact_snapshot.rs).
SNAPSHOT_MEDIA_TYPE = "application/vnd.latet.snapshot.v1"


def get_snapshot(control, token, accept=None):
    """One snapshot GET: (body, content type, seconds)."""
    headers = {"Authorization": f"Bearer {token}"}
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(control.rstrip("/") + "/_latet/gateway/v1/snapshot", headers=headers)
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=300) as resp:
        raw = resp.read()
        content_type = resp.headers.get("Content-Type", "")
    return raw, content_type, time.perf_counter() - t0


def cmd_snapshot(args):
    """The snapshot as the filter pulls it (compact) and as JSON: the bytes
    and the control service's time to serve each; entries and raw bytes
    from the JSON. A service answering JSON to the compact `Accept` gives
    no compact figures."""
    token = read_token(args.token)
    compact, compact_type, compact_seconds = get_snapshot(args.control, token, SNAPSHOT_MEDIA_TYPE)
    is_compact = compact_type.split(";")[0].strip().lower() == SNAPSHOT_MEDIA_TYPE
    raw, _, seconds = get_snapshot(args.control, token)
    snap = json.loads(raw)
    entries = snap.get("entries", [])
    raw_bytes = sum(len(e["value"].encode()) + len(e["surrogate"].encode()) for e in entries)
    print(json.dumps({"entries": len(entries), "raw_bytes": raw_bytes,
                      "snapshot_compact_bytes": len(compact) if is_compact else None,
                      "compact_get_seconds": compact_seconds if is_compact else None,
                      "snapshot_json_bytes": len(raw), "get_seconds": seconds}))


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def unique_body(template, n):
    return template.replace("@@U@@", f"refstream{n:x}".replace("0", "g").replace("1", "h")
                            .replace("2", "i").replace("3", "j").replace("4", "k")
                            .replace("5", "l").replace("6", "m").replace("7", "n")
                            .replace("8", "o").replace("9", "p"))


def stream_once(port, body, chunk, delay_ms):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", body=body.encode(), headers={
        "Content-Type": "application/json", "x-fake-chunk": str(chunk),
        "x-fake-chunk-delay-ms": str(delay_ms)})
    resp = conn.getresponse()
    first = None
    total = 0
    while True:
        piece = resp.read1(65536)
        if not piece:
            break
        if first is None:
            first = time.perf_counter()
        total += len(piece)
    last = time.perf_counter()
    status = resp.status
    conn.close()
    return status, (first or last) - t0, last - t0, total


def cmd_stream(args):
    listeners = [(name, int(port)) for name, port in (p.split("=") for p in args.listener)]
    out = []
    for body_path in args.body:
        with open(body_path, encoding="utf-8") as f:
            template = f.read()
        samples = {name: {"ttfb": [], "ttlb": [], "bytes": 0, "bad": 0} for name, _ in listeners}
        for n in range(args.warmup + args.n):
            order = listeners if n % 2 == 0 else list(reversed(listeners))
            for name, port in order:
                status, ttfb, ttlb, size = stream_once(port, unique_body(template, n + args.salt),
                                                       args.chunk, args.delay_ms)
                if n < args.warmup:
                    continue
                s = samples[name]
                if status != 200:
                    s["bad"] += 1
                    continue
                s["ttfb"].append(ttfb * 1e3)
                s["ttlb"].append(ttlb * 1e3)
                s["bytes"] = size
        for name, s in samples.items():
            out.append({"body": os.path.basename(body_path), "listener": name, "n": len(s["ttfb"]),
                        "non200": s["bad"], "answer_bytes": s["bytes"],
                        "ttfb_p50_ms": percentile(s["ttfb"], 50), "ttfb_p99_ms": percentile(s["ttfb"], 99),
                        "ttlb_p50_ms": percentile(s["ttlb"], 50), "ttlb_p99_ms": percentile(s["ttlb"], 99)})
    print(json.dumps({"chunk_chars": args.chunk, "delay_ms": args.delay_ms, "results": out}))


def chat_once(port, text, fresh=True, history=None):
    """One whole chat request whose answer echoes `text`; the answer's text.
    `history`: a user message resent before it (its values are what the
    answer may restore: restoreScope request)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    messages = [{"role": "user", "content": text}]
    if history is not None:
        messages = [{"role": "user", "content": history},
                    {"role": "assistant", "content": "Noted."}] + messages
    body = json.dumps({"model": "m", "messages": messages})
    conn.request("POST", "/v1/chat/completions", body=body.encode(), headers={
        "Content-Type": "application/json", "Connection": "close" if fresh else "keep-alive"})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    if resp.status != 200:
        return resp.status, None
    answer = json.loads(raw)
    return 200, answer["choices"][0]["message"]["content"]


def read_counter(admin, name):
    with urllib.request.urlopen(f"{admin}/stats?filter={name}$", timeout=5) as resp:
        text = resp.read().decode()
    total = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().endswith(name):
            total += int(value.strip())
    return total


def cmd_check(args):
    """A name value through the Latet listener: it must not reach the fake
    LLM, and its surrogate in the answer must come back as the value."""
    token = read_token(args.token)
    kind, value = value_of(args.index)
    entry = post_json(args.control.rstrip("/") + "/_latet/gateway/v1/entries", token,
                      {"version": 1, "values": [{"kind": kind, "value": value}]})["entries"][0]
    ok = True
    status, answer = chat_once(args.port, f"Please greet {value} today.")
    with urllib.request.urlopen(f"{args.fake}/_fake/requests/last", timeout=5) as resp:
        upstream = resp.read().decode("utf-8", "replace")
    if status != 200 or value in upstream or entry["surrogate"] not in upstream:
        ok = False
        log(f"check: status {status}; the value went upstream unmasked or its surrogate is missing")
    if answer is None or value not in answer:
        ok = False
        log("check: the answer did not come back restored")
    print(json.dumps({"masked_and_restored": ok}))
    return 0 if ok else 1


def cmd_forget(args):
    gateway = read_token(args.gateway_token)
    forget_token = read_token(args.forget_token)
    control = args.control.rstrip("/")
    counter = "latet_forget_events_applied_total"
    indexes = [i for i in range(args.first_index, args.first_index + 3 * args.n * 2) if i % 3 == 0][: args.n]
    values = [value_of(i)[1] for i in indexes]
    entries = post_json(control + "/_latet/gateway/v1/entries", gateway,
                        {"version": 1, "values": [{"kind": "name", "value": v} for v in values]})["entries"]
    surrogates = [e["surrogate"] for e in entries[: len(values)]]
    per_forget = None
    times_ms = []
    restored_before = 0
    declined_after = 0
    checks_after = 0
    timeouts = 0
    for k, (value, surrogate) in enumerate(zip(values, surrogates)):
        # The conversation resends the value: its surrogate is in scope.
        history = f"My colleague is {value}."
        status, answer = chat_once(args.port, f"Please greet {surrogate} today.", history=history)
        if status == 200 and answer is not None and value in answer:
            restored_before += 1
        base = read_counter(args.admin, counter)
        # From the forget request sent: a small vault's forget is applied on
        # every worker before the API has answered.
        t0 = time.perf_counter()
        post_json(control + "/_latet/apps/v1/forget", forget_token, {"values": [value]})
        if per_forget is None:
            # Calibration: how much one forget moves the counter (one per
            # worker VM that applies it), once it settles.
            time.sleep(args.settle)
            per_forget = read_counter(args.admin, counter) - base
            log(f"one forget moves {counter} by {per_forget}")
            if per_forget <= 0:
                log("the counter did not move: the filter applied no forget")
                print(json.dumps({"error": "forget counter did not move"}))
                return 1
            continue
        deadline = t0 + args.timeout
        while True:
            now = time.perf_counter()
            if read_counter(args.admin, counter) >= base + per_forget:
                times_ms.append((now - t0) * 1e3)
                break
            if now > deadline:
                timeouts += 1
                break
            time.sleep(0.001)
        # Every worker should now decline the retired surrogate: fresh
        # connections land on workers at random. The value resent in the
        # history gets a new surrogate; a worker that missed the forget would
        # mask it with the old one and restore it.
        for _ in range(args.verify):
            status, answer = chat_once(args.port, f"Please greet {surrogate} today.", history=history)
            checks_after += 1
            if status == 200 and answer is not None and surrogate in answer and value not in answer:
                declined_after += 1
    result = {
        "forgets_timed": len(times_ms), "calibration_forgets": 1, "counter_step": per_forget,
        "p50_ms": percentile(times_ms, 50), "p99_ms": percentile(times_ms, 99),
        "max_ms": max(times_ms) if times_ms else None, "timeouts": timeouts,
        "restored_before": restored_before, "forgets": len(values),
        "verify_requests": checks_after, "verify_declined": declined_after,
    }
    print(json.dumps(result))
    return 0


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def load_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def load_json(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    return json.loads(text) if text else None


def summarize_latency(rows):
    """Median over rounds of each listener's p50, p99, req/s; then added
    latency over no filter and the ratios."""
    groups = {}
    for r in rows:
        key = (r["vault"], r["size"], r.get("mode", "unique"), r["conns"])
        groups.setdefault(key, {}).setdefault(r["listener"], []).append(r)
    out = []
    for (vault, size, mode, conns), by_listener in sorted(groups.items(), key=lambda kv: (VAULT_ORDER.get(kv[0][0], 9), SIZE_ORDER.get(kv[0][1], 9), MODE_ORDER.get(kv[0][2], 9), kv[0][3])):
        item = {"vault": vault, "size": size, "mode": mode, "conns": conns}
        for listener, runs in by_listener.items():
            item[listener] = {
                "rounds": len(runs),
                "p50_us": median([x["p50_us"] for x in runs]),
                "p99_us": median([x["p99_us"] for x in runs]),
                "req_s": median([x["requests"] / (x["duration_us"] / 1e6) for x in runs if x["duration_us"]]),
                "requests": sum(x["requests"] for x in runs),
                "errors": sum(x["non2xx"] + x["errors_connect"] + x["errors_read"] + x["errors_write"] + x["errors_timeout"] for x in runs),
                "body_bytes": runs[0].get("body_bytes"),
            }
        none = item.get("none", {}).get("p50_us")
        floor = item.get("floor", {}).get("p50_us")
        ours = item.get("latet", {}).get("p50_us")
        names_off = item.get(NAMES_OFF, {}).get("p50_us")
        item["floor_added_us"] = None if none is None or floor is None else floor - none
        item["ours_added_us"] = None if none is None or ours is None else ours - none
        item["ours_beyond_floor_us"] = (None if item["ours_added_us"] is None or item["floor_added_us"] is None
                                        else item["ours_added_us"] - item["floor_added_us"])
        # Names' share: the same filter with the person detector off, in the
        # same rounds (one-connection cells only).
        item["names_off_added_us"] = None if none is None or names_off is None else names_off - none
        item["names_added_us"] = None if ours is None or names_off is None else ours - names_off
        item["names_share"] = (ratio(item["names_added_us"], item["ours_added_us"])
                               if item["ours_added_us"] and item["ours_added_us"] > 0 else None)
        # A floor that added nothing measurable (noise put it at or below
        # no filter) gives no ratio.
        floor_added = item["floor_added_us"]
        item["ours_over_floor_added"] = ratio(item["ours_added_us"], floor_added) if floor_added and floor_added > 0 else None
        item["ours_over_none"] = ratio(ours, none)
        out.append(item)
    return out


# The listener of the Latet filter with the person detector off
# (envoy/bench/envoy-bench.yaml.in).
NAMES_OFF = "latet-names-off"
SIZE_ORDER = {"2k": 0, "20k": 1, "200k": 2}
MODE_ORDER = {"unique": 0, "history": 1}
VAULT_ORDER = {"empty": 0, "small": 1, "10k": 2, "100k": 3}


def fmt(v, digits=0, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.{digits}f}{unit}"
    return f"{v:,}{unit}"


def add_stream_added(streaming):
    """Each streaming row's TTFB and TTLB p50 over no filter's, same body,
    same run (ms): what the listener adds to the first and the last byte."""
    for block in streaming:
        none = {r["body"]: r for r in block["results"] if r["listener"] == "none"}
        for r in block["results"]:
            base = none.get(r["body"])
            for what in ("ttfb", "ttlb"):
                mine, theirs = r.get(f"{what}_p50_ms"), base and base.get(f"{what}_p50_ms")
                r[f"{what}_p50_added_ms"] = (None if r["listener"] == "none" or mine is None or theirs is None
                                             else mine - theirs)


def smaps_parts(path):
    """Resident KiB of an smaps dump by kind of mapping: V8's wasm memories
    (each an anonymous read-write mapping directly followed by its guard
    region, an inaccessible reservation of about 8 GiB), files (the binary,
    libraries), and the rest of the anonymous memory (the allocator's heap
    with shared data and callout buffers, V8's own heaps)."""
    maps = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                start, end = (int(x, 16) for x in head[0].split("-"))
                maps.append({"start": start, "end": end, "perm": head[1],
                             "name": head[5] if len(head) > 5 else "", "rss": 0})
            elif head and head[0] == "Rss:" and maps:
                maps[-1]["rss"] = int(head[1])
    wasm_each = []
    for here, after in zip(maps, maps[1:]):
        if (here["perm"].startswith("rw") and not here["name"] and after["start"] == here["end"]
                and after["perm"].startswith("---") and after["end"] - here["start"] >= 7 << 30):
            wasm_each.append(here["rss"])
    total = sum(m["rss"] for m in maps)
    files = sum(m["rss"] for m in maps if m["name"].startswith("/"))
    return {"wasm_kib": sum(wasm_each), "wasm_each_kib": sorted(wasm_each, reverse=True),
            "anon_kib": total - files - sum(wasm_each), "file_kib": files}


def cmd_added(args):
    """latency.jsonl as added p50 per listener and cell (BENCH_ONLY=history):
    the median over rounds of each listener's p50 minus no filter's, its
    ratio to the floor's, and the 100k listener's over the 10k one's; and
    Envoy's CPU per request under each listener (the load moves it far less
    than latency), with the 100k filter's CPU beyond no filter's over the
    10k one's."""
    rows = load_jsonl(os.path.join(args.results, "latency.jsonl"))
    groups = {}
    for r in rows:
        key = (r["vault"], r["size"], r.get("mode", "unique"), r["conns"])
        groups.setdefault(key, {}).setdefault(r["listener"], []).append(r)
    for (vault, size, mode, conns), by_listener in sorted(groups.items(), key=lambda kv: SIZE_ORDER.get(kv[0][1], 9)):
        p50 = {name: median([x["p50_us"] for x in runs]) for name, runs in by_listener.items()}
        # Envoy's CPU per request (all its threads), summed over the rounds.
        cpu = {}
        for name, runs in by_listener.items():
            ticks = sum(x.get("envoy_cpu_ticks", 0) for x in runs)
            requests = sum(x["requests"] for x in runs)
            hz = runs[0].get("clock_ticks") or 100
            cpu[name] = ticks / hz * 1e6 / requests if requests and "envoy_cpu_ticks" in runs[0] else None
        none = p50.get("none")
        added = {name: (v - none if none is not None else None) for name, v in p50.items() if name != "none"}
        floor = added.get("floor")
        line = {"vault": vault, "size": size, "mode": mode, "conns": conns,
                "rounds": len(by_listener.get("none", [])), "none_p50_us": none}
        for name, v in cpu.items():
            line[f"{name}_cpu_us_per_request"] = v
        for name, v in added.items():
            line[f"{name}_added_us"] = v
            if name != "floor":
                line[f"{name}_over_floor_added"] = ratio(v, floor) if floor and floor > 0 else None
        if added.get("latet") and added.get("latet-100k") is not None and added["latet"] > 0:
            line["added_100k_over_10k"] = ratio(added["latet-100k"], added["latet"])
        if all(cpu.get(n) is not None for n in ("none", "latet", "latet-100k")) and cpu["latet"] > cpu["none"]:
            # The filter's CPU per request: the listener's beyond no filter's.
            line["cpu_added_100k_over_10k"] = ratio(cpu["latet-100k"] - cpu["none"], cpu["latet"] - cpu["none"])
        print(json.dumps(line))


def cmd_vaults_yaml(args):
    """envoy.yaml (stdin) with its names-off listener turned into a second
    Latet listener on another key (BENCH_ONLY=history): names on, its own
    vm_id and sync service, the token from LATET_GATEWAY_TOKEN_100K."""
    text = sys.stdin.read()
    begin, end = "  # names-off listener: begin", "  # names-off listener: end"
    if begin not in text or end not in text:
        log("vaults-yaml: the names-off listener's markers are missing")
        return 1
    head, rest = text.split(begin, 1)
    listener, tail = rest.split(end, 1)
    listener = (listener.replace("name: latet-names-off", "name: latet-100k")
                .replace("stat_prefix: latet_names_off", "stat_prefix: latet_100k")
                .replace(',"detectors":{"person":false}', "")
                .replace("LATET_GATEWAY_TOKEN", "LATET_GATEWAY_TOKEN_100K")
                .replace("vm_id: latet\n", "vm_id: latet-100k\n"))
    start, stop = head.index("bootstrap_extensions:\n"), head.index("\noverload_manager:")
    singleton = head[start + len("bootstrap_extensions:\n"):stop]
    second = (singleton.replace("name: latet-sync", "name: latet-sync-100k")
              .replace("LATET_GATEWAY_TOKEN", "LATET_GATEWAY_TOKEN_100K")
              .replace("vm_id: latet\n", "vm_id: latet-100k\n"))
    head = head[:stop] + second.rstrip("\n") + "\n" + head[stop:]
    out = head + "  # latet-100k listener: begin" + listener + "  # latet-100k listener: end" + tail
    if out.count("vm_id: latet-100k") != 2 or "person" in listener:
        log("vaults-yaml: the second listener was not rewritten as expected")
        return 1
    sys.stdout.write(out)
    return 0


def cmd_memory(args):
    """memory.jsonl as a table: RSS growth over the empty vault, per worker
    over raw bytes, and where it lies (smaps dumps beside it)."""
    memory = load_jsonl(os.path.join(args.results, "memory.jsonl"))
    parts = {}
    for m in memory:
        path = os.path.join(args.results, f"smaps-{m['vault']}.txt")
        if os.path.exists(path):
            parts[m["vault"]] = smaps_parts(path)
    empty = next((m for m in memory if m["vault"] == "empty"), None)
    base = parts.get("empty", {})
    for m in memory:
        grown = None if empty is None else (m["rss_kib"] - empty["rss_kib"]) * 1024
        ratio_ = None if not grown or not m.get("raw_bytes") else grown / args.workers / m["raw_bytes"]
        p = parts.get(m["vault"], {})
        delta = {k: p[k] - base[k] for k in ("wasm_kib", "anon_kib", "file_kib") if k in p and k in base}
        row = {"vault": m["vault"], "entries": m.get("entries"), "raw_bytes": m.get("raw_bytes"),
               "compact_bytes": m.get("snapshot_compact_bytes"), "rss_kib": m["rss_kib"],
               "growth_kib": None if grown is None else grown // 1024,
               "per_worker_over_raw": None if ratio_ is None else round(ratio_, 2),
               "growth_by_part_kib": delta, "wasm_each_kib": p.get("wasm_each_kib")}
        print(json.dumps(row))


def cmd_report(args):
    d = args.results
    meta = load_json(os.path.join(d, "meta.json")) or {}
    latency = summarize_latency(load_jsonl(os.path.join(d, "latency.jsonl")))
    streaming = load_jsonl(os.path.join(d, "stream.jsonl"))
    forget = load_json(os.path.join(d, "forget.json"))
    memory = load_jsonl(os.path.join(d, "memory.jsonl"))
    engine = load_jsonl(os.path.join(d, "engine.jsonl"))
    wasm = load_json(os.path.join(d, "wasm.json")) or {}

    # Engine: V8 over native per case.
    cases = {}
    for r in engine:
        if r.get("kind") == "case":
            key = (r["entries"], r["request_bytes"])
            cases.setdefault(key, {})["wasm" if "wasm" in r["runtime"] else "native"] = r
    engine_rows = []
    for (entries, request_bytes), pair in sorted(cases.items()):
        n, w = pair.get("native"), pair.get("wasm")
        row = {"entries": entries, "request_bytes": request_bytes}
        for what in ("mask_mbps", "mask_names_off_mbps", "mask_memo_cold_mbps", "mask_memo_warm_mbps",
                     "restore_mbps", "find_mbps"):
            row[f"native_{what}"] = n and n.get(what)
            row[f"v8_{what}"] = w and w.get(what)
            row[f"v8_over_native_{what[:-5]}"] = ratio(w and w.get(what), n and n.get(what))
            # The harness also gives each figure's fastest run and the share
            # of runs over twice the fastest (a busy machine shows there).
            best, slow = what[:-5] + "_best_mbps", what[:-5] + "_slow_share"
            row[f"native_{best}"] = n and n.get(best)
            row[f"v8_{best}"] = w and w.get(best)
            row[f"v8_{slow}"] = w and w.get(slow)
        engine_rows.append(row)
    vaults = [r for r in engine if r.get("kind") == "vault"]

    # Memory per worker: the Envoy RSS growth over the empty vault, split
    # over the workers (an upper bound: it also holds the singleton's copy and
    # the shared-data snapshot), against the raw bytes of values+surrogates.
    empty_rss = next((m["rss_kib"] for m in memory if m["vault"] == "empty"), None)
    workers = meta.get("workers", 2)
    for m in memory:
        grown = None if empty_rss is None else (m["rss_kib"] - empty_rss) * 1024
        m["rss_growth_bytes"] = grown
        m["per_worker_upper_bound_over_raw"] = None if grown is None or not m.get("raw_bytes") else grown / workers / m["raw_bytes"]

    # Where the time goes: the engine's masking time in V8 (the filter's
    # conditions: 8 MiB memo, every request new) for a body of that size, as
    # a share of our added latency.
    vault_entries = {"10k": 10_000, "100k": 100_000}
    for x in latency:
        entries = vault_entries.get(x["vault"])
        if x["mode"] != "unique":
            # The memo serves the history: the engine table's cold figure
            # does not describe this cell.
            x["engine_mask_us"] = None
            x["engine_share"] = None
            continue
        body = (x.get("latet") or {}).get("body_bytes")
        match = [r for r in engine_rows if r["entries"] == entries and r["v8_mask_memo_cold_mbps"]]
        if not match or not body or not x["ours_added_us"]:
            x["engine_mask_us"] = None
            x["engine_share"] = None
            continue
        r = min(match, key=lambda r: abs(r["request_bytes"] - body))
        x["engine_mask_us"] = body / r["v8_mask_memo_cold_mbps"]
        x["engine_share"] = x["engine_mask_us"] / x["ours_added_us"] if x["ours_added_us"] > 0 else None

    add_stream_added(streaming)
    targets = perf_targets.check(latency, engine_rows, memory, forget, wasm, workers, VAULT_ORDER)

    doc = {"meta": meta, "targets": targets, "latency": latency, "streaming": streaming,
           "forget": forget, "memory": memory, "engine": {"cases": engine_rows, "vaults": vaults},
           "wasm": wasm}
    # Read before the JSON below replaces it (the same file in a full run).
    doc["before_after"] = before_after.compare(before_after.load_previous(args.previous), doc)
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(args.md, "w", encoding="utf-8") as f:
        f.write(render_md(doc, args.notes))
    log(f"wrote {args.json} and {args.md}")


def render_md(doc, notes_path):
    meta = doc["meta"]
    out = []
    w = out.append
    w("# Benchmarks: what the filter costs on the request path\n")
    w(f"One run of `envoy/bench.sh{' --smoke' if meta.get('smoke') else ''}` on {meta.get('date', '?')}. "
      f"Machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, "
      f"shared with other builds during the run (load average at start {meta.get('load', '?')}): "
      "absolute figures are noisy; the ratios come from one interleaved run. "
      f"Envoy {meta.get('envoy', '?')} (V8), `--concurrency {meta.get('workers', 2)}`; node {meta.get('node', '?')}; "
      f"wrk {meta.get('wrk', '?')}. Each latency cell is the median over {meta.get('rounds', '?')} "
      f"rounds of {meta.get('seconds', '?')} s; listeners take turns within a round.\n")
    if notes_path and os.path.exists(notes_path):
        with open(notes_path, encoding="utf-8") as f:
            w(f.read().rstrip() + "\n")

    w("## Targets\n")
    w("The targets of [P1–P5](docs/product-rules.md#p1), each a ratio or a figure of this run "
      "(this 2-core machine, one interleaved run).\n")
    w("| target | measured | limit | met |")
    w("|---|---|---|---|")
    for t in doc["targets"]:
        v = t["value"]
        shown = fmt(v, 2) if isinstance(v, float) else fmt(v)
        met = "–" if t["met"] is None else ("yes" if t["met"] else "**no**")
        limit = t["limit"]
        w(f"| {t['target']} | {shown} | {f'{limit:,}' if isinstance(limit, int) else f'{limit:g}'} | {met} |")
    w("")
    out.extend(before_after.render(doc.get("before_after"), fmt))

    w("## Ratios first: added latency (p50)\n")
    w("Added latency = listener p50 − no-filter p50. *ours/floor* is our added latency over the "
      "buffer-only floor filter's; *ours/none* is our p50 over no filter's. Mode *unique*: a per-request "
      "token in every message, so the filter's memo of masked texts never helps (the worst case). Mode "
      "*history*: the earlier messages repeat from request to request and only the last one is new, as "
      "when an agent resends its conversation with one new turn (the memo serves the history).\n")
    w("*engine (V8)* is the engine's time to mask a body of that size in V8 under the filter's conditions "
      "(8 MiB memo, every request new; the engine table below), for comparison with *ours added*.\n")
    w("*ours − floor* is what the filter adds beyond buffering. *names off added*: the same filter with "
      "the person detector off (`detectors: {person: false}`, listener `latet-names-off`, one-connection "
      "cells only); *names' share* = (ours added − names off added) / ours added.\n")
    w("| vault | body | mode | conns | ours/floor added | ours/none | floor added | ours added | ours − floor | names off added | names' share | engine (V8) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in doc["latency"]:
        w(f"| {x['vault']} | {x['size']} | {x.get('mode', 'unique')} | {x['conns']} | {fmt(x['ours_over_floor_added'], 2, '×') if x['ours_over_floor_added'] is not None else 'n/a (floor in the noise)'} | "
          f"{fmt(x['ours_over_none'], 2, '×')} | {fmt(x['floor_added_us'], 0, ' µs')} | {fmt(x['ours_added_us'], 0, ' µs')} | "
          f"{fmt(x['ours_beyond_floor_us'], 0, ' µs')} | {fmt(x['names_off_added_us'], 0, ' µs')} | {fmt(x['names_share'], 2)} | "
          f"{fmt(x.get('engine_mask_us'), 0, ' µs')} |")
    w("")
    w("## Latency and throughput\n")
    listeners = ("none", "floor", "latet", NAMES_OFF)
    w("| vault | body | mode | conns | none p50 / p99 | floor p50 / p99 | Latet p50 / p99 | Latet names off p50 / p99 | none req/s | floor req/s | Latet req/s | names off req/s | errors |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in doc["latency"]:
        cells = []
        for l in listeners:
            s = x.get(l, {})
            cells.append(f"{fmt(s.get('p50_us'), 0)} / {fmt(s.get('p99_us'), 0)} µs" if s else "–")
        rates = [fmt(x.get(l, {}).get("req_s"), 0) for l in listeners]
        errors = sum(x.get(l, {}).get("errors", 0) for l in listeners)
        w(f"| {x['vault']} | {x['size']} | {x.get('mode', 'unique')} | {x['conns']} | " + " | ".join(cells) + " | " + " | ".join(rates) + f" | {errors} |")
    w("")

    if doc["streaming"]:
        w("## Streaming (SSE), time to first and last byte\n")
        s0 = doc["streaming"][0]
        w(f"The fake LLM streams the last user message back, {s0.get('chunk_chars')} characters per event, "
          f"{s0.get('delay_ms')} ms between events. Median and p99 over the requests (ms); the listeners "
          "take turns request by request. *added* = the listener's p50 − no filter's p50, same request. "
          "The floor filter buffers the whole answer, so its first byte comes with its last.\n")
        w("| request | listener | n | TTFB p50 | TTFB p99 | TTLB p50 | TTLB p99 | TTFB p50 added | TTLB p50 added | answer bytes |")
        w("|---|---|---|---|---|---|---|---|---|---|")
        for block in doc["streaming"]:
            for r in block["results"]:
                w(f"| {r['body']} | {r['listener']} | {r['n']} | {fmt(r['ttfb_p50_ms'], 2)} | {fmt(r['ttfb_p99_ms'], 2)} | "
                  f"{fmt(r['ttlb_p50_ms'], 2)} | {fmt(r['ttlb_p99_ms'], 2)} | {fmt(r.get('ttfb_p50_added_ms'), 2)} | "
                  f"{fmt(r.get('ttlb_p50_added_ms'), 2)} | {fmt(r['answer_bytes'])} |")
        w("")

    f = doc["forget"]
    if f:
        w("## Forget propagation\n")
        w(f"{f['forgets']} forgets of one name each, one at a time, on the largest vault. The clock starts when "
          "the apps API's forget call has answered; it stops when Envoy's `/stats` shows "
          f"`wasmcustom.latet_forget_events_applied_total` moved by {f['counter_step']} (the step one forget makes once it "
          "has settled, measured on the first forget, which is not timed: one per VM that applies it). "
          f"Then {f['verify_requests'] // max(f['forgets_timed'] + f['timeouts'], 1)} requests on fresh connections "
          "(spread over the workers) ask for the old surrogate to be echoed back.\n")
        w("| p50 | p99 | max | timed | timeouts | restored before the forget | declined after (of requests) |")
        w("|---|---|---|---|---|---|---|")
        w(f"| {fmt(f['p50_ms'], 1, ' ms')} | {fmt(f['p99_ms'], 1, ' ms')} | {fmt(f['max_ms'], 1, ' ms')} | {f['forgets_timed']} | "
          f"{f['timeouts']} | {f['restored_before']}/{f['forgets']} | {f['verify_declined']}/{f['verify_requests']} |")
        w("")

    if doc["memory"]:
        w("## Memory and snapshot load\n")
        w("Envoy's RSS (the whole process: 2 worker VMs and the singleton of the Latet filter, the floor "
          "filter's VMs, shared data; an Envoy without the names-off listener, one filter configuration per "
          "worker as deployed) once the Latet listener answers, before any load. The filter pulls the "
          "snapshot in its compact binary form: *snapshot pulled* is its bytes, *JSON* the same snapshot as "
          "JSON. *Load* is Envoy's start to the first 200 through the Latet listener (it answers 503 until "
          "it holds the vault); *ready* is Envoy's start to admin `/ready`; *snapshot GET* is the control "
          "service's own time to serve the snapshot (compact / JSON), measured apart.\n")
        w("| vault | entries | raw values+surrogates | snapshot pulled (compact) | snapshot JSON | RSS | growth over empty | per worker / raw (upper bound) | ready | load | snapshot GET compact / JSON |")
        w("|---|---|---|---|---|---|---|---|---|---|---|")

        def ms(seconds):
            return fmt(None if seconds is None else seconds * 1e3, 0, " ms")

        for m in doc["memory"]:
            w(f"| {m['vault']} | {fmt(m.get('entries'))} | {fmt(m.get('raw_bytes'))} B | {fmt(m.get('snapshot_compact_bytes'))} B | "
              f"{fmt(m.get('snapshot_json_bytes'))} B | "
              f"{fmt(m['rss_kib'] / 1024, 1, ' MiB')} | {fmt(None if m['rss_growth_bytes'] is None else m['rss_growth_bytes'] / 1048576, 1, ' MiB')} | "
              f"{fmt(m['per_worker_upper_bound_over_raw'], 2)}× | {fmt(m.get('ready_ms'), 0, ' ms')} | {fmt(m.get('load_ms'), 0, ' ms')} | "
              f"{ms(m.get('compact_get_seconds'))} / {ms(m.get('get_seconds'))} |")
        w("")

    e = doc["engine"]
    if e["cases"]:
        w("## The engine alone: V8 and native\n")
        w("`envoy/bench/engine-harness` (latet-core, the filter's release profile: opt-level s, LTO) built "
          "natively and for `wasm32-wasip1`, the latter run by node's V8 (`run-wasi.mjs`, `--no-liftoff` as in Envoy), on the same "
          "synthetic requests (the generator of `core/benches/engine.rs`). Median time per run. MB/s of "
          "request (mask) or answer (restore) bytes.\n")
        w("V8 cells read *median (fastest run)*; *V8 slow* is the share of the V8 mask runs that took over "
          "twice the fastest: above ~0.2 the machine was busy and the medians understate the engine.\n")
        w("*mask*: a masker without memo; *memo cold*: the filter's 8 MiB memo with every request new "
          "(variants cycled, more bytes than the memo holds: every text misses and is inserted, evicting); "
          "*memo warm*: the same request again. *find*: finding vault values only.\n")
        def mb(r, key):
            best = r.get(key.replace("_mbps", "_best_mbps"))
            return fmt(r.get(key), 1) + ("" if best is None else f" ({fmt(best, 0)})")

        w("| vault | request | mask native | mask V8 | V8/native | memo cold native | memo cold V8 | memo warm V8 | restore native | restore V8 | V8/native | find native | find V8 | V8 slow |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in e["cases"]:
            w(f"| {fmt(r['entries'])} | {fmt(r['request_bytes'])} B | {fmt(r['native_mask_mbps'], 1)} | {mb(r, 'v8_mask_mbps')} | "
              f"{fmt(r['v8_over_native_mask'], 2)} | {fmt(r['native_mask_memo_cold_mbps'], 1)} | {mb(r, 'v8_mask_memo_cold_mbps')} | "
              f"{mb(r, 'v8_mask_memo_warm_mbps')} | {fmt(r['native_restore_mbps'], 1)} | {mb(r, 'v8_restore_mbps')} | "
              f"{fmt(r['v8_over_native_restore'], 2)} | {fmt(r['native_find_mbps'], 1)} | {mb(r, 'v8_find_mbps')} | "
              f"{fmt(r.get('v8_mask_slow_share'), 2)} |")
        w("")
        w("Names' cost (target: masking with names on at least 0.8× names off, V8, largest body), *mask* "
          "without memo, same run: on / off is the ratio. In Envoy: *names' share* in the ratios table.\n")
        w("| vault | request | native on | native off | native on/off | V8 on | V8 off | V8 on/off |")
        w("|---|---|---|---|---|---|---|---|")
        for r in e["cases"]:
            w(f"| {fmt(r['entries'])} | {fmt(r['request_bytes'])} B | {fmt(r['native_mask_mbps'], 1)} | "
              f"{fmt(r['native_mask_names_off_mbps'], 1)} | "
              f"{fmt(ratio(r['native_mask_mbps'], r['native_mask_names_off_mbps']), 2)} | "
              f"{fmt(r['v8_mask_mbps'], 1)} | {fmt(r['v8_mask_names_off_mbps'], 1)} | "
              f"{fmt(ratio(r['v8_mask_mbps'], r['v8_mask_names_off_mbps']), 2)} |")
        w("")
        w("| vault | runtime | index build | index heap | index / raw |")
        w("|---|---|---|---|---|")
        for v in e["vaults"]:
            w(f"| {fmt(v['entries'])} | {v['runtime']} | {fmt(v['index_build_ms'], 1, ' ms')} | "
              f"{fmt(v['index_heap_bytes'] / 1048576, 1, ' MiB')} | {fmt(v['index_over_raw'], 2)}× |")
        w("")

    wasm = doc["wasm"]
    if wasm:
        w("## Module size\n")
        w(f"`latet_filter.wasm` {fmt(wasm.get('latet_bytes'))} bytes; after `wasm-opt -Os` "
          f"{fmt(wasm.get('latet_opt_bytes'))} bytes. The floor filter: {fmt(wasm.get('floor_bytes'))} bytes.\n")

    w("## Reproduce\n")
    w("```sh\nenvoy/bench.sh            # the full run (~17 min); writes BENCHMARKS.md and BENCHMARKS.json\n"
      "envoy/bench.sh --smoke    # ~15 s of measuring, small vault; writes under the state dir only\n```\n")
    w("It builds what it needs (the filter with `wasm-opt`, the floor filter, `latet`, the fake LLM, "
      "the engine harness natively and for `wasm32-wasip1`), installs Envoy (`envoy/install-envoy.sh`) and "
      "`wrk` (Debian) when missing, starts the control service, the fake LLM (`--chunk-delay-ms 0`) and "
      "one Envoy with four listeners (`envoy/bench/envoy-bench.yaml.in`; memory and forgets in one without "
      "the names-off listener), and preloads the vault through "
      "the gateway entries API in batches of 1,000. Raw results: `<target dir>/bench-state/results/`. "
      "Environment: `BENCH_ROUNDS`, `BENCH_SECONDS`, `BENCH_PORT_BASE` (default 19100), `BENCH_SKIP_ENGINE=1`.\n")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("bodies")
    s.add_argument("dir")
    s.add_argument("--pool", type=int, default=BODY_POOL)
    s = sub.add_parser("preload")
    s.add_argument("--control", required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--start", type=int, required=True)
    s.add_argument("--end", type=int, required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("--control", required=True)
    s.add_argument("--token", required=True)
    s = sub.add_parser("stream")
    s.add_argument("--listener", action="append", required=True, help="name=port")
    s.add_argument("--body", action="append", required=True)
    s.add_argument("--n", type=int, default=20)
    s.add_argument("--warmup", type=int, default=2)
    s.add_argument("--chunk", type=int, default=12)
    s.add_argument("--delay-ms", type=int, default=1)
    s.add_argument("--salt", type=int, default=0)
    s = sub.add_parser("check")
    s.add_argument("--control", required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--fake", required=True)
    s.add_argument("--index", type=int, default=0)
    s = sub.add_parser("forget")
    s.add_argument("--control", required=True)
    s.add_argument("--gateway-token", required=True)
    s.add_argument("--forget-token", required=True)
    s.add_argument("--admin", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--n", type=int, default=51)
    s.add_argument("--first-index", type=int, required=True)
    s.add_argument("--settle", type=float, default=3.0)
    s.add_argument("--timeout", type=float, default=10.0)
    s.add_argument("--verify", type=int, default=4)
    s = sub.add_parser("added")
    s.add_argument("--results", required=True)
    sub.add_parser("vaults-yaml")
    s = sub.add_parser("memory")
    s.add_argument("--results", required=True)
    s.add_argument("--workers", type=int, default=2)
    s = sub.add_parser("report")
    s.add_argument("--results", required=True)
    s.add_argument("--json", required=True)
    s.add_argument("--md", required=True)
    s.add_argument("--notes", default=None)
    s.add_argument("--previous", default=None, help="the BENCHMARKS.json this run replaces")
    args = p.parse_args()
    handler = globals()[f"cmd_{args.cmd.replace('-', '_')}"]
    code = handler(args)
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
