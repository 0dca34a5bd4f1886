#!/usr/bin/env python3
"""The p50 no memory decision can beat: every return hot (docs/results.md, "The p50 every
return hot would give").

A manager decides whether a return is hot, warm or a relaunch; it does not decide how long
a program takes to answer a hot return, nor an app's first launch. For each run this puts
each return that was warm or a relaunch (a cold visit after the app's first) at that app's
hot median over the bench's runs, keeps every hot return and first launch as measured, and
takes p50 as the bench does (nearest rank, then the median over the manager's runs). It
prints per manager the measured p50, that floor, and issue 11's bar for memorch (0.9x the
best measured p50 of a manager that is not memorch or a variant of it): where memorch's
floor is over the bar, no choice of pages or victims could have met it in that bench; the
runs' hot returns decided it.

`memorch report RESULTS.json` prints the same floor per manager ("p50 if hot", report.rs);
this script adds the bar and the summary over many benches.

    scripts/p50-floor.py RESULTS.json [RESULTS.json ...]
    scripts/p50-floor.py --table [--ram MB] RESULTS.json [...]

With --table, one line a bench (its runs on MB of RAM only, with --ram): memorch's p50, its
floor and the bar; then, over the benches that ran memorch beside both earlyoom and lmkd,
memorch's p50 and its floor against the best other's p50 (medians, min-max) and in how many
each is under the bar.
"""
import json
import statistics as st
import sys
from collections import defaultdict

from bench_out import hot_medians, quantile

BAR = 0.9


def p50_and_floor(run, hot_ms):
    """The run's p50 as measured and with every return hot (an app never hot in the bench
    keeps its measured visits: nothing says what its hot return would take)."""
    seen, measured, floor = set(), [], []
    for v in run["visits"]:
        if v["kind"] == "failed":
            continue
        first = v["app"] not in seen
        seen.add(v["app"])
        measured.append(v["latency_ms"])
        kept = v["kind"] == "hot" or (v["kind"] == "cold" and first)
        floor.append(v["latency_ms"] if kept else hot_ms.get(v["app"], v["latency_ms"]))
    return quantile(measured, 0.5), quantile(floor, 0.5)


def per_manager(path, ram_mb=None):
    """{manager: (measured p50, floor p50, runs)}, medians over its runs, in run order (its
    runs on `ram_mb` only, if given)."""
    runs = [r for r in json.load(open(path))["runs"] if r["visits"] and ram_mb in (None, r.get("ram_mb"))]
    hot_ms = hot_medians(runs)
    by = defaultdict(list)
    for r in runs:
        by[r["manager"]].append(p50_and_floor(r, hot_ms))
    return {m: (st.median(x[0] for x in v), st.median(x[1] for x in v), len(v)) for m, v in by.items()}


def bar(rows):
    """0.9x the best measured p50 of the managers that are not memorch's, or None."""
    others = [p for m, (p, _, _) in rows.items() if m != "memorch" and not m.startswith("memorch:") and not m.startswith("memorch+")]
    return BAR * min(others) if others else None


def spread(values):
    return f"{st.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(args):
    table = args[:1] == ["--table"]
    args = args[1:] if table else args
    ram_mb = None
    if table and args[:1] == ["--ram"]:
        ram_mb, args = int(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    beside_both = []
    if table:
        print(f"{'bench':<60} {'memorch p50':>11} {'floor':>6} {'bar':>6}  floor under the bar")
    for path in args:
        rows = per_manager(path, ram_mb)
        b = bar(rows)
        if table:
            if "memorch" in rows and b is not None:
                p, f, _ = rows["memorch"]
                print(f"{path:<60} {p:>11.2f} {f:>6.2f} {b:>6.2f}  {'yes' if f <= b else 'no'}")
                if "earlyoom" in rows and "lmkd" in rows:
                    beside_both.append((p * BAR / b, f * BAR / b, f <= b))
            continue
        print(path)
        for m, (p, f, n) in rows.items():
            print(f"  {m:<44} p50 {p:7.2f} ms  every return hot {f:7.2f} ms  ({n} runs)")
        if b is not None:
            print(f"  issue 11's bar for memorch: {b:.2f} ms")
    if beside_both:
        met = sum(x[0] <= BAR for x in beside_both)
        print(f"{len(beside_both)} benches beside earlyoom and lmkd: memorch's p50 over the best other's {spread([x[0] for x in beside_both])}, "
              f"the bar met in {met}; every return hot {spread([x[1] for x in beside_both])}, under the bar in {sum(x[2] for x in beside_both)}")


if __name__ == "__main__":
    main(sys.argv[1:])
