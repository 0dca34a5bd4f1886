#!/usr/bin/env python3
"""Two variants of a preset run by run: for each bench's results.json that ran both, each
seed's run of A beside the same seed's run of B, their p50, p95 and whole wait (the sum of
every visit's latency), then in how many pairs A's was the shorter and the geometric mean of
A/B over the pairs (docs/results.md, "slow returns first measured again"). In a bench that
ran one of them under its own name only, plain `memorch` is the other (the preset as shipped
then, the variant's switch the other way).

    scripts/paired-runs.py --a 'memorch:compaction.slow_returns_give_first=true' \\
        --b 'memorch:compaction.slow_returns_give_first=false' RESULTS.json ...
"""
import argparse
import json
import math
import sys

from bench_out import quantile


def runs(path, a, b):
    """{(variant, seed): ((p50, p95, wait s), run)} of the bench's runs of A and B."""
    bench = json.load(open(path))["runs"]
    names = {r["manager"] for r in bench}
    # A variant the bench did not run under its own name, beside the other, is its plain
    # `memorch`.
    name = {"a": a, "b": b}
    for v, other in (("a", "b"), ("b", "a")):
        if name[v] not in names and name[other] in names:
            name[v] = "memorch"
    out = {}
    for r in bench:
        for variant in ("a", "b"):
            if r["manager"] == name[variant]:
                lat = [v["latency_ms"] for v in r["visits"] if v["kind"] != "failed"]
                out[(variant, r["seed"])] = ((quantile(lat, 0.5), quantile(lat, 0.95), sum(lat) / 1000), r)
    return out


def visits(run, since_ms=0):
    """The run's visits from `since_ms` on that did not fail."""
    return [v for v in run["visits"] if v["kind"] != "failed" and v["at_ms"] >= since_ms]


def detail(run):
    """hot/warm/cold, kills (app at s), file refaults, PSI full and the manager's CPU of a run."""
    kinds = "/".join(str(sum(v["kind"] == k for v in visits(run))) for k in ("hot", "warm", "cold"))
    kills = ", ".join(f"{k['app']} at {k['at_ms'] // 1000} s" for k in run["kills"]) or "none"
    return f"{kinds} kills {kills}; file refaults {run['refault_file_pages']}, PSI full {run['psi_full_s']:.2f} s, CPU {run['manager_cpu_s']:.1f} s"


def after(run, since_ms):
    """Visits, warm returns, relaunches and the wait (s) from `since_ms` to the end of the run."""
    vs = visits(run, since_ms)
    warm, cold = (sum(v["kind"] == k for v in vs) for k in ("warm", "cold"))
    return f"{len(vs)} visits, {warm} warm, {cold} relaunched, wait {sum(v['latency_ms'] for v in vs) / 1000:.2f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the manager whose figures are divided")
    ap.add_argument("--b", required=True, help="the manager divided by")
    ap.add_argument("--detail", action="store_true", help="each pair's visits by kind, kills, refaults, PSI, CPU, and what followed A's first kill")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    pairs = []
    for path in args.results:
        r = runs(path, args.a, args.b)
        for seed in sorted({s for _, s in r}):
            if ("a", seed) in r and ("b", seed) in r:
                pairs.append((path, seed, r[("a", seed)][0], r[("b", seed)][0], r[("a", seed)][1], r[("b", seed)][1]))
    if not pairs:
        sys.exit("no seed ran both managers in these benches: check --a and --b")
    for path, seed, x, y, ra, rb in pairs:
        print(f"{path} seed {seed}: A p50 {x[0]:.2f} p95 {x[1]:.0f} wait {x[2]:.2f} | B p50 {y[0]:.2f} p95 {y[1]:.0f} wait {y[2]:.2f}")
        if args.detail:
            print(f"  A {detail(ra)}\n  B {detail(rb)}")
            if ra["kills"]:
                t = ra["kills"][0]["at_ms"]
                print(f"  from A's first kill ({t // 1000} s) on: A {after(ra, t)} | B {after(rb, t)}")
    for i, what in enumerate(["p50", "p95", "wait"]):
        shorter = sum(x[i] < y[i] for _, _, x, y, _, _ in pairs)
        geo = math.exp(sum(math.log(x[i] / y[i]) for _, _, x, y, _, _ in pairs) / len(pairs))
        print(f"{what}: A shorter in {shorter} of {len(pairs)} pairs, A/B {geo:.3f} (geometric mean)")


if __name__ == "__main__":
    main()
