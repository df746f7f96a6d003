#!/usr/bin/env python3
"""chaos.py COLLBENCH [--runs N] [--seed S] [--hosts] [--algos A,B]
                [--stop-share F] [--report FILE]

Runs collbench jobs and hurts one rank of each at a random moment, the way
clusters being brought up do: SIGKILL (a node dies) or SIGSTOP (a node
hangs).  Jobs vary: local ranks forked by collbench (--np), ranks started
one by one as a launcher would (COLLBENCH_RANK/WORLD, a fixed rendezvous
port), and - with --hosts, as root - ranks on two test hosts made of
network namespaces; tcp, shm and auto; every algorithm of every
collective (ALGOS; --algos ps-async,ring: only those), ps-async too.  A
quarter of the blows are SIGSTOP (--stop-share).  The moment is one of
four, each aimed at on purpose:

  start-up   0-30 ms after the ranks start
  connect    0-20 ms after rank 0 starts (its run.json appears), while
             the ranks meet and connect
  collective while rows are being printed
  output     once the last row is out (the JSON, CSV and plot being written)

Each time, what must hold:
  1. every survivor exits non-zero within the deadline (--timeout + slack);
     so does the launcher;
  2. each process prints at most one line on stderr, and one of the lines
     names the rank that was hurt;
  3. no process of the job is left (a stopped rank started by hand is
     continued, and must then end by itself, non-zero);
  4. no /dev/shm object and no memfd of the job is left;
  5. -O run.json is valid JSON, "status": "failed", and its rows are the
     rows so far (as many as the CSV's when rank 0 survived; "complete"
     with every row when the blow came after rank 0 wrote its end);
  6. the same job again, right away, on the same port, succeeds.
A job that finished before the blow landed must have succeeded outright
(counted apart).

Exit 0 when every run held, 1 otherwise; --report FILE writes the counts
per moment, action and mode as JSON (benchmarks/chaos.sh).
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Every algorithm, with a collective it runs (coll/algos.c; `collbench
# info`).  pingpong runs between exactly 2 ranks.
ALGOS = [("allreduce", a) for a in
         ["ring", "tree", "rd", "rabenseifner", "ps", "ps-async"]] + [
    ("reduce_scatter", "ring"), ("allgather", "rd"),
    ("broadcast", "linear"), ("reduce", "tree"), ("alltoall", "pairwise"),
    ("barrier", "dissemination"), ("sendrecv", "direct"),
    ("pingpong", "latency"), ("pingpong", "bw"), ("pingpong", "bibw")]
MOMENTS = ["start-up", "connect", "collective", "output"]
TIMEOUT = 3  # --timeout of every job
# How long everyone may take to end once a rank is hurt: a survivor may wait
# out its own deadline, and a local launcher then gives the rest TIMEOUT + 5
# s more before it kills them (core/launch.c); then slack for a loaded
# 2-core machine and sanitizer builds.
DEADLINE = 2 * TIMEOUT + 5 + 10


def free_port():
    import socket
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    for _ in range(200):
        p = random.randint(10000, max(10001, lo - 1))
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            pass
        finally:
            s.close()
    raise RuntimeError("no free port")


def shm_names():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def memfds_of(pids):
    """memfd descriptors still open in any of @pids."""
    out = []
    for pid in pids:
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            try:
                if os.readlink(fd).startswith("/memfd:"):
                    out.append((pid, os.readlink(fd)))
            except OSError:
                pass
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def job_pids(tag):
    """Every process whose command line or environment carries @tag."""
    found = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            if tag in open(d + "/cmdline", "rb").read().decode(errors="replace"):
                found.append(int(d[6:]))
        except OSError:
            pass
    return found


class Netns:
    """Two test hosts, A and B, joined by a veth pair (root only)."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.a, self.b = f"cbchA{tag}", f"cbchB{tag}"
        net = 10 + tag % 200
        self.ip = f"10.252.{net}.1"
        cmds = [
            ["ip", "netns", "add", self.a], ["ip", "netns", "add", self.b],
            ["ip", "link", "add", f"ca{tag}", "type", "veth", "peer", "name", f"cb{tag}"],
            ["ip", "link", "set", f"ca{tag}", "netns", self.a],
            ["ip", "link", "set", f"cb{tag}", "netns", self.b],
            ["ip", "-n", self.a, "addr", "add", f"{self.ip}/24", "dev", f"ca{tag}"],
            ["ip", "-n", self.b, "addr", "add", f"10.252.{net}.2/24", "dev", f"cb{tag}"],
            ["ip", "-n", self.a, "link", "set", "lo", "up"],
            ["ip", "-n", self.b, "link", "set", "lo", "up"],
            ["ip", "-n", self.a, "link", "set", f"ca{tag}", "up"],
            ["ip", "-n", self.b, "link", "set", f"cb{tag}", "up"],
        ]
        for c in cmds:
            subprocess.run(c, check=True, capture_output=True)

    def close(self):
        for ns in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Job:
    """One job: its ranks (or its launcher), files, and how it ended."""

    def __init__(self, cb, tmp, mode, np_, tr, algo, port, netns):
        self.cb, self.tmp, self.mode, self.np, self.tr = cb, tmp, mode, np_, tr
        (self.coll, self.algo), self.port, self.netns = algo, port, netns
        self.json = os.path.join(tmp, "run.json")
        self.procs = []  # (rank or -1 for the launcher, Popen)
        self.t0 = 0.0

    def args(self):
        a = [self.cb, "--transport", self.tr, "--coll", self.coll,
             "--algo", self.algo,
             "-b", "1K", "-e", "1M", "-f", "4", "-n", "200", "-w", "2",
             "--timeout", str(TIMEOUT),
             "-O", self.json, "-O", os.path.join(self.tmp, "run.csv")]
        if self.algo in ("ps", "ps-async") and self.np > 2:
            a += ["--ps-servers", "1"]
        return a

    def start(self):
        for f in glob.glob(os.path.join(self.tmp, "*")):
            os.unlink(f)
        self.t0 = time.monotonic()
        # as a launcher would: one secret for the job's ranks
        env = dict(os.environ, COLLBENCH_JOB_TOKEN=f"chaos{os.getpid()}")
        if self.mode == "local":
            out = open(os.path.join(self.tmp, "out.0"), "w")
            err = open(os.path.join(self.tmp, "err.L"), "w")
            p = subprocess.Popen(self.args() + ["--np", str(self.np)],
                                 stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL, env=env)
            self.procs = [(-1, p)]
            return
        host = self.netns.ip if self.netns else "127.0.0.1"
        for r in range(self.np):
            e = dict(env, COLLBENCH_RANK=str(r), COLLBENCH_WORLD=str(self.np))
            cmd = self.args() + ["--rendezvous", f"{host}:{self.port}"]
            if self.netns:
                ns = self.netns.a if r < self.np // 2 or r == 0 else self.netns.b
                e["COLLBENCH_HOSTNAME"] = "nodeA" if ns == self.netns.a else "nodeB"
                cmd = ["ip", "netns", "exec", ns] + cmd
            out = open(os.path.join(self.tmp, f"out.{r}"), "w")
            err = open(os.path.join(self.tmp, f"err.{r}"), "w")
            self.procs.append((r, subprocess.Popen(
                cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=e)))

    def rank_pids(self):
        """pid of each rank (local mode: the launcher's children)."""
        if self.mode != "local":
            return {r: p.pid for r, p in self.procs}
        launcher = self.procs[0][1].pid
        kids = []
        try:
            for t in glob.glob(f"/proc/{launcher}/task/*/children"):
                kids += [int(x) for x in open(t).read().split()]
        except OSError:
            pass
        kids.sort()  # forked in rank order
        return {r: pid for r, pid in enumerate(kids)}

    def text(self, name):
        try:
            return open(os.path.join(self.tmp, name)).read()
        except OSError:
            return ""

    def table_rows(self):
        return [l for l in self.text("out.0").splitlines()
                if l and not l.startswith("#")]

    def csv_rows(self):
        """Rows rank 0 wrote to the CSV (one per JSON row, flushed per
        point)."""
        lines = self.text("run.csv").splitlines()
        return max(0, len(lines) - 1)

    def wait(self, deadline):
        """Exit codes by rank (-1: launcher); None for one still running."""
        codes = {}
        for r, p in self.procs:
            left = max(0.0, deadline - time.monotonic())
            try:
                codes[r] = p.wait(timeout=left)
            except subprocess.TimeoutExpired:
                codes[r] = None
        return codes

    def kill_all(self):
        for _, p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    p.kill()
                p.wait()


