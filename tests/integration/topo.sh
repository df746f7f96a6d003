#!/bin/bash
# topo.sh COLLBENCH DATA_DIR - `collbench topo` and the topology of a run:
#  - the live machine: only that the output is well formed (table, JSON);
#  - each recorded machine (DATA_DIR): counts, paths, nearest NICs, via JSON;
#  - --xml export reloads as the same machine (recorded and live);
#  - bad input: one line on stderr, status 2;
#  - the inventory: `topo --all` exits 0 when the hosts are alike and 1,
#    naming exactly the odd host, when one rank loads a recording with a
#    slower link; a run shows the binding and the warning in its header.
# Nothing here depends on the machine running it beyond "it runs".
. "$(dirname "$0")/lib.sh"
D=${1:?usage: topo.sh COLLBENCH DATA_DIR}
X24=$D/24em64t-2n6c2t-pci.xml

# jcheck WHAT FILE PYTHON-EXPR [FILE2]: the JSON in FILE (j; FILE2: k)
# parses and EXPR holds.  Collected, and run in one python at the end:
# python starts slowly on a loaded machine.
jcheck() {
	python_args+=("$1" "$2" "$3" "${4:-}")
}
python_args=()
run_jchecks() {
	local out
	out=$(python3 - "${python_args[@]}" <<'PY'
import json, sys
a = sys.argv[1:]
bad = 0
for i in range(0, len(a), 4):
    what, f, expr, f2 = a[i:i + 4]
    try:
        j = json.load(open(f))
        k = json.load(open(f2)) if f2 else None
        ok = eval(expr)
    except Exception as e:
        ok, expr = False, "%s (%s)" % (expr, e)
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else ": " + expr))
    bad += not ok
sys.exit(min(bad, 100))
PY
)
	failures=$((failures + $?))
	echo "$out"
}

# ---- the live machine: well formed only ----
"$CB" topo >"$TMP/live.txt" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^machine: [0-9]* packages\?, [0-9]* NUMA' "$TMP/live.txt" ||
	! grep -q '^NUMA ' "$TMP/live.txt"; then
	fail "topo (live): status $rc: $(head -5 "$TMP/live.txt" "$TMP/err")"
else
	pass "topo (live): $(grep '^machine:' "$TMP/live.txt")"
fi
"$CB" topo --format json --np 2 >"$TMP/live.json"
jcheck "topo --format json (live) parses" "$TMP/live.json" \
	'j["machine"]["cores"] >= 1 and len(j["numa"]) == j["machine"]["numa_nodes"] and len(j["plan"]["ranks"]) == 2'

# ---- recorded machines ----
want() { # FILE NUMA CORES PUS GPUS NICS
	"$CB" topo --topo-xml "$D/$1" --format json >"$TMP/$1.json" 2>"$TMP/err"
	jcheck "$1: $2 NUMA, $3 cores, $4 PUs, $5 GPUs, $6 NICs" "$TMP/$1.json" \
		"j['machine']['numa_nodes'] == $2 and j['machine']['cores'] == $3 and j['machine']['pus'] == $4 and len(j['gpus']) == $5 and len(j['nics']) == $6 and j['source'].startswith('xml ')"
	"$CB" topo --topo-xml "$D/$1" >"$TMP/$1.txt" || fail "$1: table: status $?"
}
want 24em64t-2n6c2t-pci.xml 2 12 24 3 3
want 32em64t-2n8c2t-pci-wholeio.xml 2 16 32 4 3
want 96em64t-4n4d3ca2co-pci.xml 4 96 96 0 8
want power8gpudistances.xml 2 8 16 4 0
jcheck "24em64t: path matrix and nearest NICs" "$TMP/24em64t-2n6c2t-pci.xml.json" \
	'j["matrix"]["devices"] == ["GPU0","GPU1","GPU2","NIC0","NIC1","NIC2"] and j["matrix"]["paths"][0] == ["X","SYS","SYS","PHB","PHB","PHB"] and j["matrix"]["paths"][3][4] == "PIX" and [g["nearest_nic"] for g in j["gpus"]] == ["mlx4_0"]*3 and all(n["speed_mbps"] is None for n in j["nics"])'
