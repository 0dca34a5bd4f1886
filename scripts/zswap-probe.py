#!/usr/bin/env python3
"""Whether zswap could stand in for the zram writeback this kernel lacks (docs/actuators.md,
"Facts learned on these machines"): zswap in front of a storage swap file, a v1 memory group
of 256 MiB below this process's own, and 450 MiB of app-like pages (half random, half
repeated text) put into it by two processes. It prints, after each step, the group's usage
and swap, the file's use, and the kernel's zswap counters: whether the compressed pool is
charged to the group (as zram's is not) and whether zswap wrote any page back to the file
(`zswpwb`).

    scripts/zswap-probe.py --until-reboot   # as root, ~10 s; nothing else may be swapping

**It leaves one change until the next reboot**: once zswap has been enabled, the kernel
reads large anonymous folios back from swap a page at a time until the machine reboots
(mm/memory.c `alloc_swap_folio`: `!zswap_never_enabled()` falls back to small pages), so
the `folios` switch loses its gain, and `folios_live`'s test can then check only that the
heap comes back a page a fault (`folios::whole_swapin_blocked` tells that state). Hence the flag. Everything else is machine-wide too: it
refuses while any swap is on, and puts zswap's parameters back, removes its file and group
and kills its processes on every exit path.
"""
import os
import subprocess
import sys
import time

from probe_group import own_memory_group, remove_group, write

ZSWAP = "/sys/module/zswap/parameters/"
PARAMS = ["enabled", "compressor", "max_pool_percent", "shrinker_enabled"]
SWAP_FILE = "/var/tmp/memorch-zswap-probe.swap"
GROUP_LIMIT_MIB = 256


def counters():
    out = {k: int(v) for k, v in (l.split() for l in open("/proc/vmstat")) if k in ("zswpout", "zswpin", "zswpwb")}
    for line in open("/proc/meminfo"):
        key, value = line.split(":")
        if key in ("Zswap", "Zswapped"):
            out[key + " MiB"] = int(value.split()[0]) >> 10
    return out


def report(group, tag):
    usage = int(open(group + "/memory.usage_in_bytes").read()) >> 20
    stat = {l.split()[0]: int(l.split()[1]) for l in open(group + "/memory.stat")}
    used = [int(f.split()[3]) >> 10 for f in open("/proc/swaps").read().splitlines()[1:] if f.split()[0] == SWAP_FILE]
    print(f"{tag}: group usage {usage} MiB (rss {stat.get('rss', 0) >> 20}, swap {stat.get('swap', 0) >> 20}); file holds {used[0] if used else 0} MiB; {counters()}", flush=True)


HOG = """
import os, sys
pages = [bytearray(os.urandom(1024) + b'record %08d ' % i * 150)[:4096] for i in range({mib} * 256)]
print('ready', flush=True)
sys.stdin.readline()
print('touched', sum(p[0] for p in pages), flush=True)
sys.stdin.readline()
"""


def main():
    if sys.argv[1:] != ["--until-reboot"]:
        sys.exit(__doc__)
    if os.geteuid() != 0:
        sys.exit("run as root: zswap's parameters and swapon are root's")
    if open("/proc/swaps").read().count("\n") > 1:
        sys.exit("swap is on already: the probe would mix its pages with others'; run it with no swap on")
    group = own_memory_group() + f"/memorch-zswap-probe-{os.getpid()}"
    saved = {p: open(ZSWAP + p).read().strip() for p in PARAMS}
    procs = []

    def hog(mib):
        p = subprocess.Popen([sys.executable, "-c", HOG.format(mib=mib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=lambda: write(group + "/cgroup.procs", os.getpid()))
        procs.append(p)
        if not p.stdout.readline().startswith("ready"):
            raise RuntimeError("a page-filling process died before it was ready")
        return p

    try:
        subprocess.run(["fallocate", "-l", "600M", SWAP_FILE], check=True)
        os.chmod(SWAP_FILE, 0o600)
        subprocess.run(["mkswap", SWAP_FILE], check=True, capture_output=True)
        subprocess.run(["swapon", "-p", "10", SWAP_FILE], check=True)
        os.mkdir(group)
        write(group + "/memory.limit_in_bytes", GROUP_LIMIT_MIB << 20)
        # lzo: the kernel's crypto API here has no lz4 (zram has its own lz4 backend);
        # once zswap is loaded, asking for lz4 is refused (ENOENT, "compressor lz4 not
        # available" in the kernel's log).
        write(ZSWAP + "compressor", "lzo")
        write(ZSWAP + "max_pool_percent", 1)
        write(ZSWAP + "shrinker_enabled", "Y")
        write(ZSWAP + "enabled", "Y")
        report(group, "start")
        t = time.monotonic()
        first = hog(300)
        report(group, f"300 MiB in the {GROUP_LIMIT_MIB} MiB group ({time.monotonic() - t:.1f} s)")
        t = time.monotonic()
        hog(150)
        report(group, f"150 MiB more ({time.monotonic() - t:.1f} s)")
        t = time.monotonic()
        first.stdin.write("\n")
        first.stdin.flush()
        first.stdout.readline()
        report(group, f"the first 300 MiB read again in {time.monotonic() - t:.2f} s")
    finally:
        remove_group(group, procs)
        subprocess.run(["swapoff", SWAP_FILE], capture_output=True)
        if os.path.exists(SWAP_FILE):
            os.remove(SWAP_FILE)
        for p in ["enabled", "shrinker_enabled", "max_pool_percent", "compressor"]:
            write(ZSWAP + p, saved[p])
        print("zswap put back:", {p: open(ZSWAP + p).read().strip() for p in PARAMS})


if __name__ == "__main__":
    main()
