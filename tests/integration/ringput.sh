#!/bin/bash
# ringput.sh COLLBENCH - the ring allreduce's one-sided allgather
# (coll/ring_put.h): on shm each rank writes its allgather chunks straight
# into its right neighbour's receive buffer, agreed with both neighbours at
# plan build.  Checked: it is agreed where it can be (-vv names each link)
# and the results are exact, every type and op, in place and out, many
# chunks; off by COLLBENCH_RING_PUT=0, on tcp, and where mapping a peer's
# memory is refused (COLLBENCH_SHM_MAP=0): messages instead, still exact;
# and with one rank alone refusing, its two links fall back while the
# others write (a receiver waiting for writes that never come would hang
# until the deadline: the run must end at once).
. "$(dirname "$0")/lib.sh"

ARGS=(--algo ring -d float32,int32,float64 -o sum,max -b 8 -e 1M -f 32 -n 3 -w 1 --chunk-bytes 4K --timeout 20)

# run NAME WANT_LINKS ENV... -- ARGS...: a local job, -vv
run() {
	local name=$1 want=$2
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	if env "${envs[@]}" "$CB" -vv "$@" "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err"; then
		local links
		# one line per plan (a plan per datatype): distinct links
		links=$(grep "allgather chunks written straight" "$TMP/err" | sort -u | grep -c .)
		if ! grep -q "^# Wrong values: 0 OK" "$TMP/out"; then
			fail "$name: $(grep '^# Wrong' "$TMP/out")"
		elif [ "$links" -ne "$want" ]; then
			fail "$name: $links one-sided links, want $want"
		else
			pass "$name: $links one-sided links, every value exact"
		fi
	else
		fail "$name: exit $?: $(grep -v DEBUG "$TMP/err" | head -3)"
	fi
}

run "shm np 2" 2 -- --np 2 --transport shm
run "shm np 3" 3 -- --np 3 --transport shm
run "shm np 5" 5 -- --np 5 --transport shm
run "shm np 3 --touch" 3 -- --np 3 --transport shm --touch
run "COLLBENCH_RING_PUT=0" 0 COLLBENCH_RING_PUT=0 -- --np 3 --transport shm
run "tcp" 0 -- --np 3 --transport tcp
run "mapping refused (COLLBENCH_SHM_MAP=0)" 0 COLLBENCH_SHM_MAP=0 -- --np 3 --transport shm

# One rank of four refuses (started by hand, as a launcher would): rank 2
# offers rank 1 nothing to write into and does not write into rank 3, so
# 1 -> 2 and 2 -> 3 go as messages, 3 -> 0 and 0 -> 1 stay one-sided.
port=$(free_port)
pids=()
for r in 0 1 2 3; do
	e=()
	[ "$r" -eq 2 ] && e=(COLLBENCH_RING_PUT=0)
	env "${e[@]}" COLLBENCH_RANK=$r COLLBENCH_WORLD=4 COLLBENCH_JOB_TOKEN=rp$$ \
		"$CB" -vv --transport shm --rendezvous 127.0.0.1:"$port" "${ARGS[@]}" \
		>"$TMP/m$r.out" 2>"$TMP/m$r.err" &
	pids+=($!)
done
rcs=()
for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
links=$(cat "$TMP"/m?.err | grep "allgather chunks written straight" | sort -u | grep -c .)
if [ "${rcs[*]}" != "0 0 0 0" ]; then
	fail "one rank refusing: statuses ${rcs[*]}: $(grep -hv DEBUG "$TMP"/m?.err | head -3)"
elif ! grep -q "^# Wrong values: 0 OK" "$TMP/m0.out"; then
	fail "one rank refusing: $(grep '^# Wrong' "$TMP/m0.out")"
elif [ "$links" -ne 2 ]; then
	fail "one rank refusing: $links one-sided links, want 2 (3->0, 0->1)"
else
	pass "one rank of four refusing: 2 links one-sided (3->0, 0->1), 2 by messages, every value exact"
fi
expect_fail 2 "COLLBENCH_RING_PUT 'no' is not 0 or 1" env COLLBENCH_RING_PUT=no "$CB" -e 8
finish
