#!/bin/bash
# aliases.sh COLLBENCH - nccl-tests' spellings do what they do there:
# -N cycles of the sweep (0: until a signal stops it, with the rows so far),
# -S 1 a timestamp on each table row, -J FILE the JSON report, -T the
# timeout, -a which time a row reports (unit-tested in test_options.c: a
# real run's per-rank times do not differ knowably); -a and -N in the JSON
# settings; perftest's --report_gbits (the table and the CSV in Gb/s, 8x
# the JSON's GB/s of the same run) and -D SECONDS (each point timed for
# that long, every rank stopping together, the count in each row).
. "$(dirname "$0")/lib.sh"
# Job control: background commands otherwise start with SIGINT ignored.
set -m
run=(--np 2 --transport shm -b 8 -e 64 -n 2 -w 0)

# -N 3: the sweep three times over, in one table and one JSON file
"$CB" "${run[@]}" -N 3 -J "$TMP/n3.json" -T 20 >"$TMP/n3.txt" 2>&1 ||
	fail "-N 3 exited $?: $(tail -2 "$TMP/n3.txt")"
rows=$(grep -vc '^#' "$TMP/n3.txt")
[ "$rows" -eq 12 ] && pass "-N 3: 12 table rows (4 sizes x 3)" ||
	fail "-N 3: $rows table rows, want 12"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$TMP/n3.json" 2>&1)
[ "$n" = 24 ] && pass "-J FILE: JSON with 24 rows (in and out of place)" ||
	fail "-J FILE: $n rows in the JSON, want 24"

# -S 1: every row starts with [YYYY-MM-DD HH:MM:SS]; -S 0 (the default): none
"$CB" "${run[@]}" -S 1 >"$TMP/s1.txt" 2>&1 || fail "-S 1 exited $?"
bad=$(grep -v '^#' "$TMP/s1.txt" | grep -cvE '^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\] +8|^\[[0-9-]{10} [0-9:]{8}\] +[0-9]+ ')
good=$(grep -cE '^\[[0-9-]{10} [0-9:]{8}\]' "$TMP/s1.txt")
[ "$bad" -eq 0 ] && [ "$good" -eq 4 ] && pass "-S 1: 4 rows, each with its time" ||
	fail "-S 1: $good stamped rows, $bad others: $(head -c 300 "$TMP/s1.txt")"
"$CB" "${run[@]}" -S 0 | grep -qE '^\[' && fail "-S 0 stamps rows" || pass "-S 0: no stamps"

# -a: the table says which time its rows hold
"$CB" "${run[@]}" -a 3 | grep -q '^# time: .*the largest across ranks (-a 3)' &&
	pass "-a 3: the header says the largest across ranks" ||
	fail "-a 3: the header does not say which time"

# -N 0: until interrupted; SIGINT ends it with 130 and the rows so far
"$CB" "${run[@]}" -N 0 -O "$TMP/n0.json" >"$TMP/n0.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(grep -vc '^#' "$TMP/n0.txt")" -gt 8 ] && break
	sleep 0.1
done
kill -INT "$pid"
timeout 30 tail --pid="$pid" -f /dev/null || kill -KILL "$pid"
wait "$pid"
rc=$?
rows=$(grep -vc '^#' "$TMP/n0.txt")
[ "$rc" -eq 130 ] && [ "$rows" -gt 8 ] && pass "-N 0: ran $rows rows (over two cycles) until SIGINT, exit 130" ||
	fail "-N 0: exit $rc after $rows rows, want 130 after more than 8"
st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$TMP/n0.json" 2>&1)
[ "$st" = interrupted ] && pass "-N 0: the JSON says interrupted" ||
	fail "-N 0: JSON status '$st'"
# -a and -N: in the JSON's settings
"$CB" "${run[@]}" -a 3 -N 2 -J "$TMP/a3.json" >/dev/null 2>&1 || fail "-a 3 -N 2 exited $?"
got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["settings"]
print(s["average"], s["run_cycles"], s["duration_s"], s["report_gbits"])' "$TMP/a3.json" 2>&1)
[ "$got" = "3 2 None False" ] && pass "settings: average 3, run_cycles 2, no duration, GB/s" ||
	fail "settings: '$got', want '3 2 None False'"

# --report_gbits: one run, three outputs: the table and the CSV carry
# Gb/s, 8x the JSON's GB/s (the JSON keeps GB/s and says report_gbits)
"$CB" "${run[@]}" -b 64K -e 256K --report_gbits -O "$TMP/g.csv" -O "$TMP/g.json" \
	>"$TMP/g.txt" 2>&1 || fail "--report_gbits exited $?: $(tail -2 "$TMP/g.txt")"
grep -q '^# .*(us)  (Gb/s)  (Gb/s)' "$TMP/g.txt" && grep -q 'Gb/s = 1e9 bits/s' "$TMP/g.txt" &&
	grep -q '^# Avg bus bandwidth: [0-9.]* Gb/s' "$TMP/g.txt" &&
	! grep -v '^# model: ' "$TMP/g.txt" | grep -q 'GB/s' &&
	pass "--report_gbits: the table's header, columns and footer say Gb/s (the model line keeps --beta-gbps's GB/s)" ||
	fail "--report_gbits: the table does not say Gb/s throughout: $(grep '^#' "$TMP/g.txt" | grep -i 'b/s' | head -5)"
