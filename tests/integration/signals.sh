#!/bin/bash
# signals.sh COLLBENCH - SIGINT and SIGTERM end a job cleanly: to the local
# launcher (kill, or ^C, which reaches every rank, in a sweep or in
# ps-async's sessions), to rank 0 alone, or to rank 0 of a job started by
# hand.  Each time: every process exits 130
# (SIGINT) or 143 (SIGTERM) within the deadline, one line says so, the
# table ends with a line saying its rows are all there is, -O run.json is
# valid JSON with "status": "interrupted" and the rows measured (as many as
# the CSV's), and no process is left.  A second signal ends it at once.
. "$(dirname "$0")/lib.sh"
# Job control: a script's background commands otherwise start with SIGINT
# ignored, and collbench leaves a signal ignored as it found it.
set -m

# A job long enough to be in its rows when the signal comes, on a fast
# machine too (seconds at 1 MiB), and with a first row soon on a slow one.
ARGS=(-b 1K -e 1M -f 2 -n 20000 -w 2 --timeout 10 -O "$TMP/run.json" -O "$TMP/run.csv")

# rows_out FILE: table rows printed so far
rows_out() { grep -vc '^#' "$1" 2>/dev/null; }

# wait_rows FILE: until the table has a row (20 s at most)
wait_rows() {
	for _ in $(seq 400); do
		[ "$(rows_out "$1")" -gt 0 ] && return 0
		sleep 0.05
	done
	return 1
}

# check NAME WANT_RC RC ERRFILES... : the outcome of one case
check() {
	local name=$1 want=$2 rc=$3 out
	shift 3
	local lines
	lines=$(cat "$@" | grep -vc 'no job token')
	out=$(python3 - "$TMP/run.json" "$TMP/run.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
csv = max(0, len(open(sys.argv[2]).read().splitlines()) - 1)
n = len(d["rows"])
if d["status"] != "interrupted" or not d["error"] or n != csv or n == 0:
    print(f"status {d['status']!r}, error {d['error']!r}, {n} rows, CSV {csv}")
    sys.exit(1)
print(f"{n} rows, {d['error']}")
PY
	)
	local jrc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, want $want: $(cat "$@" | head -3)"
	elif [ "$lines" -ne 1 ]; then
		fail "$name: $lines lines on stderr: $(cat "$@" | head -5)"
	elif [ $jrc -ne 0 ]; then
		fail "$name: run.json: $out"
	elif ! grep -q "the rows above are the results so far" "$TMP/out"; then
		fail "$name: the table does not say it stopped: $(tail -2 "$TMP/out")"
	elif pgrep -f "$TMP/run.json" >/dev/null; then
		fail "$name: processes left: $(pgrep -af "$TMP/run.json")"
	else
		pass "$name -> $rc: $(grep -hv 'no job token' "$@"); $out"
	fi
}

# local LABEL SIGNAL WHO: a 3-rank local job; WHO is launcher or rank0
local_case() {
	local name=$1 sig=$2 who=$3 want=$4 pid rc
	rm -f "$TMP"/run.*
	"$CB" --np 3 "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	wait_rows "$TMP/out" || { fail "$name: no row in 20 s"; kill -9 "$pid"; return; }
	if [ "$who" = launcher ]; then
		kill -"$sig" "$pid"
	else
		kill -"$sig" "$(pgrep -P "$pid" | sort -n | head -1)"
	fi
	wait "$pid"
	rc=$?
	check "$name" "$want" "$rc" "$TMP/err"
}
local_case "SIGINT to the launcher" INT launcher 130
local_case "SIGTERM to the launcher" TERM launcher 143
local_case "SIGTERM to rank 0" TERM rank0 143
local_case "SIGINT to rank 0" INT rank0 130

# ^C at a terminal: the launcher and every rank get SIGINT at once (with
# job control the job is a process group of its own).
rm -f "$TMP"/run.*
"$CB" --np 3 "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
if wait_rows "$TMP/out"; then
	kill -INT -- -"$pid"
	wait "$pid"
	check "^C (SIGINT to every process)" 130 $? "$TMP/err"
else
	fail "^C: no row in 20 s"
	kill -9 -- -"$pid"
fi

# ^C in ps-async's sessions, which serve and wait on their own (on
# cb_worker_wait, as every wait outside a schedule): the same clean end.
rm -f "$TMP"/run.*
"$CB" --np 3 --algo ps-async "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
if wait_rows "$TMP/out"; then
	kill -INT -- -"$pid"
	wait "$pid"
	check "^C during ps-async" 130 $? "$TMP/err"
