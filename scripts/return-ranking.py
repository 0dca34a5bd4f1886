#!/usr/bin/env python3
"""How well each estimate of "a return soon" ranks the apps that do come back, over the
visits of a bench's results.json (docs/results.md, "Returns judged by usage sessions").

At each visit, every other app seen so far is scored by each estimate, and labelled by
whether its next visit comes within H seconds. The figure is the area under the ROC curve
(AUC): the chance that an app which does come back scores above one which does not (0.5 is
no better than a coin). Sessions are told apart by the gaps between visits longer than GAP
seconds (the screen off between them).

Scored at every visit, not at the moments the engine takes memory (mostly launches, which
open sessions): a better AUC here did not make returns faster (the sessions estimate ranked
better and doubled memorch's p50 on realapps).

    scripts/return-ranking.py [--gap 4] docs/results/realapps-low-band/results.json ...
"""
import argparse
import json
from collections import defaultdict

HALF_S = 120.0  # memorch's recency half-life (ladder/mod.rs RETURN_HALF_MS)


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


def estimates(visits, gap_s):
    """At each visit, for each other app seen so far: its score by each estimate, and the
    seconds until its next visit (infinite if none)."""
    t = [v["at_ms"] / 1000 for v in visits]
    session = []
    for i in range(len(visits)):
        session.append(session[-1] + (t[i] - t[i - 1] > gap_s) if i else 1)
    for i, v in enumerate(visits):
        fronts, sessions, last = defaultdict(int), defaultdict(set), {}
        for j in range(i + 1):
            a = visits[j]["app"]
            fronts[a] += 1
            sessions[a].add(session[j])
            last[a] = t[j]
        most = max(fronts.values())
        for a in fronts:
            if a == v["app"]:
                continue
            recency = 1 / (1 + (t[i] - last[a]) / HALF_S)
            popularity = (fronts[a] + 1) / (most + 1)
            in_session = float(session[i] in sessions[a])
            share = len(sessions[a]) / session[i]
            nxt = next((t[j] for j in range(i + 1, len(visits)) if visits[j]["app"] == a), None)
            yield {
                "recency + fronts (memorch)": 0.5 * recency + 0.5 * popularity,
                "sessions (return_by_sessions)": 0.5 * in_session + 0.5 * share,
                "recency alone": recency,
            }, (nxt - t[i]) if nxt is not None else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gap", type=float, default=4.0, help="a gap between visits longer than this (s) is a screen-off")
    ap.add_argument("--manager", default="memorch", help="the runs whose visits to read (a prefix; every run of a seed has the same trace)")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    rows = []
    for f in args.results:
        for r in json.load(open(f))["runs"]:
            if r["manager"].startswith(args.manager):
                rows.extend(estimates(r["visits"], args.gap))
    names = list(rows[0][0]) if rows else []
    print(f"{len(rows)} (visit, app) pairs; AUC of each estimate for a return within H s")
    print(f"{'H s':>5} " + " ".join(f"{n:>30}" for n in names))
    for h in (10, 30, 60, 120):
        print(f"{h:>5} " + " ".join(f"{auc([(s[n], d < h) for s, d in rows]):>30.3f}" for n in names))


if __name__ == "__main__":
    main()
