# tests/cluster/hosts.sh - test hosts for the cluster tests (bash, sourced):
# network namespaces joined by veth pairs to a bridge in a "switch"
# namespace of their own, so hosts talk only through that switch and
# nothing reaches the machine's own network.  Each host's end is named
# eth0 and has 10.R.S.(i+1)/24.
#   cluster_need        skip (77) without root, ip, tc; clean up on EXIT
#   cluster_up N        make hosts 0..N-1 (HOST[i], ADDR[i], PORT_OUT[i])
#   cluster_down        remove everything (also on EXIT)
#   shape_host I RATE   tc tbf on host I's cable, both directions
#                       (TBF_BURST: the bucket, else what RATE sends in 4 ms)
#   shape_all RATE      every host sends at RATE (tbf on its egress)
#   shape_path I J RATE [BASE]  htb: only traffic between I and J at RATE
#   shape_dests I RATE BASE J...  htb: host I's traffic to each J at RATE
#   cable_down I        host I's cable unplugged (its switch port down)
#   cpu_cap PCT         sets CPU_CAP to a command that runs its arguments
#                       in a cpu cgroup of their own capped at PCT% of one
#                       core
#                       (cgroup v1's cpu controller or v2's cpu.max; a
#                       slow host), for OUTER_R (ip netns exec mounts a
#                       /sys without the cgroups); fails where neither can
#                       be written.  The cgroup goes with cluster_down
#   run_hosts NAME N ARGS...  one rank per host (COLLBENCH_RANK/WORLD, a
#                       job token), rank 0's host serving the rendezvous;
#                       sets RC[], T_RANK0 (when rank 0 ended), outputs
#                       in $TMP/NAME.R.{out,err}; KILL_AFTER=S: the other
#                       ranks get S seconds after rank 0 ends; WRAP: a
#                       command each rank runs under (WRAP_R: rank R's,
#                       instead); OUTER_R: one rank R runs under outside
#                       its namespace (cpu_cap's); RANK_ENV_R="V=X ...":
#                       variables for rank R alone; PER_HOST=K: K ranks
#                       a host (rank r on host r / K)
# Needs root and iproute2; callers skip (77) without them.

# Skip (77) without root, ip or tc; remove the cluster and $TMP on exit.
cluster_need() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
	command -v ip >/dev/null && command -v tc >/dev/null ||
		{ echo "SKIP: no ip or tc (iproute2)"; exit 77; }
	trap 'cluster_down; rm -rf "$TMP"' EXIT
}

CL_ID=$(( $$ % 200 + 20 ))
CL_NET=10.251.$CL_ID
CL_SW=cbsw$$
CL_N=0

cluster_down() {
	local i g
	for g in "${CL_CGROUPS[@]}"; do rmdir "$g" 2>/dev/null; done
	CL_CGROUPS=()
	for ((i = 0; i < CL_N; i++)); do ip netns del "cbh$$-$i" 2>/dev/null; done
	ip netns del "$CL_SW" 2>/dev/null
	CL_N=0
}

cluster_up() {
	local n=$1 i
	ip netns add "$CL_SW" || return 1
	ip -n "$CL_SW" link add br0 type bridge || return 1
	ip -n "$CL_SW" link set br0 up
	ip -n "$CL_SW" link set lo up
	for ((i = 0; i < n; i++)); do
		HOST[$i]=cbh$$-$i
		ADDR[$i]=$CL_NET.$((i + 1))
		PORT_OUT[$i]=p$i
		ip netns add "${HOST[$i]}" || return 1
		CL_N=$((i + 1))
		ip link add "cbv$$x$i" type veth peer name "cbp$$x$i" || return 1
		ip link set "cbv$$x$i" netns "${HOST[$i]}"
		ip link set "cbp$$x$i" netns "$CL_SW"
		ip -n "${HOST[$i]}" link set "cbv$$x$i" name eth0
		ip -n "$CL_SW" link set "cbp$$x$i" name "p$i"
		ip -n "$CL_SW" link set "p$i" master br0
		ip -n "${HOST[$i]}" addr add "${ADDR[$i]}/24" dev eth0
		ip -n "${HOST[$i]}" link set lo up
		ip -n "${HOST[$i]}" link set eth0 up
		# As HPC hosts are tuned: a connection that paused between two
		# measurements does not start over from a small window.
		ip netns exec "${HOST[$i]}" sysctl -q -w \
			net.ipv4.tcp_slow_start_after_idle=0 2>/dev/null
		ip -n "$CL_SW" link set "p$i" up
	done
}

# Host I's cable at RATE: its own egress, and (unless "out") the switch
# port's egress towards it, so both directions.  A cluster whose every host
# sends at one rate (shape_all) has link-bound pairs, as real ones do.
# The bucket holds what the rate sends in 4 ms (one tick at HZ=250): a
# smaller one makes TCP's bursts wait for a timer that fires too late, and
# the rate a pair gets jumps by tens of percent from one measurement to
# the next.
tbf_burst() {
	local r=$1 mbit
	case $r in
	*gbit) mbit=$(( ${r%gbit} * 1000 )) ;;
	*mbit) mbit=${r%mbit} ;;
	*) mbit=1000 ;;
	esac
	echo "$(( mbit / 2 > 64 ? mbit / 2 : 64 ))kb"
}

