#!/usr/bin/env python3
"""benchmarks/straggler.py - the trade-off of the asynchronous parameter
server: with one slow worker, a synchronous step (ps, ring) takes as long
as the straggler's, while ps-async's other workers keep their own pace and
pay in staleness instead.

  benchmarks/straggler.py [--rounds 5] [--np 3] [--transport shm]
                          [--size 64K] [--delays 0,500,2000] [--iters 200]
                          [--ps-servers 0]

Each round runs, for each delay D, collbench --algo ps,ps-async,ring
--straggler 1:D (no straggler for D = 0), and prints per algorithm and
delay the medians over rounds of: the median step time of the workers
(p50), the mean step time, pushes per second per worker and staleness
(p50/p99/max).  float32 sum, out of place.  A benchmark, not a test.

Installs nothing: needs a collbench build (default build/collbench).
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=3)
    ap.add_argument("--transport", default="shm")
    ap.add_argument("--size", default="64K")
    ap.add_argument("--delays", default="0,500,2000")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--ps-servers", type=int, default=0)
    ap.add_argument("--collbench",
                    default=os.path.join(ROOT, "build", "collbench"))
    a = ap.parse_args()
    delays = [int(d) for d in a.delays.split(",")]
    res = {}  # (algo, delay) -> {metric: [values]}
    for rnd in range(a.rounds):
        for d in delays:
            cmd = [a.collbench, "--np", str(a.np), "--transport", a.transport,
                   "--algo", "ps,ps-async,ring", "--format", "csv",
                   "-b", a.size, "-e", a.size, "-n", str(a.iters), "-w", "5",
                   "--ps-servers", str(a.ps_servers), "--timeout", "120"]
            if d:
                cmd += ["--straggler", f"1:{d}"]
            r = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=1800)
            if r.returncode:
                sys.exit(f"{' '.join(cmd)}: {r.returncode}: {r.stderr}")
            for row in csv.DictReader(io.StringIO(r.stdout)):
                if row["inplace"] != "0":
                    continue
                m = res.setdefault((row["algo"], d), {})
                for k in ("time_p50_us", "time_us", "push_per_s",
                          "staleness_p50", "staleness_p99", "staleness_max"):
                    if row[k] != "":
                        m.setdefault(k, []).append(float(row[k]))
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    print(f"np {a.np}, {a.transport}, {a.size}, --ps-servers {a.ps_servers}, "
          f"rank 1 delayed D us per step; medians of {a.rounds} rounds")
    print("| algo | D (us) | step p50 (us) | step mean (us) | pushes/s per "
          "worker | staleness p50/p99/max |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for algo in ("ps", "ps-async", "ring"):
        for d in delays:
            m = res.get((algo, d))
            if not m:
                continue
            med = {k: statistics.median(v) for k, v in m.items()}
            stale = "-" if "staleness_p50" not in med else \
                f"{med['staleness_p50']:.0f}/{med['staleness_p99']:.0f}/" \
                f"{med['staleness_max']:.0f}"
            push = f"{med['push_per_s']:.0f}" if "push_per_s" in med else "-"
            print(f"| {algo} | {d} | {med['time_p50_us']:.1f} | "
                  f"{med['time_us']:.1f} | {push} | {stale} |")


if __name__ == "__main__":
    main()
