#!/usr/bin/env python3
"""Writes envoy/attacks/known-leaks.txt from the results of a run.

    envoy/attacks.sh --update-known      # runs the corpus, then this

usage: known_leaks.py RESULTS.json KNOWN-LEAKS.txt
RESULTS.json is what `envoy/attacks.sh --json FILE` wrote: it holds no value
(the runner checks every location against every value before writing).
"""

import json
import sys

HEADER = """\
# Attacks of corpus.jsonl that leak with the masker as it stands: the
# masker's to-do. envoy/attacks.sh (the test command's stage) fails on a leak
# NOT listed here, so a regression fails at once; it prints the listed ids
# that hold now: remove them (or run envoy/attacks.sh --update-known). Goal:
# an empty file (or no file: every leak fails; `envoy/attacks.sh
# --all-leaks` runs that way today).
#
# One id per line; after `#`, where the value reached the upstream when the
# list was made (never the value).
"""


def main():
    results_file, out_file = sys.argv[1:3]
    with open(results_file, encoding="utf-8") as f:
        results = json.load(f)
    by_category = {}
    for result in results:
        if result["leaked"]:
            by_category.setdefault(result["category"], []).append(result)
    lines = [HEADER]
    for category, items in by_category.items():
        lines.append(f"# --- {category} ({len(items)})")
        for item in items:
            where = item["where"][:4]
            if len(item["where"]) > 4:
                where.append(f"+{len(item['where']) - 4} more")
            lines.append(f"{item['id']:<44} # {', '.join(where)}")
        lines.append("")
    with open(out_file, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"known-leaks: {sum(len(v) for v in by_category.values())} ids written to {out_file}", file=sys.stderr)


if __name__ == "__main__":
    main()
