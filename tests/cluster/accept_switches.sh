#!/bin/bash
# accept_switches.sh COLLBENCH - `collbench acceptance --switches FILE` on 6
# test hosts (tests/cluster/hosts.sh) under three leaf switches of two
# hosts each (leafA node0-1, leafB node2-3, leafC node4-5), every host
# sending at 1 Gbit/s (htb) and leafC's hosts at a quarter of that to and
# from the other leaves (its uplink slow):
#  - with the file (Slurm's topology.conf form): FAIL naming leafC's
#    uplink with node4 and node5, and no host on its own; the JSON has the
#    finding (kind "uplink", hosts node4, node5) and each host's switch;
#  - without the file: the two groups of hosts (node4-5, node0-3) slow to
#    each other, normal within, in one finding; no host alone;
#  - a healthy fabric with the file: PASS;
#  - a file without one of the job's hosts: one line naming it, every rank
#    exits 2; a file that does not parse: one line naming its line, exit 2.
# Traffic stays inside the namespaces this test makes (and removes).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/hosts.sh"

cluster_need
cluster_up 6 || { echo "SKIP: cannot make network namespaces here"; exit 77; }

fails() { grep '^FAIL ' "$TMP/$1.0.out"; }
last() { tail -1 "$TMP/$1.0.out"; }
pw=(--bw-bytes 256K --lat-iters 50 --pair-timeout 3 --timeout 15 --stages pairwise)

cat >"$TMP/topology.conf" <<'EOF'
# Slurm's topology.conf: three leaves under one spine
SwitchName=leafA Nodes=node[0-1]
SwitchName=leafB Nodes=node2,node3
SwitchName=leafC Nodes=node[4-5] LinkSpeed=1
SwitchName=spine Switches=leaf[A-C]
EOF
printf 'node0 leafA\nnode1 leafA\nnode2 leafB\nnode3 leafB\nnode4 leafC\nnode5 leafC\n' >"$TMP/leaves.txt"

for h in 0 1 2 3 4 5; do shape_dests $h 1gbit 1gbit || { echo "SKIP: no tc htb here"; exit 77; }; done
KILL_AFTER=5 run_hosts healthy 6 "${pw[@]}" --switches "$TMP/topology.conf"
if [ "${RC[0]}" -ne 0 ] || fails healthy | grep -q .; then
	fail "healthy with switches: exit ${RC[0]}: $(fails healthy) $(last healthy)"
else
	pass "healthy with switches: $(last healthy | cut -c1-100)"
fi

for h in 0 1 2 3; do shape_dests $h 250mbit 1gbit 4 5; done
for h in 4 5; do shape_dests $h 250mbit 1gbit 0 1 2 3; done

# The uplink named, the hosts behind it not (alone).
uplink_ok() { # NAME: exit 1, the uplink finding, no host finding
	[ "${RC[0]}" -eq 1 ] &&
		fails "$1" | grep -q '^FAIL pairwise: leaf switch leafC (hosts node4, node5): .* the uplink of leafC' &&
		! fails "$1" | grep -q -e 'host node' -e 'path node'
}
KILL_AFTER=5 run_hosts slurm 6 "${pw[@]}" --switches "$TMP/topology.conf" -O "$TMP/slurm.json"
if ! uplink_ok slurm; then
	fail "leafC's uplink, topology.conf: exit ${RC[0]}: $(fails slurm) $(last slurm)"
elif ! out=$(python3 - "$TMP/slurm.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["acceptance"]
f = [x for x in a["findings"] if x["kind"] == "uplink"]
sw = {h["name"]: h["switch"] for h in a["hosts"]}
print(f and f[0]["hosts"], sw)
ok = len(f) == 1 and sorted(f[0]["hosts"]) == ["node4", "node5"] and sw == {
    "node0": "leafA", "node1": "leafA", "node2": "leafB", "node3": "leafB",
    "node4": "leafC", "node5": "leafC"}
sys.exit(0 if ok else 1)
PY
); then
	fail "leafC's uplink: the JSON: $out"
else
	pass "leafC's uplink, topology.conf: $(fails slurm | cut -c1-200); JSON $out"
fi

# Without the file the run cannot tell the uplink from its hosts: it
# names the two groups of hosts slow to each other, no host alone (before
# the groups were found, it named all six hosts, each "slow to every
# peer").
KILL_AFTER=5 run_hosts bare 6 "${pw[@]}" -O "$TMP/bare.json"
if [ "${RC[0]}" -ne 1 ] || [ "$(fails bare | wc -l)" -ne 1 ] ||
	! fails bare | grep -q '^FAIL pairwise: hosts node4, node5 to hosts node0, node1, node2, node3: .* normal within each group' ||
	! python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["acceptance"]["findings"]; sys.exit(0 if [sorted(x["hosts"]) for x in f if x["kind"] == "group"] == [["node%d" % i for i in range(6)]] else 1)' "$TMP/bare.json"; then
	fail "leafC's uplink without the file: exit ${RC[0]}: $(fails bare) $(last bare)"
else
	pass "without the file: $(fails bare | cut -c1-160)"
fi

# A host of the job the file does not name (HOST LEAF lines; that form
# and Slurm's are read alike: tests/unit/test_switches.c); a line that
# does not parse.
grep -v node5 "$TMP/leaves.txt" >"$TMP/short.txt"
printf 'SwitchName=leafA Nodes=node[3-1]\n' >"$TMP/range.conf"
for f in short.txt range.conf; do
	KILL_AFTER=5 run_hosts "bad$f" 6 "${pw[@]}" --switches "$TMP/$f"
	if [ "${RC[*]}" != "2 2 2 2 2 2" ] || [ "$(grep -c . "$TMP/bad$f.0.err")" -ne 1 ]; then
		fail "switches $f: statuses ${RC[*]}: $(head -3 "$TMP/bad$f.0.err")"
	else
		pass "switches $f: exit 2: $(cat "$TMP/bad$f.0.err")"
	fi
done
grep -q 'host node5 of this job is not in it' "$TMP/badshort.txt.0.err" ||
	fail "the missing host is not named: $(cat "$TMP/badshort.txt.0.err")"
grep -q 'line 1: a range that is not N or N-M' "$TMP/badrange.conf.0.err" ||
	fail "the bad range is not named: $(cat "$TMP/badrange.conf.0.err")"
finish
