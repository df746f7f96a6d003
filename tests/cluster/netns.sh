#!/bin/bash
# netns.sh COLLBENCH - two test hosts in network namespaces joined by a veth
# pair; four ranks, two per host, started by hand as a launcher would
# (COLLBENCH_RANK/WORLD), meeting at a rendezvous on host A's address.
#  - auto: shm inside each host, tcp between them ("shm+tcp", 2 hosts);
#  - tcp everywhere, on the interface named with --tcp-if;
#  - shm alone across hosts: refused with one line and status 77;
#  - the inventory (`collbench topo --all`): the two hosts alike, then host B
#    given a recorded topology (COLLBENCH_TOPO_XML_<rank>): it is named.
# Traffic stays inside the namespaces this test makes (and removes).
. "$(dirname "$0")/../integration/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no ip (iproute2)"; exit 77; }
A=cbA$$ B=cbB$$
cleanup() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
if ! ip netns add "$A" 2>/dev/null || ! ip netns add "$B"; then
	echo "SKIP: cannot create network namespaces here"
	exit 77
fi
ip link add "va$$" type veth peer name "vb$$" || { echo "SKIP: no veth"; exit 77; }
ip link set "va$$" netns "$A"
ip link set "vb$$" netns "$B"
ip -n "$A" addr add 10.250.$(( $$ % 250 )).1/24 dev "va$$"
ip -n "$B" addr add 10.250.$(( $$ % 250 )).2/24 dev "vb$$"
for ns in "$A" "$B"; do
	ip -n "$ns" link set lo up
done
ip -n "$A" link set "va$$" up
ip -n "$B" link set "vb$$" up
root=10.250.$(( $$ % 250 )).1

# run4 NAME ARGS... : ranks 0,1 on host A, 2,3 on host B (NR=2K: ranks
# 0..K-1 on A, the others on B); sets rc[] and leaves each rank's output in
# $TMP/NAME.R.{out,err}.
run4() {
	local name=$1 port=$(( 20000 + RANDOM % 10000 )) pids=() r ns host
	local nr=${NR:-4}
	shift
	for ((r = 0; r < nr; r++)); do
		if [ "$r" -lt $((nr / 2)) ]; then ns=$A host=nodeA; else ns=$B host=nodeB; fi
		ip netns exec "$ns" env COLLBENCH_RANK=$r COLLBENCH_WORLD=$nr \
			COLLBENCH_HOSTNAME=$host timeout 60 "$CB" ${TOPO_ALL:+topo --all} \
			--rendezvous "$root:$port" --timeout 10 "$@" \
			>"$TMP/$name.$r.out" 2>"$TMP/$name.$r.err" &
		pids+=($!)
	done
	rc=()
	for ((r = 0; r < nr; r++)); do
		wait "${pids[$r]}"
		rc+=($?)
	done
}

check_csv() { # NAME WANT_TRANSPORT
	local f=$TMP/$1.0.out rows bad
	rows=$(tail -n +2 "$f" | wc -l)
	bad=$(tail -n +2 "$f" | awk -F, -v t="$2" '$14 != 0 || $6 != 4 || $7 != 2 || $3 != t' | head -3)
	if [ "${rc[*]}" != "0 0 0 0" ]; then
		fail "$1: exit statuses ${rc[*]}: $(cat "$TMP/$1".*.err | head -5)"
	elif [ "$rows" -lt 16 ] || [ -n "$bad" ]; then
		fail "$1: $rows rows; bad: $bad"
	elif [ -s "$TMP/$1.1.out" ] || [ -s "$TMP/$1.2.out" ]; then
		fail "$1: ranks other than 0 wrote results"
	else
		pass "$1: 4 ranks on 2 hosts over $2, $rows rows, all exact"
	fi
}

run4 auto --format csv -d float32,int64 -o sum,max -b 4 -e 4M -f 9
check_csv auto shm+tcp
run4 tcpif --transport tcp --tcp-if "va$$" --format csv -b 4 -e 4M -f 9 -d int32 -o min 2>/dev/null
# host B has no interface of that name: it says so, every rank stops
if [ "${rc[*]}" = "0 0 0 0" ]; then
	fail "tcp-if naming a missing interface on host B still succeeded"
else
	pass "tcp-if missing on host B: statuses ${rc[*]}: $(cat "$TMP"/tcpif.*.err | sort -u | head -2 | tr '\n' ' ')"
fi
run4 tcp --transport tcp --format csv -d float32,int64 -o sum,max -b 4 -e 4M -f 9
check_csv tcp tcp
# Every collective and algorithm across the two hosts (shm inside, tcp
# between), as a node-count sweep: the first host alone, then both.
run4 nodes --nodes 1,2 --coll all --algo all --format csv -b 0 -e 300K -f 9 \
	-d float32,int8 -o sum,max -w 0 -n 2 --alpha-us 1 --beta-gbps 1 \
	--chunk-bytes 8K -r 1 2>/dev/null
