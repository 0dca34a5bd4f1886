#!/usr/bin/env python3
"""How popular the app in front was at each of memorch's whole read-backs, and how many of
them `detection.whole_below_low_favourites_only` would have stopped, from a bench's daemon
debug logs (OUT/logs/NN-MANAGER/memorch.log, MEMORCH_LOG=debug).

Popularity is counted from the events in the log's `decided` lines as the engine counts it
since returns count (feedback.rs): each launch, and each app-state event that brings an app
to the front or makes it visible when the events last had it in the background. It is
(fronts + 1) / (most fronts of a running app + 1), as `Ctx::popularity`; every app is taken
as running (realapps' memorch runs kill none). A read-back is counted as stopped when the app
was not a favourite (popularity under 0.5) and the read-back took available memory under the
low band and its margin (14 % of the domain; --floor-mib to change).

Usage: scripts/read-back-popularity.py OUT [--floor-mib 143.4]
"""
import argparse
import re
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from bench_out import run_logs  # noqa: E402

LAUNCHED = re.compile(r'Launched \{ app: "([^"]+)", pid: (\d+)')
APP_STATE = re.compile(r"AppState \{ pid: (\d+), class: (\w+) \}")
READ_BACK = re.compile(r'action=Prefetch \{ pid: \d+, app: "([^"]+)", max_pages: (\d+) \}.*available ([0-9.]+) MiB, down to')
FRONT_CLASSES = {"Foreground", "Visible"}


def read_backs(log, floor_mib):
    """(read-backs, of them stopped by the favourites gate, MiB those would not have read)."""
    names, fronts, in_front = {}, {}, set()
    total = stopped = stopped_mib = 0
    for line in open(log):
        if "decided" in line:
            for m in LAUNCHED.finditer(line):
                names[m[2]] = m[1]
                fronts[m[1]] = fronts.get(m[1], 0) + 1
                in_front.add(m[2])
            for m in APP_STATE.finditer(line):
                pid, cls = m[1], m[2]
                if cls not in FRONT_CLASSES:
                    in_front.discard(pid)
                elif pid not in in_front:
                    in_front.add(pid)
                    if pid in names:
                        fronts[names[pid]] += 1
        m = READ_BACK.search(line)
        if m:
            total += 1
            popularity = (fronts.get(m[1], 0) + 1) / (max(fronts.values(), default=0) + 1)
            piece, available = int(m[2]) * 4096 / 2**20, float(m[3])
            if popularity < 0.5 and available - piece < floor_mib:
                stopped += 1
                stopped_mib += piece - max(0.0, available - floor_mib)
    return total, stopped, stopped_mib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="a bench's --out directory, run with MEMORCH_LOG=debug")
    ap.add_argument("--floor-mib", type=float, default=1024 * 0.14, help="the low band and its margin, MiB (default: 14 %% of 1 GiB)")
    a = ap.parse_args()
    for run, log in run_logs(a.out):
        total, stopped, mib = read_backs(log, a.floor_mib)
        print(f"{run:60s} {total:4d} read-backs; not a favourite and under the floor: {stopped:3d} ({mib:4.0f} MiB)")


if __name__ == "__main__":
    main()
