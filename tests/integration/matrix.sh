#!/bin/bash
# matrix.sh COLLBENCH NP TRANSPORT - ring allreduce (the foundation's
# tuned path, and the transports' fallbacks beneath it): every dtype x op, out-of-place and
# in-place, sizes from 0 bytes through odd counts and counts below the rank
# count up to 300 KB, and then large messages (the single-copy and
# multi-stream paths), all checked bit-exact through the CSV output.
. "$(dirname "$0")/lib.sh"
np=${1:?np} tr=${2:?transport}

header='collective,algo,transport,dtype,op,ranks,hosts,bytes,count,inplace,time_us,algbw_gbps,busbw_gbps,wrong'

# Rows of FILE's body that are not exact, or not an allreduce by ring on
# np ranks over tr, or whose count is not a whole number.
bad_rows() { # FILE
	tail -n +2 "$1" | awk -F, -v np="$np" -v tr="$tr" \
		'$14 != 0 || $6 != np || $3 != tr || $1 != "allreduce" || $2 != "ring" || $9 !~ /^[0-9]+$/ { print }'
}

# The filter itself must catch what it is there for: a planted row with a
# wrong value, and one whose count is not a number, each flagged.
good="allreduce,ring,$tr,float32,sum,$np,1,16,4,0,1.0,0.1,0.1,0"
printf '%s\n%s\n' "$header" "$good" >"$TMP/planted.csv"
[ -z "$(bad_rows "$TMP/planted.csv")" ] || fail "bad_rows flags a good row"
for row in "${good%,0},3" "allreduce,ring,$tr,float32,sum,$np,1,16,4x,0,1.0,0.1,0.1,0" \
	"allreduce,ring,$tr,float32,sum,$np,1,16,,0,1.0,0.1,0.1,0"; do
	printf '%s\n%s\n' "$header" "$row" >"$TMP/planted.csv"
	[ -n "$(bad_rows "$TMP/planted.csv")" ] || fail "bad_rows misses '$row'"
done

check_csv() { # FILE WANT_ROWS WHAT
	local f=$1 want=$2 what=$3 rows bad before=$failures
	# the foundation's 14 columns come first, in this order (later
	# issues only append)
	if [ "$(head -1 "$f" | cut -d, -f1-14)" != "$header" ]; then
		fail "$what: CSV header is '$(head -1 "$f")'"
		return
	fi
	rows=$(tail -n +2 "$f" | wc -l)
	[ "$rows" -eq "$want" ] || fail "$what: $rows rows, want $want"
	bad=$(bad_rows "$f" | head -5)
	[ -z "$bad" ] || fail "$what: rows with wrong values or fields: $bad"
	[ "$failures" -ne "$before" ] || pass "$what: $rows rows, all exact"
}

"$CB" --np "$np" --transport "$tr" --algo ring --format csv -d all -o all \
	-b 0 -e 300K -f 3.7 -n 2 -w 1 --timeout 20 >"$TMP/small.csv" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || fail "small sizes: exit $rc: $(head -3 "$TMP/err")"
# 11 sizes (0 1 3 11 40 148 547 2023 7485 27694 102467) x 8 x 4 x 2
check_csv "$TMP/small.csv" 704 "np=$np $tr small sizes, every dtype/op"

"$CB" --np "$np" --transport "$tr" --algo ring --format csv -d float32,int64 -o sum,max \
	-b 1000000 -e 6M -f 2.5 -n 2 -w 0 --chunk-bytes 256K --timeout 30 \
	>"$TMP/large.csv" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || fail "large sizes: exit $rc: $(head -3 "$TMP/err")"
# 3 sizes (1000000, 2500000, 6250000 <= 6M = 6291456) x 2 x 2 x 2
check_csv "$TMP/large.csv" 24 "np=$np $tr large sizes"
finish
