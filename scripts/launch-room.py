#!/usr/bin/env python3
"""Who made the room for each launch, and when the launch ended, per run of a bench
(docs/results.md, "The pressure step held back while a launch is in flight").

Reads a bench's --out (run with MEMORCH_LOG=debug): OUT/results.json for each run's first
launches, and OUT/logs/NN-MANAGER/memorch.log for the daemon's squeezes. A launch runs from
the `decided` line of its intent to the `decided` line that reports it launched. For each
launch that squeezed, this prints the MB its intent's before-launch squeezes took, the MB and
number of the other squeezes (the pressure step's) before it was reported launched, its time,
and how long after the last before-launch squeeze it was reported launched (at the daemon's
next look: up to a poll, 0.1 s, after it ended). Each run's line starts with the
sum of its first launches (ms, each app's first visit in results.json).

    scripts/launch-room.py OUT [OUT ...]
"""
import json
import os
import re
import sys

from bench_out import first_launches, run_logs, stamp_ms


def launches(log):
    """[app, before-launch bytes, last before-launch squeeze done at, other bytes, other
    squeezes, launch ms, reported at] for each launch reported launched."""
    done, cur = [], None
    for line in open(log):
        if " decided " in line:
            if cur:
                m = re.search(r'Launched \{ app: "' + re.escape(cur[0]) + r'", pid: \d+, ms: (\d+)', line)
                if m:
                    cur[5], cur[6] = int(m.group(1)), stamp_ms(line)
                    done.append(cur)
                    cur = None
            m = re.search(r'LaunchIntent \{ app: "([^"]+)"', line)
            if m:
                cur = [m.group(1), 0, stamp_ms(line), 0, 0, 0, 0]
        elif cur and " acted action=Compact" in line:
            b = int(re.search(r" bytes=(\d+)", line).group(1))
            if "before launching" in line:
                cur[1] += b
                cur[2] = stamp_ms(line)
            else:
                cur[3] += b
                cur[4] += 1
    return done


def main(outs):
    if not outs:
        sys.exit(__doc__)
    for out in outs:
        logs = run_logs(out)
        results = os.path.join(out, "results.json")
        if not os.path.exists(results):
            sys.exit(f"{results}: no such file (the bench did not finish writing its results)")
        runs = json.load(open(results))["runs"]
        for name, log in logs:
            run = runs[int(name.split("-", 1)[0]) - 1]   # NN-MANAGER: the NNth run
            rows = [r for r in launches(log) if r[1] or r[3]]
            mb = lambda b: b / 1e6
            print(f"{name:40s} seed {run['seed']}: first launches {sum(first_launches(run).values()):5.0f} ms in all")
            for app, before, before_at, other, n, ms, at in rows:
                after = f", reported launched {at - before_at:4.0f} ms after them" if before else ""
                print(f"    {app:10s} {ms:5d} ms: before-launch {mb(before):4.0f} MB{after}; other squeezes {mb(other):4.0f} MB in {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
