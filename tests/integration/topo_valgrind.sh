#!/bin/bash
# topo_valgrind.sh COLLBENCH DATA_DIR - `collbench topo` on each recorded
# machine (table, JSON, a binding plan) and on a synthetic one runs clean
# under valgrind: no invalid access, nothing definitely or indirectly lost.
# (The live machine is left out: hwloc's PCI component, through
# libpciaccess, loses a block of its own.)
. "$(dirname "$0")/lib.sh"
D=${1:?usage: topo_valgrind.sh COLLBENCH DATA_DIR}
command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }

vg() { # WHAT ARGS...
	local what=$1
	shift
	if valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect "$CB" topo "$@" \
		>/dev/null 2>"$TMP/vg"; then
		pass "valgrind clean: $what"
	else
		fail "valgrind: $what: $(head -20 "$TMP/vg")"
	fi
}
vg "24em64t, table and a plan" --topo-xml "$D/24em64t-2n6c2t-pci.xml" --np 6
vg "32em64t, JSON and a plan" --topo-xml "$D/32em64t-2n8c2t-pci-wholeio.xml" \
	--format json --np 6 --bind numa
vg "96em64t, table" --topo-xml "$D/96em64t-4n4d3ca2co-pci.xml"
vg "power8, JSON" --topo-xml "$D/power8gpudistances.xml" --format json --np 2
vg "synthetic, JSON and a plan" --synthetic "pack:2 numa:2 core:4 pu:2" \
	--np 16 --format json
finish
