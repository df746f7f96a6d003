#!/bin/bash
# accept.sh COLLBENCH - `collbench acceptance` on this one host (no root:
# every rank is measured as a node, over loopback tcp; the test hosts made
# of network namespaces are tests/cluster/accept.sh):
#  - a run's outputs agree with each other: the exit status is the verdict,
#    the JSON has every pair and stage and is read back by `collbench
#    report`, the CSV has a row per pair, the JUnit XML parses and counts
#    the findings;
#  - expectations no link here can meet fail the run, said once for the
#    whole fabric; one it meets passes;
#  - bad options: one line, status 2; an unavailable transport: 77.
. "$(dirname "$0")/lib.sh"

small=(--transport tcp --bw-bytes 256K --coll-bytes 256K --lat-iters 50
	--pair-timeout 5 --timeout 20)

"$CB" acceptance --np 3 "${small[@]}" -O "$TMP/a.json" -O "$TMP/a.csv" \
	-O "$TMP/a.xml" -O "$TMP/a.html" >"$TMP/out" 2>"$TMP/err"
rc=$?
verdict=$(sed -n 's/^VERDICT: \([A-Z]*\).*/\1/p' "$TMP/out")
if { [ "$verdict" = PASS ] && [ $rc -eq 0 ]; } || { [ "$verdict" = FAIL ] && [ $rc -eq 1 ]; }; then
	pass "3 ranks: exit $rc, VERDICT: $verdict"
else
	fail "3 ranks: exit $rc but VERDICT '$verdict': $(head -5 "$TMP/err")"
fi
if [ "$(grep -c '^collbench acceptance: ' "$TMP/err")" -ne 4 ]; then
	fail "stages not reported as they finished: $(cat "$TMP/err")"
fi
if out=$(python3 - "$TMP" "$rc" <<'PY'
import csv, json, sys, xml.etree.ElementTree as ET
d, rc = sys.argv[1], int(sys.argv[2])
doc = json.load(open(d + "/a.json"))
a = doc["acceptance"]
rows = list(csv.DictReader(open(d + "/a.csv")))
x = ET.parse(d + "/a.xml").getroot()
bad = []
if a["verdict"] != ("PASS" if rc == 0 else "FAIL"): bad.append("verdict")
if len(a["nodes"]) != 3 or len(a["pairs"]) != 3 or len(rows) != 3: bad.append("pairs")
if any(not p["ok"] or p["bw_ab_gbps"] <= 0 or p["lat_p50_us"] <= 0 for p in a["pairs"]): bad.append("values")
if {(r["node_a"], r["node_b"]) for r in rows} != {("rank0", "rank1"), ("rank0", "rank2"), ("rank1", "rank2")}: bad.append("csv")
if [s["state"] for s in a["stages"]][:2] != ["PASS", "PASS"] or a["stages"][4]["state"] != "SKIP": bad.append("stages")
if len(doc["rows"]) != 2 or any(r["wrong"] for r in doc["rows"]): bad.append("rows")
if int(x.get("tests")) != 5 + 1 or (int(x.get("failures")) > 0) != (rc == 1): bad.append("junit")
if "environment" not in doc or doc["ranks"] != 3: bad.append("run object")
print(bad or f"{len(rows)} pairs, verdict {a['verdict']}, junit {x.get('tests')} cases")
sys.exit(1 if bad else 0)
PY
); then
	pass "outputs agree: $out"
else
	fail "outputs: $out"
fi
if grep -q 'ACCEPTANCE' "$TMP/a.html" && "$CB" report "$TMP/a.json" -o "$TMP/r.html" 2>/dev/null &&
	grep -q "ACCEPTANCE $verdict" "$TMP/r.html"; then
	pass "HTML: banner in -O and in collbench report"
else
	fail "HTML: no verdict banner"
fi

# An expectation nothing here meets: FAIL, once, for the fabric (not once
# a pair).  Only the expectation's lines are counted: on a loaded machine
# (the sanitizer build, beside other tests) the judge has also named a
# noisy loopback pair here, once in a CI run - the false alarm issue 19 §1
# is about, measured by benchmarks/acceptance.sh, not by this test.
"$CB" acceptance --np 3 "${small[@]}" --stages pairwise --expect-bw 100000 \
	>"$TMP/out" 2>/dev/null
rc=$?
if [ $rc -ne 1 ] || [ "$(grep -c '^FAIL .*expected at least' "$TMP/out")" -ne 1 ] ||
	! grep -q '^FAIL pairwise: every pair of all 3 nodes: .*expected at least 1e+05 GB/s' "$TMP/out"; then
	fail "--expect-bw 100000: exit $rc: $(grep -E '^(FAIL|VERDICT)' "$TMP/out")"
else
	pass "--expect-bw 100000: $(grep '^FAIL' "$TMP/out")"
fi
# ... and one every link here meets (and no collectives asked for).
printf '# what the vendor promised\nbw_gbps = 0.001\nlat_us = 100000\n' >"$TMP/expect"
"$CB" acceptance --np 2 "${small[@]}" --stages pairwise --expect "$TMP/expect" \
	--bw-tolerance 1% --lat-tolerance 1000 >"$TMP/out" 2>/dev/null
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^VERDICT: PASS' "$TMP/out"; then
	fail "--expect FILE met: exit $rc: $(grep -E '^(FAIL|VERDICT)' "$TMP/out")"
else
	pass "--expect FILE met: $(grep '^VERDICT' "$TMP/out")"
fi

expect_fail 2 "--bw-tolerance '2'" "$CB" acceptance --bw-tolerance 2
expect_fail 2 "--duration 'soon'" "$CB" acceptance --duration soon
expect_fail 2 "--stages: 'foo'" "$CB" acceptance --stages pairwise,foo
expect_fail 2 "collectives need pairwise" "$CB" acceptance --stages collectives
expect_fail 2 "-O x.pdf" "$CB" acceptance -O x.pdf
expect_fail 2 "--expect-bw 'fast'" "$CB" acceptance --expect-bw fast
expect_fail 2 "cannot read it" "$CB" acceptance --expect /nonexistent/expect
printf 'bw = 3\n' >"$TMP/badexpect"
expect_fail 2 "unknown key 'bw'" "$CB" acceptance --expect "$TMP/badexpect"
expect_fail 2 "unknown option '--frobnicate'" "$CB" acceptance --frobnicate
expect_fail 2 "--bw-bytes" "$CB" acceptance --bw-bytes 1G
expect_fail 2 "--transport 'carrier-pigeon'" "$CB" acceptance --transport carrier-pigeon
expect_fail 2 "acceptance needs two nodes at least" "$CB" acceptance --np 1
expect_fail 77 "transport verbs is not available" "$CB" acceptance --transport verbs
"$CB" acceptance --help | grep -q -- '--pair-timeout' && pass "acceptance --help" ||
	fail "acceptance --help lacks --pair-timeout"
finish
