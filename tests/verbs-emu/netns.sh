#!/bin/bash
# tests/verbs-emu/netns.sh - the emulated fabric between two namespace hosts
# (made as tests/cluster/netns.sh makes them: two network namespaces joined
# by a veth pair), one fabric (state directory) for both:
#  - each host has its own cbemu0: IB LIDs from the fabric's subnet manager,
#    RoCE GIDs from each host's address;
#  - stock ibv_rc_pingpong (IB, RoCE -g 3) and perftest (ib_write_bw IB,
#    ib_send_bw -R RoCE, ib_write_bw -R iWARP) from host A to host B;
#  - the traffic really crosses the veth: `tc tbf` on it slows perftest
#    down to the shaped rate;
#  - the link taken down in the middle of a run: the port goes DOWN and a
#    writer ends with "transport retry counter exceeded" within the
#    deadline; a peer process killed: the same;
#  - rdma_cm towards a host that does not answer: UNREACHABLE.
# Traffic stays inside the namespaces this test makes (and removes).
. "$(dirname "$0")/lib.sh"
TEST_CM=${1:?usage: netns.sh collbench libdir test_cm}

[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no ip (iproute2)"; exit 77; }
command -v tc >/dev/null || { echo "SKIP: no tc (iproute2)"; exit 77; }
A=cbeA$$ B=cbeB$$
net=10.251.$(( $$ % 250 ))
cleanup() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
if ! ip netns add "$A" 2>/dev/null || ! ip netns add "$B"; then
	echo "SKIP: cannot create network namespaces here"
	exit 77
fi
ip link add "ea$$" type veth peer name "eb$$" || { echo "SKIP: no veth"; exit 77; }
ip link set "ea$$" netns "$A"
ip link set "eb$$" netns "$B"
ip -n "$A" addr add "$net.1/24" dev "ea$$"
ip -n "$B" addr add "$net.2/24" dev "eb$$"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "ea$$" up
ip -n "$B" link set "eb$$" up
export COLLBENCH_EMU_RETRY_FLOOR_MS=500 COLLBENCH_EMU_RETRY_CAP_MS=2000

inns() { local ns=$1; shift; ip netns exec "$ns" env "$@"; }

# Each host, its device.
a=$(inns "$A" COLLBENCH_EMU_LINK=roce timeout 30 "$EMU" ibv_devinfo -v 2>&1)
b=$(inns "$B" COLLBENCH_EMU_LINK=roce timeout 30 "$EMU" ibv_devinfo -v 2>&1)
if grep -q "GID\[  3\]:		::ffff:$net.1, RoCE v2" <<<"$a" &&
	grep -q "GID\[  3\]:		::ffff:$net.2, RoCE v2" <<<"$b" &&
	grep -q "hca_id:	cbemu0" <<<"$a" && grep -q "hca_id:	cbemu0" <<<"$b"; then
	pass "two hosts, each its cbemu0 with its own RoCE v2 GID ($net.1, $net.2)"
else
	fail "RoCE GIDs per host: $(grep -h 'GID\[  3' <<<"$a$b")"
fi
la=$(inns "$A" timeout 30 "$EMU" ibv_devinfo | awk '/port_lid/ { print $2 }')
lb=$(inns "$B" timeout 30 "$EMU" ibv_devinfo | awk '/port_lid/ { print $2 }')
if [ -n "$la" ] && [ -n "$lb" ] && [ "$la" != "$lb" ]; then
	pass "IB: the fabric gave host A LID $la and host B LID $lb"
else
	fail "IB LIDs: A '$la', B '$lb'"
fi

# Stock programs across the hosts: server on A, client on B.
p=$(free_port)
pair pp-ib "COLLBENCH_EMU_LINK=ib" "ibv_rc_pingpong -c -d cbemu0 -p $p -n 300 -s 65536" \
	"ibv_rc_pingpong -c -d cbemu0 -p $p -n 300 -s 65536" "$A" "$B" "$net.1"
if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] && grep -q "300 iters" "$TMP/pp-ib.cli"; then
	pass "ibv_rc_pingpong IB A<->B: $(grep iters "$TMP/pp-ib.cli")"
else
	fail "ibv_rc_pingpong IB A<->B: $rc_srv/$rc_cli: $(cat "$TMP/pp-ib.srv" "$TMP/pp-ib.cli" | tail -6)"
fi
p=$(free_port)
pair pp-roce "COLLBENCH_EMU_LINK=roce" "ibv_rc_pingpong -c -g 3 -d cbemu0 -p $p -n 300" \
	"ibv_rc_pingpong -c -g 3 -d cbemu0 -p $p -n 300" "$A" "$B" "$net.1"
if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] && grep -q "remote address.*GID ::ffff:$net.1" "$TMP/pp-roce.cli"; then
	pass "ibv_rc_pingpong RoCE -g 3 A<->B: $(grep iters "$TMP/pp-roce.cli")"
else
	fail "ibv_rc_pingpong RoCE A<->B: $rc_srv/$rc_cli: $(cat "$TMP/pp-roce.srv" "$TMP/pp-roce.cli" | tail -6)"
fi
pt() { # NAME LINK TOOL ARGS... : perftest server on A, client on B
	local name=$1 link=$2 tool=$3
	shift 3
	p=$(free_port)
	pair "$name" "COLLBENCH_EMU_LINK=$link" "$tool -d cbemu0 -p $p $*" \
		"$tool -d cbemu0 -p $p $*" "$A" "$B" "$net.1"
	bw=$(bw_of "$TMP/$name.cli")
	if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] && [ -n "$bw" ]; then
		pass "$tool $* ($link) A<->B: $bw MB/s"
	else
		fail "$tool $* ($link) A<->B: $rc_srv/$rc_cli: $(tail -5 "$TMP/$name.srv" "$TMP/$name.cli")"
		bw=
	fi
}
pt wr-ib ib ib_write_bw -s 65536 -n 300
free_bw=$bw
pt send-roce-R roce ib_send_bw -R -s 65536 -n 300
pt wr-iwarp-R iwarp ib_write_bw -R -s 65536 -n 300

