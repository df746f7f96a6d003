#!/bin/bash
# topo_nohwloc.sh COLLBENCH - a build without hwloc (-Dhwloc=disabled):
# `collbench topo` says so in one line and exits 77; a run binds nothing and
# says why in its header.
. "$(dirname "$0")/lib.sh"
expect_fail 77 "no hwloc" "$CB" topo
"$CB" --np 2 -b 8 -e 8 >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^# binding: none (built without hwloc)$' "$TMP/run.out"; then
	pass "run without hwloc: $(grep '^# binding' "$TMP/run.out")"
else
	fail "run without hwloc: status $rc: $(head -6 "$TMP/run.out") $(cat "$TMP/run.err")"
fi
finish
