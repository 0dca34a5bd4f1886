#!/usr/bin/env python3
"""What sets p95 on a seed: the first launches, timed on a device with room for them
(docs/results.md, "What p95 asks of the first launches").

p95 over a run's visits is its k-th slowest visit (k = 4 or 5 on `realapps`), and that visit
is nearly always an app's first launch. A first launch on a device where everything fits
(`--ram 2560`: no manager acts, nothing is short) is the program's own start; on the 1 GiB
device it also waits for the room made for it and competes with that work. For each run of
the pressured bench this prints its p95 and the p95 it would have had with each first launch
as fast as the light bench's (the median over that bench's runs of the same app on the same
seed; the run's other visits as they were): what a manager that had the room ready before
each launch could reach, and which first launches are slower than that.

    scripts/p95-with-room.py PRESSURED/results.json LIGHT/results.json
"""
import json
import statistics
import sys
from collections import defaultdict

from bench_out import first_launches, kth_slowest


def main(pressured, light):
    with_room = defaultdict(lambda: defaultdict(list))   # seed -> app -> first-launch ms
    for r in json.load(open(light))["runs"]:
        for app, ms in first_launches(r).items():
            with_room[r["seed"]][app].append(ms)
    for r in json.load(open(pressured))["runs"]:
        seed, room = r["seed"], {a: statistics.median(ms) for a, ms in with_room[r["seed"]].items()}
        if not room:
            print(f"seed {seed} {r['manager']}: no light run on this seed")
            continue
        visits = [v for v in r["visits"] if v["kind"] != "failed"]
        p95, k = kth_slowest([v["latency_ms"] for v in visits])
        seen, faster = set(), []
        for v in visits:
            ms = v["latency_ms"]
            if v["app"] not in seen:
                seen.add(v["app"])
                ms = min(ms, room.get(v["app"], ms))
            faster.append(ms)
        reachable, _ = kth_slowest(faster)
        slow = sorted(((int(ms), a, int(room[a])) for a, ms in first_launches(r).items() if a in room and ms > 1.2 * room[a]), reverse=True)
        print(f"seed {seed} {r['manager']}: p95 {p95:.0f} ms (the {k}th slowest); with its first launches as fast as with room {reachable:.0f} ms;",
              "first launches over 1.2x their time with room:", ", ".join(f"{a} {ms} ({rm})" for ms, a, rm in slow) or "none")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
