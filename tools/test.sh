#!/bin/bash
# tools/test.sh - install what is missing, build with warnings as errors, run
# every test suite, and end with one line: "N passed, N failed, N skipped".
#
# Four builds, each in its own folder, each with -Werror:
#   build-test  gcc, release: the whole suite (but 'slow': a benchmark's job,
#               benchmarks/slow-tests.sh runs it)
#   build-san   clang, AddressSanitizer + UndefinedBehaviorSanitizer, leaks
#               checked: the whole suite again (but the verbs emulation's,
#               which runs stock programs no sanitizer can join)
#   build-fuzz  the same with libFuzzer's coverage: each fuzz target for
#               CB_FUZZ_SECONDS (default 30; suite 'fuzz').  Apart from
#               build-san because that coverage slows every comparison.
#   build-tsan  clang, ThreadSanitizer: the bootstrap and failure tests
#               (suite 'tsan')
# A sanitizer report from any process of a test (a rank, a launcher, a
# survivor nobody waits for) fails the run, even if that test passed: the
# reports are collected in BUILD/san-reports and shown at the end.
#
# Arguments are meson test's, and run build-test only, with them
# (tools/test.sh --suite colls); so does CB_SANITIZERS=0.
set -u
cd "$(dirname "$0")/.."
tools/deps.sh --test || { echo "0 passed, 1 failed"; exit 1; }

rc=0
logs=()
reports=()

# build DIR CC [MESON OPTION...]: configure once, then build.
build() {
	local dir=$1 cc=$2
	shift 2
	if [ ! -d "$dir" ]; then
		CC=$cc meson setup "$dir" -Dwerror=true "$@" >/dev/null || {
			echo "$dir: meson setup failed"
			return 1
		}
	fi
	ninja -C "$dir" || {
		echo "$dir: build failed"
		return 1
	}
}

# check DIR [MESON TEST ARGS...]: run the tests; their log is counted.
check() {
	local dir=$1
	shift
	meson test -C "$dir" --print-errorlogs "$@" || rc=1
	logs+=("$dir/meson-logs/testlog.json")
}

# Exit codes no test expects (1 means "the run failed" to collbench), and
# reports in files, so one from a process whose status nobody reads counts.
san_env() {
	local out=$PWD/$1/san-reports
	rm -rf "$out"
	mkdir -p "$out"
	export ASAN_OPTIONS="detect_leaks=1:exitcode=86:log_path=$out/asan"
	export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
	export UBSAN_OPTIONS="print_stacktrace=1:exitcode=86:log_path=$out/ubsan"
	export TSAN_OPTIONS="halt_on_error=1:exitcode=86:second_deadlock_stack=1:log_path=$out/tsan"
	# hwloc finds PCI devices through sysfs, without libpciaccess (which
	# names them from pci.ids): it reads that file with a realloc per
	# entry, which a sanitizer's allocator makes a copy each (and TSan a
	# shadow reset) - 5-10 s per process on a VM with slow page faults,
	# 20 s before 3 ranks start under TSan.  Only the names from pci.ids
	# are lost; build-test runs with them.
	export HWLOC_COMPONENTS=-pci
}

if [ $# -gt 0 ] || [ "${CB_SANITIZERS:-1}" = 0 ]; then
	[ $# -gt 0 ] || set -- --no-suite slow
	build build-test cc --buildtype=release || { echo "0 passed, 1 failed"; exit 1; }
	check build-test "$@"
else
	build build-test cc --buildtype=release || { echo "0 passed, 1 failed"; exit 1; }
	check build-test --no-suite slow
	asan=(--buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false)
	if build build-san clang "${asan[@]}"; then
		# (not verbs-emu: the emulation is loaded into the stock
		# ibverbs-utils and perftest programs, which a sanitizer's
		# runtime cannot join; the plain build runs it)
		(san_env build-san && check build-san --no-suite slow \
			--no-suite verbs-emu --no-suite rdma-vm; exit $rc) || rc=1
		logs+=(build-san/meson-logs/testlog.json)
	else
		rc=1
	fi
	reports+=("$PWD/build-san/san-reports")
	if build build-fuzz clang "${asan[@]}" -Dfuzzing=true; then
		(san_env build-fuzz && check build-fuzz --suite fuzz; exit $rc) || rc=1
		logs+=(build-fuzz/meson-logs/testlog.json)
	else
		rc=1
	fi
	reports+=("$PWD/build-fuzz/san-reports")
	if build build-tsan clang --buildtype=debugoptimized \
		-Db_sanitize=thread -Db_lundef=false; then
		(san_env build-tsan && check build-tsan --suite tsan; exit $rc) || rc=1
		logs+=(build-tsan/meson-logs/testlog.json)
	else
		rc=1
	fi
	reports+=("$PWD/build-tsan/san-reports")
fi

# Sanitizer reports: each file is one process's report, and one failure.
nrep=0
for d in "${reports[@]}"; do
	for f in "$d"/*; do
		[ -f "$f" ] || continue
		# An empty log: the runtime opened its file and the process was
		# gone before a byte of report was written (the chaos tests
		# SIGKILL ranks; seen once, in chaos-ps-async under build-san,
		# not reproduced in 3 reruns).  There is no report to show, so it
		# is named, not counted; a report with any text fails the run.
		if [ ! -s "$f" ]; then
			echo "NOTE: empty sanitizer log $f (its process ended before writing a report)"
			continue
		fi
		nrep=$((nrep + 1))
		echo "=== sanitizer report $f"
		head -60 "$f"
	done
done
[ $nrep -eq 0 ] || rc=1

# Count from meson's machine-readable logs, not its human summary.
python3 - "$nrep" "${logs[@]}" <<'PY'
import json, os, sys
p = f = s = 0
f += int(sys.argv[1])
for path in dict.fromkeys(sys.argv[2:]):
    if not os.path.exists(path):
        f += 1
        continue
    for line in open(path):
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
