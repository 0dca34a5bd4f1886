#!/usr/bin/env python3
"""What the daemon did while the screen was off (docs/results.md, "The next session learned").

A switch that acts only on decisions taken with the screen off (`next_session`: how the apps
are weighed between sessions) can change a run only where such a decision did something. For
each run of a bench's --out (run with MEMORCH_LOG=debug) this counts the decisions taken
between a screen-off and the next screen-on, and those whose reasons say anything but that
there is nothing to do or prepare, and what those said, their figures left out, with how
often (page cache reclaimed toward the launch threshold weighs no app; a squeeze or a kill
does).

    scripts/screen-off-decisions.py OUT [OUT ...]
"""
import argparse
import re
from collections import Counter

from bench_out import run_logs

QUIET = ("nothing to prepare", "nothing to do")
FIGURE = re.compile(r"[0-9]+(\.[0-9]+)?")
REASON = re.compile(r'\((\w+), "((?:[^"\\]|\\.)*)"')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", type=int, default=3, help="kinds of reason to print per run, the most frequent first")
    ap.add_argument("outs", nargs="+")
    args = ap.parse_args()
    print(f"{'run':<40} {'off':>5} {'acting':>6}")
    for out in args.outs:
        for run, log in run_logs(out):
            off, decisions, acting = False, 0, []
            for line in open(log, errors="replace"):
                if "decided" not in line:
                    continue
                if "Screen { on: false }" in line:
                    off = True
                if off:
                    decisions += 1
                    reasons = [(step, text) for step, text in REASON.findall(line.split("reasons=", 1)[-1]) if not any(q in text for q in QUIET)]
                    if reasons:
                        acting.append(reasons)
                if "Screen { on: true }" in line:
                    off = False
            print(f"{run:<40} {decisions:>5} {len(acting):>6}")
            kinds = Counter(f"{step}: {FIGURE.sub('N', text)[:110]}" for reasons in acting for step, text in reasons)
            for kind, n in kinds.most_common(args.show):
                print(f"    {n:>3} x {kind}")


if __name__ == "__main__":
    main()
