#!/usr/bin/env python3
"""Whether a manager slows the returns it keeps hot, or the launches it has nothing to do
for, pooled over many benches (docs/results.md, "Where seed 4's p50 goes").

For each bench's results.json (the 1 GiB realapps runs by default) and each app, the median
latency of its hot returns under MANAGER is divided by the median under each PEER in the
same bench (apps with more than three hot returns under both); the first four visits of each
run (first launches with memory to spare) are compared run by run on the same seed. Prints,
per app and peer, the median ratio over the benches and in how many it was over 1: a
manager that cost the app in front CPU or cache would show ratios above 1 in most benches.

    scripts/hot-return-ratios.py                              # docs/results/realapps-*/
    scripts/hot-return-ratios.py RESULTS.json ...             # these benches
    scripts/hot-return-ratios.py --manager memorch --peers lmkd,earlyoom --ram 1024 ...
"""
import argparse
import collections
import glob
import json
import os
import statistics
import sys

# First launches before any app has to give: on realapps' 1 GiB device the first four fit.
FIRST_LAUNCHES = 4
# Fewer hot returns than this in a bench and an app's median says little.
MIN_HOT = 4


def ratios(paths, manager, peers, ram_mb):
    """({(app, peer): [ratio per bench]}, {peer: [first-launch ratio per run pair]})."""
    hot_ratios = collections.defaultdict(list)
    first_ratios = collections.defaultdict(list)
    for path in paths:
        try:
            with open(path) as f:
                bench = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: {e} (a bench's results.json)")
        if ram_mb is not None and bench.get("ram_mb") != ram_mb:
            continue
        hot = collections.defaultdict(list)
        first = collections.defaultdict(list)
        for run in bench["runs"]:
            for v in run["visits"]:
                if v["kind"] == "hot":
                    hot[(run["manager"], v["app"])].append(v["latency_ms"])
            first[(run["manager"], run["seed"])].append(sum(v["latency_ms"] for v in run["visits"][:FIRST_LAUNCHES]))
        apps = {app for (m, app) in hot if m == manager}
        for peer in peers:
            for app in apps:
                mine, theirs = hot.get((manager, app), []), hot.get((peer, app), [])
                if len(mine) >= MIN_HOT and len(theirs) >= MIN_HOT:
                    hot_ratios[(app, peer)].append(statistics.median(mine) / statistics.median(theirs))
            for (m, seed), mine in first.items():
                theirs = first.get((peer, seed))
                if m == manager and theirs:
                    first_ratios[peer].append(statistics.median(mine) / statistics.median(theirs))
    return hot_ratios, first_ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="*", help="results.json files (default: docs/results/realapps-*/results.json)")
    ap.add_argument("--manager", default="memorch")
    ap.add_argument("--peers", default="lmkd,earlyoom", help="comma-separated")
    ap.add_argument("--ram", type=int, default=1024, help="only benches on a device of this many MiB (0: any)")
    args = ap.parse_args()
    paths = args.results or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "docs", "results", "realapps-*", "results.json")))
    if not paths:
        sys.exit("no results.json given or found under docs/results/realapps-*/")
    hot_ratios, first_ratios = ratios(paths, args.manager, args.peers.split(","), args.ram or None)
    if not hot_ratios:
        sys.exit(f"no bench among {len(paths)} ran {args.manager} beside {args.peers} with hot returns to compare")
    print(f"hot returns, {args.manager} / peer, median of per-bench medians:")
    for (app, peer), r in sorted(hot_ratios.items()):
        print(f"  {app:10} {peer:10} {statistics.median(r):.3f}  over 1 in {sum(x > 1 for x in r)} of {len(r)} benches")
    print(f"first {FIRST_LAUNCHES} launches (their sum), {args.manager} / peer on the same seed:")
    for peer, r in sorted(first_ratios.items()):
        print(f"  {peer:10} {statistics.median(r):.3f}  over 1 in {sum(x > 1 for x in r)} of {len(r)} run pairs")


if __name__ == "__main__":
    main()
