#!/bin/bash
# benchmarks/verbs-emu-bw.sh - what the verbs emulation (tests/verbs-emu)
# moves, as a sanity reference for its users, never a performance claim:
# perftest's ib_write_bw run unchanged on it (two processes on this host,
# IB mode, -D seconds per point), beside iperf3 over TCP loopback (the
# wire the emulation rides), in interleaved rounds, medians.
#
#   benchmarks/verbs-emu-bw.sh [ROUNDS [SIZES]]   (defaults: 5, "4096 65536 1048576")
#
# Needs the emulation built (tools/test.sh) and perftest and iperf3.
# Output: one line per size: median ib_write_bw MB/s, median iperf3 MB/s
# (1 MiB writes, one stream), their ratio.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
sizes=${2:-"4096 65536 1048576"}
dur=${DUR:-2}
for t in ib_write_bw iperf3 ss; do
	command -v "$t" >/dev/null || { echo "verbs-emu-bw.sh: no $t" >&2; exit 77; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export COLLBENCH_EMU_STATE=$TMP/fabric COLLBENCH_EMU_LINK=ib

wait_listen() { # PORT PID
	for _ in $(seq 1 100); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

emu_bw() { # SIZE -> MB/s
	local p=$((21000 + RANDOM % 5000)) s
	timeout 60 "$root/tools/emulated-rdma.sh" ib_write_bw -d cbemu0 -p $p -s "$1" -D "$dur" \
		>"$TMP/srv" 2>&1 &
	s=$!
	wait_listen $p $s || { echo "verbs-emu-bw.sh: server did not start: $(cat "$TMP/srv")" >&2; exit 1; }
	timeout 60 "$root/tools/emulated-rdma.sh" ib_write_bw -d cbemu0 -p $p -s "$1" -D "$dur" 127.0.0.1 \
		>"$TMP/cli" 2>&1
	wait $s
	awk -v s="$1" '$1 == s { print $4; exit }' "$TMP/cli"
}

tcp_bw() { # -> MB/s
	local p=$((26000 + RANDOM % 5000)) s
	timeout 60 iperf3 -s -1 -p $p >/dev/null 2>&1 &
	s=$!
	wait_listen $p $s || return 1
	timeout 60 iperf3 -c 127.0.0.1 -p $p -t "$dur" -l 1M -J 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6, 1))'
	wait $s
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for r in $(seq 1 "$rounds"); do
	tcp_bw >>"$TMP/tcp"
	for s in $sizes; do
		emu_bw "$s" >>"$TMP/emu.$s"
	done
done
tcp=$(median <"$TMP/tcp")
echo "# ib_write_bw on the verbs emulation vs iperf3 TCP loopback, $rounds rounds of ${dur} s, medians ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%10s %14s %14s %8s\n' bytes emu_MBps iperf3_MBps ratio
for s in $sizes; do
	e=$(median <"$TMP/emu.$s")
	printf '%10s %14s %14s %8s\n' "$s" "$e" "$tcp" "$(awk -v e="$e" -v t="$tcp" 'BEGIN { printf "%.2f", e / t }')"
done
