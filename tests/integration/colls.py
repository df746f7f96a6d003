#!/usr/bin/env python3
"""colls.py COLLBENCH NP TRANSPORT [--slow] [--chunk N] [--ps K] [--colls L]
          [--mem host|gpu]

Every collective with every algorithm that applies, in one run of
collbench (--coll all --algo all), checked three ways:

  1. the rows: every (collective, algorithm) pair this test's own table
     says applies to NP ranks is there, for every size, dtype and op, out
     of place and (where the collective has one) in place - and no other;
  2. every row's #wrong is 0 (results compared bit for bit by collbench
     against values computed independently of the algorithms);
  3. the schedule: for every point, every rank's count of messages and
     bytes sent and received (collbench --schedule-log) equals what the
     algorithm's definition gives, computed here from the definition (so a
     "ring" that is secretly something else fails).

Exit 0 pass, 1 fail (with what differed).
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

ES = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "int8": 1,
      "uint8": 1, "float16": 2, "bfloat16": 2}
REDUCES = {"allreduce", "reduce_scatter", "reduce"}
BLOCKS = {"reduce_scatter", "allgather", "alltoall"}
INPLACE = {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce",
           "alltoall"}

# Which algorithm does which collective: the test's own statement of the
# issue, not read from collbench.
PAIRS = {
    "allreduce": ["ring", "tree", "rd", "rabenseifner", "ps"],
    "reduce_scatter": ["ring", "rabenseifner"],
    "allgather": ["ring", "rd"],
    "broadcast": ["ring", "tree", "linear"],
    "reduce": ["tree", "linear"],
    "alltoall": ["pairwise"],
    "barrier": ["dissemination"],
    "sendrecv": ["direct"],
    "pingpong": ["latency", "bw", "bibw"],
}


def applies(coll, algo, n, ps):
    if coll == "pingpong":
        return n == 2
    if algo == "ps":
        return ps < n
    return True


def ceil_div(a, b):
    return -(-a // b)


def seg_len(count, p, i):
    return count // p + (1 if i < count % p else 0)


# ---- schedules: (msgs_sent, bytes_sent, msgs_recv, bytes_recv) ----

def chunked(nbytes, chunk):
    """messages a piece of nbytes takes in chunks (0 for an empty piece)"""
    return ceil_div(nbytes, chunk) if nbytes else 0


def ring_allreduce(n, me, count, es, chunk):
    if n == 1 or count == 0:
        return (0, 0, 0, 0)
    ce = max(chunk // es, 1)
    ms = bs = mr = br = 0
    for s in range(2 * (n - 1)):
        if s < n - 1:
            send = (me - s) % n
            recv = (me - s - 1) % n
        else:
            t = s - (n - 1)
            send = (me + 1 - t) % n
            recv = (me - t) % n
        ls, lr = seg_len(count, n, send), seg_len(count, n, recv)
        ms += ceil_div(ls, ce)
        bs += ls * es
        mr += ceil_div(lr, ce)
        br += lr * es
    return (ms, bs, mr, br)


def linear(coll, n, me, root, count, es, chunk):
    b = count * es
    if n == 1 or b == 0:
        return (0, 0, 0, 0)
    c = max(chunk // es * es, es)
    k = chunked(b, c)
    at_root = (k * (n - 1), b * (n - 1))
    other = (k, b)
    if coll == "broadcast":
        return at_root + (0, 0) if me == root else (0, 0) + other
    return (0, 0) + at_root if me == root else other + (0, 0)


def pairwise(n, me, count, es):
    b = count * es
    if b == 0:
        return (0, 0, 0, 0)
    return (n - 1, (n - 1) * b, n - 1, (n - 1) * b)


def dissemination(n):
    k = math.ceil(math.log2(n)) if n > 1 else 0
    return (k, 0, k, 0)


def direct(n, count, es):
    b = count * es
    return (1, b, 1, b) if n > 1 else (0, 0, 0, 0)


def pingpong(algo, me, count, es):
    b = count * es
    if algo == "latency":
        return (1, b, 1, b)
    if algo == "bibw":
        return (64, 64 * b, 64, 64 * b)
    return (64, 64 * b, 1, 0) if me == 0 else (1, 0, 64, 64 * b)


def pieces(nbytes, chunk, es):
    """sizes of the pieces a buffer of nbytes is cut into (chunk rounded
    down to whole elements)"""
    c = max(chunk // es * es, es)
    return [min(c, nbytes - o) for o in range(0, nbytes, c)]


def ring_exec(coll, n, me, root, count, es, chunk):
    """ring's reduce_scatter, allgather (count per block) and chained
    broadcast: p-1 steps per piece of a block; the chain root -> root+1"""
    if n == 1:
        return (0, 0, 0, 0)
    ps = pieces(count * es, chunk, es)
    k, b = len(ps), count * es
    if coll in ("reduce_scatter", "allgather"):
        return ((n - 1) * k, (n - 1) * b, (n - 1) * k, (n - 1) * b)
    v = (me - root) % n
    sends = v != n - 1
    recvs = v != 0
    return (k * sends, b * sends, k * recvs, b * recvs)


def binomial(coll, n, me, root, count, es, chunk):
    """binomial tree on v = me - root: children v + 2^j for 2^j below v's
    lowest set bit (every 2^j < n at the root), parent v minus that bit"""
    ps = pieces(count * es, chunk, es)
    k, b = len(ps), count * es
    v = (me - root) % n
    lb = v & -v if v else 2 * n
    nch = sum(1 for j in range(32) if (1 << j) < lb and v + (1 << j) < n)
    up = 1 if v else 0
    if coll == "broadcast":
        return (nch * k, nch * b, up * k, up * b)
    return (up * k, up * b, nch * k, nch * b)


def btree(n, i):
    """NCCL-style in-order binary tree on 0..n-1: (parent, [children])"""
    if i == 0:
        p2 = 1
        while 2 * p2 < n:
            p2 *= 2
        return -1, ([p2] if n > 1 else [])
    b = i & -i
    parent = i - b if (i & 2 * b) or i + b >= n else i + b
    ch, h = [], b // 2
    while h:
        if not ch:
            ch.append(i - h)
        if i + h < n:
            ch.append(i + h)
            break
        h //= 2
    return parent, ch


def dbt_rank(t, i, n):
    """tree 1 is tree 0 mirrored (even n) or shifted by one (odd n)"""
    if t == 0:
        return i
    return (i + 1) % n if n % 2 else n - 1 - i


def dbt(n, me, count, es, chunk):
    """double binary tree: half t of the vector reduced up tree t and
    broadcast down, in pieces; per piece, a rank receives from and sends
    to each child and its parent once"""
    if n == 1:
        return (0, 0, 0, 0)
    out = [0, 0, 0, 0]
    for t in range(2):
        half = (count // 2 + (1 if t < count % 2 else 0)) * es
        ps = pieces(half, chunk, es)
        idx = [i for i in range(n) if dbt_rank(t, i, n) == me][0]
        parent, ch = btree(n, idx)
        links = len(ch) + (parent >= 0)
        out[0] += links * len(ps)
        out[1] += links * half
        out[2] += links * len(ps)
        out[3] += links * half
    return tuple(out)


def dbt_complementary(n):
    """every rank forwards (has children) in at most one of the two trees,
    except rank 0 of an odd n (one child in each)"""
    for r in range(n):
        inner = 0
        for t in range(2):
            idx = [i for i in range(n) if dbt_rank(t, i, n) == r][0]
            inner += bool(btree(n, idx)[1])
        if inner > 1 and not (n % 2 and r == 0):
            return False
    return True


def blen(count, p, i):
    return count // p + (1 if i < count % p else 0)


def bstart(count, p, i):
    rem = count % p
    return i * (count // p) + min(i, rem)


def fold(n, me):
    """power-of-two part p', extras r, lg; me's index nr among the p'
    (-1: an odd extra, folded into me-1)"""
    lg = 0
    while (2 << lg) <= n:
        lg += 1
    p2, r = 1 << lg, n - (1 << lg)
    if me < 2 * r:
        nr = -1 if me % 2 else me // 2
    else:
        nr = me - r
    return p2, r, lg, nr


def frank(r, nr):
    return 2 * nr if nr < r else nr + r


def tally(msgs):
    """(sent, recv) message lists of byte sizes -> the four counters"""
    sent, recv = msgs
    return (len(sent), sum(sent), len(recv), sum(recv))


def rd(coll, n, me, count, es, chunk):
    """recursive doubling; MPICH's fold-in of the extras"""
    if n == 1:
        return (0, 0, 0, 0)
    p2, r, lg, nr = fold(n, me)
    sent, recv = [], []
    if coll == "allgather":
        blk = count * es
        if blk == 0:
            return (0, 0, 0, 0)
        if nr < 0:
            return tally(([blk], [me * blk, (n - me - 1) * blk]))
        if me < 2 * r:
            recv.append(blk)
        for k in range(lg):
            m = 1 << k
            lo, plo = nr & ~(m - 1), (nr ^ m) & ~(m - 1)
            sent.append((frank(r, lo + m) - frank(r, lo)) * blk)
            recv.append((frank(r, plo + m) - frank(r, plo)) * blk)
        if me < 2 * r:
            sent += [(me + 1) * blk, (n - me - 2) * blk]
        return tally((sent, recv))
    ce = max(chunk // es, 1)
    npc = ceil_div(count, ce)
    for j in range(npc):
        b = blen(count, npc, j) * es
        if nr < 0:
            sent.append(b)
            recv.append(b)
            continue
        if me < 2 * r:
            recv.append(b)
        sent += [b] * lg
        recv += [b] * lg
        if me < 2 * r:
            sent.append(b)
    return tally((sent, recv))


def rabenseifner(coll, n, me, count, es, chunk):
    """recursive halving (+ recursive doubling for allreduce); pieces of
    --chunk-bytes (reduce_scatter: n blocks of a piece fit the chunk)"""
    if n == 1:
        return (0, 0, 0, 0)
    p2, r, lg, nr = fold(n, me)
    ce = max(chunk // es, 1)
    sent, recv = [], []
    if coll == "reduce_scatter":
        npc = ceil_div(count, max(ce // n, 1))
        for j in range(npc):
            bb = blen(count, npc, j) * es
            if nr < 0:
                sent.append(n * bb)
                recv.append(bb)
                continue
            if me < 2 * r:
                recv.append(n * bb)
            lo, m = 0, p2 // 2
            while m >= 1:
                klo = lo + m if nr & m else lo
                slo = lo if nr & m else lo + m
                sent.append((frank(r, slo + m) - frank(r, slo)) * bb)
                recv.append((frank(r, klo + m) - frank(r, klo)) * bb)
                lo, m = klo, m // 2
            if me < 2 * r:
                sent.append(bb)
        return tally((sent, recv))
    npc = ceil_div(count, ce)
    for j in range(npc):
        cnt = blen(count, npc, j)

        def blk(i):
            return bstart(cnt, p2, i) * es
        if nr < 0:
            sent.append(cnt * es)
            recv.append(cnt * es)
            continue
        if me < 2 * r:
            recv.append(cnt * es)
        lo, m = 0, p2 // 2
        while m >= 1:
            klo = lo + m if nr & m else lo
            slo = lo if nr & m else lo + m
            sb, kb = blk(slo + m) - blk(slo), blk(klo + m) - blk(klo)
            if sb:
                sent.append(sb)
            if kb:
                recv.append(kb)
            lo, m = klo, m // 2
        m = 1
        while m < p2:
            mlo, plo = nr & ~(m - 1), (nr ^ m) & ~(m - 1)
            mb, pb = blk(mlo + m) - blk(mlo), blk(plo + m) - blk(plo)
            if mb:
                sent.append(mb)
            if pb:
                recv.append(pb)
            m *= 2
        if me < 2 * r:
            sent.append(cnt * es)
    return tally((sent, recv))


def ps_sched(n, me, count, es, chunk, k_srv):
    """parameter server: shards pushed to their servers, reduced, pulled"""
    if n == 1:
        return (0, 0, 0, 0)
    ce = max(chunk // es, 1)
    shards = k_srv or n
    w = n - k_srv

    def pcs(k):  # byte sizes of shard k's pieces
        sl = blen(count, shards, k)
        npc = ceil_div(sl, ce)
        return [blen(sl, npc, j) * es for j in range(npc)]
    sent, recv = [], []
    if k_srv:
        if me < w:
            for k in range(shards):
                sent += pcs(k)
                recv += pcs(k)
        else:
            sent += pcs(me - w) * w
            recv += pcs(me - w) * w
        return tally((sent, recv))
    for t in range(n):
        if t != me:
            sent += pcs(t)      # push
            recv += pcs(t)      # pull
    sent += pcs(me) * (n - 1)   # serve
    recv += pcs(me) * (n - 1)   # pushes in
    return tally((sent, recv))


def expected(coll, algo, n, me, root, count, es, chunk, ps=0):
    """None when this test has no formula for the pair (yet)."""
    if algo == "ring" and coll == "allreduce":
        return ring_allreduce(n, me, count, es, chunk)
    if algo == "ring":
        return ring_exec(coll, n, me, root, count, es, chunk)
    if algo == "tree" and coll in ("broadcast", "reduce"):
        return binomial(coll, n, me, root, count, es, chunk)
    if algo == "tree":
        return dbt(n, me, count, es, chunk)
    if algo == "rd":
        return rd(coll, n, me, count, es, chunk)
    if algo == "rabenseifner":
        return rabenseifner(coll, n, me, count, es, chunk)
    if algo == "ps":
        return ps_sched(n, me, count, es, chunk, ps)
    if algo == "linear":
        return linear(coll, n, me, root, count, es, chunk)
    if algo == "pairwise":
        return pairwise(n, me, count, es)
    if algo == "dissemination":
        return dissemination(n)
    if algo == "direct":
        return direct(n, count, es)
    if coll == "pingpong":
        return pingpong(algo, me, count, es)
    return None


def main():
    args = sys.argv[1:]
    cb, np_, tr = args[0], int(args[1]), args[2]
    slow = "--slow" in args
    chunk = int(args[args.index("--chunk") + 1]) if "--chunk" in args \
        else 4096
    ps = int(args[args.index("--ps") + 1]) if "--ps" in args else 0
    mem = ["--mem", args[args.index("--mem") + 1]] if "--mem" in args \
        else []
    root = min(np_ - 1, 1)
    if slow:
        dtypes, ops, sizes = "all", "all", ["-b", "0", "-e", "1M", "-f", "3"]
    else:
        dtypes, ops = "float32,int8,bfloat16,float64", "sum,prod,min,max"
        sizes = ["-b", "0", "-e", "120K", "-f", "7"]
    colls = "all" if ps == 0 else "allreduce"
    if "--colls" in args:
        colls = args[args.index("--colls") + 1]
    only = set(PAIRS) if colls == "all" else set(colls.split(","))
    algos = "all" if ps == 0 else "ps"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out, log = os.path.join(tmp, "r.csv"), os.path.join(tmp, "s.log")
        cmd = [cb, "--np", str(np_), "--transport", tr, "--coll", colls,
               "--algo", algos, "-d", dtypes, "-o", ops, *sizes,
               "-w", "0", "-n", "1", "-r", str(root), "--chunk-bytes",
               str(chunk), "--ps-servers", str(ps), "--alpha-us", "1",
               "--beta-gbps", "1", "--timeout", "30", "--format", "csv",
               "--schedule-log", log, *mem]
        p = subprocess.run(cmd, stdout=open(out, "w"), stderr=subprocess.PIPE,
                           text=True, timeout=900)
        if p.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited {p.returncode}: "
                  f"{p.stderr[:600]}")
            return 1
        rows = list(csv.DictReader(open(out)))
        sched = [l.split() for l in open(log)]

    # 1. the pairs present
    want = {(c, a) for c, al in PAIRS.items() for a in al
            if applies(c, a, np_, ps) and c in only
            and (ps == 0 or a == "ps")}
    have = {(r["collective"], r["algo"]) for r in rows}
    if want != have:
        failures.append(f"pairs: missing {sorted(want - have)}, "
                        f"unexpected {sorted(have - want)}")
    counts = {}
    for r in rows:
        key = (r["collective"], r["algo"], r["dtype"], r["op"], r["bytes"])
        counts.setdefault(key, set()).add(int(r["inplace"]))
        if int(r["ranks"]) != np_ or r["transport"] != tr:
            failures.append(f"row with ranks/transport {r['ranks']}/"
                            f"{r['transport']}: {r}")
    for key, ip in counts.items():
        want_ip = {0, 1} if key[0] in INPLACE else {0}
        if ip != want_ip:
            failures.append(f"{key}: in-place rows {sorted(ip)}, want "
                            f"{sorted(want_ip)}")
    # 2. exact results
    bad = [r for r in rows if int(r["wrong"]) != 0]
    for r in bad[:10]:
        failures.append(f"wrong values: {r['collective']} {r['algo']} "
                        f"{r['dtype']} {r['op']} {r['bytes']} B inplace="
                        f"{r['inplace']}: {r['wrong']}")
    # 3. schedules
    checked = unknown = 0
    for f in sched:
        coll, algo, dt = f[0], f[1], f[2]
        n, me, rt, count, nbytes = (int(x) for x in f[3:8])
        got = tuple(int(x) for x in f[8:12])
        es = ES[dt]
        if coll != "barrier" and \
                (count * n if coll in BLOCKS else count) * es != nbytes:
            failures.append(f"schedule log: count and bytes disagree: {f}")
        exp = expected(coll, algo, n, me, rt, count, es, chunk, ps)
        if exp is None:
            unknown += 1
            continue
        checked += 1
        if exp != got:
            failures.append(f"schedule {coll} {algo} {dt} n={n} rank={me} "
                            f"root={rt} count={count}: sent/recv "
                            f"{got}, the algorithm gives {exp}")
    if not dbt_complementary(np_):
        failures.append(f"the double binary trees for {np_} ranks are not "
                        f"complementary")
    for msg in failures[:25]:
        print("FAIL:", msg)
    print(f"{len(rows)} rows, {len(have)} (collective, algorithm) pairs, "
          f"{checked} rank schedules checked, {unknown} without a formula "
          f"here")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
