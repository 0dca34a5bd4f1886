#!/usr/bin/env python3
"""Where a manager's warm returns fall in the user's sessions (docs/results.md, "What a storage
tier as fast as zram would do for p50").

A return is a visit to an app still alive (hot or warm). Over the runs of the benches given,
this splits each manager's returns into an app's first return of a session (the screen was
off since it was last used: whatever waited in swap between sessions) and its later returns
in the same session (the user switching among the session's apps); a first return is split
again by whether the app was used in the session just before (the one the screen-off ended)
or not (docs/results.md, "The idle read-back judged by the next session"). It prints for each
how many were hot and warm and the warm ones' time in all. Sessions are told apart by a gap
between visits longer than --gap seconds, as scripts/return-ranking.py does.

    scripts/returns-by-session.py [--gap 4] RESULTS.json [RESULTS.json ...]
"""
import argparse
import json
from collections import defaultdict

from bench_out import sessions_of


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gap", type=float, default=4.0, help="a gap between visits longer than this (s) is a screen-off")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    # (manager, where in the session) -> [hot, warm, warm ms]
    rows = defaultdict(lambda: [0, 0, 0.0])
    for path in args.results:
        for run in json.load(open(path))["runs"]:
            visits = [v for v in run["visits"] if v["kind"] != "failed"]
            session = sessions_of([v["at_ms"] / 1000 for v in visits], args.gap)
            seen, in_session = set(), set()
            for v, s in zip(visits, session):
                key = (v["app"], s)
                if v["app"] in seen and v["kind"] in ("hot", "warm"):
                    if key in in_session:
                        where = "later in session"
                    else:
                        where = "first, in the one before" if (v["app"], s - 1) in in_session else "first, not the one before"
                    row = rows[run["manager"], where]
                    row[0 if v["kind"] == "hot" else 1] += 1
                    if v["kind"] == "warm":
                        row[2] += v["latency_ms"]
                seen.add(v["app"])
                in_session.add(key)
    print(f"{'manager':<40} {'returns':<26} {'hot':>5} {'warm':>5} {'warm s':>7}")
    for (manager, where), (hot, warm, ms) in sorted(rows.items()):
        print(f"{manager:<40} {where:<26} {hot:>5} {warm:>5} {ms / 1000:>7.2f}")


if __name__ == "__main__":
    main()
