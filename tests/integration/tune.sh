#!/bin/bash
# tune.sh COLLBENCH - `collbench tune` and the table --algo auto reads:
# tune writes a well-formed table for the job's shape (every applicable
# algorithm's median at every size, "best" the fastest) and merges shapes
# into one file; auto follows a planted table (the fastest it names, at the
# nearest size on a log scale, among the algorithms it may run) and says so
# in the header; a call in place follows the table's in-place times
# (out of place the others); a shape the table lacks, and --tuning none,
# leave the choice to the model; where the table is found; bad tables and
# options.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME=$TMP/xdg
unset COLLBENCH_TUNING

t=$TMP/t.json
if "$CB" tune --np 2 --transport shm -b 8 -e 4K -f 8 --rounds 2 -n 5 \
	--tuning "$t" >"$TMP/out" 2>"$TMP/err"; then
	python3 - "$t" <<'PY' >"$TMP/check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "collbench-tuning" and d["schema_version"] == 1, d
(s,) = d["shapes"]
assert (s["collective"], s["transport"], s["ranks"], s["hosts"]) == \
    ("allreduce", "shm", 2, 1), s
sizes = [p["bytes"] for p in s["points"]]
assert sizes == [8, 64, 512, 4096], sizes
for p in s["points"]:
    assert set(p["time_us"]) == {"ring", "tree", "rd", "rabenseifner",
                                 "ps"}, p
    assert all(v > 0 for v in p["time_us"].values()), p
    # the fastest (times are written to 3 decimals, so two may tie)
    assert p["time_us"][p["best"]] == min(p["time_us"].values()), p
    # every algorithm of allreduce runs in place too
    assert set(p["inplace_us"]) == set(p["time_us"]), p
    assert all(v > 0 for v in p["inplace_us"].values()), p
    assert p["inplace_us"][p["best_inplace"]] == \
        min(p["inplace_us"].values()), p
PY
	[ $? -eq 0 ] && pass "tune wrote a table: 4 sizes x 5 algorithms, out of place and in place, best = fastest" ||
		fail "tune's table: $(cat "$TMP/check")"
	grep -q "^# wrote $t (1 job shape)" "$TMP/out" || fail "tune's summary: $(tail -2 "$TMP/out")"
else
	fail "tune exited $?: $(head -3 "$TMP/err")"
fi
"$CB" tune --np 3 --transport shm -b 8 -e 64 -f 8 --rounds 1 -n 3 --tuning "$t" >"$TMP/out" 2>&1 &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert sorted(s['ranks'] for s in d['shapes']) == [2, 3]" "$t" &&
	pass "tune merges a second shape into the file" || fail "merge: $(tail -3 "$TMP/out")"

# A planted table: np 2 shm, rd at 8 B and tree at 4 KiB.
plant() { # FILE RANKS
	cat >"$1" <<JSON
{ "schema": "collbench-tuning", "schema_version": 1, "shapes": [
  { "collective": "allreduce", "transport": "shm", "ranks": $2, "hosts": 1,
    "points": [
      { "bytes": 8, "time_us": { "rd": 1.0, "ring": 5.0, "tree": 9.0 } },
      { "bytes": 4096, "time_us": { "tree": 1.0, "ps": 0.5, "rd": 8.0 } } ] } ] }
JSON
}
algos() { # ARGS...: the algorithm of each out-of-place row, by size
	"$CB" --format csv -b 8 -e 4K -f 8 -n 2 -w 0 "$@" 2>"$TMP/err" |
		awk -F, 'NR > 1 && $10 == 0 { printf "%s:%s ", $8, $2 }'
}
plant "$TMP/p.json" 2
got=$(algos --np 2 --transport shm --tuning "$TMP/p.json")
[ "$got" = "8:rd 64:rd 512:ps 4096:ps " ] && pass "auto follows the table at the nearest size: $got" ||
	fail "auto with the planted table: '$got', want '8:rd 64:rd 512:ps 4096:ps '"
# ps with dedicated servers is not auto's to choose: the next fastest
plant "$TMP/p3.json" 3
got=$(algos --np 3 --transport shm --tuning "$TMP/p3.json" --ps-servers 1)
[ "$got" = "8:rd 64:rd 512:tree 4096:tree " ] && pass "auto skips what it may not run (ps with a server): $got" ||
	fail "auto with ps excluded: '$got'"
# In place the table's in-place times decide; out of place the others.
cat >"$TMP/ip.json" <<JSON
{ "schema": "collbench-tuning", "schema_version": 1, "shapes": [
  { "collective": "allreduce", "transport": "shm", "ranks": 2, "hosts": 1,
    "points": [
      { "bytes": 8, "time_us": { "rd": 1.0, "ring": 5.0, "tree": 9.0 },
        "inplace_us": { "rd": 7.0, "ring": 3.0, "tree": 9.0 } },
      { "bytes": 4096, "time_us": { "tree": 1.0, "ps": 0.5, "rd": 8.0 } } ] } ] }
