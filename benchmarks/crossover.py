#!/usr/bin/env python3
"""benchmarks/crossover.py - which allreduce algorithm wins at which size,
measured and predicted, and how well --algo auto picks.

  benchmarks/crossover.py [--rounds 5] [--np 2,4] [--transports shm,tcp]
                          [--min 8] [--max 16M] [--coll allreduce]
                          [--algos ring,tree,rd,rabenseifner,ps]
                          [--tune-rounds 3 | --tuning FILE | --tuning none]
                          [--inplace] [--touch] [--probe [US]]

First (--tune-rounds N > 0, the default) `collbench tune` measures each
(np, transport) into a fresh tuning table, in this session; --tuning FILE
uses a table made before, --tuning none the cost model alone.  Then each
round runs, back to back for every (np, transport): collbench with
--algo LIST (every algorithm at every size, model column included) and
collbench with --algo auto and that table.  Per size it prints the median over rounds of
each algorithm's time, the fastest measured, the model's pick, auto's
measured time and its ratio to the fastest (target: within 10%); then the
crossover sizes - where the fastest algorithm changes - measured and
predicted by the model - and the goal: auto within 10% of the fastest at
>= 90% of sizes, and never slower than 1.5x.  float32 sum, out-of-place
rows (--inplace: the in-place rows, where every call overwrites the buffer
the peers read in the next: on shm an out-of-place send buffer that is never
written stays cached by every reader, which favours algorithms that read
all of it; see the README; --touch runs everything, tune included, with
collbench --touch: each call's input rewritten and result read between
timed calls, as an application step would).  Long: this is a benchmark, not a test.

--probe compares like with like on a machine that flips between two
states (benchmarks/vmstate.py; the development VM): the state is probed
before and after each tune (retuned up to twice if it changed meanwhile) and
around each round's pair of runs for a shape, and only rounds in the state
the shape was tuned in count (the fast one where tune never ran in one
state); the tables say how many.

Installs nothing: needs a collbench build (default build/collbench).
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile

import vmstate

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult \
        else int(s)


def human(b):
    for unit, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= m and b % m == 0:
            return f"{b // m}{unit}"
    return str(b)


def run(cb, np_, tr, coll, algo, lo, hi, extra=(), inplace=False):
    """{(algo, bytes): (time_us, model_us)} from out-of-place rows (or the
    in-place ones)."""
    out = {}
    for a, b, iters in ((lo, min(hi, 1 << 16), 200),
                        (max(lo, 1 << 17), min(hi, 1 << 22), 50),
                        (max(lo, 1 << 23), hi, 10)):
        if a > b:
            continue
        cmd = [cb, "--np", str(np_), "--transport", tr, "--coll", coll,
               "--algo", algo, "--format", "csv", "-b", str(a), "-e", str(b),
               "-n", str(iters), "-w", str(iters // 10 + 1), "-c", "1"]
        cmd += list(extra)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): "
                     f"{r.stderr.strip()}")
        for row in csv.DictReader(io.StringIO(r.stdout)):
            if row["inplace"] == ("1" if inplace else "0"):
                out[(row["algo"], int(row["bytes"]))] = (
                    float(row["time_us"]), float(row["algo_model_us"]))
    return out


def crossovers(best_by_size):
    """[(size, from, to)] where the winner changes"""
    out, prev = [], None
    for size, algo in best_by_size:
        if prev is not None and algo != prev:
            out.append((size, prev, algo))
        prev = algo
    return out


def state_label(tuned):
    if tuned is None:  # a table made before (--tuning FILE)
        return " in the fast state"
    if tuned == "mixed":
        return (" in the fast state (tuned across changes of state, "
                "three times)")
    return f" in the {tuned} state"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--min", default="8")
    ap.add_argument("--max", default="16M")
    ap.add_argument("--coll", default="allreduce")
    ap.add_argument("--algos", default="ring,tree,rd,rabenseifner,ps")
    ap.add_argument("--tune-rounds", type=int, default=3)
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="over rounds: the median (the goal's), or the "
                    "minimum (load on a shared machine only ever adds "
                    "time)")
    ap.add_argument("--tuning", default=None)
    ap.add_argument("--inplace", action="store_true",
                    help="compare the in-place rows instead")
    ap.add_argument("--touch", action="store_true",
                    help="run collbench (and tune) with --touch")
    ap.add_argument("--probe", type=float, nargs="?", const=300.0,
                    help="count only rounds in the state the table was "
                    "tuned in (split at US, default 300)")
    ap.add_argument("--collbench",
                    default=os.path.join(ROOT, "build", "collbench"))
    a = ap.parse_args()
    if a.probe is not None and a.probe <= 0:
        sys.exit(f"crossover.py: --probe {a.probe:g}: not a positive time (us)")
    lo, hi = parse_size(a.min), parse_size(a.max)
    nps = [int(x) for x in a.np.split(",")]
    trs = a.transports.split(",")
    tuning = a.tuning
    touch = ["--touch"] if a.touch else []
    exe = vmstate.tool() if a.probe is not None else None
    tuned_in = {}  # (np, tr) -> the state tune ran in ("" without --probe)
    kept = {}  # (np, tr) -> rounds counted
    if tuning is None and a.tune_rounds > 0:
        tuning = os.path.join(tempfile.mkdtemp(prefix="cb-tune-"),
                              "tuning.json")
        for np_ in nps:
            for tr in trs:
                cmd = [a.collbench, "tune", "--np", str(np_), "--transport",
                       tr, "--coll", a.coll, "--algo", a.algos,
                       "--tuning", tuning, "-b", str(lo), "-e", str(hi),
                       "--rounds", str(a.tune_rounds)] + touch
                for attempt in (1, 2, 3):
                    p1 = vmstate.probe(exe) if exe else 0
                    r = subprocess.run(cmd, capture_output=True, text=True,
                                       timeout=3600)
                    if r.returncode:
                        sys.exit(f"{' '.join(cmd)}: {r.returncode}: "
                                 f"{r.stderr}")
                    st = vmstate.state(p1, vmstate.probe(exe),
                                       a.probe) if exe else ""
                    tuned_in[(np_, tr)] = st
                    if st != "mixed":
                        break
                print(f"tuned np {np_} {tr} into {tuning}"
                      f"{' (' + st + ' state)' if st else ''}",
                      file=sys.stderr)
    auto_extra = ["--tuning", tuning or "none"] + touch
    meas = {}  # (np, tr) -> {(algo, bytes): [times]}
    model = {}
    auto = {}
    for rnd in range(a.rounds):
        for np_ in nps:
            for tr in trs:
                p1 = vmstate.probe(exe) if exe else 0
                rl = run(a.collbench, np_, tr, a.coll, a.algos, lo, hi,
                         touch, inplace=a.inplace)
                ra = run(a.collbench, np_, tr, a.coll, "auto", lo, hi,
                         auto_extra, inplace=a.inplace)
                if exe:
                    st = vmstate.state(p1, vmstate.probe(exe), a.probe)
                    want = tuned_in.get((np_, tr), "fast")
                    want = "fast" if want == "mixed" else want
                    print(f"round {rnd + 1} np {np_} {tr}: {st} state"
                          f"{'' if st == want else ' (not counted)'}",
                          file=sys.stderr)
                    if st != want:
                        continue
                kept[(np_, tr)] = kept.get((np_, tr), 0) + 1
                for k, (t, m) in rl.items():
                    meas.setdefault((np_, tr), {}).setdefault(k, []).append(t)
                    model.setdefault((np_, tr), {}).setdefault(k, []).append(m)
                for (algo, b), (t, m) in ra.items():
                    auto.setdefault((np_, tr), {}).setdefault(b, []).append(
                        (t, algo))
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    algos = a.algos.split(",")
    stat = statistics.median if a.stat == "median" else min
    print(f"statistic over rounds: {a.stat}")
    print("auto decided by: " + ("the tuning table " + tuning
                                 if tuning and tuning != "none"
                                 else "the cost model"))
    goal_n = goal_within = 0
    goal_worst = 0.0
    for np_ in nps:
        for tr in trs:
            if (np_, tr) not in meas:
                print(f"\n## {a.coll}, np={np_}, {tr}: no round in the "
                      f"state it was tuned in")
                continue
            M = meas[(np_, tr)]
            P = model[(np_, tr)]
            A = auto.get((np_, tr), {})
            sizes = sorted({b for (_, b) in M})
            print(f"\n## {a.coll}, np={np_}, {tr}"
                  f"{', in place' if a.inplace else ''}"
                  f"{', --touch' if a.touch else ''}: {a.stat} time (us) "
                  f"over {kept[(np_, tr)]} rounds"
                  f"{state_label(tuned_in.get((np_, tr))) if exe else ''}")
            print("| size | " + " | ".join(algos) +
                  " | fastest | model's pick | auto (picked) | auto/fastest |")
            print("|---:|" + "---:|" * len(algos) + "---|---|---|---:|")
            best_meas, best_model, within, worst = [], [], 0, 0.0
            for b in sizes:
                med = {al: stat(M[(al, b)]) for al in algos
                       if (al, b) in M}
                mod = {al: statistics.median(P[(al, b)]) for al in algos
                       if (al, b) in P}
                fast = min(med, key=med.get)
                pick = min(mod, key=mod.get)
                best_meas.append((b, fast))
                best_model.append((b, pick))
                cells = [f"{med[al]:.2f}" if al in med else "-"
                         for al in algos]
                at = A.get(b, [])
                if at:
                    t_auto = stat([t for t, _ in at])
                    picked = ",".join(sorted({al for _, al in at}))
                    ratio = t_auto / med[fast]
                    within += ratio <= 1.10
                    worst = max(worst, ratio)
                    auto_cells = [f"{t_auto:.2f} ({picked})",
                                  f"{ratio:.2f}"]
                else:
                    auto_cells = ["-", "-"]
                print(f"| {human(b)} | " + " | ".join(cells) +
                      f" | {fast} | {pick} | " + " | ".join(auto_cells) + " |")
            print(f"\nauto within 10% of the fastest at {within} of "
                  f"{len(sizes)} sizes; slowest {worst:.2f}x the fastest")
            goal_n += len(sizes)
            goal_within += within
            goal_worst = max(goal_worst, worst)
            print("measured crossovers: " + (", ".join(
                f"{f}->{t} at {human(s)}" for s, f, t in
                crossovers(best_meas)) or "none"))
            print("model crossovers:    " + (", ".join(
                f"{f}->{t} at {human(s)}" for s, f, t in
                crossovers(best_model)) or "none"))
    # the goal by the other statistic too, from the same rounds
    other = min if a.stat == "median" else statistics.median
    o_n = o_within = 0
    o_worst = 0.0
    for key, M in meas.items():
        for b, at in auto.get(key, {}).items():
            med = {al: other(M[(al, b)]) for al in algos if (al, b) in M}
            if not med:
                continue
            ratio = other([t for t, _ in at]) / min(med.values())
            o_n += 1
            o_within += ratio <= 1.10
            o_worst = max(o_worst, ratio)
    if o_n:
        print(f"\nby the {'minimum' if a.stat == 'median' else 'median'} "
              f"over rounds instead: within 10% at {o_within} of {o_n} "
              f"sizes ({100.0 * o_within / o_n:.0f}%), worst {o_worst:.2f}x")
    if goal_n:
        ok = goal_within >= 0.9 * goal_n and goal_worst <= 1.5
        print(f"\ngoal (within 10% at >= 90% of sizes, never above 1.5x): "
              f"{goal_within} of {goal_n} sizes "
              f"({100.0 * goal_within / goal_n:.0f}%), worst "
              f"{goal_worst:.2f}x: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
