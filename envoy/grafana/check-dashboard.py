#!/usr/bin/env python3
"""Fails when a metric the Grafana dashboard queries is not exported.

usage: check-dashboard.py ADMIN_URL [DASHBOARD_JSON]

Reads every PromQL expression of the dashboard (panels, rows, template
variables), takes the `latet_…` metric names out of them, scrapes Envoy's
`ADMIN_URL/stats/prometheus`, and checks that each name is a series there,
and that each label an expression groups by (`sum by (cause)`) is on that
metric's series (`le`, and `instance`/`job` that Prometheus adds when it
scrapes, excepted). Prints what it checked; exits 1 naming what is missing.
"""

import json
import pathlib
import re
import sys
import urllib.request

NAME = re.compile(r"\b(latet_[a-z0-9_]+)\b")
BY = re.compile(r"\bby\s*\(([^)]*)\)")
SERIES = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="')
ADDED_BY_PROMETHEUS = {"le", "instance", "job"}


def expressions(node):
    """Every `expr` and template `query`/`definition` string in the JSON."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str):
                yield value
            else:
                yield from expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item)


def exported(text):
    """{series name: set of label names} from a Prometheus text page."""
    series = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SERIES.match(line)
        if match:
            labels = set(LABEL.findall(match.group(2) or ""))
            series.setdefault(match.group(1), set()).update(labels)
    return series


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2])
    admin = sys.argv[1].rstrip("/")
    default = pathlib.Path(__file__).with_name("latet-dashboard.json")
    dashboard = json.loads(pathlib.Path(sys.argv[2] if len(sys.argv) == 3 else default).read_text())
    with urllib.request.urlopen(f"{admin}/stats/prometheus", timeout=10) as resp:
        series = exported(resp.read().decode())

    wanted = {}  # metric name -> labels grouped by
    for expr in expressions(dashboard):
        labels = {
            label.strip()
            for group in BY.findall(expr)
            for label in group.split(",")
            if label.strip() and label.strip() not in ADDED_BY_PROMETHEUS
        }
        for name in NAME.findall(expr):
            wanted.setdefault(name, set()).update(labels)
    if not wanted:
        sys.exit("check-dashboard: the dashboard queries no latet_ metric")

    missing = []
    for name in sorted(wanted):
        if name not in series:
            missing.append(f"{name}: not on /stats/prometheus")
            continue
        for label in sorted(wanted[name] - series[name]):
            missing.append(f"{name}: no series with label {label}")
        print(f"check-dashboard: ok {name} {sorted(wanted[name])}")
    for line in missing:
        print(f"check-dashboard: MISSING {line}", file=sys.stderr)
    if missing:
        sys.exit(1)
    print(f"check-dashboard: all {len(wanted)} metrics the dashboard queries are exported")


if __name__ == "__main__":
    main()