jcheck "power8: NVLink pairs" "$TMP/power8gpudistances.xml.json" \
	'j["matrix"]["paths"][0][1] == "NVL" and j["matrix"]["paths"][2][3] == "NVL" and j["matrix"]["paths"][0][2] == "SYS"'
if grep -q '^GPU0    X     SYS   SYS   PHB   PHB   PHB ' "$TMP/24em64t-2n6c2t-pci.xml.txt" &&
	grep -q 'nearest NIC mlx4_0 (PHB)' "$TMP/24em64t-2n6c2t-pci.xml.txt"; then
	pass "24em64t: table matrix"
else
	fail "24em64t: table matrix: $(grep -A3 '^paths' "$TMP/24em64t-2n6c2t-pci.xml.txt")"
fi
"$CB" topo --synthetic "pack:2 numa:2 core:4 pu:2" --np 16 --format json >"$TMP/syn.json"
jcheck "synthetic: 16 ranks on 16 distinct cores, round-robin over 4 nodes" "$TMP/syn.json" \
	'len({r["core"] for r in j["plan"]["ranks"]}) == 16 and [r["numa"] for r in j["plan"]["ranks"]] == [0,1,2,3]*4'

# ---- export, reload ----
"$CB" topo --topo-xml "$X24" --xml "$TMP/rt.xml" --format json >"$TMP/a.json" &&
	"$CB" topo --topo-xml "$TMP/rt.xml" --format json >"$TMP/b.json"
jcheck "--xml round trip (recorded)" "$TMP/a.json" \
	'{x: v for x, v in j.items() if x != "source"} == {x: v for x, v in k.items() if x != "source"}' \
	"$TMP/b.json"
"$CB" topo --xml "$TMP/live.xml" >/dev/null &&
	"$CB" topo --topo-xml "$TMP/live.xml" --format json >"$TMP/live2.json"
jcheck "--xml round trip (live)" "$TMP/live.json" \
	'j["machine"] == k["machine"] and len(j["nics"]) == len(k["nics"])' "$TMP/live2.json"

# A machine without PCI information (as in a container): it still works,
# and the summary says what is unknown.
"$CB" topo --synthetic "pack:1 core:2 pu:1" --xml "$TMP/nopci.xml" >/dev/null &&
	"$CB" topo --topo-xml "$TMP/nopci.xml" >"$TMP/nopci.txt"
if grep -q '^GPUs: none found' "$TMP/nopci.txt" && grep -q '^  PCI devices: none visible' "$TMP/nopci.txt"; then
	pass "no PCI information: said so"
else
	fail "no PCI information: $(cat "$TMP/nopci.txt")"
fi

# Recordings with link infos, as collbench --xml writes them.
link_variant() { # OUT SPEED_MBPS
	sed "s|name=\"mlx4_0\" osdev_type=\"3\"/>|name=\"mlx4_0\" osdev_type=\"3\"><info name=\"LinkSpeedMbps\" value=\"$2\"/><info name=\"LinkState\" value=\"active\"/></object>|" \
		"$X24" >"$1"
}
link_variant "$TMP/fast.xml" 40000
link_variant "$TMP/slow.xml" 10000
if "$CB" topo --topo-xml "$TMP/fast.xml" | grep -q 'mlx4_0 (eth2,ib0) .* link 40 Gb/s, active (recorded)'; then
	pass "link speed and state from a recording's infos"
else
	fail "link infos: $("$CB" topo --topo-xml "$TMP/fast.xml" | grep mlx4_0 | head -1)"
fi

