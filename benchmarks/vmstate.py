"""benchmarks/vmstate.py - which of its two states this machine is in.

The development VM flips, minutes apart, between two states in which moving
cache lines between its two vCPUs costs about 4x more or less
(benchmarks/shm_p2.c's rd kernel with "app", 1 MiB: ~140 us or ~550 us per
call), and allreduce algorithms on shm rank differently in each (README,
the performance holes).  Benchmarks that want to compare like with like
probe before and after a measurement and keep only what ran in one state.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def tool():
    """benchmarks/shm_p2.c built into a temporary folder"""
    exe = os.path.join(tempfile.mkdtemp(prefix="cb-probe-"), "shm_p2")
    subprocess.run(["cc", "-O3", "-march=native", "-o", exe,
                    os.path.join(HERE, "shm_p2.c")], check=True)
    return exe


def probe(exe):
    """shm_p2's rd kernel with "app" at 1 MiB, one round: us per call"""
    out = subprocess.run([exe, "1", "app"], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == str(1 << 20):
            return float(f[1])
    sys.exit("shm_p2 printed no 1 MiB row")


def state(before, after, split):
    """"fast" or "slow" when both probes agree about @split us, else
    "mixed" (the state changed during the measurement)"""
    if max(before, after) < split:
        return "fast"
    if min(before, after) > split:
        return "slow"
    return "mixed"