shape_host() {
	local i=$1 rate=$2 how=${3:-both} b
	b=${TBF_BURST:-$(tbf_burst "$rate")}
	ip netns exec "${HOST[$i]}" tc qdisc del dev eth0 root 2>/dev/null
	ip netns exec "${HOST[$i]}" tc qdisc add dev eth0 root tbf rate "$rate" burst "$b" latency 50ms || return 1
	[ "$how" = out ] && return 0
	ip netns exec "$CL_SW" tc qdisc del dev "p$i" root 2>/dev/null
	ip netns exec "$CL_SW" tc qdisc add dev "p$i" root tbf rate "$rate" burst "$b" latency 50ms
}

shape_all() {
	local i
	for ((i = 0; i < CL_N; i++)); do shape_host "$i" "$1" out || return 1; done
}

# Only the traffic between hosts I and J: on each one's eth0, an htb class
# at RATE for packets to the other (a u32 filter on the destination), and
# one at BASE (default 10gbit) for the rest.  (tbf alone cannot tell
# destinations apart; prio is not in every kernel.)
shape_path() {
	local i=$1 j=$2 rate=$3 base=${4:-10gbit} a
	for a in "$i $j" "$j $i"; do
		set -- $a
		ip netns exec "${HOST[$1]}" tc qdisc del dev eth0 root 2>/dev/null
		ip netns exec "${HOST[$1]}" tc qdisc add dev eth0 root handle 1: htb default 10 &&
			ip netns exec "${HOST[$1]}" tc class add dev eth0 parent 1: classid 1:10 htb \
				rate "$base" 2>/dev/null &&
			ip netns exec "${HOST[$1]}" tc class add dev eth0 parent 1: classid 1:20 htb \
				rate "$rate" 2>/dev/null &&
			ip netns exec "${HOST[$1]}" tc filter add dev eth0 parent 1: protocol ip prio 1 \
				u32 match ip dst "${ADDR[$2]}/32" flowid 1:20 || return 1
	done
}

# Host I's traffic to each of hosts J... at RATE, the rest at BASE: one htb
# on its eth0 (shape_path, for several destinations at once).
shape_dests() {
	local i=$1 rate=$2 base=$3 j
	shift 3
	ip netns exec "${HOST[$i]}" tc qdisc del dev eth0 root 2>/dev/null
	ip netns exec "${HOST[$i]}" tc qdisc add dev eth0 root handle 1: htb default 10 &&
		ip netns exec "${HOST[$i]}" tc class add dev eth0 parent 1: classid 1:10 htb \
			rate "$base" 2>/dev/null &&
		ip netns exec "${HOST[$i]}" tc class add dev eth0 parent 1: classid 1:20 htb \
			rate "$rate" 2>/dev/null || return 1
	for j in "$@"; do
		ip netns exec "${HOST[$i]}" tc filter add dev eth0 parent 1: protocol ip prio 1 \
			u32 match ip dst "${ADDR[$j]}/32" flowid 1:20 || return 1
	done
}

cable_down() {
	ip -n "$CL_SW" link set "p$1" down
}

CL_CGROUPS=()
cpu_cap() {
	local pct=$1 g w="$TMP/cpucap$1.sh"
	CPU_CAP=
	if [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
		g=/sys/fs/cgroup/cpu/cbcap$$-$pct
		mkdir -p "$g" && echo 20000 >"$g/cpu.cfs_period_us" &&
			echo $((pct * 200)) >"$g/cpu.cfs_quota_us" || return 1
	elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		g=/sys/fs/cgroup/cbcap$$-$pct
		mkdir -p "$g" && echo "$((pct * 200)) 20000" >"$g/cpu.max" || return 1
	else
		return 1
	fi
	CL_CGROUPS+=("$g")
	printf '#!/bin/sh\necho $$ >%s/cgroup.procs || exit 125\nexec "$@"\n' "$g" >"$w" &&
		chmod +x "$w" && CPU_CAP=$w
}

run_hosts() {
	local name=$1 n=$2 port=$(( 20000 + RANDOM % 10000 )) pids=() r k
	shift 2
	local per=${PER_HOST:-1}
	for ((r = 0; r < n; r++)); do
		local extra=RANK_ENV_$r wrap=WRAP_$r outer=OUTER_$r h=$((r / per))
		${!outer:-} ip netns exec "${HOST[$h]}" env COLLBENCH_RANK=$r COLLBENCH_WORLD=$n \
			COLLBENCH_HOSTNAME=node$h COLLBENCH_JOB_TOKEN=cluster-test-$$ \
			${!extra:-} timeout 300 ${!wrap:-${WRAP:-}} "$CB" acceptance \
			--rendezvous "${ADDR[0]}:$port" "$@" \
			>"$TMP/$name.$r.out" 2>"$TMP/$name.$r.err" &
		pids+=($!)
	done
	RC=()
	wait "${pids[0]}"
	RC+=($?)
	T_RANK0=$(date +%s)
	# A launcher ends a job whose rank 0 has ended (mpirun, srun
	# --kill-on-bad-exit): ranks of a host cut off from the others would
	# otherwise wait out their own, longer deadlines.
	for ((r = 1; r < n; r++)); do
		for ((k = 0; k < ${KILL_AFTER:-600} * 10; k++)); do
			kill -0 "${pids[$r]}" 2>/dev/null || break
			sleep 0.1
		done
		kill "${pids[$r]}" 2>/dev/null
		wait "${pids[$r]}"
		RC+=($?)
	done
}
