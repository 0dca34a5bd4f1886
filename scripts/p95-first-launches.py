#!/usr/bin/env python3
"""Whether a run's p95 is one of the apps' first launches (docs/results.md, "The next session
learned…").

A first launch starts a program no manager had running, so where p95 falls among them no
manager's decision moved it. For each run of the benches given this prints its p95, which
slowest visit that is (the bench's nearest rank), how many of its slowest visits in a row
were first launches (p95 is one of them when that count reaches its rank), the slowest visit
that was not one, and the run's very first visit (the first launch on an empty device).

    scripts/p95-first-launches.py RESULTS.json [RESULTS.json ...]
"""
import json
import sys

from bench_out import kth_slowest


def main(paths):
    print(f"{'seed':>4} {'manager':<28} {'p95 ms':>7} {'rank':>4} {'firsts':>6}  {'slowest other visit':<28} first visit")
    for path in paths:
        for r in sorted(json.load(open(path))["runs"], key=lambda r: (r["seed"], r["manager"])):
            seen, visits = set(), []
            for v in r["visits"]:
                if v["kind"] == "failed":
                    continue
                visits.append((v["latency_ms"], v["app"] not in seen, v["app"], v["kind"]))
                seen.add(v["app"])
            if not visits:
                continue
            p95, rank = kth_slowest([v[0] for v in visits])
            slowest = sorted(visits, reverse=True)
            firsts = next((i for i, v in enumerate(slowest) if not v[1]), len(slowest))
            other = f"{slowest[firsts][2]} ({slowest[firsts][3]}) {slowest[firsts][0]:.0f} ms" if firsts < len(slowest) else "-"
            first = visits[0]
            print(f"{r['seed']:>4} {r['manager'][:28]:<28} {p95:>7.0f} {rank:>4} {firsts:>6}  {other:<28} {first[2]} {first[0]:.0f} ms")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    main(sys.argv[1:])
