#!/usr/bin/env python3
"""How well each estimate of "a return soon" ranks the apps that do come back, over the
visits of a bench's results.json (docs/results.md, "Returns judged by usage sessions").

At each visit, every other app seen so far is scored by each estimate, and labelled by
whether its next visit comes within H seconds. The figure is the area under the ROC curve
(AUC): the chance that an app which does come back scores above one which does not (0.5 is
no better than a coin). Sessions are told apart by the gaps between visits longer than GAP
seconds (the screen off between them).

With --at-compactions the apps are scored where memorch uses the estimate: at each of its
compactions (the `acted action=Compact` lines of each run's daemon log, `log_dir` in the
JSON, so the bench's own output directory must still be there; time 0 is the log's first
launch intent, the first visit). It then also prints the share of decisions whose
lowest-ranked app (where compression starts) came back soon, and per run the MiB memorch
compacted by how soon that app came back. Over every visit the sessions estimate ranked
better; at the compactions its lowest-ranked app came back as often, and in the bench its
compressions went more to apps back within 10 s: judge an estimate here, not over the trace.

    scripts/return-ranking.py [--gap 4] docs/results/realapps-low-band/results.json ...
    scripts/return-ranking.py --at-compactions bench-out/sessions/results.json
"""
import argparse
import datetime
import json
import re
import sys
from collections import defaultdict

from bench_out import sessions_of

HALF_S = 120.0  # memorch's recency half-life (ladder/mod.rs RETURN_HALF_MS)
HORIZONS = (10, 30, 60, 120)
COMPACT = re.compile(r'acted action=Compact \{ pid: \d+, app: "([^"]+)".*? bytes=(\d+)')


def auc(scored):
    """Rank-sum AUC of (score, label) pairs, ties shared."""
    scored = sorted(scored, key=lambda x: x[0])
    pos = sum(1 for _, l in scored if l)
    neg = len(scored) - pos
    if not pos or not neg:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(scored):
        j = i
        while j + 1 < len(scored) and scored[j + 1][0] == scored[i][0]:
            j += 1
        rank_sum += sum(1 for k in range(i, j + 1) if scored[k][1]) * ((i + j) / 2 + 1)
        i = j + 1
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def next_visit_in(visits, times, app, after_index, t):
    """Seconds from t to app's next visit after visits[after_index] (infinite if none)."""
    nxt = next((times[j] for j in range(after_index + 1, len(visits)) if visits[j]["app"] == app), None)
    return nxt - t if nxt is not None else float("inf")


def scores_at(visits, times, session, i, t):
    """At time t, with visits[i] the last one begun: for each other app seen so far, its
    score by each estimate and the seconds until its next visit."""
    fronts, sessions, last = defaultdict(int), defaultdict(set), {}
    for j in range(i + 1):
        a = visits[j]["app"]
        fronts[a] += 1
        sessions[a].add(session[j])
        last[a] = times[j]
    most = max(fronts.values())
    for a in fronts:
        if a == visits[i]["app"]:
            continue
        recency = 1 / (1 + (t - last[a]) / HALF_S)
        popularity = (fronts[a] + 1) / (most + 1)
        in_session = float(session[i] in sessions[a])
        share = len(sessions[a]) / session[i]
        yield {
            "recency + fronts (memorch)": 0.5 * recency + 0.5 * popularity,
            "sessions (return_by_sessions)": 0.5 * in_session + 0.5 * share,
            "recency alone": recency,
        }, next_visit_in(visits, times, a, i, t)


def compactions(log_path):
    """(seconds since the first launch intent, app, bytes) of each compaction in a daemon log."""
    t0, out = None, []
    try:
        log = open(log_path, encoding="utf-8", errors="replace")
    except OSError as e:
        sys.exit(f"{log_path}: {e.strerror}: --at-compactions reads each run's daemon log; run the bench again (the JSON in docs/results/ names logs of the machine it ran on)")
    for line in log:
        at = datetime.datetime.fromisoformat(line[:26]) if line[:4].isdigit() else None
        if t0 is None and at and "LaunchIntent" in line:
            t0 = at
        m = COMPACT.search(line)
        if m and at and t0:
            out.append(((at - t0).total_seconds(), m.group(1), int(m.group(2))))
    return out


def print_auc(groups):
    """groups: lists of (scores, seconds to next visit); the AUC of each estimate."""
    pairs = [p for g in groups for p in g]
    names = list(pairs[0][0]) if pairs else []
    print(f"{len(pairs)} (moment, app) pairs; AUC of each estimate for a return within H s")
    print(f"{'H s':>5} " + " ".join(f"{n:>30}" for n in names))
    for h in HORIZONS:
        print(f"{h:>5} " + " ".join(f"{auc([(s[n], d < h) for s, d in pairs]):>30.3f}" for n in names))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gap", type=float, default=4.0, help="a gap between visits longer than this (s) is a screen-off")
    ap.add_argument("--manager", default="memorch", help="the runs whose visits to read (a prefix; every run of a seed has the same trace)")
    ap.add_argument("--at-compactions", action="store_true", help="score at memorch's compactions, from each run's daemon log (runs of exactly --manager)")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    runs = [r for f in args.results for r in json.load(open(f))["runs"]]
    if not args.at_compactions:
        groups = []
        for r in runs:
            if r["manager"].startswith(args.manager):
                v = r["visits"]
                times = [x["at_ms"] / 1000 for x in v]
                session = sessions_of(times, args.gap)
                groups.append([p for i in range(len(v)) for p in scores_at(v, times, session, i, times[i])])
        print_auc(groups)
        return
    groups, taken = [], []
    buckets = ("<10 s", "<30 s", "<60 s", "<120 s", "later", "never")
    for r in runs:
        if r["manager"] != args.manager:
            continue
        v = r["visits"]
        times = [x["at_ms"] / 1000 for x in v]
        session = sessions_of(times, args.gap)
        decisions, mib = [], dict.fromkeys(buckets, 0.0)
        for t, app, nbytes in compactions(f"{r['log_dir']}/memorch.log"):
            i = max((j for j in range(len(v)) if times[j] <= t), default=None)
            if i is None:
                continue
            decisions.append(list(scores_at(v, times, session, i, t)))
            d = next_visit_in(v, times, app, i, t)
            mib[next((b for b, h in zip(buckets, HORIZONS) if d < h), "never" if d == float("inf") else "later")] += nbytes / 2**20
        groups.append([p for dec in decisions for p in dec])
        taken.append((r["seed"], decisions, mib))
    names = print_auc(groups)
    print("\nshare of compactions whose lowest-ranked app came back within 10 / 30 / 60 s")
    for n in names:
        mine = [min(dec, key=lambda p: p[0][n]) for _, decs, _ in taken for dec in decs if dec]
        print(f"{n:>30} " + " / ".join(f"{sum(1 for _, d in mine if d < h) / max(1, len(mine)):.2f}" for h in HORIZONS[:3]))
    print(f"\nMiB compacted, by how soon that app came back ({args.manager})")
    print(f"{'seed':>5} " + " ".join(f"{b:>7}" for b in buckets))
    for seed, _, mib in taken:
        print(f"{seed:>5} " + " ".join(f"{mib[b]:>7.0f}" for b in buckets))


if __name__ == "__main__":
    main()
