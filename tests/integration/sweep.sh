#!/bin/bash
# sweep.sh COLLBENCH - a rank-count sweep (--ranks): each point on the
# first k ranks while the others wait; rows for every k, exact results, the
# scaling summary in the table, and pingpong (2 ranks only) skipped with a
# note elsewhere.
. "$(dirname "$0")/lib.sh"

"$CB" --np 4 --ranks 1:max:+1 --coll allreduce,broadcast,pingpong --algo all \
	-b 4 -e 64K -f 16 -w 0 -n 3 -r 0 --alpha-us 1 --beta-gbps 1 \
	--format csv -O "$TMP/t.txt" >"$TMP/r.csv" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail "--ranks sweep exited $rc: $(head -3 "$TMP/err")"
else
	out=$(python3 - "$TMP/r.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ks = sorted({int(r["ranks"]) for r in rows})
pp = sorted({int(r["ranks"]) for r in rows if r["collective"] == "pingpong"})
bad = [r for r in rows if r["wrong"] != "0"]
ar = {int(r["ranks"]) for r in rows if r["collective"] == "allreduce"}
if ks != [1, 2, 3, 4] or pp != [2] or bad or ar != {1, 2, 3, 4}:
    print(f"groups {ks}, pingpong on {pp}, {len(bad)} wrong")
    sys.exit(1)
print(f"{len(rows)} rows on groups {ks}, pingpong on {pp}")
PY
) && pass "--ranks 1:max:+1: $out" || fail "--ranks: $out"
	grep -q "^# Scaling" "$TMP/t.txt" || fail "no scaling summary in the table"
	n=$(grep -c "^  allreduce  *ring  *[1-4] " "$TMP/t.txt")
	[ "$n" -eq 4 ] && pass "scaling summary: ring allreduce for k = 1..4" ||
		fail "scaling summary has $n ring allreduce lines: $(grep -A12 '^# Scaling' "$TMP/t.txt")"
	grep -q "skipping latency pingpong on 3 ranks" "$TMP/err" &&
		pass "pingpong skipped on 3 ranks with a note" ||
		fail "no note for pingpong on 3 ranks: $(head -3 "$TMP/err")"
fi
# ps with a dedicated server beside another algorithm: only ps's rows leave
# the server's input out (each algorithm checked against its own inputs)
"$CB" --np 3 --algo ring,ps --ps-servers 1 -b 1K -e 64K -f 8 -w 0 -n 2 \
	--alpha-us 1 --beta-gbps 1 --format csv >"$TMP/ps.csv" 2>"$TMP/err"
rc=$?
bad=$(awk -F, 'NR > 1 && $14 != 0' "$TMP/ps.csv")
algos=$(awk -F, 'NR > 1 { print $2 }' "$TMP/ps.csv" | sort -u | tr '\n' ' ')
if [ $rc -ne 0 ] || [ -n "$bad" ] || [ "$algos" != "ps ring " ]; then
	fail "ring,ps with a server: exit $rc, algos '$algos', wrong rows: $bad $(head -2 "$TMP/err")"
else
	pass "ring and ps (1 dedicated server) side by side, all exact"
fi
finish
