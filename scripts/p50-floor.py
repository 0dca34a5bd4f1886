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

Each line also gives memorch's p50 had its pages on storage swap been read as fast as those in
zram ("storage as zram"): each warm return less its pages from storage times what a page from
storage cost over one from zram, never under the app's hot median. Both costs are fitted over
the bench's warm returns of memorch (least squares of their time beyond the app's hot median
on the pages they read from zram, from storage and of files; `zram_reads` in results.json, so
benches from before 2026-11-29 have no such figure): what the fastest storage tier could do
for p50, all else the same.
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


def solve(a, b):
    """x with a x = b (Gauss-Jordan, partial pivoting); None where a is singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        if abs(m[p][i]) < 1e-12:
            return None
        m[i], m[p] = m[p], m[i]
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def storage_pages(v):
    """A return's anonymous pages read back from storage swap (the rest came from zram)."""
    return max(v.get("refaults_anon", 0) - v.get("zram_reads", 0), 0)


def page_costs(runs, hot_ms):
    """(ms a page from zram, ms a page from storage) fitted over memorch's warm returns, or
    None where they are too few, were not counted by source, or read from one source only.

    results.json leaves a count out where it is zero, so a bench counted pages by source if
    any of its visits has `zram_reads` (none before 2026-11-25), and then a return without it
    read none from zram. A source no warm return read from (often files) is left out of the
    fit, which it would make singular."""
    if not any("zram_reads" in v for r in runs for v in r["visits"]):
        return None
    rows = [([v.get("zram_reads", 0), storage_pages(v), v.get("refaults_file", 0)], v["latency_ms"] - hot_ms.get(v["app"], 0))
            for r in runs if r["manager"] == "memorch" for v in r["visits"] if v["kind"] == "warm"]
    cols = [i for i in range(3) if any(x[i] for x, _ in rows)]
    if len(rows) < 20 or cols[:2] != [0, 1]:
        return None
    a = [[sum(x[i] * x[j] for x, _ in rows) for j in cols] for i in cols]
    b = [sum(x[i] * y for x, y in rows) for i in cols]
    costs = solve(a, b)
    return (costs[0], costs[1]) if costs else None


def p50_storage_as_zram(run, hot_ms, costs):
    """The run's p50 with each warm return's pages from storage at the cost of zram's."""
    zram_ms, storage_ms = costs
    lat = []
    for v in run["visits"]:
        if v["kind"] == "failed":
            continue
        t = v["latency_ms"]
        if v["kind"] == "warm":
            t = max(t - (storage_ms - zram_ms) * storage_pages(v), hot_ms.get(v["app"], 0))
        lat.append(t)
    return quantile(lat, 0.5)


def storage_as_zram(path, ram_mb=None):
    """memorch's p50 (median over its runs) with storage read as zram, and the fitted µs a
    page from zram and from storage; None where the bench cannot tell."""
    runs = [r for r in json.load(open(path))["runs"] if r["visits"] and ram_mb in (None, r.get("ram_mb"))]
    hot_ms = hot_medians(runs)
    costs = page_costs(runs, hot_ms)
    if costs is None:
        return None
    p = st.median(p50_storage_as_zram(r, hot_ms, costs) for r in runs if r["manager"] == "memorch")
    return p, costs[0] * 1000, costs[1] * 1000


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
        print(f"{'bench':<60} {'memorch p50':>11} {'floor':>6} {'bar':>6}  floor under the bar  {'storage as zram':>15} (µs a page: zram, storage)")
    for path in args:
        rows = per_manager(path, ram_mb)
        b = bar(rows)
        if table:
            if "memorch" in rows and b is not None:
                p, f, _ = rows["memorch"]
                sz = storage_as_zram(path, ram_mb)
                fast = f"{sz[0]:>15.2f} ({sz[1]:.1f}, {sz[2]:.1f})" if sz else f"{'-':>15}"
                print(f"{path:<60} {p:>11.2f} {f:>6.2f} {b:>6.2f}  {'yes' if f <= b else 'no':<19}  {fast}")
                if "earlyoom" in rows and "lmkd" in rows:
                    beside_both.append((p * BAR / b, f * BAR / b, f <= b, sz[0] * BAR / b if sz else None))
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
        told = [x for x in beside_both if x[3] is not None]
        if told:
            print(f"of them {len(told)} count a return's pages by source: memorch's p50 over the best other's {spread([x[0] for x in told])}, the bar met in "
                  f"{sum(x[0] <= BAR for x in told)}; storage read as zram {spread([x[3] for x in told])}, the bar met in {sum(x[3] <= BAR for x in told)}")


if __name__ == "__main__":
    main(sys.argv[1:])