# ---- bad input: one line, status 2 ----
echo junk >"$TMP/junk.xml"
expect_fail 2 "/nonexistent.xml" "$CB" topo --topo-xml /nonexistent.xml
expect_fail 2 "/nonexistent.xml" "$CB" --topo-xml /nonexistent.xml -b 8 -e 8
expect_fail 2 "not an hwloc XML" "$CB" topo --topo-xml "$TMP/junk.xml"
expect_fail 2 "not an hwloc XML" "$CB" --topo-xml "$TMP/junk.xml" -b 8 -e 8
expect_fail 2 "'socket'" "$CB" topo --bind socket
expect_fail 2 "'socket'" "$CB" --bind socket
expect_fail 2 "'socket'" env COLLBENCH_BIND=socket "$CB" -b 8 -e 8
expect_fail 2 "out of range" "$CB" topo --topo-xml "$X24" --gpu 3
expect_fail 2 "out of range" "$CB" --topo-xml "$X24" --gpu 3 -b 8 -e 8
expect_fail 2 "'-1'" "$CB" --gpu -1
expect_fail 2 "no such NIC" "$CB" topo --topo-xml "$X24" --nic mlx5_7
expect_fail 2 "xml" "$CB" topo --format xml
expect_fail 2 "does not parse" "$CB" topo --synthetic "pack:two"
expect_fail 2 "cannot write" "$CB" topo --topo-xml "$X24" --xml /nonexistent/dir/t.xml
expect_fail 2 "'bogus'" "$CB" topo bogus
expect_fail 2 "--all" "$CB" topo --all --topo-xml "$X24"
# each option's value: the line it always had (cli/topo_cmd.c's rows)
expect_fail 2 "--np '1.5' is not a whole number" "$CB" topo --np 1.5
expect_fail 2 "--np '257' is not a number in 1..256" "$CB" topo --np 257
expect_fail 2 "--gpu '1.5' is not a GPU index" "$CB" topo --gpu 1.5
expect_fail 2 "--gpu '1024' is not a number in 0..1023" "$CB" topo --gpu 1024
expect_fail 2 "--timeout 't' is not a number in 0.1..86400" "$CB" topo --timeout t
expect_fail 2 "option --np needs a value" "$CB" topo --np
expect_fail 2 "unknown option '--frob'" "$CB" topo --frob
expect_fail 2 "unexpected argument 'x'" "$CB" topo --all x

# ---- the inventory ----
"$CB" topo --all --np 2 >"$TMP/all.out" 2>"$TMP/all.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^inventory: 1 host: ' "$TMP/all.out"; then
	pass "topo --all --np 2, hosts alike: $(cat "$TMP/all.out")"
else
	fail "topo --all --np 2: status $rc: $(cat "$TMP/all.out" "$TMP/all.err")"
fi
COLLBENCH_TOPO_XML=$TMP/fast.xml COLLBENCH_TOPO_XML_2=$TMP/slow.xml \
	"$CB" topo --all --np 3 >"$TMP/diff.out" 2>"$TMP/diff.err"
rc=$?
n=$(grep -c '^WARNING: host' "$TMP/diff.out")
if [ $rc -eq 1 ] && [ "$n" -eq 1 ] &&
	grep -q '^WARNING: host .* (rank 2) differs: NIC mlx4_0 speed 10 Gb/s (others: 40 Gb/s)$' "$TMP/diff.out"; then
	pass "topo --all: one host with a slower link, status 1: $(grep WARNING "$TMP/diff.out")"
else
	fail "topo --all, one slow link: status $rc, $n warnings: $(cat "$TMP/diff.out" "$TMP/diff.err")"
fi
COLLBENCH_TOPO_XML=$TMP/fast.xml COLLBENCH_TOPO_XML_1=$TMP/slow.xml \
	"$CB" topo --all --np 2 --format json >"$TMP/diff.json" 2>/dev/null
