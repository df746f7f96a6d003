#!/bin/bash
# psasync.sh COLLBENCH - the asynchronous parameter server (ps-async) beside
# the synchronous one and the ring: exact (every pulled copy against the
# sum its version names, every server's final shard against every update
# pushed: the #wrong column), colocated and dedicated servers, shm and tcp;
# its columns (pushes and pulls per second, staleness) filled where they
# apply and empty where not; --straggler: a synchronous step waits for the
# straggler's delay, ps-async's other workers do not; bad input.
. "$(dirname "$0")/lib.sh"

run() { # WHAT ARGS... : CSV in $TMP/out.csv
	local what=$1
	shift
	if ! "$CB" --format csv --timeout 60 "$@" >"$TMP/out.csv" 2>"$TMP/err"; then
		fail "$what: exit $?: $(head -3 "$TMP/err")"
		return 1
	fi
}

# columns: 1 coll, 2 algo, 10 inplace, 14 wrong, 17 p50, 20 slowest,
# 22 push_per_s, 23 pull_per_s, 24-26 staleness p50/p99/max
check_rows() { # WHAT WANT_ASYNC_ROWS
	local what=$1 want=$2 bad n
	n=$(awk -F, '$2 == "ps-async"' "$TMP/out.csv" | wc -l)
	[ "$n" -eq "$want" ] || fail "$what: $n ps-async rows, want $want"
	bad=$(awk -F, 'NR > 1 && ($14 != 0 ||
		($2 == "ps-async" && ($10 != 0 || !($22 > 0) || $22 != $23 ||
		  $24 !~ /^[0-9]+$/ || $26 < $25 || $25 < $24)) ||
		($2 == "ps" && ($24 != 0 || $26 != 0 || !($22 > 0))) ||
		($2 == "ring" && $22 $23 $24 $25 $26 != ""))' "$TMP/out.csv")
	[ -z "$bad" ] && pass "$what: exact, columns as they should be" ||
		fail "$what: rows: $(echo "$bad" | head -3)"
}

for tr in shm tcp; do
	run "np 3 $tr" --np 3 --transport "$tr" --algo ps,ps-async,ring \
		-d float32,int8,int64 -b 0 -e 200K -f 9 -n 40 -w 2 &&  # 7 sizes x 3 dtypes
		check_rows "np 3 $tr (colocated servers)" 21
done
run "np 5 dedicated" --np 5 --ps-servers 2 --algo ps,ps-async -b 8 -e 64K -f 8 -n 40 &&
	check_rows "np 5 shm, 2 dedicated servers" 5
run "np 1" --np 1 --algo ps-async -b 8 -e 4K -f 8 -n 20 &&
	check_rows "np 1" 4

# The trade-off: rank 1 busy 3 ms before each step.  A synchronous step
# cannot be shorter than the straggler's delay on any rank (a bound, not a
# timing); ps-async's other workers go on at their own pace (measured at
# about 0.1 ms a step here; the check leaves a factor of 15).
d=3000
run "straggler" --np 3 --algo ps,ps-async,ring --straggler 1:$d -b 16K -e 16K -n 40 -w 2 &&
	{
		check_rows "straggler" 1
		awk -F, -v d=$d 'NR > 1 && $10 == 0 {
			if ($2 != "ps-async" && $17 < 0.95 * d) print "sync " $2 " p50 " $17
			if ($2 == "ps-async" && ($17 > 0.5 * d || $20 != 1)) print "async p50 " $17 " slowest " $20
			if ($2 == "ps-async" && $26 < 2) print "async staleness max " $26
		}' "$TMP/out.csv" >"$TMP/bad"
		[ -s "$TMP/bad" ] && fail "straggler: $(cat "$TMP/bad")" ||
			pass "straggler 1:$d: sync ps and ring p50 >= the delay, ps-async p50 below half of it, rank 1 slowest, staleness > 1"
	}

expect_fail 2 "RANK:DELAY_US" "$CB" --straggler 1
expect_fail 2 "--straggler rank" "$CB" --straggler x:5
expect_fail 2 "--straggler delay" "$CB" --straggler 1:-5
expect_fail 2 "only 2 ranks" "$CB" --np 2 --straggler 2:10 -e 8
expect_fail 2 "float16" "$CB" --algo ps-async -d float16 -e 8
expect_fail 2 "leave at least one worker" "$CB" --np 2 --algo ps-async --ps-servers 2 -e 8
finish