JSON
got=$("$CB" --format csv -b 8 -e 4K -f 8 -n 2 -w 0 --np 2 --transport shm \
	--tuning "$TMP/ip.json" 2>"$TMP/err" |
	awk -F, 'NR > 1 { printf "%s:%s:%s ", $8, $10, $2 }')
want="8:0:rd 8:1:ring 64:0:rd 64:1:ring 512:0:ps 512:1:ps 4096:0:ps 4096:1:ps "
[ "$got" = "$want" ] && pass "in place, auto follows the in-place times (else the others): $got" ||
	fail "auto in place: '$got', want '$want' $(head -2 "$TMP/err")"
"$CB" -b 8 -e 8 -n 2 --np 2 --transport shm --tuning "$TMP/ip.json" >"$TMP/out" 2>&1
grep -q "^#   in place: ring (auto's pick" "$TMP/out" && pass "the table says which algorithm ran in place" ||
	fail "no '#   in place: ring' line: $(grep -v '^#' "$TMP/out" | head -3)"

"$CB" --np 2 --transport shm -e 8 --tuning "$TMP/p.json" | grep -q "^# auto: the tuning table $TMP/p.json (1 job shape" &&
	pass "the header names the table" || fail "no '# auto:' line naming the table"
# a shape the table lacks: the model decides (-v says which, per size)
"$CB" --np 2 --transport shm -b 8 -e 4K -f 8 -n 2 -v --tuning "$TMP/p3.json" >/dev/null 2>"$TMP/v"
n_model=$(grep -c "auto: allreduce .* (model" "$TMP/v")
n_tuned=$(grep -c "tuned at" "$TMP/v")
[ "$n_model" -eq 4 ] && [ "$n_tuned" -eq 0 ] && pass "another shape's table: the model decides all 4 sizes" ||
	fail "np 2 with an np 3 table: $n_model model, $n_tuned tuned choices: $(head -3 "$TMP/v")"
"$CB" --np 2 --transport shm -b 8 -e 4K -f 8 -n 2 -v --tuning "$TMP/p.json" >/dev/null 2>"$TMP/v"
[ "$(grep -c "tuned at" "$TMP/v")" -eq 4 ] || fail "-v with the table: $(head -2 "$TMP/v")"
"$CB" -e 8 --tuning none | grep -q "^# auto: the cost model (--tuning none)" ||
	fail "--tuning none: no header line"
# where it is found: $COLLBENCH_TUNING, then XDG_CONFIG_HOME
got=$(COLLBENCH_TUNING=$TMP/p.json algos --np 2 --transport shm)
[ "$got" = "8:rd 64:rd 512:ps 4096:ps " ] && pass "COLLBENCH_TUNING is read" || fail "COLLBENCH_TUNING: '$got'"
mkdir -p "$XDG_CONFIG_HOME/collbench" && cp "$TMP/p.json" "$XDG_CONFIG_HOME/collbench/tuning.json"
"$CB" --np 2 -e 8 | grep -q "^# auto: the tuning table $XDG_CONFIG_HOME/collbench/tuning.json" &&
	pass "the per-user table is found" || fail "XDG_CONFIG_HOME/collbench/tuning.json not read"
rm -r "$XDG_CONFIG_HOME"
"$CB" --np 2 -e 8 | grep -q "^# auto: the cost model (no tuning table at $XDG_CONFIG_HOME/collbench/tuning.json" &&
	pass "no table: the model, and where one would be" || fail "no table: header"

echo '{"schema": "other"}' >"$TMP/other.json"
echo 'not json' >"$TMP/junk.json"
sed 's/"rd": 1.0/"rd": -1/' "$TMP/p.json" >"$TMP/neg.json"
expect_fail 2 "nope.json" "$CB" --tuning "$TMP/nope.json" -e 8
expect_fail 2 "not JSON" "$CB" --tuning "$TMP/junk.json" -e 8
expect_fail 2 "not a collbench tuning table" "$CB" --tuning "$TMP/other.json" -e 8
expect_fail 2 "positive number" "$CB" --tuning "$TMP/neg.json" -e 8
sed 's/"ring": 3.0/"ring": 0/' "$TMP/ip.json" >"$TMP/ineg.json"
sed 's/"ring": 3.0/"gone": 3.0/' "$TMP/ip.json" >"$TMP/ialg.json"
sed 's/"inplace_us": {[^}]*}/"inplace_us": 4/' "$TMP/ip.json" >"$TMP/inum.json"
expect_fail 2 "positive number" "$CB" --tuning "$TMP/ineg.json" -e 8
expect_fail 2 "in-place time of an algorithm without" "$CB" --tuning "$TMP/ialg.json" -e 8
expect_fail 2 '"inplace_us" is not an object' "$CB" --tuning "$TMP/inum.json" -e 8
expect_fail 2 "where to write" "$CB" tune --tuning none -e 8
expect_fail 2 "not ranges" "$CB" tune --algo "rd:0-1K;ring:1K-max" -e 8
expect_fail 2 "--rounds" "$CB" tune --rounds 0
finish
