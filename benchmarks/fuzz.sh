#!/bin/bash
# benchmarks/fuzz.sh [SECONDS] - fuzz every target in tests/fuzz/ for SECONDS
# each (default 600), one after the other, at low priority, in build-fuzz
# (clang 14, libFuzzer, ASan + UBSan; made here if missing).  What each run
# found is kept in build-fuzz/tests/fuzz/fuzz-work/NAME and used by the next
# run; an input that crashed (or broke a property) is in
# build-fuzz/tests/fuzz/fuzz-crashes/.  Ends with one line per target and
# the total time, and exits 1 if any target failed.
# Installs nothing: needs clang 14 and libclang-rt-14-dev (tools/deps.sh --test).
#
# A crash found and fixed belongs in tests/fuzz/corpus/NAME/crash-WHAT, so
# every build replays it from then on (suite fuzz-replay).
set -u
cd "$(dirname "$0")/.."
secs=${1:-600}
dir=build-fuzz
tools/deps.sh --test >/dev/null || exit 1
if [ ! -d "$dir" ]; then
	CC=clang meson setup "$dir" --buildtype=debugoptimized -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true \
		>/dev/null || exit 1
fi
ninja -C "$dir" >/dev/null || { echo "fuzz.sh: build failed"; exit 1; }
targets=$(sed -n "s/^  '\([a-z_]*\)',.*/\1/p" tests/fuzz/meson.build)
rc=0 total=0
for t in $targets; do
	line=$(nice -n 19 tests/fuzz/run.sh "$dir/tests/fuzz/fuzz_$t" \
		"tests/fuzz/corpus/$t" "$secs" | tail -1)
	case $line in *FAILED*) rc=1 ;; esac
	echo "$line"
	total=$((total + secs))
done
echo "fuzz.sh: $(echo $targets | wc -w) targets, $total s of fuzzing, $([ $rc -eq 0 ] && echo 'no crash' || echo 'FAILURES above')"
exit $rc
