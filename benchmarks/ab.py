#!/usr/bin/env python3
"""benchmarks/ab.py - two builds of collbench side by side: did a change cost
(or win) anything?  Same machine, same session, interleaved rounds, medians.

  benchmarks/ab.py OLD_BINARY NEW_BINARY [--rounds 5] -- COLLBENCH ARGS...

Each round runs OLD then NEW (then NEW then OLD in the next round, so neither
always goes first) with the given arguments and `--format csv`, and keeps each
row's out-of-place time.  It prints, per (collective, algorithm, size), the
median time of each and the ratio new/old (< 1: new is faster), then the
median ratio over all rows.  The noise column is what the rounds themselves
measure: the larger of the two builds' median absolute deviation of a
round from its median, relative to that median; a row marked "slower" is
slower by more than twice that, and the last line counts them.  Example,
the interface change of issue 9:

  benchmarks/ab.py ../base/build/collbench build/collbench -- \\
      --np 2 --transport shm --algo ring,rd -b 8 -e 16M -f 4

Installs nothing: needs the two collbench builds it compares.
"""
import argparse
import csv
import io
import statistics
import subprocess
import sys


def run(binary, args):
    out = subprocess.run([binary, *args, "--format", "csv"],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"{binary} failed ({out.returncode}): {out.stderr.strip()}")
    rows = {}
    for r in csv.DictReader(io.StringIO(out.stdout)):
        if r.get("inplace", "0") != "0":
            continue
        key = (r.get("collective", r.get("coll", "")), r.get("algo", ""),
               int(r.get("bytes", r.get("size", 0))))
        t = r.get("time_us") or r.get("oop_time_us")
        if t:
            rows.setdefault(key, []).append(float(t))
    return rows


def spread(ts):
    """A round's median absolute deviation from the median, relative."""
    m = statistics.median(ts)
    if m <= 0 or len(ts) < 2:
        return 0.0
    return statistics.median(abs(t - m) for t in ts) / m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    times = {"old": {}, "new": {}}
    for k in range(a.rounds):
        order = [("old", a.old), ("new", a.new)]
        if k % 2:
            order.reverse()
        for name, binary in order:
            for key, ts in run(binary, args).items():
                times[name].setdefault(key, []).extend(ts)
    ratios, slower = [], 0
    print(f"{'coll':<15}{'algo':<13}{'bytes':>10}{'old us':>12}"
          f"{'new us':>12}{'new/old':>9}{'noise':>8}")
    for key in sorted(times["old"], key=lambda k: (k[0], k[1], k[2])):
        if key not in times["new"]:
            continue
        o = statistics.median(times["old"][key])
        n = statistics.median(times["new"][key])
        r = n / o if o > 0 else float("nan")
        ratios.append(r)
        z = max(spread(times["old"][key]), spread(times["new"][key]))
        mark = "  slower" if r - 1 > 2 * z else ""
        slower += bool(mark)
        print(f"{key[0]:<15}{key[1]:<13}{key[2]:>10}{o:>12.2f}{n:>12.2f}"
              f"{r:>9.2f}{z:>8.2f}{mark}")
    if ratios:
        print(f"median new/old over {len(ratios)} rows: "
              f"{statistics.median(ratios):.3f}; slower than twice the "
              f"noise: {slower}")


if __name__ == "__main__":
    main()
