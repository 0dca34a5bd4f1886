#!/usr/bin/env python3
"""Whether a squeeze to a storage swap file frees the memory it moves at once, as a squeeze
to zram does (docs/actuators.md, "Facts learned on these machines"). One process in a v1
memory group below this process's own maps 128 MiB of app-like pages and pages them out
(`MADV_PAGEOUT`, what `process_madvise` does for the daemon's squeeze of a process), or with
`--limit` has its group's limit lowered by that much at swappiness 200 (the daemon's squeeze
of an app in a group of its own, `appgroup::shrink`), to a storage file, or to zram with
`--zram`. It prints the group's usage, its swap cache and the file's use right after,
then while it waits, then after the group is asked to reclaim what it still holds (the v1
limit lowered to usage − that, as `reclaim.rs` does).

    scripts/storage-squeeze-probe.py [--zram] [--limit]   # as root, ~10 s; refuses while swap is on

Machine-wide: it takes the tests' whole-run lock, refuses while any swap is on, and removes
its file (or resets zram), group and process on every exit path.
"""
import fcntl
import os
import subprocess
import sys
import time

from probe_group import own_memory_group, remove_group, write

SWAP_FILE = "/var/tmp/memorch-storage-squeeze-probe.swap"
WHOLE_RUN_LOCK = "/run/lock/memorch-test.lock"  # crates/linux/src/lock.rs
MIB = 128


def usage(group):
    return int(open(group + "/memory.usage_in_bytes").read())


def report(group, device, tag):
    stat = {l.split()[0]: int(l.split()[1]) for l in open(group + "/memory.stat")}
    held = [int(f.split()[3]) >> 10 for f in open("/proc/swaps").read().splitlines()[1:] if f.split()[0] == device]
    print(f"{tag:<44} usage {usage(group) >> 20:>4} MiB  rss {stat['rss'] >> 20:>4}  swap cache {stat.get('swapcached', 0) >> 20:>4}"
          f"  writeback {stat.get('writeback', 0) >> 20:>3}  swap {stat.get('swap', 0) >> 20:>4}  {device} holds {held[0] if held else 0} MiB", flush=True)


HOG = f"""
import mmap, os, sys
m = mmap.mmap(-1, {MIB} << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, {MIB} << 20, 4096):
    m[i:i + 4096] = os.urandom(1024) * 4
print('ready', flush=True)
sys.stdin.readline()
m.madvise(getattr(mmap, 'MADV_PAGEOUT', 21))  # 21 in the kernel's headers; older Pythons lack the name
print('out', flush=True)
sys.stdin.readline()
"""


def main():
    args = set(sys.argv[1:])
    if not args <= {"--zram", "--limit"}:
        sys.exit(__doc__)
    zram, by_limit = "--zram" in args, "--limit" in args
    if os.geteuid() != 0:
        sys.exit("run as root: swapon and memory groups are root's")
    lock = open(WHOLE_RUN_LOCK, "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    if open("/proc/swaps").read().count("\n") > 1:
        sys.exit("swap is on already: the probe would mix its pages with others'; run it with no swap on")
    device = "/dev/zram0" if zram else SWAP_FILE
    group = own_memory_group() + f"/memorch-storage-squeeze-probe-{os.getpid()}"
    # Checked before anything is made: the clean-up below resets zram0, which must be ours.
    if zram and int(open("/sys/block/zram0/disksize").read()) != 0:
        sys.exit("zram0 is set up already: not ours to use")
    hog = None
    try:
        if zram:
            write("/sys/block/zram0/comp_algorithm", "lz4")
            write("/sys/block/zram0/disksize", 2 * MIB << 20)
            subprocess.run(["mkswap", device], check=True, capture_output=True)
        else:
            subprocess.run(["fallocate", "-l", f"{2 * MIB}M", SWAP_FILE], check=True)
            os.chmod(SWAP_FILE, 0o600)
            subprocess.run(["mkswap", SWAP_FILE], check=True, capture_output=True)
        subprocess.run(["swapon", "-p", "10", device], check=True)
        os.mkdir(group)
        hog = subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=lambda: write(group + "/cgroup.procs", os.getpid()))
        if not hog.stdout.readline().startswith("ready"):
            raise RuntimeError("the page-filling process died before it was ready")
        report(group, device, f"{MIB} MiB mapped")
        before = usage(group)
        t = time.monotonic()
        if by_limit:
            write(group + "/memory.swappiness", 200)
            try:
                write(group + "/memory.limit_in_bytes", before - (MIB << 20))
            finally:
                write(group + "/memory.limit_in_bytes", -1)
        else:
            hog.stdin.write("\n")
            hog.stdin.flush()
            if not hog.stdout.readline().startswith("out"):
                raise RuntimeError("the page-filling process died paging out (MADV_PAGEOUT needs Linux 5.4+)")
        report(group, device, f"{'limit lowered' if by_limit else 'paged out'} ({(time.monotonic() - t) * 1000:.0f} ms)")
        for wait in (0.1, 0.5, 2.0):
            time.sleep(max(0.0, wait - (time.monotonic() - t)))
            report(group, device, f"{wait:.1f} s after")
        print(f"freed at once or soon after: {(before - usage(group)) >> 20} of {MIB} MiB", flush=True)
        left = usage(group) - (before - (MIB << 20))
        if left > 1 << 20:
            limit = open(group + "/memory.limit_in_bytes").read().strip()
            t = time.monotonic()
            try:
                write(group + "/memory.limit_in_bytes", usage(group) - left)
            finally:
                write(group + "/memory.limit_in_bytes", limit)
            report(group, device, f"group reclaimed {left >> 20} MiB ({(time.monotonic() - t) * 1000:.0f} ms)")
    finally:
        remove_group(group, [hog] if hog else [])
        subprocess.run(["swapoff", device], capture_output=True)
        if zram:
            write("/sys/block/zram0/reset", 1)
        elif os.path.exists(SWAP_FILE):
            os.remove(SWAP_FILE)


if __name__ == "__main__":
    main()
