#!/bin/bash
# benchmarks/tcp-limit.sh [SECONDS] - what loopback TCP itself carries on
# this machine, the ceiling of collbench's and Open MPI's tcp: iperf3 on
# 127.0.0.1 (a server of its own on a free port, gone at the end), one
# stream and two, 128 KiB and 1 MiB writes, SECONDS each (default 3), and
# both directions at once (--bidir, what an allreduce at np 2 does).
# Installs (apt, when missing): iperf3.  CSV on stdout:
#   test,streams,write_bytes,gbps     (GB/s = 1e9 bytes/s, each direction)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/need.sh"
secs=${1:-3}
case $secs in '' | *[!0-9]*) echo "tcp-limit.sh: SECONDS is a whole number" >&2; exit 2 ;; esac
need iperf3 command -v iperf3 || exit 77
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 25201)
iperf3 -s -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do # the server is up when it accepts
	(exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
	sleep 0.2
done
echo "test,streams,write_bytes,gbps"
run() { # NAME STREAMS LEN [iperf3 options]
	local name=$1 p=$2 len=$3
	shift 3
	local j
	j=$(timeout $((secs + 15)) iperf3 -c 127.0.0.1 -p "$port" -t "$secs" -P "$p" -l "$len" -J "$@" 2>/dev/null) || {
		echo "$name,$p,$len,failed"
		return
	}
	python3 -c '
import json, sys
e = json.load(sys.stdin)["end"]
r = e.get("sum_received") or e["sum"]
print(f"%s,%s,%s,%.2f" % (sys.argv[1], sys.argv[2], sys.argv[3], r["bits_per_second"] / 8e9))
' "$name" "$p" "$len" <<<"$j"
}
run oneway 1 131072
run oneway 2 131072
run oneway 1 1048576
run bidir 1 131072 --bidir
