#!/bin/bash
# benchmarks/verbs-vs-perftest.sh - collbench's verbs transport beside
# perftest's ib_write_bw and ib_write_lat, same device, same sizes, same
# session, interleaved rounds; prints the medians and the ratios collbench /
# perftest (bandwidth) and collbench - perftest (latency, us).
# Installs nothing: needs perftest (Debian: apt-get install perftest) and,
# with --emulated, the verbs emulation built (tools/test.sh).
#
#   benchmarks/verbs-vs-perftest.sh [--emulated | --vm] [--dev DEV] [--gid-index N]
#       [--peer HOST] [--rounds 5] [--sizes "64K 1M 8M"] [--iters N]
#       [--lat-sizes "8 4K"] [--lat-iters N]
#
#   --emulated   both on the project's verbs emulation (tools/emulated-rdma.sh):
#                the ratio then shows collbench's own protocol overhead, as
#                both pay the same emulated fabric; the absolute figures mean
#                nothing about hardware
#   --vm         both in one QEMU guest (two vCPUs) on the kernel's
#                soft-RoCE (rxe0 on a dummy interface, tools/rdma-vm.sh;
#                GID index 1, the RoCE v2 one of its IPv4 address): a
#                real provider, still software
#                and under TCG, so again only the ratio means something -
#                collbench's protocol cost - never the figures
#   --dev DEV    the device (perftest -d, collbench --nic); default: the
#                first one ibv_devices lists
#   --gid-index  RoCE: the GID (perftest -x, collbench --gid-index)
#   --peer HOST  the second side on HOST, started with ssh (perftest's
#                server and collbench's rank 1); default: both on this host
#
# collbench runs `--coll pingpong --algo bw` (osu_bw's pattern: windows of 64
# messages, one way, one reply per window); ib_write_bw runs `-F
# --report_gbits` with its default window.  Both report one-way bandwidth;
# perftest's Gb/s are converted to GB/s (/8).  On real hardware, run it
# between the pair of hosts you are accepting; >= 0.95x is the target.
# Latency: collbench `--coll pingpong --algo latency` (osu_latency's pattern:
# half a round trip of two-sided messages), its per-iteration median
# (time_p50_us), beside ib_write_lat's t_typical (the median of half round
# trips of RDMA writes polled on memory): the same sizes, --lat-iters
# iterations each, interleaved rounds, the medians of the rounds.  --lat-sizes
# "" skips it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
CB=${CB:-$root/build/collbench}
emu=() dev='' gid='' peer='' rounds=5 sizes="64K 1M 8M" iters=2000 vm=0
lsizes="8 4K" liters=1000
args=()
for a in "$@"; do [ "$a" = --vm ] || args+=("$a"); done
while [ $# -gt 0 ]; do
	case $1 in
	--emulated) emu=("$root/tools/emulated-rdma.sh") ;;
	--vm) vm=1 ;;
	--dev) dev=$2; shift ;;
	--gid-index) gid=$2; shift ;;
	--peer) peer=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--iters) iters=$2; shift ;;
	--lat-sizes) lsizes=$2; shift ;;
	--lat-iters) liters=$2; shift ;;
	*) echo "verbs-vs-perftest.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
