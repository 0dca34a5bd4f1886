#!/usr/bin/env python3
"""Which of memorch's squeezes made its warm returns (docs/results.md, "Which squeezes warm
the returns").

A return the bench marks `after_compaction` found pages of its app that memorch's daemon had
squeezed out since the app was last in front. For each such return of a memorch run this
finds the last squeeze of that app before the return, from the run's daemon log
(OUT/logs/NN-MANAGER/memorch.log), and prints its step (before a launch, the home step, the
pressure step below the low band, a stall near it, idle) and whether the app in front was
being read back whole (`prefetch_whole`) in the three seconds before it: that read-back
takes memory down to the critical band, and the pressure step gives it back from the
apps in the background. A summary per manager counts them, with their median latency.

    scripts/warm-causes.py OUT                  # a bench's --out (its results.json and logs)
    scripts/warm-causes.py RESULTS.json         # the logs where the results say they are

Visits are placed on the log's clock by the run's launches: with MEMORCH_LOG=debug, each
`decided` line that reports an app launched (at the end of its cold visit); without it,
the first before-launch squeeze of each launch (at its start).
"""
import json
import os
import re
import statistics
import sys

from bench_out import stamp_ms

# What read the app in front back within this long before a squeeze made room for it.
READ_BACK_WINDOW_MS = 3000


def step_of(reason):
    if "before launching" in reason or reason.startswith("launching"):
        return "before launch"
    if "launch threshold" in reason:
        return "home"
    if "below the low band" in reason:
        return "pressure"
    if "PSI" in reason:
        return "stall near the band"
    return "idle" if "idle" in reason or "screen" in reason else reason[:40]


def read_log(path):
    """Squeezes [(ms, app, step)], whole read-backs [ms], launches reported {app: [ms]} and the
    first before-launch squeeze of each launch {app: [ms]}."""
    squeezes, read_backs, reported, before = [], [], {}, {}
    for line in open(path):
        if " decided " in line:
            for app in re.findall(r'Launched \{ app: "([^"]+)"', line):
                reported.setdefault(app, []).append(stamp_ms(line))
            continue
        m = re.search(r' acted action=(Compact|Prefetch) \{ pid: \d+, app: "([^"]+)".*? reason=(.*)', line)
        if not m:
            continue
        at, kind, app, reason = stamp_ms(line), m.group(1), m.group(2), m.group(3)
        if kind == "Prefetch":
            read_backs.append(at)
            continue
        squeezes.append((at, app, step_of(reason)))
        launching = re.match(r"before launching '([^']+)'", reason)
        if launching and not any(at - t < 10_000 for t in before.get(launching.group(1), [])):
            before.setdefault(launching.group(1), []).append(at)
    return squeezes, read_backs, reported, before


def offset_ms(run, reported, before):
    """Log clock minus the run's clock (visits' `at_ms`), the median over its launches."""
    colds = {}
    for v in run["visits"]:
        if v["kind"] == "cold":
            colds.setdefault(v["app"], []).append(v)
    diffs = []
    for app, visits in colds.items():
        if reported:
            diffs += [t - (v["at_ms"] + v["latency_ms"]) for v, t in zip(visits, reported.get(app, []))]
        else:
            diffs += [t - v["at_ms"] for v, t in zip(visits, before.get(app, []))]
    return statistics.median(diffs) if diffs else None


def main(args):
    if len(args) != 1:
        sys.exit(__doc__)
    results = args[0] if args[0].endswith(".json") else os.path.join(args[0], "results.json")
    if not os.path.exists(results):
        sys.exit(f"{results}: no such file (a bench's --out, or its results.json)")
    out = os.path.dirname(results)
    summary = {}
    for run in json.load(open(results))["runs"]:
        if not run["manager"].startswith("memorch"):
            continue
        # Where the bench wrote it, else a copy in logs/ beside the results (docs/results/).
        log_dir = run.get("log_dir") or ""
        log = next((p for p in (os.path.join(log_dir, "memorch.log"), os.path.join(out, "logs", os.path.basename(log_dir), "memorch.log")) if os.path.exists(p)), None)
        if not log_dir or log is None:
            print(f"{run['manager']} seed {run['seed']}: no daemon log in {log_dir or 'its run (no log_dir)'} nor in {out}/logs/")
            continue
        squeezes, read_backs, reported, before = read_log(log)
        off = offset_ms(run, reported, before)
        if off is None:
            print(f"{run['manager']} seed {run['seed']}: no launch to place the visits by")
            continue
        print(f"{run['manager']} seed {run['seed']}:")
        for v in run["visits"]:
            if v["kind"] != "warm" or not v.get("after_compaction"):
                continue
            at = off + v["at_ms"]
            last = [s for s in squeezes if s[1] == v["app"] and s[0] < at]
            if not last:
                cause = ("no squeeze in the log", False)
                ago = float("nan")
            else:
                t, _, step = last[-1]
                cause = (step, any(t - READ_BACK_WINDOW_MS < r <= t for r in read_backs))
                ago = (at - t) / 1000
            print(f"    {v['app']:10s} {v['latency_ms']:6.0f} ms, {v.get('refaults_anon', 0):6d} pages read back; squeezed {ago:4.0f} s before by {cause[0]}{', after a whole read-back' if cause[1] else ''}")
            summary.setdefault(run["manager"], {}).setdefault(cause, []).append(v["latency_ms"])
    print("\nwarm returns after a squeeze, by the squeeze's step: count, median ms")
    for manager, causes in summary.items():
        print(manager)
        for (step, read_back), lat in sorted(causes.items()):
            print(f"    {step + (' after a whole read-back' if read_back else ''):45s} {len(lat):3d} {statistics.median(lat):6.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