jcheck "topo --all --format json names the odd host" "$TMP/diff.json" \
	'j["differing"] == 1 and [h["differs"] for h in j["hosts"]] == [False, True] and j["hosts"][1]["nics"][2]["speed_mbps"] == 10000'
COLLBENCH_TOPO_XML_0=$TMP/fast.xml COLLBENCH_TOPO_XML_1=$TMP/fast.xml \
	"$CB" topo --all --np 2 >"$TMP/same.out" 2>&1
rc=$?
[ $rc -eq 0 ] && pass "topo --all: the same recording on every rank: status 0" ||
	fail "topo --all, same recording: status $rc: $(cat "$TMP/same.out")"

# ---- a run's header ----
COLLBENCH_TOPO_XML_1=$TMP/slow.xml "$CB" --np 2 -b 8 -e 8 >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^# binding: rank 0 -> ' "$TMP/run.out" &&
	grep -q '^# binding: .*rank 1 -> core 6 (NUMA 1, cpus 1,13; GPU 1, NIC mlx4_0) \[planned on slow.xml, not applied\]' "$TMP/run.out" &&
	grep -q '^# inventory: WARNING: host .* (rank 1) differs: ' "$TMP/run.out"; then
	pass "run header: binding and inventory warning"
else
	fail "run header: status $rc: $(head -8 "$TMP/run.out") $(cat "$TMP/run.err")"
fi
"$CB" --np 2 -b 8 -e 8 --bind none >"$TMP/none.out" 2>&1
grep -q '^# binding: none (--bind none)$' "$TMP/none.out" && pass "--bind none in the header" ||
	fail "--bind none: $(grep binding "$TMP/none.out")"
"$CB" --np 2 -b 8 -e 8 --bind core --format csv >"$TMP/run.csv" 2>&1
[ "$(head -1 "$TMP/run.csv" | cut -d, -f1-14)" = "collective,algo,transport,dtype,op,ranks,hosts,bytes,count,inplace,time_us,algbw_gbps,busbw_gbps,wrong" ] &&
	pass "CSV unchanged (no comment lines)" || fail "CSV starts: $(head -1 "$TMP/run.csv")"

# ---- the host's topology discovered once, by its local rank 0 ----
# The other ranks load rank 0's discovery (-vv says so) and still bind
# (applied, not "planned"), and the host does not differ from itself.
"$CB" --np 2 --bind core -b 8 -e 8 -n 1 -w 0 --coll allreduce --algo ring -vv \
	>"$TMP/share.out" 2>"$TMP/share.err"
rc=$?
n=$(grep -c "topology: the host's, as its local rank 0 discovered it" "$TMP/share.err")
if [ $rc -eq 0 ] && [ "$n" -eq 1 ] &&
	grep -q '^# binding: rank 0 -> core .*, rank 1 -> core [0-9]* (NUMA [0-9]*, cpus [0-9,-]*[;)]' "$TMP/share.out" &&
	! grep -q 'not applied' "$TMP/share.out"; then
	pass "one discovery per host: rank 1 loads rank 0's and binds"
else
	fail "one discovery per host: status $rc, $n loads: $(grep binding "$TMP/share.out") $(head -3 "$TMP/share.err")"
fi
"$CB" --np 3 -b 8 -e 8 -n 1 -w 0 --coll allreduce --algo ring -vv \
	>"$TMP/share3.out" 2>"$TMP/share3.err"
rc=$?
n=$(grep -c "topology: the host's, as its local rank 0 discovered it" "$TMP/share3.err")
if [ $rc -eq 0 ] && [ "$n" -eq 2 ] && grep -q '^# inventory: 1 host: ' "$TMP/share3.out" &&
	! grep -q 'differs' "$TMP/share3.out"; then
	pass "one discovery per host: 3 ranks, the host the same on each"
else
	fail "one discovery per host, 3 ranks: status $rc, $n loads: $(grep inventory "$TMP/share3.out")"
fi
run_jchecks
finish
