#!/usr/bin/env python3
"""What moves p50 on `realapps`: the warm returns that cross it (docs/results.md, "The home
step beside both peers on seeds 6-8").

The programs answer a hot return in their own time, the same under every manager (`chat`
~2 ms, `maps` ~6, `queue` ~15, `kv` ~47 on the faster machine). A run's p50 falls between
those clusters, so it moves by whole clusters when a few visits change side. For each run
this counts the warm returns of apps whose hot median (over the bench's runs) is under the
run's p50 but which took p50 or longer (they crossed it), the warm returns of apps that are
at or over p50 even hot (they move p95 and the wait, not p50), and the warm returns that
stayed under it; medians per manager. It prints first each app's hot median.

    scripts/p50-crossings.py RESULTS.json [RESULTS.json ...]
"""
import json
import math
import statistics as st
import sys
from collections import defaultdict

from bench_out import hot_medians


def main(paths):
    for path in paths:
        runs = json.load(open(path))["runs"]
        hot_ms = hot_medians(runs)
        per = defaultdict(lambda: defaultdict(list))
        for r in runs:
            served = [v for v in r["visits"] if v["kind"] != "failed"]
            lat = sorted(v["latency_ms"] for v in served)
            p50 = lat[math.ceil(0.5 * len(lat)) - 1]
            warm = [v for v in served if v["kind"] == "warm"]
            # An app never hot in the bench counts as slow: its returns say nothing of p50.
            fast = lambda v: hot_ms.get(v["app"], math.inf) < p50
            row = per[r["manager"]]
            row["p50 ms"].append(p50)
            row["crossed p50"].append(sum(fast(v) and v["latency_ms"] >= p50 for v in warm))
            row["slow apps"].append(sum(not fast(v) for v in warm))
            row["under p50"].append(sum(v["latency_ms"] < p50 for v in warm))
        print(path)
        print("  hot median ms by app:", ", ".join(f"{a} {ms:.1f}" for a, ms in sorted(hot_ms.items(), key=lambda x: x[1])))
        for m in sorted(per):
            print(f"  {m:<40}", "  ".join(f"{k} {st.median(v):.1f}" for k, v in per[m].items()))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
