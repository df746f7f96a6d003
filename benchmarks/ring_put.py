#!/usr/bin/env python3
"""benchmarks/ring_put.py - the ring allreduce with its one-sided allgather
(the default on shm) against the same ring sending messages
(COLLBENCH_RING_PUT=0), with rd beside both, in interleaved rounds.

  benchmarks/ring_put.py [--rounds 5] [--np 2] [--min 16K] [--max 8M]
                         [--touch] [--collbench build/collbench]

Per size: the median over rounds of each one's time (us), out of place and
in place, and the ratios.  A benchmark, not a test.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def size(s):
    m = {"K": 1 << 10, "M": 1 << 20}
    return int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s)


def run(cb, np_, lo, hi, algos, env, touch):
    cmd = [cb, "--np", str(np_), "--transport", "shm", "--algo", algos,
           "--format", "csv", "-b", str(lo), "-e", str(hi), "-n", "50",
           "-w", "5"] + (["--touch"] if touch else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, **env))
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}: {r.returncode}: {r.stderr}")
    return [(row["algo"], int(row["bytes"]), row["inplace"],
             float(row["time_us"]))
            for row in csv.DictReader(io.StringIO(r.stdout))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--min", default="16K")
    ap.add_argument("--max", default="8M")
    ap.add_argument("--touch", action="store_true")
    ap.add_argument("--collbench",
                    default=os.path.join(ROOT, "build", "collbench"))
    a = ap.parse_args()
    t = {}
    for _ in range(a.rounds):
        for name, algos, env in (("ring put", "ring,rd", {}),
                                 ("ring msgs", "ring",
                                  {"COLLBENCH_RING_PUT": "0"})):
            for algo, b, ip, us in run(a.collbench, a.np, size(a.min),
                                       size(a.max), algos, env, a.touch):
                key = name if algo == "ring" else algo
                t.setdefault((key, b, ip), []).append(us)
    sizes = sorted({b for (_, b, _) in t})
    for ip, label in (("0", "out of place"), ("1", "in place")):
        print(f"\n## allreduce float32, np {a.np}, shm, {label}"
              f"{', --touch' if a.touch else ''}: median us over "
              f"{a.rounds} rounds")
        print("| bytes | ring put | ring msgs | rd | msgs/put | rd/put |")
        print("|---:|---:|---:|---:|---:|---:|")
        for b in sizes:
            m = {k: statistics.median(t[(k, b, ip)])
                 for k in ("ring put", "ring msgs", "rd")}
            print(f"| {b} | {m['ring put']:.2f} | {m['ring msgs']:.2f} | "
                  f"{m['rd']:.2f} | {m['ring msgs'] / m['ring put']:.2f} | "
                  f"{m['rd'] / m['ring put']:.2f} |")


if __name__ == "__main__":
    main()
