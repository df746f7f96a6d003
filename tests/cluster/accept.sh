#!/bin/bash
# accept.sh COLLBENCH - `collbench acceptance` on four test hosts made of
# network namespaces behind a bridge (tests/cluster/hosts.sh), one rank
# each, started as a launcher would.  Every host sends at 1 Gbit/s (tc tbf
# on its egress), so pairs are bound by their links as on a real cluster
# rather than by the two cores these hosts share; then:
#  - healthy: PASS, exit 0;
#  - host 2's cable at a quarter of that rate (tbf both ways): FAIL naming
#    host node2 (eth0), and no other host, and saying its CPU probe was as
#    fast as the others' (its NIC, port or cable);
#  - host 2's rank capped at 5% of a core (a cpu cgroup): its CPU probe
#    named at inventory, and either FAIL naming node2 alone (as a host or
#    one end of a path) as "the host itself" / "that host more likely than
#    the cable", or, where the noise it makes is too wide to name anyone,
#    PASS with that warning pointing at node2's CPU, or, where its pairs
#    were slow in the rounds and cleared measured again, PASS with a
#    warning of that pointing at node2's CPU, or, where no pair of it was
#    slow at all, PASS with an inventory warning of its CPU; never another
#    host;
#  - only the path between hosts 1 and 3 slowed: FAIL naming that path;
#  - host 2's cable unplugged during the run: FAIL naming node2 within the
#    pair deadline (rank 0 finishes in a minute at most; then the other
#    ranks are ended, as a launcher does when rank 0 has ended);
#  - host 3's MTU left at 1400: the inventory names it;
#  - the outputs: JSON read back by `collbench report`, CSV of pairs, JUnit;
#  - over verbs on the verbs emulation (where it is built), host 2 sending
#    at a quarter of the rate: FAIL naming node2 (cbemu0).
# Traffic stays inside the namespaces this test makes (and removes).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/hosts.sh"

cluster_need

fresh() { # a new cluster of 4 hosts at 1 Gbit/s
	cluster_down
	cluster_up 4 || { echo "SKIP: cannot make network namespaces here"; exit 77; }
	shape_all 1gbit || { echo "SKIP: no tc tbf here"; exit 77; }
}

fails() { grep '^FAIL ' "$TMP/$1.0.out"; }
date +%s >"$TMP/t0"
# seconds since the last call (a file: $(took) runs in a subshell)
took() { local now=$(date +%s); echo "$(( now - $(cat "$TMP/t0") )) s"; echo "$now" >"$TMP/t0"; }
quick=(--bw-bytes 256K --coll-bytes 1M --lat-iters 50 --pair-timeout 3 --timeout 15)

fresh
run_hosts healthy 4 "${quick[@]}" -O "$TMP/h.json" -O "$TMP/h.csv" -O "$TMP/h.xml"
if [ "${RC[*]}" != "0 0 0 0" ] || ! grep -q '^VERDICT: PASS' "$TMP/healthy.0.out"; then
	fail "healthy: statuses ${RC[*]}: $(fails healthy) $(tail -3 "$TMP/healthy.0.out") $(cat "$TMP"/healthy.*.err | grep -v '^collbench acceptance:' | head -3)"
else
	pass "healthy 4 hosts ($(took)): PASS ($(grep -c . "$TMP/h.csv") CSV lines; $(tail -1 "$TMP/healthy.0.out"))"
fi
if ! out=$(python3 - "$TMP/h.json" "$TMP/h.csv" "$TMP/h.xml" <<'PY'
import csv, json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
a = d["acceptance"]
rows = list(csv.DictReader(open(sys.argv[2])))
x = ET.parse(sys.argv[3]).getroot()
cases = x.findall(".//testcase")
bad = []
if d["schema"] != "collbench-results" or a["verdict"] != "PASS": bad.append("doc")
if len(a["pairs"]) != 6 or len(rows) != 6: bad.append("pairs")
if [s["name"] for s in a["stages"]] != ["inventory", "connectivity", "pairwise", "collectives", "burn"]: bad.append("stages")
if {r["collective"] for r in d["rows"]} != {"allreduce", "alltoall"}: bad.append("rows")
if len(cases) != 5 + 4 or x.get("failures") != "0": bad.append("junit")
if [h["name"] for h in a["hosts"]] != ["node0", "node1", "node2", "node3"]: bad.append("hosts")
print(bad or f"{len(rows)} pairs, {len(cases)} test cases")
sys.exit(1 if bad else 0)
PY
); then
	fail "healthy outputs: $out"
