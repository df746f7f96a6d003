#!/usr/bin/env python3
"""benchmarks/anchors.py - collbench beside Open MPI (and Gloo), same machine,
same session, interleaved rounds, medians, ratios.

  benchmarks/anchors.py [--rounds 5] [--np 2] [--transports shm,tcp]
                        [--min 8] [--max 64M] [--gloo]

--gloo adds PyTorch's Gloo allreduce over loopback TCP (the anchor
../shared/anchors/gloo_allreduce.py; Debian's python3-torch) to the tcp
table, at the powers of 4 from 1 MiB, in the same rounds.

For each round it runs, back to back, `collbench --transport T` and the
anchor `../shared/anchors/run-mpi.sh NP sm|tcp` (Open MPI's own collectives,
timed like nccl-tests), with the same iteration counts per size as the
anchor (1000 up to 64 KiB, 100 up to 4 MiB, 20 above).  It prints, per size,
the median over rounds of each tool's busbw (or time for small sizes) and the
ratio collbench / Open MPI.  float32 sum allreduce, as the anchor.
--coll picks the collective (allreduce, allgather, reduce_scatter, broadcast,
reduce: those the anchor has) and --algo collbench's algorithm (default
auto).  Long: this is a benchmark, not a test.
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
# ../shared/anchors beside the repository; COLLBENCH_ANCHORS elsewhere (a
# worktree)
ANCHORS = os.environ.get("COLLBENCH_ANCHORS",
                         os.path.join(ROOT, "..", "shared", "anchors"))


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


MPI_NAME = {"broadcast": "bcast"}


def collbench(cb, np_, tr, lo, hi, coll="allreduce", algo="auto"):
    """{bytes: (time_us, busbw)} for out-of-place rows."""
    out = {}
    for a, b, iters in ((lo, min(hi, 1 << 16), 1000), (max(lo, 1 << 17), min(hi, 1 << 22), 100),
                        (max(lo, 1 << 23), hi, 20)):
        if a > b:
            continue
        r = subprocess.run([cb, "--np", str(np_), "--transport", tr, "--format", "csv",
                            "--coll", coll, "--algo", algo,
                            "-b", str(a), "-e", str(b), "-n", str(iters), "-w", str(iters // 10 + 1)],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            sys.exit(f"collbench failed ({r.returncode}): {r.stderr.strip()}")
        for row in csv.DictReader(io.StringIO(r.stdout)):
            if row["inplace"] == "0":
                out[int(row["bytes"])] = (float(row["time_us"]), float(row["busbw_gbps"]))
    return out


def openmpi(np_, tr, lo, hi, coll="allreduce"):
    r = subprocess.run([os.path.join(ANCHORS, "run-mpi.sh"), str(np_), "sm" if tr == "shm" else "tcp",
                        "-c", MPI_NAME.get(coll, coll), "-b", str(lo), "-e", str(hi)],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"run-mpi.sh failed: {r.stderr.strip()[-500:]}")
    return {int(row["bytes"]): (float(row["avg_us"]), float(row["busbw_gbps"]))
            for row in csv.DictReader(io.StringIO(r.stdout))}


def gloo(np_, hi):
    r = subprocess.run(["/usr/bin/python3", os.path.join(ANCHORS, "gloo_allreduce.py"),
                        "--world-sizes", str(np_), "--min-bytes", str(1 << 20),
                        "--max-bytes", str(hi), "--step", "4", "--no-header"],
                       capture_output=True, text=True, timeout=900)
    out = {}
    for line in r.stdout.splitlines():
        f = line.split(",")
        if len(f) >= 6 and f[0] == "gloo":
            b, t = int(f[4]), float(f[5])
            out[b] = (t, b / (t * 1e3) * 2 * (np_ - 1) / np_)
    return out


def human(n):
    for unit, k in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--min", default="8")
    ap.add_argument("--max", default="64M")
    ap.add_argument("--collbench", default=os.path.join(ROOT, "build", "collbench"))
    ap.add_argument("--gloo", action="store_true")
    ap.add_argument("--coll", default="allreduce",
                    help="allreduce, allgather, reduce_scatter, broadcast or reduce")
    ap.add_argument("--algo", default="auto", help="collbench's --algo")
    args = ap.parse_args()
    lo, hi = parse_size(args.min), parse_size(args.max)
    for tr in args.transports.split(","):
        cbr, mpr, glr = [], [], []
        for i in range(args.rounds):
            print(f"# {tr} round {i + 1}/{args.rounds}", file=sys.stderr, flush=True)
            cbr.append(collbench(args.collbench, args.np, tr, lo, hi, args.coll, args.algo))
            mpr.append(openmpi(args.np, tr, lo, hi, args.coll))
            if args.gloo and tr == "tcp":
                glr.append(gloo(args.np, hi))
        print(f"\n## {args.coll} float32 sum, np={args.np}, collbench --transport {tr} --algo {args.algo} vs Open MPI "
              f"{'sm' if tr == 'shm' else 'tcp'}; medians of {args.rounds} interleaved rounds")
        print(f"{'bytes':>8} {'cb time_us':>11} {'ompi time_us':>12} {'cb busbw':>9} {'ompi busbw':>10} "
              f"{'cb/ompi bw':>10}")
        for b in sorted(set(cbr[0]) & set(mpr[0])):
            ct = statistics.median(r[b][0] for r in cbr if b in r)
            mt = statistics.median(r[b][0] for r in mpr if b in r)
            cw = statistics.median(r[b][1] for r in cbr if b in r)
            mw = statistics.median(r[b][1] for r in mpr if b in r)
            line = (f"{human(b):>8} {ct:>11.2f} {mt:>12.2f} {cw:>9.3f} {mw:>10.3f} "
                    f"{(cw / mw if mw else float('nan')):>9.2f}x")
            gw = [r[b][1] for r in glr if b in r]
            if gw:
                g = statistics.median(gw)
                line += f"   gloo busbw {g:.3f}, cb/gloo {cw / g:.2f}x"
            print(line)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
