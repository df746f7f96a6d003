#!/bin/bash
# aliases.sh COLLBENCH - nccl-tests' spellings do what they do there:
# -N cycles of the sweep (0: until a signal stops it, with the rows so far),
# -S 1 a timestamp on each table row, -J FILE the JSON report, -T the
# timeout, -a which time a row reports (unit-tested in test_options.c: a
# real run's per-rank times do not differ knowably).
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
finish
