"""What the machine probes share (imported by scripts/zswap-probe.py and
storage-squeeze-probe.py): the v1 memory group this process runs in, below which a probe
makes its own and removes, and writing a control file."""
import os
import sys
import time


def own_memory_group():
    """This process's v1 memory group's directory; exits when it has none."""
    for line in open("/proc/self/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if "memory" in controllers.split(","):
            return "/sys/fs/cgroup/memory" + path.rstrip("/")
    sys.exit("no v1 memory group for this process: the probe measures v1 charging")


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def remove_group(group, procs):
    """Kill the probe's processes and remove its group once their charges have left it
    (rmdir fails with EBUSY until then; tried for up to 5 s)."""
    for p in procs:
        p.kill()
        p.wait()
    if os.path.isdir(group):
        for _ in range(100):
            try:
                os.rmdir(group)
                return
            except OSError:
                time.sleep(0.05)