else
	fail "^C during ps-async: no row in 20 s"
	kill -9 -- -"$pid"
fi

# Started by hand (as mpirun would): SIGTERM to rank 0; every rank ends
# with 143.
rm -f "$TMP"/run.*
port=$(free_port)
pids=()
for r in 0 1 2; do
	env COLLBENCH_RANK=$r COLLBENCH_WORLD=3 COLLBENCH_JOB_TOKEN=sig$$ "$CB" \
		--rendezvous 127.0.0.1:"$port" "${ARGS[@]}" \
		>"$TMP/out$r" 2>"$TMP/err$r" &
	pids+=($!)
done
cp /dev/null "$TMP/out"
if wait_rows "$TMP/out0"; then
	kill -TERM "${pids[0]}"
	rcs=()
	for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
	cp "$TMP/out0" "$TMP/out"
	if [ "${rcs[*]}" != "143 143 143" ]; then
		fail "launched, SIGTERM to rank 0: statuses ${rcs[*]}: $(cat "$TMP"/err?)"
	else
		check "launched, SIGTERM to rank 0" 143 "${rcs[0]}" "$TMP"/err?
	fi
else
	fail "launched: no row in 20 s"
	kill -9 "${pids[@]}"
fi

# Before any row: the JSON says interrupted, with none.
rm -f "$TMP"/run.*
"$CB" --np 3 "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
sleep 0.2
kill -INT "$pid"
wait "$pid"
rc=$?
st=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" "$TMP/run.json" 2>&1)
if [ "$rc" -ne 130 ] || [ "$st" != interrupted ]; then
	fail "SIGINT at start-up: exit $rc, run.json status $st: $(cat "$TMP/err")"
else
	pass "SIGINT at start-up -> 130, run.json interrupted: $(cat "$TMP/err")"
fi

# ^C while connecting: rank 1 (tests/integration/fakepeer.py tcp-silent)
# joins, publishes its tcp address and never dials, so rank 0 waits in its
# connect; SIGINT ends that wait at once (130, one line), not at the
# deadline (--timeout 60).
port=$(free_port)
env COLLBENCH_RANK=0 COLLBENCH_WORLD=2 "$CB" --transport tcp --rendezvous 127.0.0.1:"$port" \
	--timeout 60 -b 8 -e 8 -n 1 -w 0 >"$TMP/out" 2>"$TMP/err" &
pid=$!
python3 "$(dirname "$0")/fakepeer.py" tcp-silent "$port" >"$TMP/fake" 2>&1 &
fpid=$!
for _ in $(seq 200); do grep -q published "$TMP/fake" && break; sleep 0.05; done
sleep 1 # rank 0 fetches the address and starts its connect wait
t0=$(date +%s%N)
kill -INT "$pid"
wait "$pid"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
lines=$(grep -vc 'no job token' "$TMP/err")
if ! grep -q published "$TMP/fake"; then
	fail "SIGINT while connecting: the fake peer never got in: $(head -3 "$TMP/fake")"
elif [ "$rc" -ne 130 ] || [ "$ms" -gt 5000 ] || [ "$lines" -ne 1 ]; then
	fail "SIGINT while connecting: exit $rc after ${ms} ms, $lines lines: $(head -3 "$TMP/err")"
else
	pass "SIGINT while connecting -> 130 in ${ms} ms: $(grep -v 'no job token' "$TMP/err")"
fi

# A second signal does not wait for the ranks: SIGSTOP keeps rank 1 from
# ending, the first SIGINT is passed on, the second kills.
rm -f "$TMP"/run.*
"$CB" --np 3 "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
if wait_rows "$TMP/out"; then
	kill -STOP "$(pgrep -P "$pid" | sort -n | sed -n 2p)"
	kill -INT "$pid"
	sleep 0.5
	t0=$(date +%s%N)
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	sleep 0.2
	if [ "$rc" -ne 130 ] || [ "$ms" -gt 3000 ] || pgrep -f "$TMP/run.json" >/dev/null; then
		fail "second SIGINT: exit $rc after ${ms} ms, left: $(pgrep -f "$TMP/run.json")"
	else
		pass "second SIGINT -> 130 in ${ms} ms, nothing left"
	fi
else
	fail "second SIGINT: no row in 20 s"
	kill -9 "$pid"
fi
finish
