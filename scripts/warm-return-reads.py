#!/usr/bin/env python3
"""What a warm return reads, per manager (docs/results.md, "What a warm return reads").

A warm return is a return to an app still alive that had to read pages back. Its latency is
mostly those reads: anonymous pages from zram or from a storage swap file, and file pages
(code, data) the kernel had dropped. For each manager over the benches given, this prints
how many warm returns there were, their median latency, the medians of what each read
(anonymous pages, refaults_anon; file pages, refaults_file), the share of all their
anonymous pages that came from storage swap rather than zram (refaults_anon − zram_reads),
the median µs a page (latency over every page read), and their time and storage pages in
all (`total s`, `storage`; with --by-seed, a run's). A manager that keeps more apps
alive leaves less of each resident, so its returns read more; this shows by how much, and
from where.

    scripts/warm-return-reads.py OUT [OUT ...]            # a bench's --out, or its results.json
    scripts/warm-return-reads.py --by-seed OUT [OUT ...]  # a row per manager and seed

The bench leaves a counter out of a visit where it is zero; a bench whose visits carry none
of them (older than the counters) is left out and named.
"""
import json
import os
import statistics
import sys

# The bench's per-visit counters of pages read over a return (crates/bench/src/results.rs).
COUNTERS = ("refaults_anon", "zram_reads", "refaults_file")


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"{path}: {e} (give a bench's --out directory or its results.json)")


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main(argv):
    by_seed = "--by-seed" in argv
    paths = [a for a in argv if a != "--by-seed"]
    if not paths or any(a.startswith("-") for a in paths):
        sys.exit(__doc__)
    rows, unread = {}, []
    for path in paths:
        runs = load(path)["runs"]
        if not any(k in v for r in runs for v in r["visits"] for k in COUNTERS):
            unread.append(path)
            continue
        for run in runs:
            key = (run["manager"], run.get("seed")) if by_seed else (run["manager"], None)
            for v in run["visits"]:
                if v["kind"] == "warm":
                    rows.setdefault(key, []).append({k: v.get(k, 0) for k in COUNTERS} | {"latency_ms": v["latency_ms"]})
    if not rows:
        sys.exit("no warm return with per-visit read counters in: " + " ".join(paths))
    print(f"{'manager':<28} {'seed':>4} {'warm':>5} {'p50 ms':>7} {'anon':>6} {'storage%':>8} {'file':>6} {'us/page':>7} {'total s':>7} {'storage':>7}")
    for (manager, seed), vs in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        anon = [v["refaults_anon"] for v in vs]
        storage = sum(max(v["refaults_anon"] - v["zram_reads"], 0) for v in vs)
        storage_pct = 100 * storage / sum(anon) if sum(anon) else 0.0
        file = [v["refaults_file"] for v in vs]
        per_page = [1000 * v["latency_ms"] / n for v in vs if (n := v["refaults_anon"] + v["refaults_file"]) > 0]
        print(f"{manager:<28} {seed if seed is not None else '-':>4} {len(vs):>5} {med([v['latency_ms'] for v in vs]):>7.1f} "
              f"{med(anon):>6.0f} {storage_pct:>8.0f} {med(file):>6.0f} {med(per_page):>7.1f} "
              f"{sum(v['latency_ms'] for v in vs) / 1000:>7.2f} {storage:>7}")
    for path in unread:
        print(f"(left out: {path}, whose visits carry no per-visit read counters)")


if __name__ == "__main__":
    main(sys.argv[1:])
