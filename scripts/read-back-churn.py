#!/usr/bin/env python3
"""What memorch's daemon read back and squeezed, per app, from a run's debug log
(docs/results.md, "The p50 every return hot would give").

The whole read-back (`prefetch_whole`) reads the app in front back down to the critical
band, and the pressure step gives the room back from the apps in the background. Where the
apps the user switches between do not fit together, what one return reads back the next
squeeze takes from the app that returns after it: the same pages go round. For each memorch
run of a bench's --out (OUT/logs/NN-MANAGER/memorch.log) this sums, per app, the MiB read
back (`acted action=Prefetch`) and squeezed (`acted action=Compact`, and of it to a storage
file of the app's own), over the whole run and from SECONDS after the daemon's first log
line on (`--after`, 0 by default), and the most read back of the apps in front within any
minute (what `kill.when_read_back_churns` weighs, ladder/kill.rs) and when it was.

    scripts/read-back-churn.py OUT [--after SECONDS]
"""
import re
import sys
from collections import Counter

from bench_out import run_logs, stamp_ms

MIB = 1 << 20

# ladder/kill.rs CHURN_WINDOW_MS.
WINDOW_S = 60


def sums(log, after_s):
    """{what: Counter(app -> MiB)} for the whole run and from `after_s` on."""
    out = {k: Counter() for k in ("read back", "squeezed", "to storage", "read back late", "squeezed late")}
    out["in front"] = []  # (seconds, MiB) of each read-back of an app in front
    t0 = None
    for line in open(log):
        t0 = stamp_ms(line) if t0 is None else t0
        if " acted " not in line:
            continue
        t = stamp_ms(line)
        action = re.search(r"action=(\w+) \{([^}]*)\}", line)
        done = re.search(r" bytes=(\d+)", line)
        app = re.search(r'app: "([^"]+)"', line)
        if not (action and done and app):
            continue
        mib, late = int(done.group(1)) / MIB, (t - t0) / 1000 >= after_s
        if action.group(1) == "Prefetch":
            if "in front" in line:
                out["in front"].append(((t - t0) / 1000, mib))
            out["read back"][app.group(1)] += mib
            out["read back late"][app.group(1)] += mib * late
        elif action.group(1) == "Compact":
            out["squeezed"][app.group(1)] += mib
            out["squeezed late"][app.group(1)] += mib * late
            if "to_storage: true" in action.group(2):
                out["to storage"][app.group(1)] += mib
    return out


def most_in_a_minute(reads):
    """(MiB, seconds): the most read back of the apps in front within WINDOW_S, and when."""
    best = (0.0, 0.0)
    for t, _ in reads:
        best = max(best, (sum(m for u, m in reads if t - WINDOW_S < u <= t), t))
    return best


def main(args):
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out, after = args[0], 0.0
    if "--after" in args:
        after = float(args[args.index("--after") + 1])
    for run, log in run_logs(out):
        s = sums(log, after)
        apps = sorted(set(s["read back"]) | set(s["squeezed"]))
        print(f"{run}: read back {sum(s['read back'].values()):.0f} MiB, squeezed {sum(s['squeezed'].values()):.0f} MiB "
              f"({sum(s['to storage'].values()):.0f} to storage); from {after:.0f} s on: read back "
              f"{sum(s['read back late'].values()):.0f}, squeezed {sum(s['squeezed late'].values()):.0f}")
        most, at = most_in_a_minute(s["in front"])
        print(f"  the most read back of the apps in front within {WINDOW_S} s: {most:.0f} MiB, to {at:.0f} s")
        for a in apps:
            print(f"  {a:<10} read back {s['read back'][a]:6.0f} ({s['read back late'][a]:5.0f} late)  "
                  f"squeezed {s['squeezed'][a]:6.0f} ({s['squeezed late'][a]:5.0f} late, {s['to storage'][a]:4.0f} to storage)")


if __name__ == "__main__":
    main(sys.argv[1:])
