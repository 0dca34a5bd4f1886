#!/usr/bin/env python3
"""Which visit set each run's p95, and how much slower first launches are when the device is
short of room for them (docs/results.md, "Room for an app not seen yet, from every app").

A first launch counts as made *with room* when the device's available memory after the visit
before it (results.json's timeline) was at least the app's `anon_mb` in scenarios/realapps.toml
plus MARGIN MiB (150: the launch's data file read into the page cache, and the launch
threshold), *short* otherwise. For each run of the managers named, this prints its p95 visit
(the bench's nearest rank), whether that visit was a first launch, and with room or short;
then, over every run given, each app's median first launch with room and short, per manager.

    scripts/first-launch-room.py [--managers memorch,lmkd,earlyoom] [--margin 150] A/results.json ...
"""
import argparse
import json
import os
import statistics
import tomllib
from collections import Counter, defaultdict

from bench_out import kth_slowest

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "realapps.toml")


def visits_with_room(run, anon_mb, margin_mb, use_ms, idle_ms):
    """[(visit, first launch?, with room?, opens a session?)] of a run's served visits, in
    order. A visit opens a session when the screen was off before it: at least `idle_ms`
    between the end of the visit before it (its start, its latency and the scenario's
    `use_ms`) and its own start."""
    timeline = sorted(run["timeline"], key=lambda e: e["at_ms"])
    out, seen, i, available_mb, prev_end = [], set(), 0, None, None
    for v in run["visits"]:
        while i < len(timeline) and timeline[i]["at_ms"] <= v["at_ms"]:
            available_mb = timeline[i]["available_bytes"] / 2**20
            i += 1
        if v["kind"] == "failed":
            continue
        first = v["app"] not in seen
        seen.add(v["app"])
        # Before the first entry the device is empty: room for anything.
        room = available_mb is None or available_mb >= anon_mb[v["app"]] + margin_mb
        opens = prev_end is None or v["at_ms"] - prev_end >= idle_ms
        prev_end = v["at_ms"] + v["latency_ms"] + use_ms
        out.append((v, first, room, opens))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--managers", default="memorch,lmkd,earlyoom")
    ap.add_argument("--margin", type=float, default=150.0, help="MiB over anon_mb a launch needs to count as with room")
    ap.add_argument("results", nargs="+")
    a = ap.parse_args()
    managers = a.managers.split(",")
    with open(SCENARIO, "rb") as f:
        scenario = tomllib.load(f)
    anon_mb = {app["name"]: app["anon_mb"] for app in scenario["apps"]}
    p95_kinds = Counter()
    launches = defaultdict(list)   # (manager, app, with room?) -> ms
    for path in a.results:
        for r in json.load(open(path))["runs"]:
            if r["manager"] not in managers or r.get("ram_mb") != 1024:
                continue
            rows = visits_with_room(r, anon_mb, a.margin, scenario["use_ms"], scenario["visits"]["idle_ms"])
            for v, first, room, _ in rows:
                if first:
                    launches[(r["manager"], v["app"], room)].append(v["latency_ms"])
            p95, _ = kth_slowest([row[0]["latency_ms"] for row in rows])
            v, first, room, opens = next(row for row in rows if row[0]["latency_ms"] == p95)
            kind = ("first launch" if first else "later visit") + (", with room" if room else ", short") + (", opening a session" if opens else "")
            p95_kinds[(r["manager"], kind)] += 1
            print(f"{os.path.basename(os.path.dirname(path)):34s} {r['manager']:9s} seed {r['seed']}: p95 {p95:5.0f} ms, {v['app']}, {kind}")
    print("\np95 visits:", ", ".join(f"{m} {k}: {n}" for (m, k), n in sorted(p95_kinds.items())))
    print("\nmedian first launch, ms (launches): with room / short")
    apps = sorted({app for _, app, _ in launches}, key=lambda x: -anon_mb[x])
    for app in apps:
        cells = []
        for m in managers:
            med = lambda room: (f"{statistics.median(launches[(m, app, room)]):.0f} ({len(launches[(m, app, room)])})" if launches[(m, app, room)] else "-")
            cells.append(f"{m} {med(True)} / {med(False)}")
        print(f"  {app:9s} " + "   ".join(cells))


if __name__ == "__main__":
    main()
