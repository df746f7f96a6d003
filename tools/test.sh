#!/bin/bash
# tools/test.sh - install what is missing, build with warnings as errors, run
# every test suite, and end with one line: "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
tools/deps.sh --test || { echo "0 passed, 1 failed"; exit 1; }
dir=build-test
if [ ! -d "$dir" ]; then
	meson setup "$dir" --buildtype=release -Dwerror=true >/dev/null || {
		echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$dir"; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
# The slow suite (the full collective matrix) is a benchmark's job, not
# CI's: benchmarks/slow-tests.sh runs it.  Arguments replace the default.
if [ $# -eq 0 ]; then
	set -- --no-suite slow
fi
meson test -C "$dir" --print-errorlogs "$@"
rc=$?
# Count from meson's machine-readable log, not its human summary.
python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $rc
