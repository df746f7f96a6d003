#!/bin/bash
# accept_loss.sh COLLBENCH - `collbench acceptance` naming intermittent and
# lossy links by the hosts' counters (acceptance/counters.c), on 4 test
# hosts of network namespaces (tests/cluster/hosts.sh), one rank each,
# links not shaped:
#  - healthy: no host named by its counters (whatever the bandwidth says),
#    and the JSON has every host's counters per stage and every pair's
#    retransmissions;
#  - host 3's eth0 drops 3% of its packets both ways (nftables: numgen
#    random mod 1000 < 30 drop; at 2% a busy machine's healthy pairs
#    come within 10x of it): FAIL naming host node3 as a lossy cable
#    or port by its pairs' retransmissions, and no other host by counters;
#  - host 2's switch port goes down for 0.5 s every 3 s: FAIL naming node2
#    with the counters that moved (carrier_changes), and no other host by
#    counters;
#  - the path between hosts 2 and 3 cut (host 3 drops what comes from or
#    goes to host 2): FAIL naming that path alone, at connectivity and
#    pairwise, and no host.  The connectivity stage runs each node's pairs
#    one after another, so the cut pair's deadline makes node3 late for
#    node1 (when node3's deadline passes after node1's starts: most runs
#    here), whose pair then fails too: only the second try (pairs that
#    failed, again, in rounds of disjoint pairs) tells the cut from that.
# Without nft (package nftables) the lossy and cut cases are skipped, said
# so.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/hosts.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no ip (iproute2)"; exit 77; }
FLAPPER=
trap '[ -n "$FLAPPER" ] && kill "$FLAPPER" 2>/dev/null; cluster_down; rm -rf "$TMP"' EXIT

N=4
quick=(--bw-bytes 256K --coll-bytes 1M --lat-iters 50 --pair-timeout 3 --timeout 20)
fresh() {
	cluster_down
	cluster_up $N || { echo "SKIP: cannot make network namespaces here"; exit 77; }
}
fails() { grep '^FAIL ' "$TMP/$1.0.out"; }
# findings that rest on the counters, and the hosts they name
by_counters() { fails "$1" | grep -E 'retransmi|link counters moved|its link went down'; }
named_by_counters() { by_counters "$1" | grep -o 'host node[0-9]*\|path node[0-9]* (eth0) - node[0-9]*' | sort -u | tr '\n' ' '; }
took() { echo "$(( $(date +%s) - T0 )) s"; }

T0=$(date +%s)
fresh
KILL_AFTER=5 run_hosts ok $N "${quick[@]}" -O "$TMP/ok.json"
if [ "${RC[0]}" -gt 1 ] || by_counters ok | grep -q .; then
	fail "healthy: exit ${RC[0]}, named by counters: $(by_counters ok | cut -c1-300) $(tail -1 "$TMP/ok.0.out")"
elif ! out=$(python3 - "$TMP/ok.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["acceptance"]
bad = []
for h in a["hosts"]:
    m = h.get("counters", {}).get("moved", {})
    if not isinstance(m.get("pairwise", {}).get("tcp_retrans_segs"), int):
        bad.append(h["name"] + " has no pairwise retransmissions")
    if "carrier_changes" not in h.get("counters", {}).get("start", {}):
        bad.append(h["name"] + " has no carrier_changes")
if not any("tcp_retrans_segs" in p for p in a["pairs"]):
    bad.append("no pair has its retransmissions")
r = [h["counters"]["moved"]["pairwise"]["tcp_retrans_segs"] for h in a["hosts"] if not bad]
print(bad or "pairwise retransmissions per host: " + " ".join(map(str, r)))
sys.exit(1 if bad else 0)
PY
); then
	fail "healthy: JSON: $out"
else
	pass "healthy ($(took)): no host named by counters ($out); $(fails ok | wc -l) other finding(s); $(tail -1 "$TMP/ok.0.out" | cut -c1-60)"
fi

if command -v nft >/dev/null; then
	T0=$(date +%s)
	fresh
	ip netns exec "${HOST[3]}" nft -f - <<'NFT' || fail "nft: cannot add the drop rule"
table inet cbloss {
	chain in { type filter hook input priority 0; iifname "eth0" numgen random mod 1000 < 30 drop; }
	chain out { type filter hook output priority 0; oifname "eth0" numgen random mod 1000 < 30 drop; }
}
NFT
	KILL_AFTER=5 run_hosts loss $N "${quick[@]}" -O "$TMP/loss.json"
	if [ "${RC[0]}" -eq 1 ] && [ "$(named_by_counters loss)" = "host node3 " ] &&
		fails loss | grep -q '^FAIL pairwise: host node3 (eth0): .*its pairs retransmitted .* of their TCP segments.*a lossy cable or port'; then
		pass "host 3 dropping 3% ($(took)): named by its counters: $(by_counters loss | cut -c1-260)"
	else
		fail "host 3 dropping 3%: exit ${RC[0]}, named by counters: '$(named_by_counters loss)': $(fails loss | cut -c1-300) $(grep -A5 'counters that moved' "$TMP/loss.0.out")"
	fi

	T0=$(date +%s)
	fresh
	ip netns exec "${HOST[3]}" nft -f - <<NFT || fail "nft: cannot add the cut"
table inet cbcut {
	chain in { type filter hook input priority 0; ip saddr ${ADDR[2]} drop; }
	chain out { type filter hook output priority 0; ip daddr ${ADDR[2]} drop; }
}
NFT
	KILL_AFTER=5 run_hosts cut $N "${quick[@]}" -O "$TMP/cut.json"
	path='node2 (eth0) cannot reach node3 (eth0)'
	if [ "${RC[0]}" -eq 1 ] &&
		[ "$(fails cut | grep -c '^FAIL connectivity')" -eq 1 ] &&
		fails cut | grep -qF "FAIL connectivity: $path" &&
		fails cut | grep -q '^FAIL pairwise: path node2 (eth0) - node3 (eth0): ' &&
		! fails cut | grep -q '^FAIL [a-z]*: \(host\|node\) '; then
		pass "path node2-node3 cut ($(took)): named alone ($(grep -o '[0-9]* tried again alone, [0-9]* connected then' "$TMP/cut.0.out")): $(fails cut | tr '\n' ' ' | cut -c1-240)"
	else
		fail "path node2-node3 cut: exit ${RC[0]}: $(grep -E '^  connectivity|^FAIL' "$TMP/cut.0.out" | cut -c1-240)"
	fi
else
	echo "SKIP (this part): no nft (package nftables) to drop packets with"
fi

T0=$(date +%s)
fresh
( sleep 2; while :; do
	ip -n "$CL_SW" link set p2 down 2>/dev/null; sleep 0.5
	ip -n "$CL_SW" link set p2 up 2>/dev/null || exit 0; sleep 3
done ) &
FLAPPER=$!
KILL_AFTER=5 run_hosts flap $N "${quick[@]}" -O "$TMP/flap.json"
kill "$FLAPPER" 2>/dev/null
wait "$FLAPPER" 2>/dev/null
FLAPPER=
if [ "${RC[0]}" -eq 1 ] && [ "$(named_by_counters flap)" = "host node2 " ] &&
	by_counters flap | grep -q 'host node2 .*carrier_changes +[1-9]'; then
	pass "host 2's link flapping ($(took)): named with its counters: $(by_counters flap | cut -c1-260)"
else
	fail "host 2's link flapping: exit ${RC[0]}, named by counters: '$(named_by_counters flap)': $(fails flap | cut -c1-300)"
fi
finish
