#!/bin/bash
# benchmarks/chaos.sh [RUNS] [SEED] [CHAOS ARGS...] - the long chaos run:
# RUNS jobs (default 200) of collbench, each with one rank killed (SIGKILL)
# or stopped (SIGSTOP) at a random moment - start-up, connect,
# mid-collective, output - over local ranks, ranks started by hand, and (as
# root) two network-namespace hosts; tcp, shm and auto; every algorithm of
# every collective, ps-async too (CHAOS ARGS go to chaos.py: --algos
# ps-async --stop-share 0.5).  Every run is checked as
# tests/integration/chaos.py says (CI runs 9 of them, and 6 of ps-async
# alone).  Ends with the counts per moment, action and mode, and exits 1 if
# any run broke a rule.  Uses build/ (tools/run.sh makes it), at low
# priority.  Installs nothing: needs build/, python3, and root with
# iproute2 for the namespace hosts (those jobs are skipped without).
set -u
cd "$(dirname "$0")/.."
runs=${1:-200}
seed=${2:-$RANDOM}
[ -x build/collbench ] || { meson setup build --buildtype=release >/dev/null && ninja -C build >/dev/null; } ||
	{ echo "chaos.sh: cannot build build/"; exit 1; }
ninja -C build >/dev/null || exit 1
report=$(mktemp)
nice -n 10 python3 tests/integration/chaos.py build/collbench --runs "$runs" \
	--seed "$seed" --hosts --report "$report" "${@:3}"
rc=$?
python3 - "$report" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"\n{'moment/action/mode':34} {'runs':>5} {'failed':>7} {'finished first':>15}")
for k in sorted(r["by"]):
    c = r["by"][k]
    print(f"{k:34} {c['runs']:5} {c['failed']:7} {c['finished first']:15}")
print(f"{'all':34} {r['runs']:5} {r['failed']:7}   ({r['seconds']} s, seed {r['seed']})")
PY
rm -f "$report"
exit $rc
