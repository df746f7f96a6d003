#!/usr/bin/env python3
"""benchmarks/ring_put.py - the ring allreduce with its one-sided allgather
(the default on shm) against the same ring sending messages
(COLLBENCH_RING_PUT=0), with rd beside both, in interleaved rounds.

  benchmarks/ring_put.py [--rounds 5] [--np 2] [--min 16K] [--max 8M]
                         [--touch] [--probe [US]] [--collbench build/collbench]

Per size: the median over rounds of each one's time (us), out of place and
in place, and the ratios.  A benchmark, not a test.

--probe: the machine's state around each round (benchmarks/vmstate.py): a
round whose two probes are both below US (default 300) counts as "fast",
both above as "slow", else "mixed" (dropped); each state gets its own
table.

Installs nothing: needs a collbench build and, with --probe, a C compiler.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

import vmstate

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


def table(t, sizes, np_, touch, label_state, rounds):
    for ip, label in (("0", "out of place"), ("1", "in place")):
        print(f"\n## allreduce float32, np {np_}, shm, {label}"
              f"{', --touch' if touch else ''}{label_state}: median us over "
              f"{rounds} rounds")
        print("| bytes | ring put | ring msgs | rd | msgs/put | rd/put |")
        print("|---:|---:|---:|---:|---:|---:|")
        for b in sizes:
            m = {k: statistics.median(t[(k, b, ip)])
                 for k in ("ring put", "ring msgs", "rd")}
            print(f"| {b} | {m['ring put']:.2f} | {m['ring msgs']:.2f} | "
                  f"{m['rd']:.2f} | {m['ring msgs'] / m['ring put']:.2f} | "
                  f"{m['rd'] / m['ring put']:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--min", default="16K")
    ap.add_argument("--max", default="8M")
    ap.add_argument("--touch", action="store_true")
    ap.add_argument("--probe", type=float, nargs="?", const=300.0)
    ap.add_argument("--collbench",
                    default=os.path.join(ROOT, "build", "collbench"))
    a = ap.parse_args()
    if a.probe is not None and a.probe <= 0:
        sys.exit(f"ring_put.py: --probe {a.probe:g}: not a positive time (us)")
    exe = vmstate.tool() if a.probe is not None else None
    t = {}  # state -> {(name, bytes, inplace): [us]}
    n = {}
    for r in range(a.rounds):
        p1 = vmstate.probe(exe) if exe else 0
        got = {}
        for name, algos, env in (("ring put", "ring,rd", {}),
                                 ("ring msgs", "ring",
                                  {"COLLBENCH_RING_PUT": "0"})):
            for algo, b, ip, us in run(a.collbench, a.np, size(a.min),
                                       size(a.max), algos, env, a.touch):
                got[(name if algo == "ring" else algo, b, ip)] = us
        state = ""
        if exe:
            p2 = vmstate.probe(exe)
            state = vmstate.state(p1, p2, a.probe)
            print(f"# round {r + 1}: probe {p1:.0f} / {p2:.0f} us: {state}",
                  file=sys.stderr, flush=True)
        n[state] = n.get(state, 0) + 1
        for k, us in got.items():
            t.setdefault(state, {}).setdefault(k, []).append(us)
    for state in ("", "fast", "slow"):
        if state in t:
            sizes = sorted({b for (_, b, _) in t[state]})
            table(t[state], sizes, a.np, a.touch,
                  f", {state} state" if state else "", n[state])


if __name__ == "__main__":
    main()
