#!/usr/bin/env python3
"""How long launchers waited for memorch's before-launch squeezes, per run of a bench
(docs/results.md, "Before-launch squeezes together").

Reads each run's daemon debug log (`MEMORCH_LOG=debug memorch bench ... --out OUT`:
OUT/logs/NN-MANAGER/memorch.log). A launch that waited is a `decided` line with a launch
intent whose reasons squeeze before launching; its wait runs from that line to the `acted`
line of its last squeeze, and its squeezing is the sum of the squeezes' own times (the
`in N µs` of each). Squeezes one after another wait their sum; together, about the longest.

    scripts/launch-waits.py OUT [OUT ...]
"""
import re
import sys

from bench_out import run_logs, stamp_ms


def launches(log):
    """[app, decided at, last squeeze done at, squeezing ms, squeezes] for each launch that
    squeezed before it went ahead."""
    rows, cur = [], None
    for line in open(log):
        if " decided " in line:
            if cur:
                rows.append(cur)
            m = re.search(r'LaunchIntent \{ app: "([^"]+)"', line)
            cur = [m.group(1), stamp_ms(line), stamp_ms(line), 0.0, 0] if m and "before launching" in line else None
        elif cur and " acted action=Compact" in line and "before launching" in line:
            took = re.search(r" in (\d+) µs", line)
            cur[2] = stamp_ms(line)
            cur[3] += int(took.group(1)) / 1000 if took else 0
            cur[4] += 1
    if cur:
        rows.append(cur)
    return [r for r in rows if r[4] > 0]


def main(outs):
    if not outs:
        sys.exit(__doc__)
    for out in outs:
        for run, log in run_logs(out):
            rows = launches(log)
            several = [r for r in rows if r[4] > 1]
            wait = lambda rs: sum(r[2] - r[1] for r in rs)
            work = lambda rs: sum(r[3] for r in rs)
            print(f"{run:42s} launches that squeezed {len(rows)}: waited {wait(rows):5.0f} ms for {work(rows):5.0f} ms of squeezing;"
                  f" two apps or more {len(several)}: waited {wait(several):5.0f} ms for {work(several):5.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
