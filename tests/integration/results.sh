#!/bin/bash
# results.sh COLLBENCH DATA_DIR - JSON results, plots, compare and the HTML
# report, end to end: a reproducible run against golden JSON and CSV
# (DATA_DIR/run-repro.*), a real run's JSON well formed, `plot` images of
# the asked size that are not blank (pixels decoded), the .dat/.gp kept and
# a missing gnuplot reported in one line, `compare` passing an identical
# pair and flagging a planted regression, `report` a page that parses and
# embeds its images, and bad input: one line, status 2.
. "$(dirname "$0")/lib.sh"
D=${1:?usage: results.sh COLLBENCH DATA_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
# absolute: the test works in its own folder (meson passes ./collbench)
CB=$(cd "$(dirname "$CB")" && pwd)/$(basename "$CB")
D=$(cd "$D" && pwd)
CHECK="python3 $HERE/results_check.py"
cd "$TMP" || exit 1

# expect RC CMD... : the command exits RC
expect() {
	local want=$1 rc
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "'$*' exited $rc, want $want: $(head -c 400 "$TMP/err")"
		return 1
	fi
	pass "$* -> $rc"
}

# 1. reproducible: byte-stable JSON and CSV
expect 0 env COLLBENCH_REPRODUCIBLE=1 "$CB" --np 2 -b 8 -e 4K -f 8 \
	--algo ring,rd -d float32,int8 --format csv -O repro.json -O repro.txt
mv out repro.csv
for f in repro.json repro.csv; do
	[ -n "${COLLBENCH_UPDATE_GOLDEN:-}" ] && cp "$f" "$D/run-$f"
	if cmp -s "$f" "$D/run-$f"; then
		pass "$f matches $D/run-$f"
	else
		fail "$f differs from $D/run-$f: $(diff "$f" "$D/run-$f" | head -20)"
	fi
done

# 2. real runs: one plain, one --ranks sweep with --plot on the run
expect 0 "$CB" --np 2 -b 8 -e 256K -f 8 --algo ring,rd -O run.json -O run.csv
expect 0 "$CB" --np 3 -b 1K -e 64K -f 8 --ranks 1:max:+1 --coll allreduce,barrier \
	--format json --plot sweep.png
mv out sweep.json
$CHECK json run.json sweep.json repro.json && pass "JSON parses, rows complete" ||
	fail "JSON check"
[ -s sweep.dat ] && [ -s sweep.gp ] && [ -s sweep-scaling.png ] &&
	pass "--plot on a run: image, scaling image, .dat and .gp" ||
	fail "--plot on a run: $(ls)"

# a run that fails midway still writes valid JSON, "status": "failed"
"$CB" --np 2 -b 1M -e 64M -n 200 --transport tcp -O fail.json >/dev/null 2>&1 &
lp=$!
# the file appears when the measurements start: then stop rank 1 (forked
# after rank 0, so the larger pid)
for _ in $(seq 100); do [ -e fail.json ] && break; sleep 0.1; done
sleep 0.5
kill -9 "$(pgrep -P "$lp" | sort -n | tail -1)" 2>/dev/null
wait "$lp"
python3 -c 'import json, sys; d = json.load(open("fail.json"))
sys.exit(d["status"] != "failed" or not d["error"])' &&
	pass "a failed run: valid JSON, status failed, the error line" ||
	fail "a failed run's JSON: $(head -c 300 fail.json)"

# 3. plot: PNG of the asked size, not blank; SVG; time metric; two files
if command -v gnuplot >/dev/null; then
	expect 0 "$CB" plot run.json -o p.png --size 640x480
	$CHECK png p.png 640 480 && pass "plot PNG" || fail "plot PNG"
	[ -s p.dat ] && [ -s p.gp ] && pass "p.dat and p.gp beside p.png" ||
		fail "no p.dat/p.gp"
	expect 0 "$CB" plot run.json sweep.json -o t.svg --metric time
	$CHECK svg t.svg && pass "plot SVG parses" || fail "plot SVG"
	expect 0 "$CB" plot sweep.json -o s.png --metric algbw --size 500x400
	$CHECK png s-scaling.png 500 400 && pass "scaling PNG" || fail "scaling PNG"
	# the .gp is standalone: gnuplot redraws it from its folder
	rm p.png
	(gnuplot p.gp) && [ -s p.png ] && pass "gnuplot p.gp redraws p.png" ||
		fail "gnuplot p.gp"
else
	echo "note: gnuplot not installed, image checks skipped"
fi
# a missing gnuplot: one line, status 77, the data files all the same
expect_fail 77 "gnuplot" env PATH=/nonexistent "$CB" plot run.json -o np.png
[ -s np.dat ] && [ -s np.gp ] && [ ! -e np.png ] &&
	pass "no gnuplot: np.dat and np.gp written, no image" ||
	fail "no gnuplot: $(ls np*)"

# 4. compare
expect 0 "$CB" compare run.json run.json
$CHECK plant run.json slow.json regress
expect 1 "$CB" compare run.json slow.json --tolerance 10%
grep -q REGRESSION out && pass "regression flagged" || fail "no REGRESSION in: $(tail -3 out)"
expect 0 "$CB" compare run.json slow.json --tolerance 60%
$CHECK plant run.json wrong.json wrong
expect 1 "$CB" compare run.json wrong.json
grep -q "WRONG VALUES" out && pass "wrong values flagged" || fail "no WRONG VALUES"
expect 0 "$CB" compare run.json sweep.json # nothing in common: listed, not failed
grep -q "only in base" out && grep -q "only in new" out &&
	pass "rows in one file only listed" || fail "only-in lists: $(tail -3 out)"

# 5. report
expect 0 "$CB" report run.json sweep.json wrong.json -o r.html
if command -v gnuplot >/dev/null; then
	$CHECK html r.html 3 && pass "report parses, 3+ inline images" ||
		fail "report HTML"
fi
grep -q "FAILED" r.html && grep -q "wrong values in 1 row" r.html &&
	pass "report: verdict and warning for wrong values" || fail "report verdict"
expect 0 env PATH=/nonexistent "$CB" report run.json -o r2.html
grep -q "gnuplot" err && [ "$(wc -l <err)" -eq 1 ] &&
	$CHECK html r2.html 0 && pass "report without gnuplot: page, one line" ||
	fail "report without gnuplot: $(cat err)"

# 6. bad input: one line, status 2 (77: the tool, 1: cannot write)
echo '{"schema": "other"}' >other.json
printf 'not json' >junk.json
expect_fail 2 "not collbench results" "$CB" plot other.json -o x.png
expect_fail 2 "not JSON" "$CB" compare junk.json run.json
expect_fail 2 "cannot read" "$CB" report missing.json -o x.html
expect_fail 2 "-o FILE" "$CB" plot run.json
expect_fail 2 "FILE.png or FILE.svg" "$CB" plot run.json -o x.jpg
expect_fail 2 "metric" "$CB" plot run.json -o x.png --metric speed
expect_fail 2 "--size" "$CB" plot run.json -o x.png --size 10x10
expect_fail 2 "--size" "$CB" plot run.json -o x.png --size big
expect_fail 2 "two result files" "$CB" compare run.json
expect_fail 2 "--tolerance" "$CB" compare run.json run.json --tolerance lots
expect_fail 2 "FILE.html" "$CB" report run.json -o x.pdf
expect_fail 2 "unknown option" "$CB" report run.json -o x.html --frob
expect_fail 2 "json" "$CB" --format yaml
expect_fail 2 ".json" "$CB" -O run.xml
expect_fail 2 "--plot" "$CB" --plot x.jpg
expect_fail 1 "cannot write" "$CB" report run.json -o /nonexistent/x.html

# 7. under valgrind, once each: no invalid access, nothing lost
# (not in a sanitizer build: valgrind cannot run its binary, which checks
# memory itself)
if command -v valgrind >/dev/null && [ -z "${CB_SANITIZED:-}" ]; then
	vg() { # the command's own status may be anything but 99
		valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$CB" "$@" \
			>/dev/null 2>vg.err
		if [ $? -ne 99 ]; then
			pass "valgrind clean: $*"
		else
			fail "valgrind: $*: $(head -20 vg.err)"
		fi
	}
	vg plot run.json sweep.json -o vg.png
	vg compare run.json slow.json --tolerance 100%
	vg report run.json sweep.json -o vg.html
	vg plot junk.json -o vg.png
fi
finish
