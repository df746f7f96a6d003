#!/usr/bin/env python3
"""benchmarks/anchors.py - collbench beside Open MPI (and Gloo), same machine,
same session, interleaved rounds, medians, ratios; and the machine's own
limits (memcpy, loopback TCP) measured in the same run.

  benchmarks/anchors.py [--rounds 5] [--np 2] [--transports shm,tcp]
                        [--min 8] [--max 64M] [--gloo] [--no-limits]

Everything it runs is in benchmarks/: for each round, back to back,
`collbench --transport T` and `mpi-anchor.sh NP sm|tcp` (Open MPI's own
collectives through the project's mpi_anchor.c, timed like collbench),
with the same iteration counts per size (1000 up to 64 KiB, 100 up to
4 MiB, 20 above).  Installs (apt, when missing): openmpi-bin and
libopenmpi-dev (through mpi-anchor.sh), iperf3 (tcp-limit.sh), gcc
(memcpy-limit.sh).  Without Open MPI the Open MPI columns say "-".

--gloo adds PyTorch's Gloo allreduce over loopback TCP (gloo_anchor.py;
Debian's python3-torch, which it does not install: without it the column
is "-" and one line says so) to the tcp table, at the powers of 4 from
1 MiB, in the same rounds.

After the rounds, unless --no-limits: the memcpy ceiling (memcpy-limit.sh,
1 thread) for the shm table and loopback TCP's (tcp-limit.sh, iperf3, both
directions at once) for the tcp table, and collbench's busbw at each size
as a fraction of it.  It prints, per size,
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


SKIPPED = set()


def anchor(name, argv, timeout=900):
    """The CSV rows of one anchor script, or None when it skipped (77)."""
    if name in SKIPPED:
        return None
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode == 77:
        print(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"{name}: skipped",
              file=sys.stderr)
        SKIPPED.add(name)
        return None
    if r.returncode != 0:
        sys.exit(f"{name} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def openmpi(np_, tr, lo, hi, coll="allreduce"):
    rows = anchor("mpi-anchor.sh", [os.path.join(HERE, "mpi-anchor.sh"), str(np_),
                                    "sm" if tr == "shm" else "tcp", "-c", MPI_NAME.get(coll, coll),
                                    "-b", str(lo), "-e", str(hi)])
    if rows is None:
        return {}
    if any(int(row["wrong"]) for row in rows):
        sys.exit("mpi-anchor.sh: Open MPI returned wrong values")
    return {int(row["bytes"]): (float(row["avg_us"]), float(row["busbw_gbps"])) for row in rows}


def gloo(np_, hi):
    rows = anchor("gloo_anchor.py", [sys.executable, os.path.join(HERE, "gloo_anchor.py"), "--np", str(np_),
                                     "--min", str(1 << 20), "--max", str(hi), "--step", "4"])
    return {int(r["bytes"]): (float(r["avg_us"]), float(r["busbw_gbps"])) for r in rows or []}


def limit(tr):
    """(what, GB/s) of this machine's ceiling for transport tr, or None."""
    if tr == "shm":
        rows = anchor("memcpy-limit.sh", [os.path.join(HERE, "memcpy-limit.sh"), "1", "1024", "16384"])
        return ("memcpy, 1 thread, best of 1-16 MiB", max(float(r["gbps"]) for r in rows)) if rows else None
    rows = anchor("tcp-limit.sh", [os.path.join(HERE, "tcp-limit.sh"), "3"])
    bidir = [float(r["gbps"]) for r in rows or [] if r["test"] == "bidir" and r["gbps"] != "failed"]
    return ("iperf3 loopback, both directions at once, each way", bidir[0]) if bidir else None


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
    ap.add_argument("--no-limits", action="store_true", help="skip the memcpy and iperf3 ceilings")
    args = ap.parse_args()
    if not os.access(args.collbench, os.X_OK):
        sys.exit(f"anchors.py: no collbench at {args.collbench} (build it: meson setup build "
                 "--buildtype=release && ninja -C build, or give --collbench PATH)")
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
        lim = None if args.no_limits else limit(tr)
        for b in sorted(cbr[0]):
            ct = statistics.median(r[b][0] for r in cbr if b in r)
            cw = statistics.median(r[b][1] for r in cbr if b in r)
            mt = [r[b][0] for r in mpr if b in r]
            mw = [r[b][1] for r in mpr if b in r]
            if mt:
                mt, mw = statistics.median(mt), statistics.median(mw)
                line = (f"{human(b):>8} {ct:>11.2f} {mt:>12.2f} {cw:>9.3f} {mw:>10.3f} "
                        f"{(cw / mw if mw else float('nan')):>9.2f}x")
            else:
                line = f"{human(b):>8} {ct:>11.2f} {'-':>12} {cw:>9.3f} {'-':>10} {'-':>10}"
            if lim:
                line += f"   cb/limit {cw / lim[1]:.2f}"
            gw = [r[b][1] for r in glr if b in r]
            if gw:
                g = statistics.median(gw)
                line += f"   gloo busbw {g:.3f}, cb/gloo {cw / g:.2f}x"
            print(line)
        if lim:
            print(f"# limit: {lim[0]}: {lim[1]:.2f} GB/s, measured after the rounds in this run")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
