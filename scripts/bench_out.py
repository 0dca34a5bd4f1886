"""What the analysis scripts read of a bench's --out: its runs' daemon debug logs and first
launches, and quantiles as the bench computes them (imported by scripts/launch-waits.py,
launch-room.py, p95-with-room.py, first-launch-room.py, bars-odds.py, paired-runs.py,
p50-crossings.py, p50-floor.py, return-ranking.py and returns-by-session.py)."""
import datetime
import math
import os
import statistics
import sys


def stamp_ms(line):
    """The time of a log line (its RFC 3339 stamp), in ms."""
    return datetime.datetime.fromisoformat(line[:26]).timestamp() * 1000


def run_logs(out):
    """[(run's log directory name, its memorch.log)] in run order (OUT/logs/NN-MANAGER/), the
    runs whose daemon wrote one; exits naming the directory if OUT has none."""
    logs = os.path.join(out, "logs")
    if not os.path.isdir(logs):
        sys.exit(f"{logs}: no such directory (a bench's --out, run with MEMORCH_LOG=debug)")
    paths = [(run, os.path.join(logs, run, "memorch.log")) for run in sorted(os.listdir(logs))]
    return [(run, log) for run, log in paths if os.path.exists(log)]


def first_launches(run):
    """{app: ms} of each app's first visit in a run of results.json (failed visits left out)."""
    first = {}
    for v in run["visits"]:
        if v["kind"] != "failed" and v["app"] not in first:
            first[v["app"]] = v["latency_ms"]
    return first


def hot_medians(runs):
    """{app: median ms of its hot returns over all the runs of results.json}: how long the
    program takes to answer when nothing has to be read back."""
    hot = {}
    for r in runs:
        for v in r["visits"]:
            if v["kind"] == "hot":
                hot.setdefault(v["app"], []).append(v["latency_ms"])
    return {a: statistics.median(l) for a, l in hot.items()}


def quantile(values, p):
    """Nearest rank, as `memorch report` takes it."""
    v = sorted(values)
    return v[min(max(math.ceil(p * len(v)), 1), len(v)) - 1]


def kth_slowest(latencies):
    """p95 as the bench reports it: the value at rank ceil(0.95 n) of n, and which slowest it is."""
    lat = sorted(latencies)
    rank = math.ceil(0.95 * len(lat)) - 1
    return lat[rank], len(lat) - rank


def sessions_of(times, gap_s):
    """Each visit's session number (from 1), from the visits' start times (s): a gap longer
    than gap_s starts the next (the screen off between sessions)."""
    out = []
    for i, t in enumerate(times):
        out.append(out[-1] + (t - times[i - 1] > gap_s) if i else 1)
    return out
