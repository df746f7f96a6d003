#!/bin/bash
# tests/verbs-emu/stock.sh WHAT - the emulation checked against programs
# nobody here wrote, run unchanged on it (Debian ibverbs-utils):
#   devinfo   ibv_devices and ibv_devinfo in the three link-layer modes, and
#             with two devices: the emulated names and link layers, never
#             something else;
#   pingpong  two-process ibv_rc_pingpong exchanging and checking data (-c):
#             IB, completion events (-e), the ibv_wr_* API (-N), RoCE with a
#             GID index (-g 3, its RoCE v2 IPv4 GID); RoCE without -g and
#             iWARP (no rdma_cm) refused at RTR as real devices refuse them;
#   perftest  ib_write_bw and ib_send_bw (Debian perftest) with and without
#             rdma_cm (-R), IB, RoCE and iWARP;
#   faults    COLLBENCH_EMU_FAULTS in an unchanged ib_write_bw: a slow
#             link, a corrupted rkey, a port going down.
. "$(dirname "$0")/lib.sh"
what=${1:?usage: stock.sh collbench libdir devinfo|pingpong|perftest|faults}

devinfo_mode() { # LINK WANT_LINK_LAYER WANT_TRANSPORT
	local out
	out=$(emu COLLBENCH_EMU_LINK=$1 ibv_devinfo 2>&1)
	if [ $? -ne 0 ]; then
		fail "ibv_devinfo ($1) failed: $out"
	elif ! grep -q "^hca_id:	cbemu0$" <<<"$out" ||
		[ "$(grep -c '^hca_id:' <<<"$out")" -ne 1 ]; then
		fail "ibv_devinfo ($1) does not list exactly cbemu0: $(grep hca_id <<<"$out")"
	elif ! grep -q "link_layer:		$2$" <<<"$out"; then
		fail "ibv_devinfo ($1): link layer is not $2: $(grep link_layer <<<"$out")"
	elif ! grep -q "transport:			$3" <<<"$out"; then
		fail "ibv_devinfo ($1): transport is not $3: $(grep transport: <<<"$out")"
	elif ! grep -q "state:			PORT_ACTIVE" <<<"$out"; then
		fail "ibv_devinfo ($1): port not active"
	else
		pass "ibv_devinfo $1: cbemu0, $2, $3, PORT_ACTIVE"
	fi
}

case $what in
devinfo)
	out=$(emu ibv_devices 2>&1)
	if grep -q "cbemu0" <<<"$out" && [ "$(grep -c cbemu <<<"$out")" -eq 1 ]; then
		pass "ibv_devices: $(grep cbemu <<<"$out" | tr -s ' \t' ' ')"
	else
		fail "ibv_devices: $out"
	fi
	devinfo_mode ib InfiniBand "InfiniBand (0)"
	devinfo_mode roce Ethernet "InfiniBand (0)"
	devinfo_mode iwarp Ethernet "iWARP (1)"
	out=$(emu COLLBENCH_EMU_LINK=roce ibv_devinfo -v 2>&1)
	if grep -q "GID\[  3\]:		::ffff:[0-9.]*, RoCE v2" <<<"$out"; then
		pass "RoCE GID table: $(grep 'GID\[  3\]' <<<"$out" | tr -s '\t' ' ')"
	else
		fail "RoCE: no RoCE v2 IPv4 GID at index 3: $(grep GID <<<"$out")"
	fi
	out=$(emu COLLBENCH_EMU_LINK=ib ibv_devinfo 2>&1)
	if grep -q "port_lid:		[1-9]" <<<"$out" && grep -q "sm_lid:			1" <<<"$out"; then
		pass "IB: a LID from the fabric's subnet manager: $(grep port_lid <<<"$out" | tr -s '\t' ' ')"
	else
		fail "IB: no LID: $out"
	fi
	out=$(emu COLLBENCH_EMU_DEVICES=2 ibv_devinfo -l 2>&1)
	if grep -q "2 HCAs found" <<<"$out" && grep -q "cbemu0" <<<"$out" &&
		grep -q cbemu1 <<<"$out"; then
		pass "two devices: $(echo $out)"
	else
		fail "COLLBENCH_EMU_DEVICES=2: $out"
	fi
	# The fake sysfs tree the counters live in, where ibdev_path says.
	sys=$(emu bash -c 'echo $COLLBENCH_SYSFS_ROOT')
	emu ibv_devinfo >/dev/null 2>&1
	if [ "$(cat "$sys/class/infiniband/cbemu0/ports/1/link_layer" 2>/dev/null)" = InfiniBand ] &&
		[ -f "$sys/class/infiniband/cbemu0/ports/1/counters/port_xmit_data" ] &&
		[ -f "$sys/class/infiniband/cbemu0/ports/1/hw_counters/out_of_buffer" ]; then
		pass "fake sysfs at \$COLLBENCH_SYSFS_ROOT with counters/ and hw_counters/"
	else
		fail "fake sysfs missing under $sys: $(ls -R "$sys" 2>&1 | head -5)"
	fi
	;;
