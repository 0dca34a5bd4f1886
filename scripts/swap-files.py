#!/usr/bin/env python3
"""What the storage swap files above zram took, run by run (docs/results.md, "Files above
zram removed sooner").

A file memorch makes for an unlikely app's squeeze (`swap.cold_to_storage_below`) is enabled
above zram in priority, so the kernel fills it before zram. Once some of its pages have come
back (its app returned, or went) its free slots take the next pages swapped out, any app's,
ahead of zram: the pages of a likely app squeezed to zram, or reclaimed by the kernel, land
on storage and its next return reads them there. `/proc/swaps` shows it as a file whose use
falls and then grows again; this counts that growth.

    scripts/swap-files.py record SAMPLES.txt &      # beside a bench: /proc/swaps every 200 ms
    memorch bench --scenario realapps ... --out OUT
    kill %1
    scripts/swap-files.py report SAMPLES.txt OUT   # a row per run, named as OUT/logs/ names them

A run is one daemon: its files sit in its own work directory (OUT/work/daemon-...-N, N the
run's index), named as OUT/logs/ names the run. The bench's own storage files below zram are
counted apart (they fill only once zram is full, as the kernel's order has them).
"""
import collections
import os
import sys
import time

SAMPLE_S = 0.2


def record(path):
    t0 = time.monotonic()
    with open(path, "w") as out:
        while True:
            with open("/proc/swaps") as f:
                lines = f.read().splitlines()[1:]
            t = time.monotonic() - t0
            for line in lines:
                name, kind, size, used, prio = line.split()[:5]
                out.write(f"{t:.2f} {name} {kind} {size} {used} {prio}\n")
            out.flush()
            time.sleep(SAMPLE_S)


def report(path, out_dir):
    # A file removed and a new one made under its name are two files: a file's samples are
    # one series while it is in every sample of /proc/swaps from its first.
    series = collections.defaultdict(list)  # (file, which) -> [(t, size KiB, used KiB)]
    prio = {}
    zram_prio = None
    times, seen_at, which = [], {}, collections.Counter()
    for line in open(path):
        t, name, kind, size, used, p = line.split()
        if not times or times[-1] != t:
            times.append(t)
        if kind == "file":
            if seen_at.get(name) not in (len(times) - 2, len(times) - 1):
                which[name] += 1
            seen_at[name] = len(times) - 1
            key = (name, which[name])
            series[key].append((float(t), int(size), int(used)))
            prio[key] = int(p)
        else:
            zram_prio = int(p) if zram_prio is None else max(zram_prio, int(p))
    runs = collections.OrderedDict()  # the daemon's work directory -> its files
    for name in sorted(series, key=lambda n: series[n][0][0]):
        d = name[0].split("/swap/")[0]
        runs.setdefault(d, []).append(name)
    labels = sorted(x for x in os.listdir(os.path.join(out_dir, "logs")) if x[:2].isdigit()) if out_dir else []
    print("# run, files above zram, MiB they took after their use had fallen (another app's pages), most they held at once, MiB in the files below zram at most")
    for d, files in runs.items():
        above = [f for f in files if zram_prio is not None and prio[f] > zram_prio]
        below = [f for f in files if f not in above]
        regrown = 0
        for f in above:
            prev, fell = 0, False
            for _, _, used in series[f]:
                if fell and used > prev:
                    regrown += used - prev
                fell = fell or used < prev
                prev = used
        at_once = collections.Counter()
        for f in above:
            for t, _, used in series[f]:
                at_once[t] += used  # one sample of /proc/swaps, every line of it at one t
        below_max = max((u for f in below for _, _, u in series[f]), default=0)
        # The work directory ends in the run's index (daemon-...-PID-N): a run that made no
        # file leaves no gap in the names.
        n = d.rsplit("-", 1)[-1]
        label = labels[int(n)] if n.isdigit() and int(n) < len(labels) else os.path.basename(d)
        print(f"{label}: {len(above)} files, {regrown >> 10} MiB after a fall, {max(at_once.values(), default=0) >> 10} MiB at most, {below_max >> 10} MiB below zram")


def main(argv):
    if len(argv) >= 2 and argv[0] == "record":
        try:
            record(argv[1])
        except KeyboardInterrupt:
            pass
    elif len(argv) in (2, 3) and argv[0] == "report":
        report(argv[1], argv[2] if len(argv) == 3 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
