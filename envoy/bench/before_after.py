"""This run's key figures beside the previous run's (the BENCHMARKS.json
that bench.py report replaces, read before it is overwritten).

The two runs are apart in time, and on this shared machine in load too: the
table says what moved, the ratios inside each run say by how much it
matters. Standard library only.
"""

import json
import os

from perf_targets import big_engine_rows

# The latency cells compared: (mode, size), one connection.
LATENCY_CELLS = (("unique", "2k"), ("unique", "20k"), ("unique", "200k"),
                 ("history", "20k"), ("history", "200k"))
KEY_VAULTS = ("10k", "100k")


def load_previous(path):
    """The previous run's document, or None (no file, or not ours)."""
    if not path or not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and "meta" in doc else None


def key_figures(doc):
    """(figure, value, unit, better) in table order, from a BENCHMARKS.json
    document of this or an earlier layout (missing figures are None)."""
    out = []
    latency = doc.get("latency") or []
    vaults = [v for v in KEY_VAULTS if any(x.get("vault") == v for x in latency)]
    if not vaults:
        vaults = sorted({x.get("vault") for x in latency if x.get("vault")})
    for vault in vaults:
        for mode, size in LATENCY_CELLS:
            x = next((x for x in latency if x.get("vault") == vault and x.get("size") == size
                      and x.get("mode", "unique") == mode and x.get("conns") == 1), None)
            out.append((f"ours added, {size}, {mode}, vault {vault}, 1 conn (p50)",
                        x and x.get("ours_added_us"), "µs", "lower"))
    cases = (doc.get("engine") or {}).get("cases") or []
    for r in big_engine_rows(cases):
        where = f"{r['request_bytes'] // 1000} KB, vault {r['entries']:,}"
        out.append((f"V8 mask, {where}", r.get("v8_mask_mbps"), "MB/s", "higher"))
        out.append((f"V8 restore, {where}", r.get("v8_restore_mbps"), "MB/s", "higher"))
    for m in doc.get("memory") or []:
        if m.get("vault") != "empty" and (m.get("entries") or 0) >= 10_000:
            grown = m.get("rss_growth_bytes")
            out.append((f"Envoy RSS growth over empty, vault {m['vault']}",
                        None if grown is None else grown / 1048576, "MiB", "lower"))
    wasm = doc.get("wasm") or {}
    out.append((".wasm after wasm-opt", wasm.get("latet_opt_bytes"), "B", "lower"))
    forget = doc.get("forget") or {}
    out.append(("forget propagation p99", forget.get("p99_ms"), "ms", "lower"))
    return out


def compare(previous, doc):
    """The before/after block of BENCHMARKS.json: the previous run's date
    and commit, and one row per key figure of either run."""
    if previous is None:
        return None
    before = {name: value for name, value, _, _ in key_figures(previous)}
    rows = []
    seen = set()
    for name, value, unit, better in key_figures(doc):
        seen.add(name)
        rows.append({"figure": name, "unit": unit, "better": better,
                     "before": before.get(name), "after": value})
    for name, value, unit, better in key_figures(previous):
        if name not in seen:
            rows.append({"figure": name, "unit": unit, "better": better, "before": value, "after": None})
    meta = previous.get("meta") or {}
    return {"date": meta.get("date"), "commit": meta.get("commit"), "smoke": meta.get("smoke"), "rows": rows}


def render(block, fmt):
    """Markdown lines for the before/after block (`fmt`: bench.py's)."""
    if block is None:
        return ["## Before and after\n", "No previous BENCHMARKS.json to compare with.\n"]
    lines = ["## Before and after\n",
             f"Against the run this one replaced: {block.get('date') or '?'}, commit "
             f"{block.get('commit') or '?'}{' (a smoke run)' if block.get('smoke') else ''}. "
             "Two runs apart in time and in the machine's load: read what moved, and take the "
             "ratios within each run (tables below) for how much it matters. *after / before* "
             "above 1 is better for MB/s, below 1 for the rest.\n",
             "| figure | before | after | after / before |",
             "|---|---|---|---|"]
    for r in block["rows"]:
        digits = 1 if r["unit"] in ("MB/s", "MiB", "ms") else 0
        before, after = r["before"], r["after"]
        shown = [fmt(None if v is None else (float(v) if digits else v), digits, f" {r['unit']}") for v in (before, after)]
        change = None if before in (None, 0) or after is None else after / before
        lines.append(f"| {r['figure']} | {shown[0]} | {shown[1]} | {fmt(change, 2, '×')} |")
    lines.append("")
    return lines