if [ $vm = 1 ] && [ -z "${RDMA_VM_GUEST:-}" ]; then
	[ ${#emu[@]} = 0 ] || { echo "verbs-vs-perftest.sh: --vm or --emulated, not both" >&2; exit 2; }
	CB=$(realpath "$CB")
	[ -n "$gid" ] || args+=(--gid-index 1)
	# two vCPUs: each side polls its own (on one, each busy-polling
	# side waits out the other's time slice: ib_write_lat measured ~4-7 ms)
	exec "$root/tools/rdma-vm.sh" --dev rxe --smp 2 --timeout 1800 -- env CB="$CB" \
		COLLBENCH_PLUGIN_PATH="${COLLBENCH_PLUGIN_PATH:-$(dirname "$CB")/transports}" \
		"$here/verbs-vs-perftest.sh" "${args[@]}"
fi
command -v ib_write_bw >/dev/null || { echo "verbs-vs-perftest.sh: no ib_write_bw (Debian: perftest)" >&2; exit 77; }
[ -x "$CB" ] || { echo "verbs-vs-perftest.sh: no collbench at $CB (build first, or set CB)" >&2; exit 2; }
if [ ${#emu[@]} -gt 0 ]; then
	export COLLBENCH_EMU_STATE=${COLLBENCH_EMU_STATE:-$(mktemp -d)/fabric}
	export COLLBENCH_PLUGIN_PATH=${COLLBENCH_PLUGIN_PATH:-$(dirname "$CB")/transports}
fi
if [ -z "$dev" ]; then
	dev=$("${emu[@]}" ibv_devices 2>/dev/null | awk 'NR > 2 {print $1; exit}')
	[ -n "$dev" ] || { echo "verbs-vs-perftest.sh: no RDMA device (ibv_devices lists none)" >&2; exit 77; }
fi
remote() { if [ -n "$peer" ]; then ssh "$peer" "$@"; else "$@"; fi; }
bytes() { numfmt --from=iec "$1"; }
port=$((20000 + RANDOM % 10000))

# perftest PROG ARGS...: its server (at most 300 s), then its client, tried
# again while the server is not yet listening (a slow guest); the client's
# output.
perftest() {
	local p=$((port++)) srv out try
	remote timeout 300 "${emu[@]}" "$@" -p "$p" >/dev/null 2>&1 &
	srv=$!
	for try in 1 2 3 4 5 6 7 8; do
		sleep "0.$((try * 2))"
		out=$(timeout 300 "${emu[@]}" "$@" -p "$p" "${peer:-127.0.0.1}" 2>/dev/null) && break
		kill -0 "$srv" 2>/dev/null || break
	done
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	echo "$out"
}

perftest_gbs() { # SIZE -> GB/s
	local s=$1 out
	out=$(perftest ib_write_bw -d "$dev" ${gid:+-x $gid} -F --report_gbits -s "$s" -n "$iters")
	# "#bytes #iterations BW peak BW average MsgRate": the average, Gb/s
	awk -v s="$s" '$1 == s && NF >= 4 {printf "%.4f\n", $4 / 8}' <<<"$out"
}

collbench_gbs() { # SIZE -> GB/s
	local s=$1 p=$((port++)) out
	remote env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 "${emu[@]}" "$CB" --transport verbs \
		--nic "$dev" ${gid:+--gid-index $gid} --rendezvous "127.0.0.1:$p" \
		--coll pingpong --algo bw -b "$s" -e "$s" -n 20 -w 2 >/dev/null 2>&1 &
	local r1=$!
	out=$(COLLBENCH_RANK=0 COLLBENCH_WORLD=2 "${emu[@]}" "$CB" --transport verbs \
		--nic "$dev" ${gid:+--gid-index $gid} --rendezvous "0.0.0.0:$p" \
		--coll pingpong --algo bw -b "$s" -e "$s" -n 20 -w 2 --format csv 2>/dev/null)
	wait "$r1"
	python3 -c 'import csv,sys
rows=[r for r in csv.DictReader(sys.stdin) if r["inplace"]=="0"]
print(rows[0]["algbw_gbps"] if rows else "")' <<<"$out"
}

perftest_lat() { # SIZE -> us, ib_write_lat's t_typical (a median)
	local s=$1 out
	out=$(perftest ib_write_lat -d "$dev" ${gid:+-x $gid} -F -s "$s" -n "$liters")
	# "#bytes #iterations t_min t_max t_typical t_avg ...": t_typical
	awk -v s="$s" '$1 == s && NF >= 5 {printf "%.3f\n", $5}' <<<"$out"
}

collbench_lat() { # SIZE -> us, half a round trip, the per-iteration median
	local s=$1 p=$((port++)) out
	remote env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 "${emu[@]}" "$CB" --transport verbs \
		--nic "$dev" ${gid:+--gid-index $gid} --rendezvous "127.0.0.1:$p" \
		--coll pingpong --algo latency -b "$s" -e "$s" -n "$liters" -w 10 >/dev/null 2>&1 &
	local r1=$!
	out=$(COLLBENCH_RANK=0 COLLBENCH_WORLD=2 "${emu[@]}" "$CB" --transport verbs \
		--nic "$dev" ${gid:+--gid-index $gid} --rendezvous "0.0.0.0:$p" \
		--coll pingpong --algo latency -b "$s" -e "$s" -n "$liters" -w 10 --format csv 2>/dev/null)
	wait "$r1"
	python3 -c 'import csv,sys
rows=[r for r in csv.DictReader(sys.stdin) if r["inplace"]=="0"]
print(rows[0]["time_p50_us"] if rows else "")' <<<"$out"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }

echo "# verbs-vs-perftest: device $dev${gid:+, GID index $gid}${peer:+, peer $peer}${emu:+, on the emulation}; $rounds interleaved rounds, medians, GB/s"
printf "%10s %14s %14s %8s\n" size collbench ib_write_bw ratio
for s in $sizes; do
	b=$(bytes "$s")
	: >"/tmp/vvp.c.$$"
	: >"/tmp/vvp.p.$$"
	for ((k = 0; k < rounds; k++)); do
		if ((k % 2)); then
			perftest_gbs "$b" >>"/tmp/vvp.p.$$"
			collbench_gbs "$b" >>"/tmp/vvp.c.$$"
		else
			collbench_gbs "$b" >>"/tmp/vvp.c.$$"
			perftest_gbs "$b" >>"/tmp/vvp.p.$$"
		fi
	done
	c=$(grep . "/tmp/vvp.c.$$" | median)
	p=$(grep . "/tmp/vvp.p.$$" | median)
	r=$(awk -v c="${c:-0}" -v p="${p:-0}" 'BEGIN {print (p > 0 ? sprintf("%.2f", c / p) : "-")}')
	printf "%10s %14s %14s %8s\n" "$s" "${c:--}" "${p:--}" "$r"
done
[ -z "$lsizes" ] || {
	echo "# latency: $rounds interleaved rounds of $liters iterations, medians, us (half a round trip)"
	printf "%10s %14s %14s %8s %10s\n" size collbench ib_write_lat ratio "diff_us"
}
for s in $lsizes; do
	b=$(bytes "$s")
	: >"/tmp/vvp.c.$$"
	: >"/tmp/vvp.p.$$"
	for ((k = 0; k < rounds; k++)); do
		if ((k % 2)); then
			perftest_lat "$b" >>"/tmp/vvp.p.$$"
			collbench_lat "$b" >>"/tmp/vvp.c.$$"
		else
			collbench_lat "$b" >>"/tmp/vvp.c.$$"
			perftest_lat "$b" >>"/tmp/vvp.p.$$"
		fi
	done
	c=$(grep . "/tmp/vvp.c.$$" | median)
	p=$(grep . "/tmp/vvp.p.$$" | median)
	awk -v s="$s" -v c="${c:-0}" -v p="${p:-0}" 'BEGIN {
		ok = p > 0 && c > 0
		printf "%10s %14s %14s %8s %10s\n", s, (c > 0 ? c : "-"), (p > 0 ? p : "-"),
			(ok ? sprintf("%.2f", c / p) : "-"), (ok ? sprintf("%+.1f", c - p) : "-") }'
done
rm -f "/tmp/vvp.c.$$" "/tmp/vvp.p.$$"