def wait_for(pred, limit):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.002)
    return False


def check_json(job, finished, rank0_alive):
    """run.json: valid; "failed" with the rows so far, or "complete" with
    every row (the job finished, or failed after rank 0 wrote its end)."""
    table = job.csv_rows()
    try:
        doc = json.load(open(job.json))
    except (OSError, ValueError) as e:
        return [f"run.json: {e}"]
    status, n = doc.get("status"), len(doc.get("rows", []))
    done = "Avg bus bandwidth" in job.text("out.0")
    problems = []
    if finished and status != "complete":
        problems.append(f"run.json status {status!r}, want 'complete'")
    elif not finished and status != "failed" and \
            not (status == "complete" and done):
        problems.append(f"run.json status {status!r}, want 'failed'")
    if rank0_alive and n != table:
        problems.append(f"run.json has {n} rows, the CSV {table}")
    if n > table:
        problems.append(f"run.json has {n} rows, more than the CSV's {table}")
    return problems


def one_run(cb, tmp, rng, mode, netns, algos, stop_share):
    np_ = 4 if mode == "hosts" else rng.choice([2, 3, 4])
    tr = rng.choice(["auto", "tcp"]) if mode == "hosts" else rng.choice(["tcp", "shm"])
    algo = rng.choice(algos)
    if algo[0] == "pingpong":
        np_ = 2
    moment = rng.choice(MOMENTS)
    action = "stop" if rng.random() < stop_share else "kill"
    victim = rng.randrange(np_)
    port = free_port()
    job = Job(cb, tmp, mode, np_, tr, algo, port, netns)
    desc = f"{mode} np{np_} {tr} {algo[0]} {algo[1]}: {action} rank {victim} at {moment}"
    shm_before = shm_names()
    job.start()

    # Aim at the moment.
    if moment == "start-up":
        time.sleep(rng.uniform(0, 0.03))
    elif moment == "connect":
        wait_for(lambda: os.path.exists(job.json), 20)
        time.sleep(rng.uniform(0, 0.02))
    elif moment == "collective":
        # (the rows to 1 MiB, 200 calls each, last a few hundred ms on a
        # quiet machine: a blow within 0.15 s of the first row lands
        # mid-collective, not after the job finished)
        wait_for(lambda: len(job.table_rows()) >= 1, 20)
        time.sleep(rng.uniform(0, 0.15))
    else:
        wait_for(lambda: "Avg bus bandwidth" in job.text("out.0"), 30)
    pids = {}
    wait_for(lambda: len(job.rank_pids()) == np_, 2)
    pids = job.rank_pids()
    # Ranks that had already ended, their part done, before the blow: an
    # exit status 0 from them is right (the output moment comes after the
    # last collective, and ranks started by hand leave then).
    ended = {r for r, p in job.procs if r >= 0 and p.poll() == 0}
    hit_at = time.monotonic()
    sig = signal.SIGSTOP if action == "stop" else signal.SIGKILL
    hit = victim in pids and alive(pids[victim])
    if hit:
        try:
            os.kill(pids[victim], sig)
        except OSError:
            hit = False

    # 1. Everyone else ends within the deadline.
    deadline = hit_at + DEADLINE
    codes = job.wait(deadline)
    problems = []
    late = [r for r, c in codes.items() if c is None and not (mode != "local" and r == victim)]
    if late:
        problems.append(f"still running {DEADLINE}s after: "
                        f"{['launcher' if r < 0 else 'rank %d' % r for r in late]}")
    # A stopped rank started by hand: continued, it must end by itself.
    cont = None
    if hit and action == "stop" and mode != "local":
        try:
            os.kill(pids[victim], signal.SIGCONT)
        except ProcessLookupError:
            pass  # it had ended as the SIGSTOP landed: its status says how
        cont = job.wait(time.monotonic() + DEADLINE).get(victim)
        if cont is None:
            problems.append("the stopped rank, continued, did not end")
    job.kill_all()
    survivors = {r: c for r, c in codes.items()
                 if not (mode != "local" and r == victim)}
    finished = all(c == 0 for c in survivors.values()) and \
        "Avg bus bandwidth" in job.text("out.0")
    if finished and hit and mode == "local" and action == "kill":
        # The launcher saw the rank killed (then the job failed), or the
        # blow landed as the rank was exiting (it had finished).
        finished = f"rank {victim} (pid" not in job.text("err.L")
    if finished:
        outcome = "finished first"
    elif cont == 0:
        problems.append("the stopped rank, continued, exited 0 in a "
                        "failed job")
    if not finished:
        outcome = "failed"
        # At "output" the last line-up is behind every rank: a survivor
        # that ends 0 right after the blow had finished its part (which of
        # the two comes first is a race); the hurt rank's own status and
        # run.json say the job failed.
        bad = {r: c for r, c in survivors.items()
               if c == 0 and r not in ended and moment != "output"}
        if bad:
            problems.append(f"exited 0 after rank {victim} was hurt: {bad}")
        # 2. one line each; one names the rank
        errs = {n: job.text(n) for n in os.listdir(tmp) if n.startswith("err.")}
        for n, t in errs.items():
            lines = t.splitlines()
            limit = 1 + (n == "err.L") * np_  # local: every rank's, and the launcher's
            if len(lines) > limit:
                problems.append(f"{n}: {len(lines)} lines: {lines[:4]}")
        # "rank 2", or rank 2 in a list of those missing ("still missing:
        # rank 0, 2": rank 0 can itself be waiting on the stopped rank)
        named = rf"\branks? (\d+, )*{victim}\b"
        if not any(re.search(named, t) for t in errs.values()):
            problems.append(f"no line names rank {victim}: "
                            f"{[l for t in errs.values() for l in t.splitlines()][:4]}")
    # 3. nothing left behind
    time.sleep(0.05)
    left = [p for p in job_pids(tmp) if p != os.getpid()]
    if left:
        problems.append(f"processes left: {left}")
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    # 4. no shared memory left
    new_shm = shm_names() - shm_before
    if new_shm:
        problems.append(f"/dev/shm objects left: {sorted(new_shm)[:5]}")
    mfd = memfds_of(left)
    if mfd:
        problems.append(f"memfds left: {mfd[:3]}")
    # 5. the JSON: valid, failed, the rows so far.  Rank 0 hurt may not
    # have saved its last rows (it saves the file whole every 200 ms at
    # most); under a launcher, hurt within milliseconds of its start, it
    # may not have written the file at all (counted apart).
    rank0_alive = not (hit and victim == 0)
    if not os.path.exists(job.json) and not rank0_alive and \
            mode != "local" and moment == "start-up":
        outcome = "no file (rank 0 hit at its start)"
    else:
        problems += check_json(job, finished, rank0_alive)
    # 6. the same job again succeeds
    again = Job(cb, tmp, mode, np_, tr, algo, port, netns)
    again.start()
    codes2 = again.wait(time.monotonic() + 60)
    again.kill_all()
    if any(c != 0 for c in codes2.values()):
        problems.append(f"the run after failed: {codes2}: "
                        f"{(again.text('err.L') + again.text('err.0'))[:300]}")
    return desc, moment, action, mode, outcome, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("collbench")
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--hosts", action="store_true",
                    help="also jobs on two network-namespace hosts (root)")
    ap.add_argument("--algos", help="only these algorithms (comma-separated)")
    ap.add_argument("--stop-share", type=float, default=0.25,
                    help="the share of blows that are SIGSTOP, not SIGKILL")
    ap.add_argument("--report")
    a = ap.parse_args()
    algos = ALGOS
    if a.algos:
        want = a.algos.split(",")
        algos = [x for x in ALGOS if x[1] in want]
        unknown = set(want) - {x[1] for x in algos}
        if unknown:
            print(f"chaos: no such algorithm: {', '.join(sorted(unknown))}")
            return 2
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    random.seed(seed)
    cb = os.path.abspath(a.collbench)
    modes = ["local", "launched"]
    netns = None
    if a.hosts and (os.geteuid() != 0 or not shutil.which("ip")):
        print("chaos: no namespace hosts here (root and iproute2 needed)")
    elif a.hosts:
        try:
            netns = Netns()
            modes.append("hosts")
        except subprocess.CalledProcessError as e:
            print(f"chaos: no namespace hosts here: {e}")
    tmp = tempfile.mkdtemp(prefix="cbchaos")
    counts, failures = {}, 0
    print(f"chaos: seed {seed}, {a.runs} runs")
    t0 = time.monotonic()
    try:
        for i in range(a.runs):
            mode = modes[i % len(modes)]
            desc, moment, action, mode, outcome, problems = one_run(
                cb, tmp, rng, mode, netns if mode == "hosts" else None,
                algos, a.stop_share)
            key = f"{moment}/{action}/{mode}"
            c = counts.setdefault(key, {"runs": 0, "failed": 0, "finished first": 0,
                                        "no file": 0})
            c["runs"] += 1
            if outcome == "finished first":
                c["finished first"] += 1
            if outcome.startswith("no file"):
                c["no file"] += 1
            if problems:
                c["failed"] += 1
                failures += 1
                print(f"FAIL {i}: {desc}: " + "; ".join(problems))
            else:
                print(f"ok {i}: {desc} -> {outcome}")
            sys.stdout.flush()
    finally:
        if netns:
            netns.close()
        shutil.rmtree(tmp, ignore_errors=True)
    secs = time.monotonic() - t0
    print(f"chaos: {a.runs} runs, {failures} failed, seed {seed}, {secs:.0f} s")
    if a.report:
        json.dump({"seed": seed, "runs": a.runs, "failed": failures,
                   "seconds": round(secs), "by": counts},
                  open(a.report, "w"), indent=1, sort_keys=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