python3 - "$TMP/g.txt" "$TMP/g.csv" "$TMP/g.json" <<'PY' && pass "--report_gbits: table and CSV bandwidth = 8 x the JSON's GB/s, each row" || fail "--report_gbits: the figures disagree"
import csv, json, sys
txt, csvf, js = sys.argv[1:]
d = json.load(open(js))
assert d["settings"]["report_gbits"] is True, d["settings"]
rows = {(r["bytes"], r["inplace"]): r for r in d["rows"]}
c = list(csv.DictReader(open(csvf)))
assert "algbw_gbits" in c[0] and "algbw_gbps" not in c[0], list(c[0])
assert len(c) == len(rows) == 6, (len(c), len(rows))
for r in c:
    j = rows[(int(r["bytes"]), r["inplace"] == "1")]
    for k in ("algbw", "busbw"):
        want = 8 * j[k + "_gbps"]
        assert abs(float(r[k + "_gbits"]) - want) <= 1e-3 * want + 1e-3, (r, j)
n = 0
for line in open(txt):
    if line.startswith("#"):
        continue
    f = line.split()
    b = int(f[0])
    for ip, (alg, bus) in ((False, (7, 8)), (True, (11, 12))):
        want = 8 * rows[(b, ip)]["algbw_gbps"]
        assert abs(float(f[alg]) - want) <= 1e-3 * want + 2e-3, (line, want)
        assert abs(float(f[bus]) - 8 * rows[(b, ip)]["busbw_gbps"]) <= 1e-3 * want + 2e-3
        n += 1
assert n == 6, n
PY

# -D 0.3: each point timed for 0.3 s or a little more, whatever its size; the count
# in each row (JSON, CSV), the table says so; no -n count
t0=$(date +%s.%N)
# (-a 0: the row's time is rank 0's, the rank that decides)
timeout 120 "$CB" --np 2 --transport shm -b 8 -e 64K -f 64 -D 0.3 -a 0 -w 2 -T 20 \
	-O "$TMP/d.json" -O "$TMP/d.csv" >"$TMP/d.txt" 2>&1 || fail "-D 0.3 exited $?: $(tail -2 "$TMP/d.txt")"
t1=$(date +%s.%N)
python3 - "$TMP/d.json" "$TMP/d.csv" "$TMP/d.txt" "$(echo "$t1 - $t0" | bc)" <<'PY' && pass "-D 0.3: 6 rows, each at least 0.25 s of calls, its count in the JSON, the CSV and the table" || fail "-D 0.3: see above"
import csv, json, sys
js, csvf, txt, wall = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
d = json.load(open(js))
assert d["settings"]["duration_s"] == 0.3, d["settings"]
rows = d["rows"]
assert len(rows) == 6, len(rows)
for r in rows:
    # at least the duration less half a call (the rule stops no sooner);
    # above it only by what a stall in the last batch costs (a loaded
    # machine descheduling a rank: bounded loosely)
    spent = r["time_us"] * r["iters"] / 1e6
    if not 0.25 <= spent <= 3 or r["iters"] == 20:
        print(f"FAIL: {r['bytes']} B inplace {r['inplace']}: {r['iters']} calls of {r['time_us']} us = {spent:.3f} s")
        sys.exit(1)
c = list(csv.DictReader(open(csvf)))
assert [int(x["iters"]) for x in c] == [r["iters"] for r in rows], "CSV iters"
lines = [l for l in open(txt) if l.startswith("#   -D: ")]
want = [f"#   -D: {rows[i]['iters']} calls out of place, {rows[i + 1]['iters']} in place\n" for i in (0, 2, 4)]
assert lines == want, (lines, want)
assert "fill 0.3 s per point" in open(txt).read()
# 3 sizes x 2 forms x 0.3 s and start-up: well under a minute
assert wall < 60, wall
PY

# -D with a --ranks sweep: the ranks outside a group take part in its
# gathers; nobody waits for the deadline
t0=$(date +%s)
timeout 60 "$CB" --np 3 --transport shm --ranks 1:3:+1 -b 8 -e 8 -D 0.1 -w 1 -T 10 \
	--format csv >"$TMP/dr.csv" 2>"$TMP/dr.err"
rc=$?
t1=$(date +%s)
rows=$(grep -c '^allreduce' "$TMP/dr.csv")
[ "$rc" -eq 0 ] && [ "$rows" -eq 6 ] && [ $((t1 - t0)) -lt 10 ] &&
	pass "-D with --ranks 1:3:+1: 6 rows in $((t1 - t0)) s" ||
	fail "-D with --ranks: exit $rc, $rows rows, $((t1 - t0)) s: $(head -c 300 "$TMP/dr.err")"
# a sendrecv-like collective with one way and a window: pingpong bw
timeout 60 "$CB" --np 2 --transport tcp --coll pingpong --algo bw -b 4K -e 4K -D 0.2 -T 10 \
	--format csv >"$TMP/dp.csv" 2>"$TMP/dp.err" &&
	python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert len(r)==1 and int(r[0]["iters"])>=1, r' "$TMP/dp.csv" &&
	pass "-D on pingpong bw (tcp): one row with its count" ||
	fail "-D on pingpong bw: $(head -c 300 "$TMP/dp.err")"
finish
