"""Tests of bench.py's report (latency summary, names' share, streaming
added figures, the performance targets, the before/after table), on synthetic
results: `python3 -m unittest discover -s envoy/bench -p 'test_*.py'`."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import before_after  # noqa: E402
import bench  # noqa: E402
import perf_targets  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def wrk_row(vault, size, mode, conns, listener, p50, rnd=0):
    return {"vault": vault, "size": size, "mode": mode, "conns": conns, "listener": listener,
            "round": rnd, "p50_us": p50, "p99_us": 2 * p50, "requests": 1000, "duration_us": 1_000_000,
            "non2xx": 0, "errors_connect": 0, "errors_read": 0, "errors_write": 0, "errors_timeout": 0,
            "body_bytes": 20_000}


# p50 per listener (µs): none, floor, latet, latet-names-off (None: not run).
CELLS = {
    ("10k", "20k", "unique", 1): (1000, 1100, 1300, 1200),
    ("10k", "200k", "unique", 1): (2000, 2500, 4500, 3500),
    ("10k", "20k", "history", 1): (1000, 1100, 1140, 1130),
    ("10k", "200k", "history", 1): (2000, 2500, 3300, 3200),
    ("10k", "20k", "unique", 8): (3000, 3100, 3400, None),
}


def latency_rows():
    rows = []
    for (vault, size, mode, conns), p50s in CELLS.items():
        for listener, p50 in zip(("none", "floor", "latet", bench.NAMES_OFF), p50s):
            if p50 is not None:
                for rnd, jitter in enumerate((0, 10, -10)):
                    rows.append(wrk_row(vault, size, mode, conns, listener, p50 + jitter, rnd))
    return rows


def engine_rows():
    rows = []
    for entries in (10_000, 100_000):
        for request_bytes in (2_000, 20_000, 201_031):
            rows.append({"entries": entries, "request_bytes": request_bytes,
                         "v8_mask_mbps": 250.0, "v8_mask_names_off_mbps": 400.0 if entries == 100_000 else 300.0,
                         "v8_restore_mbps": 600.0})
    return rows


MEMORY = [
    {"vault": "empty", "entries": 0, "raw_bytes": 0, "rss_kib": 100_000, "per_worker_upper_bound_over_raw": None,
     "rss_growth_bytes": 0},
    {"vault": "10k", "entries": 10_097, "raw_bytes": 400_000, "rss_kib": 102_000,
     "per_worker_upper_bound_over_raw": 2.5, "rss_growth_bytes": 2_048_000},
]


class LatencySummary(unittest.TestCase):
    def test_names_share_and_beyond_floor_from_the_same_rounds(self):
        cells = {(x["vault"], x["size"], x["mode"], x["conns"]): x for x in bench.summarize_latency(latency_rows())}
        x = cells[("10k", "200k", "unique", 1)]
        self.assertEqual(x["ours_added_us"], 2500)
        self.assertEqual(x["floor_added_us"], 500)
        self.assertEqual(x["ours_beyond_floor_us"], 2000)
        self.assertEqual(x["names_off_added_us"], 1500)
        self.assertEqual(x["names_added_us"], 1000)
        self.assertAlmostEqual(x["names_share"], 0.4)
        self.assertEqual(x[bench.NAMES_OFF]["rounds"], 3)

    def test_cells_without_names_off_have_no_share(self):
        cells = {(x["vault"], x["size"], x["mode"], x["conns"]): x for x in bench.summarize_latency(latency_rows())}
        x = cells[("10k", "20k", "unique", 8)]
        self.assertIsNone(x["names_off_added_us"])
        self.assertIsNone(x["names_share"])
        self.assertEqual(x["ours_beyond_floor_us"], 300)


class Targets(unittest.TestCase):
    def setUp(self):
        latency = bench.summarize_latency(latency_rows())
        targets = perf_targets.check(latency, engine_rows(), MEMORY, {"p99_ms": 200.0},
                                     {"latet_opt_bytes": 985_805}, 2, bench.VAULT_ORDER)
        self.by_name = {t["target"]: t for t in targets}

    def find(self, *words):
        hits = [t for name, t in self.by_name.items() if all(w in name for w in words)]
        self.assertEqual(len(hits), 1, f"{words}: {list(self.by_name)}")
        return hits[0]

    def test_added_over_floor_limits_differ_by_mode(self):
        # 20 KB new: 300 / 100 = 3.0 against 2×: missed; 200 KB new:
        # 2500 / 500 = 5.0 against 4×: missed.
        t = self.find("≤ 2.0×", "20k", "every message new")
        self.assertEqual((t["value"], t["limit"], t["met"]), (3.0, 2.0, False))
        t = self.find("≤ 4.0×", "200k", "every message new")
        self.assertEqual((t["value"], t["met"]), (5.0, False))
        # History: 140 / 100 = 1.4 ≤ 1.5; 1300 / 500 = 2.6 > 2.5.
        t = self.find("≤ 1.5×", "20k", "history")
        self.assertEqual(t["met"], True)
        t = self.find("≤ 2.5×", "200k", "history")
        self.assertEqual(t["met"], False)

    def test_beyond_the_floor_in_microseconds(self):
        t = self.find("ours added − floor added ≤ 120 µs", "20k")
        self.assertEqual((t["value"], t["met"]), (200, False))
        t = self.find("ours added − floor added ≤ 1,200 µs", "200k")
        self.assertEqual((t["value"], t["met"]), (2000, False))

    def test_engine_targets_on_the_largest_body(self):
        t = self.find("V8 masking ≥ 300 MB/s")
        self.assertIn("201 KB, vault 100,000", t["target"])
        self.assertEqual(t["met"], False)
        self.assertEqual(self.find("V8 restoring ≥ 500 MB/s")["met"], True)
        on_off_10k = self.find("names on ≥ 0.8× names off", "vault 10,000")
        self.assertAlmostEqual(on_off_10k["value"], 250 / 300)
        self.assertEqual(on_off_10k["met"], True)
        self.assertEqual(self.find("names on ≥ 0.8× names off", "vault 100,000")["met"], False)

    def test_memory_wasm_and_forget(self):
        # 2 MB of growth over 400 KB raw: within the RSS's noise either way.
        self.assertIsNone(self.find("RSS growth per worker", "vault 10k")["met"])
        self.assertFalse(any("vault empty" in name for name in self.by_name))
        self.assertEqual(self.find(".wasm")["met"], True)
        self.assertEqual(self.find("forget")["met"], True)


class RssNoise(unittest.TestCase):
    def met(self, grown, raw=4_000_000):
        return perf_targets.rss_met({"rss_growth_bytes": grown, "raw_bytes": raw}, 2)

    def test_a_growth_the_noise_cannot_change_decides(self):
        self.assertIs(self.met(10 << 20), True)    # (10 + 5) MiB / 2 / 4 MB = 1.97×
        self.assertIs(self.met(40 << 20), False)   # (40 − 5) MiB / 2 / 4 MB = 4.6×
        self.assertIsNone(self.met(20 << 20))      # 1.97× … 3.28×: the noise decides

    def test_a_negative_growth_is_not_met(self):
        self.assertIsNone(self.met(-(1_556 << 10), raw=404_029))
        self.assertIsNone(self.met(None))


class Streaming(unittest.TestCase):
    def test_added_is_over_no_filter_for_the_same_body(self):
        streaming = [{"results": [
            {"body": "a", "listener": "none", "ttfb_p50_ms": 1.0, "ttlb_p50_ms": 90.0},
            {"body": "a", "listener": "latet", "ttfb_p50_ms": 3.0, "ttlb_p50_ms": 95.0},
            {"body": "b", "listener": "none", "ttfb_p50_ms": 2.0, "ttlb_p50_ms": 91.0},
            {"body": "b", "listener": "floor", "ttfb_p50_ms": 92.0, "ttlb_p50_ms": 92.5},
        ]}]
        bench.add_stream_added(streaming)
        rows = {(r["body"], r["listener"]): r for r in streaming[0]["results"]}
        self.assertEqual(rows[("a", "latet")]["ttfb_p50_added_ms"], 2.0)
        self.assertEqual(rows[("a", "latet")]["ttlb_p50_added_ms"], 5.0)
        self.assertEqual(rows[("b", "floor")]["ttfb_p50_added_ms"], 90.0)
        self.assertIsNone(rows[("a", "none")]["ttfb_p50_added_ms"])


class BeforeAfter(unittest.TestCase):
    OLD = {"meta": {"date": "2026-12-03T10:48Z", "commit": "5fbb22a"},
           "latency": [{"vault": "10k", "size": "20k", "mode": "unique", "conns": 1, "ours_added_us": 422}],
           "engine": {"cases": [{"entries": 100_000, "request_bytes": 201_031, "v8_mask_mbps": 102.7,
                                 "v8_restore_mbps": 250.4}]},
           "memory": [{"vault": "100k", "entries": 100_097, "rss_growth_bytes": 128_135_168}],
           "wasm": {"latet_opt_bytes": 710_819}, "forget": {"p99_ms": 209.2}}

    def test_rows_pair_figures_of_both_runs(self):
        new = json.loads(json.dumps(self.OLD))
        new["latency"][0]["ours_added_us"] = 211
        new["wasm"]["latet_opt_bytes"] = 985_805
        block = before_after.compare(self.OLD, new)
        rows = {r["figure"]: r for r in block["rows"]}
        self.assertEqual((block["date"], block["commit"]), ("2026-12-03T10:48Z", "5fbb22a"))
        r = rows["ours added, 20k, unique, vault 10k, 1 conn (p50)"]
        self.assertEqual((r["before"], r["after"]), (422, 211))
        self.assertEqual(rows[".wasm after wasm-opt"]["after"], 985_805)
        self.assertAlmostEqual(rows["Envoy RSS growth over empty, vault 100k"]["before"], 122.2, places=1)
        self.assertEqual(rows["V8 mask, 201 KB, vault 100,000"]["before"], 102.7)
        text = "\n".join(before_after.render(block, bench.fmt))
        self.assertIn("5fbb22a", text)
        self.assertIn("| ours added, 20k, unique, vault 10k, 1 conn (p50) | 422 µs | 211 µs | 0.50× |", text)

    def test_a_figure_only_one_run_has_shows_a_dash(self):
        new = {"meta": {}, "latency": [], "wasm": {"latet_opt_bytes": 985_805}}
        block = before_after.compare(self.OLD, new)
        rows = {r["figure"]: r for r in block["rows"]}
        self.assertIsNone(rows["forget propagation p99"]["after"])
        self.assertIn("| forget propagation p99 | 209.2 ms | – | – |", "\n".join(before_after.render(block, bench.fmt)))

    def test_no_previous_file_or_not_ours(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(before_after.load_previous(os.path.join(d, "missing.json")))
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("[1, 2]")
            self.assertIsNone(before_after.load_previous(bad))
        self.assertIsNone(before_after.compare(None, {}))
        self.assertIn("No previous", "\n".join(before_after.render(None, bench.fmt)))


class Report(unittest.TestCase):
    def test_the_previous_json_is_read_before_it_is_replaced(self):
        with tempfile.TemporaryDirectory() as d:
            results = os.path.join(d, "results")
            os.mkdir(results)
            with open(os.path.join(results, "latency.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in latency_rows())
            with open(os.path.join(results, "meta.json"), "w") as f:
                json.dump({"date": "2026-12-06T12:00Z", "commit": "abc1234", "workers": 2}, f)
            with open(os.path.join(results, "wasm.json"), "w") as f:
                json.dump({"latet_opt_bytes": 985_805, "latet_bytes": 1_392_281, "floor_bytes": 145_646}, f)
            out = os.path.join(d, "BENCHMARKS.json")
            with open(out, "w") as f:
                json.dump(BeforeAfter.OLD, f)
            md = os.path.join(d, "BENCHMARKS.md")
            subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "report", "--results", results,
                            "--json", out, "--md", md, "--previous", out],
                           check=True, capture_output=True)
            with open(out) as f:
                doc = json.load(f)
            self.assertEqual(doc["meta"]["commit"], "abc1234")
            self.assertEqual(doc["before_after"]["commit"], "5fbb22a")
            with open(md) as f:
                text = f.read()
            self.assertIn("## Before and after", text)
            self.assertIn("names' share", text)
            self.assertIn("Latet names off p50 / p99", text)
            self.assertIn("| 985,805 | 1,000,000 | yes |", text)
            self.assertIn("| .wasm after wasm-opt | 710,819 B | 985,805 B | 1.39× |", text)


if __name__ == "__main__":
    unittest.main()