# The traffic crosses the veth: shape host B's side (the writer's) to
# 40 Mbit/s (5 MB/s).
tc -n "$B" qdisc add dev "eb$$" root tbf rate 40mbit burst 32kbit latency 400ms
pt wr-slow ib ib_write_bw -s 65536 -n 60
tc -n "$B" qdisc del dev "eb$$" root
if [ -n "$bw" ] && awk -v b="$bw" 'BEGIN { exit !(b > 0.5 && b < 6.5) }'; then
	pass "tc tbf 40 Mbit/s on the veth: ib_write_bw $bw MB/s (unshaped: ${free_bw:-?} MB/s)"
else
	fail "tc tbf 40 Mbit/s: ib_write_bw '$bw' MB/s, want about 5 (unshaped ${free_bw:-?})"
fi

# The link goes down in the middle of a run; a peer process dies.  The
# writer (ib_write_bw -D: WRITEs outstanding all the time) is on host B and
# must end with "Failed status 12" (IBV_WC_RETRY_EXC_ERR) within the
# deadline; the idle server is stopped afterwards (a side with nothing
# outstanding waits, as on hardware).
xmit_b=$COLLBENCH_EMU_STATE/hosts/$(ip netns exec "$B" stat -L -c %i /proc/self/ns/net)/sys/class/infiniband/cbemu0/ports/1/counters/port_xmit_data
run_then() { # NAME ACTION... : ib_write_bw -D 30, server A, client B
	local name=$1 p s c i
	shift
	p=$(free_port)
	inns "$A" COLLBENCH_EMU_LINK=ib timeout 60 "$EMU" ib_write_bw -d cbemu0 -p "$p" -D 30 \
		>"$TMP/$name.srv" 2>&1 &
	s=$!
	for i in $(seq 1 100); do
		ip netns exec "$A" ss -Hltn "sport = :$p" | grep -q . && break
		sleep 0.1
	done
	inns "$B" COLLBENCH_EMU_LINK=ib timeout 60 "$EMU" ib_write_bw -d cbemu0 -p "$p" -D 30 "$net.1" \
		>"$TMP/$name.cli" 2>&1 &
	c=$!
	# the writer is writing when host B's port counter moves (a loaded
	# machine may take seconds to start it)
	local x0 x1
	x0=$(cat "$xmit_b" 2>/dev/null || echo 0)
	for i in $(seq 1 200); do
		sleep 0.1
		x1=$(cat "$xmit_b" 2>/dev/null || echo 0)
		[ "$x1" -gt $((x0 + 1000000)) ] && break
	done
	sleep 0.5
	t0=$(date +%s%N)
	"$@" "$s"
	for i in $(seq 1 100); do
		kill -0 "$c" 2>/dev/null || break
		sleep 0.1
	done
	dt_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill "$c" "$s" 2>/dev/null
	wait "$c"
	rc_cli=$?
	wait "$s"
}
link_down() { ip -n "$B" link set "eb$$" down; sleep 0.3; down_state=$(inns "$B" timeout 30 "$EMU" ibv_devinfo | grep -o 'PORT_[A-Z]*'); }
run_then down link_down
ip -n "$B" link set "eb$$" up
if [ $rc_cli -ne 0 ] && grep -q "Failed status 12:" "$TMP/down.cli" &&
	[ "$down_state" = PORT_DOWN ] && [ $dt_ms -lt 6000 ]; then
	pass "link down mid-run: port $down_state, the writer ended with status 12 (retry exceeded) after $dt_ms ms"
else
	fail "link down: client $rc_cli, port '$down_state', $dt_ms ms: $(tail -4 "$TMP/down.cli")"
fi
sleep 0.3
up_state=$(inns "$B" timeout 30 "$EMU" ibv_devinfo | grep -o 'PORT_[A-Z]*')
if [ "$up_state" = PORT_ACTIVE ]; then
	pass "link up again: port ACTIVE"
else
	fail "link up again: port '$up_state'"
fi
# kill_tree PID: the process and its descendants (the server runs under
# a subshell, ip netns exec, timeout), by process id.
kill_tree() {
	local k
	for k in $(pgrep -P "$1"); do kill_tree "$k"; done
	kill -9 "$1" 2>/dev/null
}
kill_srv() { kill_tree "$1"; }
run_then dead kill_srv
if [ $rc_cli -ne 0 ] && grep -q "Failed status 12:" "$TMP/dead.cli" && [ $dt_ms -lt 6000 ]; then
	pass "peer process killed: the writer ended with status 12 (retry exceeded) after $dt_ms ms"
else
	fail "peer killed: client $rc_cli, $dt_ms ms: $(tail -4 "$TMP/dead.cli")"
fi

# rdma_cm towards a host that does not answer (its link down): UNREACHABLE.
ip -n "$A" link set "ea$$" down
out=$(inns "$B" COLLBENCH_EMU_LINK=roce timeout 30 "$EMU" "$TEST_CM" unreachable "$net.1" 2>&1)
rc=$?
ip -n "$A" link set "ea$$" up
if [ $rc -eq 0 ]; then
	pass "rdma_cm to a host that does not answer: $out"
else
	fail "rdma_cm unreachable: $out"
fi
finish