if [ "${rc[*]}" != "0 0 0 0" ]; then
	fail "nodes sweep: exit statuses ${rc[*]}: $(cat "$TMP"/nodes.*.err | head -5)"
elif ! out=$(python3 - "$TMP/nodes.0.out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {(r["ranks"], r["hosts"]) for r in rows}
bad = [r for r in rows if r["wrong"] != "0"]
pairs = {(r["collective"], r["algo"]) for r in rows if r["ranks"] == "4"}
trs = {r["transport"] for r in rows}
pp = {r["algo"] for r in rows if r["collective"] == "pingpong"}
# 17 pairs on 4 ranks (every one but pingpong's 3, which need 2 ranks:
# they run on the first host's 2)
if groups != {("2", "1"), ("4", "2")} or bad or len(pairs) != 17 or \
        trs != {"shm+tcp", "shm"} or pp != {"latency", "bw", "bibw"}:
    print(f"groups {sorted(groups)}, {len(bad)} wrong rows {bad[:2]}, "
          f"{len(pairs)} pairs on 4 ranks, transports {trs}")
    sys.exit(1)
print(f"{len(rows)} rows, {len(pairs)} (collective, algorithm) pairs on "
      f"2 hosts, all exact")
PY
); then
	fail "nodes sweep: $out"
else
	pass "nodes sweep 1,2: $out"
fi
run4 shm --transport shm -b 8 -e 8
lines=$(cat "$TMP"/shm.*.err | wc -l)
if [ "${rc[*]}" != "77 77 77 77" ] || [ "$lines" -ne 1 ] ||
	! grep -q "spans 2 hosts" "$TMP"/shm.*.err; then
	fail "shm across hosts: statuses ${rc[*]}, $lines lines: $(cat "$TMP"/shm.*.err)"
else
	pass "shm across hosts refused: $(cat "$TMP"/shm.*.err)"
fi
# The inventory across the two hosts (TOPO_ALL: run4 runs `topo --all`).
TOPO_ALL=1 run4 alike
if [ "${rc[*]}" = "0 0 0 0" ] && grep -q '^inventory: 2 hosts alike' "$TMP/alike.0.out"; then
	pass "topo --all, 2 hosts alike: $(cat "$TMP/alike.0.out")"
else
	fail "topo --all, hosts alike: statuses ${rc[*]}: $(cat "$TMP"/alike.0.* | head -5)"
fi
# 20 ranks, 10 a host: ranks 0-15 send rank 0 their summary in full (their
# bindings are shown), host B's 16-19 (not its first local rank) a head of
# hashes alone, which rank 0 matches to host B's summary (-vv says how many).
NR=20 run4 heads --bind core -b 8 -e 8 -n 1 -w 0 --coll allreduce --algo ring -vv
line=$(grep -o 'topology: [0-9]* ranks sent a summary in full.*' "$TMP/heads.0.err")
if [ "${rc[*]}" = "$(printf '0 %.0s' {1..20} | sed 's/ $//')" ] &&
	[[ "$line" =~ ^"topology: 16 ranks sent a summary in full, 4 a head alone ("[0-9]+" bytes in all), 2 hosts"$ ]] &&
	grep -q '^# inventory: 2 hosts alike: ' "$TMP/heads.0.out" &&
	grep -q '^# binding: rank 0 on nodeA -> core .*, rank 15 on nodeB -> .*, \.\.\. (4 more)' "$TMP/heads.0.out" &&
	! grep -q 'WARNING' "$TMP/heads.0.out"; then
	pass "20 ranks on 2 hosts: $line; $(grep '^# inventory' "$TMP/heads.0.out" | cut -c1-40)"
else
	fail "20 ranks, heads: statuses ${rc[*]}, '$line': $(grep -E '^# (inventory|binding)' "$TMP/heads.0.out" | cut -c1-200) $(head -3 "$TMP/heads.0.err")"
fi
xml=$(dirname "$0")/../data/topo/24em64t-2n6c2t-pci.xml
COLLBENCH_TOPO_XML_2=$xml COLLBENCH_TOPO_XML_3=$xml TOPO_ALL=1 run4 differ
if [ "${rc[*]}" = "1 0 0 0" ] && [ "$(grep -c '^WARNING: host' "$TMP/differ.0.out")" -eq 1 ] &&
	grep -q '^WARNING: host nodeB differs: cores 12 ' "$TMP/differ.0.out"; then
	pass "topo --all, host B unlike A: $(grep WARNING "$TMP/differ.0.out" | cut -c1-100)"
else
	fail "topo --all, host B differs: statuses ${rc[*]}: $(cat "$TMP"/differ.0.* | head -5)"
fi
finish
