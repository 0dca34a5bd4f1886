#!/usr/bin/env python3
"""How likely one bench is to meet issue 11's p50 and p95 bars, from the runs of several
benches of the same decisions (docs/results.md, "The daemon's looks when nothing is short").

A bench of `--repeat 3` on `realapps` runs each manager once on each of seeds 3, 4 and 5 and
reports medians over those three runs; the bars ask memorch's p50 over all visits to be at most
0.9x, and its p95 at most 0.8x, the best other manager's. Between benches of the same decisions
those medians move more than the margins the bars leave, so one bench meeting a bar, or
missing it, says little. This pools the runs of every bench given, prints each manager's
medians over them (per seed too), and draws benches from them: for each seed, one run of each
manager chosen at random from that seed's runs, the bench's medians and ratios as the report
computes them (nearest-rank quantiles), 20 000 times with a fixed seed. It prints the share of
drawn benches that meet each bar and both, and the 5th, 50th and 95th percentiles of the
ratios.

    scripts/bars-odds.py A/results.json B/results.json ...
    scripts/bars-odds.py --memorch 'memorch:work_nice=0' A/results.json   # another name for memorch
    scripts/bars-odds.py --memorch 'memorch:x=off' --memorch memorch A/results.json B/results.json
        # memorch:x=off's runs where a file has them, else memorch's (the preset as shipped
        # under either name)
    scripts/bars-odds.py --seeds 3 A/results.json B/results.json           # benches of 3 of the seeds

With --seeds K, each drawn bench runs on K of the seeds, every choice of K seeds drawn as
often (benches on other seeds than the ones given: docs/results.md, "Seeds never run before,
15-20").

Managers whose name starts with `memorch:` (variants) are left out unless named by
`--memorch`; the best other manager is the best of the rest at each draw.
"""
import argparse
import itertools
import json
import random
import statistics
from collections import defaultdict

from bench_out import quantile

P50_BAR = 0.9
P95_BAR = 0.8
DRAWS = 20_000


def load(paths, memorch):
    """{manager: {seed: [(p50, p95, kills), ...]}} over every run of every file (kills: the
    manager's own, not the kernel's). `memorch`: the names
    memorch's runs may have, the first a file has taken as memorch's in that file."""
    runs = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        names = {run["manager"] for run in data["runs"]}
        mine = next((m for m in memorch if m in names), None)
        for run in data["runs"]:
            name = run["manager"]
            if name == mine:
                name = "memorch"
            elif name.startswith("memorch"):
                continue
            latencies = [v["latency_ms"] for v in run["visits"] if v["kind"] != "failed"]
            if latencies:
                kills = sum(1 for k in run["kills"] if k["by"] != "kernel")
                runs[name][run["seed"]].append((quantile(latencies, 0.5), quantile(latencies, 0.95), kills))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="results.json of benches of the same decisions")
    ap.add_argument("--memorch", action="append", help="the manager to judge (default: memorch); given more than once, in each file the first name it has")
    ap.add_argument("--seeds", type=int, help="a drawn bench runs on this many of the seeds (default: all of them)")
    args = ap.parse_args()
    args.memorch = args.memorch or ["memorch"]
    runs = load(args.results, args.memorch)
    if "memorch" not in runs or len(runs) < 2:
        raise SystemExit(f"need runs of {args.memorch} and of at least one other manager; found {sorted(runs)}")
    seeds = sorted(runs["memorch"])
    others = [m for m in runs if m != "memorch"]
    for m in ["memorch"] + others:
        every = [r for s in runs[m].values() for r in s]
        per_seed = "  ".join(f"seed {s}: n={len(runs[m][s])} p50 {statistics.median(x[0] for x in runs[m][s]):.2f} p95 {statistics.median(x[1] for x in runs[m][s]):.0f}" for s in sorted(runs[m]))
        print(f"{m:10s} runs {len(every):2d}  p50 {statistics.median(x[0] for x in every):.2f} ms  p95 {statistics.median(x[1] for x in every):.0f} ms  kills {statistics.median(x[2] for x in every):g}   {per_seed}")
    pooled = {m: [r for s in runs[m].values() for r in s] for m in runs}
    best50 = min(statistics.median(x[0] for x in pooled[m]) for m in others)
    best95 = min(statistics.median(x[1] for x in pooled[m]) for m in others)
    m50 = statistics.median(x[0] for x in pooled["memorch"])
    m95 = statistics.median(x[1] for x in pooled["memorch"])
    print(f"pooled: p50 {m50 / best50:.2f}x the best other (bar {P50_BAR}), p95 {m95 / best95:.2f}x (bar {P95_BAR})")
    missing = [(m, s) for m in others for s in seeds if not runs[m].get(s)]
    if missing:
        raise SystemExit(f"no run of {missing[0][0]} on seed {missing[0][1]}: a drawn bench needs every manager on every seed")
    k = args.seeds or len(seeds)
    if not 1 <= k <= len(seeds):
        raise SystemExit(f"--seeds {k}: the runs have {len(seeds)} seeds ({seeds}); give 1 to {len(seeds)}")
    choices = list(itertools.combinations(seeds, k))
    rng = random.Random(1)
    r50, r95, ok50, ok95, both = [], [], 0, 0, 0
    for i in range(DRAWS):
        medians = {}
        bench = choices[i % len(choices)]
        for m in runs:
            drawn = [rng.choice(runs[m][s]) for s in bench]
            medians[m] = (statistics.median(x[0] for x in drawn), statistics.median(x[1] for x in drawn))
        a = medians["memorch"][0] / min(medians[m][0] for m in others)
        b = medians["memorch"][1] / min(medians[m][1] for m in others)
        r50.append(a)
        r95.append(b)
        ok50 += a <= P50_BAR
        ok95 += b <= P95_BAR
        both += a <= P50_BAR and b <= P95_BAR
    r50.sort()
    r95.sort()
    pct = lambda v, p: v[min(int(p * len(v)), len(v) - 1)]
    print(f"one bench of {k} runs{f' on {k} of the {len(seeds)} seeds' if k < len(seeds) else ''}, {DRAWS} drawn: p50 bar met in {ok50 / DRAWS:.0%}, p95 bar in {ok95 / DRAWS:.0%}, both in {both / DRAWS:.0%}")
    print(f"  p50 ratio 5/50/95 %: {pct(r50, .05):.2f} {pct(r50, .5):.2f} {pct(r50, .95):.2f}   p95 ratio: {pct(r95, .05):.2f} {pct(r95, .5):.2f} {pct(r95, .95):.2f}")


if __name__ == "__main__":
    main()
