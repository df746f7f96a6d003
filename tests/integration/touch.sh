#!/bin/bash
# touch.sh COLLBENCH - --touch: between timed calls each rank reads the last
# result and rewrites the input (outside the time), so every call starts
# from the checked input and the last timed call's result is checked too.
# Every collective and algorithm, in place and out of place, shm and tcp,
# every datatype and op: no wrong value (with the input not rewritten, the
# in-place rows compound and this goes red); the header and the JSON say
# so; host buffers only.
. "$(dirname "$0")/lib.sh"

for tr in shm tcp; do
	if "$CB" --np 3 --transport "$tr" --coll all --algo all -d all -o all \
		-b 8 -e 64K -f 16 -n 4 -w 1 --touch -O "$TMP/run.json" \
		>"$TMP/out" 2>"$TMP/err"; then
		rows=$(grep -vc '^#' "$TMP/out")
		if grep -q "^# Wrong values: 0 OK" "$TMP/out" && [ "$rows" -gt 100 ]; then
			pass "$tr np 3, every collective, algorithm, type and op with --touch: $rows rows, none wrong"
		else
			fail "$tr --touch: $(grep '^# Wrong' "$TMP/out"), $rows rows"
		fi
	else
		fail "$tr --touch exited $?: $(head -3 "$TMP/err")"
	fi
done
grep -q "^# --touch: between timed calls each rank rewrites the input" "$TMP/out" &&
	pass "the header says the buffers were touched" || fail "no '# --touch' header line"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['settings']['touch'] is True, d['settings']" \
	"$TMP/run.json" && pass "JSON settings.touch is true" || fail "JSON settings.touch"
"$CB" --np 2 -e 8 -n 2 -O "$TMP/plain.json" >/dev/null 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['settings']['touch'] is False" \
	"$TMP/plain.json" && pass "without it, settings.touch is false" || fail "JSON settings.touch without --touch"
expect_fail 2 "--mem host only" "$CB" --touch --mem gpu -e 8
expect_fail 2 "--mem host only" "$CB" --touch --transport gpu -e 8
finish