pingpong)
	p=$(free_port)
	pair ib "COLLBENCH_EMU_LINK=ib" "ibv_rc_pingpong -c -d cbemu0 -p $p -n 200" \
		"ibv_rc_pingpong -c -d cbemu0 -p $p -n 200"
	if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] &&
		grep -q "200 iters in" "$TMP/ib.cli" && grep -q "LID 0x" "$TMP/ib.cli"; then
		pass "ibv_rc_pingpong IB -c: $(grep iters "$TMP/ib.cli")"
	else
		fail "ibv_rc_pingpong IB: $rc_srv/$rc_cli: $(cat "$TMP/ib.srv" "$TMP/ib.cli")"
	fi
	p=$(free_port)
	pair ev "COLLBENCH_EMU_LINK=ib" "ibv_rc_pingpong -e -c -d cbemu0 -p $p -n 200 -s 65536" \
		"ibv_rc_pingpong -e -c -d cbemu0 -p $p -n 200 -s 65536"
	if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] && grep -q "200 iters in" "$TMP/ev.cli"; then
		pass "ibv_rc_pingpong -e (completion channel), 64 KiB: $(grep iters "$TMP/ev.cli")"
	else
		fail "ibv_rc_pingpong -e: $rc_srv/$rc_cli: $(cat "$TMP/ev.srv" "$TMP/ev.cli")"
	fi
	p=$(free_port)
	pair new "COLLBENCH_EMU_LINK=ib" "ibv_rc_pingpong -N -c -d cbemu0 -p $p -n 200" \
		"ibv_rc_pingpong -N -c -d cbemu0 -p $p -n 200"
	if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] && grep -q "200 iters in" "$TMP/new.cli"; then
		pass "ibv_rc_pingpong -N (ibv_wr_* API): $(grep iters "$TMP/new.cli")"
	else
		fail "ibv_rc_pingpong -N: $rc_srv/$rc_cli: $(cat "$TMP/new.srv" "$TMP/new.cli")"
	fi
	p=$(free_port)
	pair roce "COLLBENCH_EMU_LINK=roce" "ibv_rc_pingpong -c -g 3 -d cbemu0 -p $p -n 200" \
		"ibv_rc_pingpong -c -g 3 -d cbemu0 -p $p -n 200"
	if [ $rc_srv -eq 0 ] && [ $rc_cli -eq 0 ] &&
		grep -q "GID ::ffff:" "$TMP/roce.cli" && grep -q "200 iters in" "$TMP/roce.cli"; then
		pass "ibv_rc_pingpong RoCE -g 3: $(grep 'local address' "$TMP/roce.cli")"
	else
		fail "ibv_rc_pingpong RoCE -g 3: $rc_srv/$rc_cli: $(cat "$TMP/roce.srv" "$TMP/roce.cli")"
	fi
	p=$(free_port)
	pair nogrh "COLLBENCH_EMU_LINK=roce" "ibv_rc_pingpong -d cbemu0 -p $p -n 10" \
		"ibv_rc_pingpong -d cbemu0 -p $p -n 10"
	if [ $rc_srv -ne 0 ] && [ $rc_cli -ne 0 ] &&
		grep -q "Failed to modify QP to RTR" "$TMP/nogrh.cli" "$TMP/nogrh.srv"; then
		pass "RoCE without a GID index: RTR refused (no GRH), as on RoCE"
	else
		fail "RoCE without -g: $rc_srv/$rc_cli: $(cat "$TMP/nogrh.srv" "$TMP/nogrh.cli")"
	fi
	p=$(free_port)
	pair iw "COLLBENCH_EMU_LINK=iwarp" "ibv_rc_pingpong -d cbemu0 -p $p -n 10" \
		"ibv_rc_pingpong -d cbemu0 -p $p -n 10"
	if [ $rc_srv -ne 0 ] && [ $rc_cli -ne 0 ] &&
		grep -q "Failed to modify QP to RTR" "$TMP/iw.cli" "$TMP/iw.srv"; then
		pass "iWARP without rdma_cm: RTR refused"
	else
		fail "iWARP pingpong: $rc_srv/$rc_cli: $(cat "$TMP/iw.srv" "$TMP/iw.cli")"
	fi
	;;