elif ! "$CB" report "$TMP/h.json" -o "$TMP/h.html" 2>/dev/null ||
	! grep -q 'ACCEPTANCE PASS' "$TMP/h.html"; then
	fail "healthy: collbench report on the JSON"
else
	pass "healthy outputs: $out; report has the verdict banner"
fi

took >/dev/null
fresh
shape_host 2 250mbit
run_hosts host 4 "${quick[@]}" --stages pairwise
if [ "${RC[0]}" -ne 1 ] || [ "$(fails host | wc -l)" -ne 1 ] ||
	! fails host | grep -q '^FAIL pairwise: host node2 (eth0): bandwidth .* to every peer.*: its NIC, port or cable, not its CPU$'; then
	fail "bad host: statuses ${RC[*]}: $(fails host) $(tail -1 "$TMP/host.0.out")"
else
	pass "host 2 at a quarter ($(took)): $(fails host)"
fi

took >/dev/null
fresh
if ! cpu_cap 5; then
	echo "SKIP (CPU-capped host): no cpu cgroup to write here"
else
	OUTER_2=$CPU_CAP run_hosts cap 4 "${quick[@]}" --stages pairwise
	cpuw="node2's CPU copied [0-9]*% of what the median host's did at inventory (with [0-9]*% of a core)"
	if ! grep -q '^  inventory .*CPU probe: node2 copied [0-9]*% of the median host' "$TMP/cap.0.out"; then
		fail "CPU-capped host: the inventory does not name its probe: $(grep '^  inventory' "$TMP/cap.0.out")"
	elif [ "${RC[0]}" -eq 1 ] && [ -n "$(fails cap)" ] && ! fails cap | grep -qv node2 &&
		fails cap | head -1 | grep -q -e "$cpuw: the host itself" -e "$cpuw: that host more likely than the cable"; then
		pass "host 2's CPU capped at 5% ($(took)): $(fails cap | cut -c1-330)"
	elif [ "${RC[0]}" -eq 0 ] && [ -z "$(fails cap)" ] &&
		grep -q "^WARN pairwise: .*cannot be told.*; $cpuw: a host short of CPU is slow and erratic to its peers, look at it first" "$TMP/cap.0.out"; then
		pass "host 2's CPU capped at 5% ($(took)): no host named, the noise too wide, and said where to look: $(grep '^WARN pairwise' "$TMP/cap.0.out" | grep -o "node2's CPU.*")"
	elif [ "${RC[0]}" -eq 0 ] && [ -z "$(fails cap)" ] &&
		grep -q "^WARN pairwise: host node2: slow in the rounds, within the noise measured again ([1-9] pairs\\?); $cpuw: a host short of CPU keeps up with one peer and falls behind beside other traffic, look at it first" "$TMP/cap.0.out"; then
		pass "host 2's CPU capped at 5% ($(took)): no host named, its pairs cleared measured again, and said where to look: $(grep '^WARN pairwise' "$TMP/cap.0.out")"
	elif [ "${RC[0]}" -eq 0 ] && [ -z "$(fails cap)" ] && [ "$(grep -c '^WARN' "$TMP/cap.0.out")" -eq 1 ] &&
		grep -q "^WARN inventory: host node2: its CPU copied [0-9]*% of what the median host's did (with [0-9]*% of a core): a CPU cap, throttling or other work on it; no pair of it was slow enough" "$TMP/cap.0.out"; then
		pass "host 2's CPU capped at 5% ($(took)): no pair of it slow, its CPU said at inventory: $(grep '^WARN inventory' "$TMP/cap.0.out" | cut -c1-200)"
	else
		fail "CPU-capped host: statuses ${RC[*]}: $(fails cap) $(grep '^WARN' "$TMP/cap.0.out") $(tail -1 "$TMP/cap.0.out")"
	fi
fi

took >/dev/null
fresh
shape_path 1 3 250mbit 1gbit
run_hosts path 4 "${quick[@]}" --stages pairwise
if [ "${RC[0]}" -ne 1 ] || [ "$(fails path | wc -l)" -ne 1 ] ||
	! fails path | grep -q '^FAIL pairwise: path node1 (eth0) - node3 (eth0): bandwidth'; then
	fail "bad path: statuses ${RC[*]}: $(fails path) $(tail -1 "$TMP/path.0.out")"
