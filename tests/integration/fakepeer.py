#!/usr/bin/env python3
"""fakepeer.py - a misbehaving peer for collbench's failure tests.

Speaks just enough of collbench's wire formats (core/bootstrap.c,
transports/tcp.c) to get in, then sends what does not parse.  Every mode
sends to 127.0.0.1 only and gives up after a few seconds.

  fakepeer.py server PORT      a "rendezvous" that answers with HTTP
  fakepeer.py stranger PORT    connect to a rendezvous and send junk
  fakepeer.py rank-junk PORT   join as rank 1 of 2, then send the store junk
  fakepeer.py tcp-junk PORT    join as rank 1 of 2 over tcp, then send a
                               data message whose header does not parse
  fakepeer.py tcp-silent PORT  join as rank 1 of 2 over tcp, publish an
                               address, and never connect: rank 0 waits in
                               its connect; "published" on stdout once it
                               can, then silence until the store speaks
"""
import os
import socket
import struct
import sys
import time

MAGIC = 0x43424B56  # "CBKV"
HELLO, WELCOME, SET, GET, GATHER, VALUE, ERROR, ABORT, BYE = range(1, 10)
TCP_MAGIC = 0x43425450  # "CBTP"


def msg(t, key=b"", val=b""):
    return struct.pack("!IIII", MAGIC, t, len(key), len(val)) + key + val


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed")
        b += c
    return b


def recv_msg(s):
    m, t, kl, vl = struct.unpack("!IIII", recv_exact(s, 16))
    assert m == MAGIC, hex(m)
    return t, recv_exact(s, kl), recv_exact(s, vl)


def join(port, rank=1, world=2):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    host = b"fakehost".ljust(64, b"\0")
    # the job token, as a rank of the job would present it (none: "")
    token = os.environ.get("COLLBENCH_JOB_TOKEN", "").encode()[:63]
    s.sendall(msg(HELLO, val=struct.pack("!iii", rank, world, 4242) + host +
                  token.ljust(64, b"\0")))
    t, _, job = recv_msg(s)
    assert t == WELCOME, t
    return s, job


def gather(s, seq, rank, value):
    prefix = b"g/%d/" % seq
    s.sendall(msg(SET, prefix + b"%d" % rank, value))
    s.sendall(msg(GATHER, prefix, struct.pack("!I", 2)))
    t, _, v = recv_msg(s)
    assert t == VALUE, t
    out, off = [], 0
    while off < len(v):
        (n,) = struct.unpack("!I", v[off:off + 4])
        out.append(v[off + 4:off + 4 + n])
        off += 4 + n
    return out


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "server":
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen()
        ls.settimeout(10)
        c, _ = ls.accept()
        c.recv(1000)
        c.sendall(b"HTTP/1.0 200 OK\r\n\r\nnot a collbench rendezvous\n")
        time.sleep(1)
        return
    if mode == "stranger":
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        time.sleep(0.5)
        return
    s, job = join(port)
    if mode == "rank-junk":
        s.sendall(b"\xde\xad\xbe\xef" * 8)
        time.sleep(1)
        return
    if mode in ("tcp-junk", "tcp-silent"):
        # host info allgather (core/comm.c): the hash of the host's key
        # (native uint64; any but rank 0's: another host), name[64]
        info = struct.pack("=Q", 0xfa4e) + b"fakehost".ljust(64, b"\0")
        gather(s, 0, 1, info)
        # topology (topo/job.c): the machine allgather, then binding and
        # host summary gathered to rank 0 alone (so only set): rank 0's
        # size, a full part (rank 1 is among the ranks whose binding is
        # shown) whose head says rank 1, no topology, and zeros (another
        # machine, no topology: nothing to compare, which is no failure)
        for seq in (1, 2):
            s.sendall(msg(GET, b"g/%d/0" % seq))
            t, _, v0 = recv_msg(s)
            assert t == VALUE, t
            if seq == 1:
                gather(s, seq, 1, b"\0" * len(v0))
            else:
                # struct head: rank, has_topo, bound, full, 3 hashes
                head = struct.pack("=iiiiQQQ", 1, 0, 0, 1, 0, 0, 0)
                s.sendall(msg(SET, b"g/2/1", head + b"\0" * (len(v0) - len(head))))
        # transport addresses are published in the store ("tp/tcp/RANK")
        # and fetched when a plan first needs the peer (core/comm_conn.c)
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen()
        sa = ls.getsockname()
        sockaddr = struct.pack("=H", socket.AF_INET) + struct.pack("!H", sa[1]) \
            + socket.inet_aton(sa[0])
        # struct tcp_addr: magic, rank, sockaddr_storage, socklen_t,
        # ifname[16], padding
        blob = struct.pack("=Ii", TCP_MAGIC, 1) + sockaddr.ljust(128, b"\0") \
            + struct.pack("=I", 16) + b"lo".ljust(16, b"\0") + b"\0" * 4
        s.sendall(msg(SET, b"tp/tcp/1", blob))
        if mode == "tcp-silent":
            # the lower rank waits for the higher one to dial: never.
            # Leave as a rank would once the store says the job ended.
            print("published", flush=True)
            s.settimeout(20)
            try:
                t, _, _ = recv_msg(s)
                print("store said", t, flush=True)
            except (OSError, EOFError):
                pass
            return
        s.sendall(msg(GET, b"tp/tcp/0"))
        t, _, b0 = recv_msg(s)
        assert t == VALUE, t
        fam, = struct.unpack("=H", b0[8:10])
        p0, = struct.unpack("!H", b0[10:12])
        ip0 = socket.inet_ntoa(b0[12:16])
        # the higher rank dials every stream of the lower one's listener
        (jobid,) = struct.unpack("=Q", job[:8])
        streams = []
        for st in range(2):
            d = socket.create_connection((ip0, p0), timeout=10)
            d.sendall(struct.pack("=IiiiQII", TCP_MAGIC, 1, st, 2, jobid, 0, 0))
            streams.append(d)
        # a data message whose header does not parse
        streams[0].sendall(b"\x00" * 4 + b"\x11" * 60)
        time.sleep(2)
        return
    raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    main()
