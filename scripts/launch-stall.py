#!/usr/bin/env python3
"""Where each launch's time went, from the launched app's own memory group (docs/results.md,
"Where a first launch's time goes under pressure").

memorch's bench starts each app of a `memorch` manager in a group of its own (`app_groups`,
DEVICE/app-N), and the kernel keeps pressure-stall figures for every v2 group. Sampled
every 50 ms while a bench runs, they split a launch's wall time into the app's own CPU
(`cpu.stat` usage: its threads, and the reclaim it does for itself), its wait for a CPU
(`cpu.pressure` some), its memory stall (`memory.pressure` some/full: reclaim it did because
the device was at its limit) and its I/O stall (`io.pressure` some), beside the daemon's CPU
in the same window. Peers' apps have no group of their own, so only memorch's runs show.

    scripts/launch-stall.py watch OUT.tsv &          # as root, while `memorch bench ...` runs
    scripts/launch-stall.py split OUT.tsv BENCH/results.json
    scripts/launch-stall.py split docs/results/realapps-launch-stall/samples.tsv.xz docs/results/realapps-launch-stall/results.json

`watch` runs until killed. `split` finds each device's run by its manager and order (run the
watch for one bench only) and matches the app groups of a device, in the order they
appeared, to the run's cold visits (launches and relaunches).
"""
import bisect
import glob
import json
import lzma
import os
import sys
import time

# The bench's devices (`memorch-bench-*`) sit below the cgroup the bench runs in, in the v2
# hierarchy (`/sys/fs/cgroup/unified` on a hybrid machine, `/sys/fs/cgroup` on a v2 one).
DEVICE_PATTERNS = [root + "/*" * depth + "/memorch-bench-*" for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup") for depth in range(4)]


def first_total(path, kind):
    """`total=` of the `some` or `full` line of a pressure file, µs."""
    try:
        for line in open(path):
            if line.startswith(kind):
                return int(line.rsplit("total=", 1)[1])
    except OSError:
        pass
    return None


def usage_usec(path):
    try:
        for line in open(path):
            if line.startswith("usage_usec"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def daemon_ticks(cache, now):
    """The daemon's utime + stime in clock ticks (its pid looked up once a second), -1 if none."""
    if cache[0] is None or now - cache[1] > 1:
        cache[:] = [None, now]
        for comm in glob.glob("/proc/[0-9]*/comm"):
            try:
                if open(comm).read().strip() == "memorchd":
                    cache[0] = comm[:-4]
            except OSError:
                pass
    if cache[0] is None:
        return -1
    try:
        fields = open(cache[0] + "stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        cache[0] = None
        return -1


def watch(out_path):
    out = open(out_path, "w")
    seen, daemon, devices, looked = set(), [None, 0.0], [], 0.0
    while True:
        now = time.time()
        if now - looked > 1:
            # Looked for again once a second: a bench makes a device a run.
            devices = sorted({os.path.realpath(d) for pattern in DEVICE_PATTERNS for d in glob.glob(pattern) if os.path.exists(d + "/cgroup.controllers")})
            looked = now
        for d in (g for dev in devices for g in glob.glob(dev + "/app-*")):
            if d not in seen:
                seen.add(d)
                out.write(f"G\t{now:.3f}\t{d}\n")
            vals = [usage_usec(d + "/cpu.stat"), first_total(d + "/cpu.pressure", "some"), first_total(d + "/memory.pressure", "some"),
                    first_total(d + "/memory.pressure", "full"), first_total(d + "/io.pressure", "some")]
            if None not in vals:
                out.write(f"S\t{now:.3f}\t{d}\t" + "\t".join(map(str, vals)) + "\n")
        out.write(f"D\t{now:.3f}\t{daemon_ticks(daemon, now)}\n")
        out.flush()
        time.sleep(0.05)


def split(tsv, results):
    first_seen, samples, daemon = {}, {}, []
    # The samples kept in docs/results/ are xz-compressed.
    for line in (lzma.open(tsv, "rt") if tsv.endswith(".xz") else open(tsv)):
        f = line.rstrip("\n").split("\t")
        if f[0] == "G":
            first_seen[f[2]] = float(f[1])
        elif f[0] == "S" and "None" not in f:
            samples.setdefault(f[2], []).append((float(f[1]), [int(x) for x in f[3:]]))
        elif f[0] == "D":
            daemon.append((float(f[1]), [int(f[2])]))

    def at(series, t):
        """The values of the first sample at or after `t` (the last one if none)."""
        i = bisect.bisect_left(series, t, key=lambda sample: sample[0])
        return series[min(i, len(series) - 1)][1]

    # A device is `memorch-bench-MANAGER-PID-N` (MANAGER without its `:` settings; N counts
    # up in the bench's process): the k-th device of a MANAGER is its k-th run in the results.
    runs = json.load(open(results))["runs"]
    by_manager = {}
    for dev in {g.rsplit("/", 1)[0] for g in first_seen}:
        name, _pid, n = dev.rsplit("/", 1)[1].removeprefix("memorch-bench-").rsplit("-", 2)
        by_manager.setdefault(name, []).append((int(n), dev))
    devices = {}
    for name, devs in by_manager.items():
        places = [i for i, r in enumerate(runs) if r["manager"].split(":")[0] == name]
        devices.update(zip(places, (dev for _, dev in sorted(devs))))
    totals = {}
    print(f"{'manager':40} {'seed':>4} {'app':10} {'ms':>6} {'own cpu':>7} {'cpu wait':>8} {'mem some':>8} {'mem full':>8} {'io some':>7} {'daemon cpu':>10}")
    for i, dev in sorted(devices.items()):
        run = runs[i]
        colds = [v for v in run["visits"] if v["kind"] == "cold"]
        groups = sorted((g for g in first_seen if g.startswith(dev + "/") and g in samples), key=first_seen.get)
        for v, g in zip(colds, groups):
            t0 = first_seen[g]
            t1 = t0 + v["latency_ms"] / 1000
            d = [(y - x) / 1000 for x, y in zip(at(samples[g], t0), at(samples[g], t1))]
            dcpu = (at(daemon, t1)[0] - at(daemon, t0)[0]) * 1000 / os.sysconf("SC_CLK_TCK") if daemon else 0
            print(f"{run['manager']:40} {run['seed']:4} {v['app']:10} {v['latency_ms']:6.0f} {d[0]:7.0f} {d[1]:8.0f} {d[2]:8.0f} {d[3]:8.0f} {d[4]:7.0f} {dcpu:10.0f}")
            t = totals.setdefault(run["manager"], [0] * 7)
            for i, x in enumerate([1, v["latency_ms"], *d[:3], d[4], dcpu]):
                t[i] += x
    print("\nover every launch: the share of the launches' wall time each took, and the daemon's CPU in those windows")
    for manager, (n, wall, cpu, wait, mem, io, daemon_ms) in totals.items():
        wall_s = wall / 1000
        print(f"{manager:40} {n:3} launches {wall_s:6.1f} s: own cpu {cpu / wall:4.0%}, cpu wait {wait / wall:4.0%}, memory stall {mem / wall:4.0%}, io stall {io / wall:4.0%}; daemon cpu {daemon_ms / 1000:5.1f} s")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "watch":
        watch(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
