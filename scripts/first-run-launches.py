#!/usr/bin/env python3
"""Whether a bench's first run launches slower for being first (docs/results.md, "The first
run warmed up, and seeds 25-29…").

For each run of the benches given, the median of its cold launches is divided by the median
over the other runs of the same seed in the same bench (a seed run only once is left out).
The ratios are grouped by the run's place in the bench (its very first run, the first run
of a later seed, or a later run of a seed) and by who managed it (memorch's presets together,
every other manager by its name: a manager's launches may be slower on every seed, so its
first run is set beside its own later runs), and each group's median printed. A bench that warmed up (results.json has `warm_up`)
is counted apart, so the ratios before and after the warm-up can be set side by side.

    scripts/first-run-launches.py [--max-ram-mb 1100] RESULTS.json [RESULTS.json ...]
    scripts/first-run-launches.py docs/results/realapps*/results.json
"""
import argparse
import json
import statistics
from collections import defaultdict


def cold_median(run):
    cold = [v["latency_ms"] for v in run["visits"] if v["kind"] == "cold"]
    return statistics.median(cold) if cold else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-ram-mb", type=int, default=1100, help="leave out runs on a larger device (the light runs, where launches have room)")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    groups = defaultdict(list)
    for path in args.results:
        bench = json.load(open(path))
        runs = [r for r in bench["runs"] if r["ram_mb"] <= args.max_ram_mb and cold_median(r)]
        warmed = "warmed up" if bench.get("warm_up") else "not warmed up"
        seen = set()
        for i, r in enumerate(runs):
            others = [cold_median(x) for x in runs if x["seed"] == r["seed"] and x is not r]
            first_of_seed = r["seed"] not in seen
            seen.add(r["seed"])
            if len(others) < 2:
                continue
            place = "bench's first run" if i == 0 else "seed's first run" if first_of_seed else "later run"
            who = "memorch*" if r["manager"].startswith("memorch") else r["manager"]
            groups[(warmed, who, place)].append(cold_median(r) / statistics.median(others))
    print(f"{'bench':<15} {'manager':<8} {'place':<18} {'runs':>5} {'median ratio':>13}")
    for (warmed, who, place), ratios in sorted(groups.items()):
        print(f"{warmed:<15} {who:<8} {place:<18} {len(ratios):>5} {statistics.median(ratios):>13.2f}")


if __name__ == "__main__":
    main()
