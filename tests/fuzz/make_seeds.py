#!/usr/bin/env python3
"""make_seeds.py - write the fuzz targets' seed corpora (tests/fuzz/corpus/).

Seeds are small, valid (or nearly valid) inputs that reach deep into each
parser, so fuzzing starts from there instead of from random bytes.  The
files are checked in; run this again after changing a format, then keep
the inputs fuzzing found (they are in the build's fuzz-work/ folders) only
if they found a crash (name them crash-*).

  tests/fuzz/make_seeds.py            rewrite the seed-* files
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DATA = os.path.join(HERE, "..", "data", "results")

MAGIC = 0x43424B56
HELLO, WELCOME, SET, GET, GATHER, VALUE, ERROR, ABORT, BYE, FWD, RELAY, FWDM = range(1, 13)


def msg(t, key=b"", val=b""):
    return struct.pack("!IIII", MAGIC, t, len(key), len(val)) + key + val


TOKEN = b"fuzz-token"  # the store's in fuzz_boot_server.c


def hello(rank, world, host=b"node01", token=TOKEN):
    return msg(HELLO, val=struct.pack("!iii", rank, world, 4242) + host.ljust(64, b"\0")
               + token.ljust(64, b"\0"))


def gather_req(n, waiters=None, timeout_ms=0):
    return struct.pack("!III", n, n if waiters is None else waiters, timeout_ms)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def args(*a):
    return b"\0".join(x.encode() for x in a)


def options():
    for name, a in {
        "sizes": ["-b", "8", "-e", "128M", "-f", "2"],
        "stepbytes": ["-b", "1K", "-e", "1MiB", "-i", "4KiB", "-n", "5", "-w", "1"],
        "ranges": ["--algo", "rd:0-64K;ring:64K-max"],
        "list": ["--algo", "ring,tree,rd,rabenseifner,ps", "--coll", "allreduce,allgather"],
        "ranks-mul": ["--np", "8", "--ranks", "2:max:x2"],
        "ranks-add": ["--nodes", "1:8:+1", "--scaling-size", "1M"],
        "ranks-list": ["--ranks", "2,4,8,max"],
        "all": ["-d", "all", "-o", "all", "--coll", "all", "--algo", "all"],
        "launcher": ["--np", "4", "--transport", "tcp", "--rendezvous", "[::1]:29500",
                     "--tcp-streams", "4", "--tcp-if", "lo"],
        "outputs": ["-O", "run.json", "-O", "run.csv", "--plot", "bw.png", "--format", "csv"],
        "chunk": ["--chunk-bytes", "64KiB", "--alpha-us", "1.5", "--beta-gbps", "12", "--timeout", "0.5"],
        "ps": ["--ps-servers", "1", "--algo", "ps", "-r", "1", "-c", "0", "-v", "-v"],
        "topo": ["--bind", "core", "--gpu", "0", "--nic", "eth0"],
        "info": ["info"],
        "run": ["run", "-b", "16", "-e", "1M", "-f", "256"],
    }.items():
        write("options", name, args(*a))


def launch_env():
    # COLLBENCH_RANK WORLD, RANK WORLD_SIZE, OMPI rank size, PMI rank size,
    # SLURM procid ntasks, COLLBENCH_ROOT, MASTER_ADDR, MASTER_PORT, then
    # --rendezvous
    empty = [""] * 13
    def env(**kw):
        v = list(empty)
        names = ["cr", "cw", "r", "ws", "or", "os", "pr", "ps", "sr", "sn", "root", "ma", "mp", "rdv"]
        v.append("")
        for k, x in kw.items():
            v[names.index(k)] = x
        return args(*v)
    write("launch_env", "collbench", env(cr="1", cw="4", root="node01:29500"))
    write("launch_env", "torchrun", env(r="0", ws="2", ma="127.0.0.1", mp="29500"))
    write("launch_env", "ompi", env(**{"or": "3", "os": "8"}, rdv="[fe80::1]:1234"))
    write("launch_env", "slurm", env(sr="7", sn="16", ma="node-a", mp="65535"))
    write("launch_env", "pmi", env(pr="0", ps="1"))


def results():
    for f in ("golden.json", "run-repro.json"):
        shutil.copy(os.path.join(DATA, f), os.path.join(CORPUS, "results", "seed-" + f))
    doc = json.load(open(os.path.join(DATA, "golden.json")))
    doc["status"] = "failed"
    doc["error"] = "rank 1 (host node02) left the job without finishing"
    doc["rows"] = doc["rows"][:2]
    write("results", "failed.json", json.dumps(doc, indent=2).encode())
    doc = {"schema": "collbench-results", "schema_version": 1, "rows": [{
        "collective": "barrier", "algo": "dissemination", "transport": "shm", "dtype": "float32",
        "op": "sum", "ranks": 3, "hosts": 1, "bytes": 0, "count": 0, "inplace": False,
        "time_us": 1.5, "algbw_gbps": None, "busbw_gbps": None, "wrong": 0,
        "algo_model_us": None, "time_min_us": 1, "time_p50_us": 1.5, "time_p99_us": 2,
        "time_max_us": 2, "slowest_rank": None, "root": None}]}
    write("results", "minimal.json", json.dumps(doc).encode())


def rec(conn, data=b"", close=False):
    return bytes([conn | (0x80 if close else 0)]) + struct.pack("<H", len(data)) + data


def boot_server():
    g = lambda seq, r: b"g/%d/%d" % (seq, r)
    ok = bytes([1])  # world 2
    for r in (0, 1):
        ok += rec(r, hello(r, 2))
    for r in (0, 1):
        ok += rec(r, msg(SET, g(0, r), b"addr%d" % r) + msg(GATHER, b"g/0/", gather_req(2)))
    for r in (0, 1):
        ok += rec(r, msg(SET, b"k", b"v") + msg(GET, b"k") + msg(BYE))
    write("boot_server", "job", ok)
    # rank 1 dies before its goodbye; rank 0 is told
    s = bytes([1]) + rec(0, hello(0, 2)) + rec(1, hello(1, 2)) + rec(1, close=True)
    write("boot_server", "death", s)
    # a stall: rank 0 blames 1, rank 1 blames 2 (world 3)
    s = bytes([2]) + b"".join(rec(r, hello(r, 3)) for r in range(3))
    s += rec(0, msg(ABORT, struct.pack("!ii", -6, 1), b"rank 0 waits for rank 1"))
    s += rec(1, msg(ABORT, struct.pack("!ii", -6, 2), b"rank 1 waits for rank 2"))
    write("boot_server", "stall", s)
    # a rank that failed says so
    s = bytes([1]) + rec(0, hello(0, 2)) + rec(1, hello(1, 2))
    s += rec(1, msg(ABORT, struct.pack("!ii", -7, -1), b"wrong values"))
    write("boot_server", "abort", s)
    # a gather answered at its deadline with what is there; the old short form
    s = bytes([2]) + b"".join(rec(r, hello(r, 3)) for r in range(3))
    s += rec(0, msg(SET, g(0, 0), b"x") + msg(GATHER, b"g/0/", gather_req(3, 1, 500)))
    s += rec(1, msg(SET, g(1, 1), b"y") + msg(GATHER, b"g/1/", struct.pack("!I", 3)))
    s += bytes([0x40 | 2]) + struct.pack("<H", 0)
    write("boot_server", "deadline", s)
    # refusals: no token, a wrong one, another world size, a rank out of
    # range, a rank twice, junk
    s = bytes([1]) + rec(5, hello(1, 2, token=b"")) + rec(6, hello(1, 2, token=b"guess"))
    s += rec(0, hello(0, 3)) + rec(1, hello(5, 2)) + rec(2, hello(0, 2)) + rec(3, hello(0, 2))
    s += rec(4, b"GET / HTTP/1.0\r\n\r\n") + rec(2, msg(99))
    write("boot_server", "refusals", s)
    # a message split over several reads, a wait answered later
    m = msg(SET, b"late", b"x" * 100)
    s = bytes([0]) + rec(0, hello(0, 1)) + rec(0, msg(GET, b"late")) + rec(0, m[:7]) + rec(0, m[7:50]) + rec(0, m[50:])
    write("boot_server", "split", s)
    # a host's relay (core/boot_relay.h) carrying ranks 1 and 2 of 3 on
    # channels 0 and 1: their gather's answer comes back as one FWDM; then
    # channel 1 closes before its goodbye
    fwd = lambda ch, data: msg(FWD, struct.pack("!I", ch), data)
    s = bytes([2]) + rec(0, hello(0, 3))
    s += rec(1, msg(RELAY, val=struct.pack("!i", 1) + b"node02".ljust(64, b"\0")))
    s += rec(1, fwd(0, hello(1, 3, b"node02")) + fwd(1, hello(2, 3, b"node02")))
    s += rec(0, msg(SET, g(0, 0), b"a0") + msg(GATHER, b"g/0/", gather_req(3)))
    s += rec(1, b"".join(fwd(c, msg(SET, g(0, c + 1), b"a%d" % (c + 1)) + msg(GATHER, b"g/0/", gather_req(3)))
                         for c in (0, 1)))
    s += rec(1, fwd(0, msg(BYE)) + fwd(1, b""))
    write("boot_server", "relay", s)


def boot_client():
    def gather_reply(world, vals):
        return msg(VALUE, val=b"".join(struct.pack("!I", len(v)) + v for v in vals))
    welcome = msg(WELCOME, val=struct.pack("<Q", 0x1234))
    # requests: get, allgather, barrier, check (2 bits each, first in the low bits)
    ops = 0 | 1 << 2 | 2 << 4 | 3 << 6
    s = bytes([ops, 1 | 1 << 3]) + welcome + msg(VALUE, val=b"value")
    s += gather_reply(2, [bytes(range(8)), bytes(range(8, 16))]) + gather_reply(2, [b"\1", b"\1"])
    write("boot_client", "job", s)
    s = bytes([3 << 0, 2]) + welcome + msg(ABORT, struct.pack("!ii", 1, -5), b"rank 1 (host node02) left the job")
    write("boot_client", "abort", s)
    s = bytes([1, 1]) + welcome + msg(ABORT, struct.pack("!ii", 0, -6), b"timed out after 30 s")
    write("boot_client", "abort-during-gather", s)
    s = bytes([0, 1]) + msg(ERROR, val=b"two processes claim rank 0 (hosts a and b)")
    write("boot_client", "refused", s)
    s = bytes([0, 1]) + b"HTTP/1.0 200 OK\r\n\r\n"
    write("boot_client", "junk", s)
    s = bytes([1, 1]) + welcome + gather_reply(2, [b"\0" * 7, b"\0" * 9])
    write("boot_client", "gather-sizes", s)
    # an allgather, then a gather to rank 0 of parts of their own sizes
    # (the second request): 3 bytes and none, then a part over its 8
    ops = 1 | 1 << 2 | 1 << 4 | 1 << 6
    s = bytes([ops, 1]) + welcome + gather_reply(2, [bytes(8), bytes(8)])
    s += gather_reply(2, [b"abc", b""]) + gather_reply(2, [bytes(8), bytes(8)])
    s += gather_reply(2, [bytes(9), b""])
    write("boot_client", "gather-var", s)


TCP_MAGIC = 0x43425450  # "CBTP"


def tcp():
    def hdr(tag, n):
        return struct.pack("=IIQQ", TCP_MAGIC, 0, tag, n)
    def rec(stream, data):
        return bytes([stream]) + struct.pack("<H", len(data)) + data
    # flags: streams-1 (bits 0-1), small split (bit 2), nrecv (bits 5-7);
    # a receive byte: cap index (low 3 bits), tag (the rest)
    small = 3 | 1 << 3  # a 4096-byte receive, tag 1
    s = bytes([0 | 2 << 5, small, 4 | 2 << 3]) + rec(0, hdr(1, 100) + b"a" * 100)
    s += rec(0, hdr(2, 24) + b"b" * 24)
    write("tcp", "two-messages", s)
    # two streams, a message split across both (split from 4 KiB)
    n = 8192
    s = bytes([1 | 4 | 1 << 5, 4 | 1 << 3]) + rec(0, hdr(1, n) + b"x" * (n // 2))
    s += rec(1, b"y" * (n // 2))
    write("tcp", "split", s)
    # a tag the receive does not expect; a message larger than its receive
    write("tcp", "wrong-tag", bytes([0 | 1 << 5, small]) + rec(0, hdr(9, 10) + b"z" * 10))
    write("tcp", "truncate", bytes([0 | 1 << 5, 1 | 1 << 3]) + rec(0, hdr(1, 10) + b"z" * 10))
    # cut short: a header, then the stream ends
    write("tcp", "short", bytes([0 | 1 << 5, small]) + rec(0, hdr(1, 1000) + b"q" * 10))
    # hellos from the input: a wrong job, then right ones
    # (transports/tcp.h's struct tcp_hello: 32 bytes, generation 0)
    hello = lambda stream, streams=1, job=0x1234567890abcdef, gen=0: struct.pack("=IiiiQII", TCP_MAGIC, 1, stream, streams, job, gen, 0)
    write("tcp", "hello-stranger", bytes([0 | 16, 32]) + hello(0, job=1))
    write("tcp", "hello-streams", bytes([0 | 16 | 1 << 5, 32]) + hello(0, streams=2) + bytes([small]))
    # a hello of a later generation than the endpoint's: not filed
    write("tcp", "hello-gen", bytes([0 | 16, 32]) + hello(0, gen=1))
    # the address blob from the input: a good-looking one, a short one
    write("tcp", "blob-short", bytes([8, 3]) + b"abc")


VB_MAGIC = 0x43425642  # "CBVB"
VB_HDR_BYTES = 48
VB_EAGER, VB_RTS, VB_RTR, VB_FRAG, VB_FIN, VB_NOTIFY, VB_CREDIT, VB_HELLO = range(1, 9)


def verbs_wire():
    # the structs of transports/verbs/verbs_wire.h, x86-64 layout
    def vaddr(rank, rails, cm=0, magic=VB_MAGIC, nrails=None):
        b = struct.pack("<IiII", magic, rank, len(rails) if nrails is None else nrails, cm)
        for i in range(4):
            ip, port = rails[i] if i < len(rails) else (0, 0)
            b += struct.pack("<IHH", ip, port, 0)
        return b
    def blob(rank, rails, magic=VB_MAGIC):
        b = struct.pack("<IiII", magic, rank, len(rails), 0)
        for i in range(4):
            r = rails[i] if i < len(rails) else {}
            b += struct.pack("<IIHBBB3x", r.get("qpn", 0), r.get("psn", 0), r.get("lid", 0),
                             r.get("port", 0), r.get("mtu", 0), r.get("link", 0))
            b += r.get("gid", bytes(16)) + r.get("dev", b"").ljust(16, b"\0")[:16]
        return b
    def conn(name, peer, a, bl):
        write("verbs_wire", name, bytes([0, peer, len(a)]) + a + bl)
    ib = dict(qpn=0x123, psn=0x456, lid=7, port=1, mtu=5, link=0, dev=b"mlx5_0")
    roce = dict(qpn=0xabcdef, psn=0xffffff, port=1, mtu=3, link=1,
                gid=bytes(10) + b"\xff\xff\x0a\x00\x00\x02", dev=b"rxe0")
    iwarp = dict(port=1, mtu=3, link=2, dev=b"siw_eth0")
    conn("conn-ib", 1, vaddr(1, [(0, 0)]), blob(1, [ib]))
    conn("conn-roce-2rails", 3, vaddr(3, [(0, 0)] * 2), blob(3, [roce, dict(roce, dev=b"rxe1")]))
    conn("conn-cm-iwarp", 2, vaddr(2, [(0x0100007f, 4791), (0x0200007f, 4792)], cm=1),
         blob(2, [iwarp, iwarp]))
    conn("conn-4rails", 5, vaddr(5, [(0, 0)] * 4), blob(5, [ib] * 4))
    conn("conn-dev-unended", 1, vaddr(1, [(0, 0)]), blob(1, [dict(ib, dev=b"x" * 16)]))
    conn("conn-mtu-0", 1, vaddr(1, [(0, 0)]), blob(1, [dict(ib, mtu=0)]))
    conn("conn-rails-differ", 1, vaddr(1, [(0, 0)], nrails=2), blob(1, [ib]))
    conn("conn-short", 1, vaddr(1, [(0, 0)])[:40], blob(1, [ib]))
    def export(nrails, addr, n):
        return bytes([1]) + struct.pack("<IIQQ4I", VB_MAGIC, nrails, addr, n, 1, 2, 3, 4)
    write("verbs_wire", "export", export(2, 0x7f0000001000, 1 << 20))
    write("verbs_wire", "export-wraps", export(1, 0xfffffffffffff000, 1 << 20))
    # a SEND or an immediate against a window
    def win(nrails=1, rail=0, credits=60, recv_seq=100, arrivals=0, send_seq=100):
        return struct.pack("<BBIHI", (nrails - 1) | rail << 2, credits, recv_seq & 0xffffffff,
                           arrivals, send_seq & 0xffffffff)
    def hdr(t, seq=0, tag=0, n=0, addr=0, credits=0, rkey=(0, 0, 0, 0)):
        return struct.pack("<BBHIQQQ4I", t, 0, credits, seq & 0xffffffff, tag, n, addr, *rkey)
    def send(name, w, m):
        write("verbs_wire", name, bytes([2]) + w + m)
    send("eager", win(arrivals=3), hdr(VB_EAGER, seq=103, tag=5, n=10, credits=2) + b"0123456789")
    send("eager-posted", win(), hdr(VB_EAGER, seq=99, n=0))
    send("eager-full", win(arrivals=576), hdr(VB_EAGER, seq=676))
    send("rts", win(recv_seq=0xfffffff0), hdr(VB_RTS, seq=0xfffffff0, tag=1, n=1 << 30, addr=1))
    send("rtr", win(send_seq=7), hdr(VB_RTR, seq=300, n=1 << 20, addr=0x7f00, rkey=(9, 8, 0, 0)))
    send("frag", win(), hdr(VB_FRAG, seq=90, n=8, addr=4096) + b"abcdefgh")
    send("fin-rail1", win(nrails=2, rail=1), hdr(VB_FIN, seq=99, n=1 << 22, addr=2))
    send("notify", win(), hdr(VB_NOTIFY, tag=0x7fffffff))
    send("credit", win(credits=30), hdr(VB_CREDIT, credits=34))
    send("hello-rail3", win(nrails=4, rail=3, credits=64), hdr(VB_HELLO))
    send("unknown-type", win(), hdr(9))
    def imm(name, w, v):
        write("verbs_wire", name, bytes([3]) + w + struct.pack("<I", v))
    RNDV, SIZED = 0x80000000, 0x40000000
    imm("imm-rndv", win(nrails=2, rail=1), RNDV | SIZED | 1 << 28 | 99)
    imm("imm-rndv-wrap28", win(recv_seq=0x20000003), RNDV | 0x0ffffffe)
    imm("imm-notify", win(nrails=3, rail=2), 12345)
    imm("imm-rails-short", win(nrails=2, rail=1), RNDV | 99)
    imm("imm-rails-many", win(nrails=1), RNDV | 3 << 28 | 99)


def accept_expect():
    for name, text in {
        "vendor": "# what the vendor promised\nbw_gbps = 11.5\nlat_us = 3\n",
        "bits": "bw_gbps = 100Gb/s   # HDR\n",
        "bytes-unit": "lat_us=2.5\n\tbw_gbps =12.5GB/s",
        "crlf": "bw_gbps = 25\r\nlat_us = 1.2\r\n",
        "blank-comments": "\n   \n# only comments\n  # and spaces\n",
        "unknown-key": "bw = 3\n",
        "twice": "lat_us = 1\nlat_us = 2\n",
        "trailing": "bw_gbps = 3 4\n",
        "range": "lat_us = 1e9\n",
        "not-text": "bw_gbps = 1\x00\n",
        "long": "# " + "x" * 300 + "\nbw_gbps = 1\n",
    }.items():
        write("accept_expect", name, text.encode())


def accept_switches():
    for name, text in {
        "lines": "# host leaf\nnode1 leafA\nnode2 leafA\r\nnode3 leafB\n",
        "slurm": "SwitchName=s1 Nodes=n[01-04,9],login LinkSpeed=1\n"
                 "SwitchName=s2 Nodes=r[1-2]c[1-3]\n"
                 "SwitchName=top Switches=s[1-2]\n",
        "continued": "SwitchName=s1 \\\n  Nodes=a[1-3]\n",
        "two-leaves": "a x\na y\n",
        "bad-range": "SwitchName=s Nodes=n[9-1]\n",
        "brackets": "SwitchName=s Nodes=n[1-2\n",
        "empty": "# nothing\n",
        "not-text": "a b\x00\n",
        "long": "h" * 70 + " leaf\n",
    }.items():
        write("accept_switches", name, text.encode())


if __name__ == "__main__":
    options()
    launch_env()
    results()
    boot_server()
    boot_client()
    tcp()
    verbs_wire()
    accept_expect()
    accept_switches()