else
	pass "path 1-3 at a quarter ($(took)): $(fails path)"
fi

took >/dev/null
fresh
# The cable goes once host 2 has sent 4 MB (pairwise is measuring), not at
# a fixed time: a sanitizer build was still starting at 1.5 s.
(
	tx=/sys/class/net/eth0/statistics/tx_bytes
	for _ in $(seq 1 300); do
		sleep 0.1
		[ "$(ip netns exec "${HOST[2]}" cat $tx 2>/dev/null || echo 0)" -gt 4000000 ] && break
	done
	cable_down 2
) &
t0=$(date +%s)
KILL_AFTER=3 run_hosts down 4 --bw-bytes 2M --pair-timeout 2 --timeout 15 --stages pairwise
t=$(( T_RANK0 - t0 ))
wait
if [ "${RC[0]}" -ne 1 ] || ! fails down | grep -q 'node2' ||
	fails down | grep -v node2 | grep -q . ||
	[ "$t" -gt 60 ]; then
	fail "cable down: statuses ${RC[*]}: $(fails down) $(cat "$TMP/down.2.err")"
else
	pass "host 2 unplugged during the run ($(took)), rank 0 done in ${t} s: $(fails down | head -1)"
fi

took >/dev/null
fresh
ip -n "${HOST[3]}" link set eth0 mtu 1400
run_hosts mtu 4 "${quick[@]}" --stages connectivity
if [ "${RC[0]}" -ne 1 ] ||
	[ "$(fails mtu)" != "FAIL inventory: host node3 (eth0): eth0 MTU 1400 (others: 1500)" ]; then
	fail "MTU: statuses ${RC[*]}: $(fails mtu)"
else
	pass "host 3's MTU ($(took)): $(fails mtu)"
fi

emu=$(cd "$(dirname "$0")/../.." && pwd)/tools/emulated-rdma.sh
export COLLBENCH_PLUGIN_PATH=${COLLBENCH_PLUGIN_PATH:-$(dirname "$CB")/transports}
if ! "$emu" "$CB" info 2>/dev/null | grep -q '^  verbs  *available'; then
	if [ "${COLLBENCH_EMU_REQUIRED:-0}" = 1 ]; then
		fail "verbs part: this build has the verbs module, and it does not run on the emulation: $("$emu" "$CB" info 2>&1 | grep -m1 -e verbs -e emulated-rdma)"
	else
		echo "SKIP (verbs part): no verbs module or emulation in this build"
	fi
else
	took >/dev/null
	fresh
	export COLLBENCH_EMU_STATE=$TMP/fabric
	export COLLBENCH_EMU_PORT_BASE=$((10000 + RANDOM % 9000))
	WRAP=$emu RANK_ENV_2="COLLBENCH_EMU_FAULTS=slow:mbps=250" \
		run_hosts verbs 4 "${quick[@]}" --transport verbs --stages pairwise
	# Named alone; or, where the emulation's noise (its repeats vary by
	# up to ~100% under load) hides a fault this size, not named and said
	# so (docs/acceptance-judging.md, section 1): a WARN that a fault
	# under X% cannot be told, X at least 70 (host 2 is ~70-85% slower).
	# Never another host, never a silent PASS.
	tell=$(grep -o 'a fault under [0-9]*% cannot be told' "$TMP/verbs.0.out" | grep -o '[0-9][0-9]*')
	if [ "${RC[0]}" -eq 1 ] && [ "$(fails verbs | wc -l)" -eq 1 ] &&
		fails verbs | grep -q '^FAIL pairwise: host node2 (cbemu0): bandwidth'; then
		pass "verbs (emulated), host 2 sending at a quarter ($(took)): $(fails verbs)"
	elif [ "${RC[0]}" -eq 0 ] && [ -z "$(fails verbs)" ] && [ -n "$tell" ] && [ "$tell" -ge 70 ]; then
		pass "verbs (emulated), host 2 sending at a quarter ($(took)): not named, and said why: a fault under $tell% cannot be told here"
	else
		fail "verbs, slow host: statuses ${RC[*]}: $(fails verbs) $(grep '^WARN' "$TMP/verbs.0.out" | head -2) $(cat "$TMP"/verbs.*.err | grep -v '^collbench acceptance' | head -3)"
	fi
fi
finish
