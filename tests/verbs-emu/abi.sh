#!/bin/bash
# tests/verbs-emu/abi.sh OBJDUMP REAL EMULATED PREFIX [EXTRA...] - the
# stand-in exports exactly the real library's names, each at its exact
# version (default and hidden compatibility ones), plus the EXTRA lines
# ("VERSION NAME") and nothing else.
set -u
objdump=$1 real=$2 emu=$3 prefix=$4
shift 4
tab() { "$objdump" -T "$1" | awk -v p="$prefix" 'NF >= 4 && $0 !~ /\*UND\*/ && $0 !~ /\*ABS\*/ && ($(NF-1) ~ p || $(NF-1) ~ /CBEMU/) { print $(NF-1), $NF }' | sort; }
want=$(tab "$real"; for e in "$@"; do echo "$e"; done)
want=$(sort <<<"$want")
got=$(tab "$emu")
if [ "$want" != "$got" ]; then
	echo "FAIL: $(basename "$emu") exports differ from $(basename "$real") (< real, > emulation):"
	diff <(echo "$want") <(echo "$got") | head -20
	exit 1
fi
echo "ok: $(basename "$emu"): the $(wc -l <<<"$got") exported names and versions of $real$([ $# -gt 0 ] && echo " plus $*")"