perftest)
	# perftest run unchanged: ib_write_bw and ib_send_bw, with and
	# without rdma_cm (-R), in each link mode.  perftest takes its
	# default ibv_wr_* path for the part id the emulation reports, its
	# ibv_post_send path with COLLBENCH_EMU_PART_ID=0.
	check_pt() { # NAME WANT_LINK WANT_WR WANT_CM
		local c=$TMP/$1.cli s=$TMP/$1.srv bw
		bw=$(bw_of "$c")
		if [ $rc_srv -ne 0 ] || [ $rc_cli -ne 0 ]; then
			fail "$1: exit $rc_srv/$rc_cli: $(tail -5 "$s" "$c")"
		elif ! grep -q "Device         : cbemu0" "$c" ||
			! grep -q "Link type       : $2" "$c" ||
			! grep -q "ibv_wr\* API     : $3" "$c" ||
			! grep -q "rdma_cm QPs	 : $4" "$c"; then
			fail "$1: not cbemu0/$2/wr $3/cm $4: $(head -20 "$c")"
		elif [ -z "$bw" ] || ! awk -v b="$bw" 'BEGIN { exit !(b > 0) }'; then
			fail "$1: no bandwidth: $(tail -4 "$c")"
		else
			pass "$1: $bw MB/s average (emulated; not a performance figure)"
		fi
	}
	run_pt() { # NAME ENVS TOOL ARGS...
		local name=$1 envs=$2 tool=$3 p
		shift 3
		p=$(free_port)
		pair "$name" "$envs" "$tool -d cbemu0 -p $p $*" "$tool -d cbemu0 -p $p $*"
	}
	run_pt write-ib "COLLBENCH_EMU_LINK=ib" ib_write_bw -s 65536 -n 400
	check_pt write-ib IB ON OFF
	run_pt send-ib "COLLBENCH_EMU_LINK=ib" ib_send_bw -s 65536 -n 400
	check_pt send-ib IB ON OFF
	run_pt write-ib-R "COLLBENCH_EMU_LINK=ib" ib_write_bw -R -s 65536 -n 400
	check_pt write-ib-R IB ON ON
	run_pt send-ib-R "COLLBENCH_EMU_LINK=ib" ib_send_bw -R -s 65536 -n 400
	check_pt send-ib-R IB ON ON
	run_pt write-roce "COLLBENCH_EMU_LINK=roce" ib_write_bw -s 65536 -n 400
	check_pt write-roce Ethernet ON OFF
	if grep -q "GID index       : 3" "$TMP/write-roce.cli"; then
		pass "perftest on RoCE picked the RoCE v2 IPv4 GID (index 3) itself"
	else
		fail "perftest RoCE GID: $(grep GID "$TMP/write-roce.cli")"
	fi
	run_pt send-roce-R "COLLBENCH_EMU_LINK=roce" ib_send_bw -R -s 65536 -n 400
	check_pt send-roce-R Ethernet ON ON
	run_pt write-iwarp-R "COLLBENCH_EMU_LINK=iwarp" ib_write_bw -R -s 65536 -n 400
	check_pt write-iwarp-R Ethernet ON ON
	run_pt send-old "COLLBENCH_EMU_LINK=ib COLLBENCH_EMU_PART_ID=0" ib_send_bw -s 4096 -n 400
	check_pt send-old IB OFF OFF
	;;
faults)
	# COLLBENCH_EMU_FAULTS in the writer of an unchanged ib_write_bw.
	# The slow case failed now and then in full suites (retry exceeded on
	# the first write: the emulation spent its rate budget a few bytes a
	# system call and read no acks until the transfer ended; fixed in
	# wire.c).  One try; on failure both sides' first lines, where
	# perftest's unbuffered errors land before its buffered report.
	p=$(free_port)
	pair slow "COLLBENCH_EMU_LINK=ib" "ib_write_bw -d cbemu0 -p $p -s 65536 -n 80" \
		"env COLLBENCH_EMU_FAULTS=slow:mbps=40 ib_write_bw -d cbemu0 -p $p -s 65536 -n 80"
	bw=$(bw_of "$TMP/slow.cli")
	why="rc $rc_cli (server $rc_srv), '$bw' MB/s: client: $(head -4 "$TMP/slow.cli") server: $(head -4 "$TMP/slow.srv")"
	if [ $rc_cli -eq 0 ] && [ -n "$bw" ] &&
		awk -v b="$bw" 'BEGIN { exit !(b > 0.5 && b < 6.5) }'; then
		pass "slow:mbps=40: ib_write_bw $bw MB/s (40 Mbit/s is 5 MB/s)"
	else
		fail "slow:mbps=40: $why"
	fi
	p=$(free_port)
	pair rkey "COLLBENCH_EMU_LINK=ib" "ib_write_bw -d cbemu0 -p $p -s 4096 -n 400" \
		"env COLLBENCH_EMU_FAULTS=rkey:at_msg=100 ib_write_bw -d cbemu0 -p $p -s 4096 -n 400"
	if [ $rc_cli -ne 0 ] && grep -q "Failed status 10:" "$TMP/rkey.cli"; then
		pass "rkey:at_msg=100: the writer ended with status 10 (remote access error)"
	else
		fail "rkey fault: rc $rc_cli: $(tail -4 "$TMP/rkey.cli")"
	fi
	p=$(free_port)
	pair down "COLLBENCH_EMU_LINK=roce COLLBENCH_EMU_RETRY_CAP_MS=2000" \
		"ib_write_bw -d cbemu0 -p $p -D 20" \
		"env COLLBENCH_EMU_FAULTS=port_down:dev=cbemu0,at_ms=1500 ib_write_bw -d cbemu0 -p $p -D 20"
	if [ $rc_cli -ne 0 ] && grep -q "Failed status 12:" "$TMP/down.cli"; then
		pass "port_down:at_ms=1500: the writer ended with status 12 (retry exceeded)"
	else
		fail "port_down fault: rc $rc_cli: $(tail -4 "$TMP/down.cli")"
	fi
	;;
*)
	echo "stock.sh: unknown test $what" >&2
	exit 2
	;;
esac
finish
