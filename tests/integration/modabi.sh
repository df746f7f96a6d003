#!/bin/bash
# modabi.sh COLLBENCH OLD_MODULE.so WRONG_MODULE.so - the loader refuses a
# transport module of another ABI with exit 77 and one line, before it calls
# anything in it (both modules' members are NULL: a call would crash):
# OLD_MODULE is one of ABI 2 (exported as cb_tp_ops_v2, host callbacks
# without `self`), WRONG_MODULE exports this ABI's symbol but says version 2.
# Each is put where COLLBENCH_PLUGIN_PATH finds it first, as the verbs module.
. "$(dirname "$0")/lib.sh"
old=$1 wrong=$2

mkdir -p "$TMP/old" "$TMP/wrong"
cp "$old" "$TMP/old/libcollbench-verbs.so"
cp "$wrong" "$TMP/wrong/libcollbench-verbs.so"
for t in old wrong; do
	want="ABI 3"
	[ "$t" = old ] && want="built for transport ABI 2, this collbench needs ABI 3"
	COLLBENCH_PLUGIN_PATH=$TMP/$t expect_fail 77 "$want" \
		"$CB" --transport verbs -b 8 -e 8 -n 1 -w 0
	COLLBENCH_PLUGIN_PATH=$TMP/$t expect_fail 77 "$want" \
		"$CB" --np 2 --transport verbs -b 8 -e 8 -n 1 -w 0
done
# `collbench info` lists it as unavailable, and why, and goes on
out=$(COLLBENCH_PLUGIN_PATH=$TMP/old "$CB" info 2>&1)
if echo "$out" | grep -q "built for transport ABI 2"; then
	pass "info says why the old module is not used"
else
	fail "info: $(echo "$out" | grep -i verbs | head -3)"
fi
finish
