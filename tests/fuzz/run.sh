#!/bin/bash
# tests/fuzz/run.sh FUZZ_EXE CORPUS [SECONDS] - fuzz one target for SECONDS
# (else $CB_FUZZ_SECONDS, else 30), starting from the checked-in CORPUS and
# what earlier runs in this build found (kept beside the executable, in
# fuzz-work/NAME).  A crash, a leak, a timeout (an input that takes 20 s)
# or a broken property fails the test; the input that did it is kept as
# fuzz-crashes/NAME-* and named on the last line.
set -u
exe=$1 corpus=$2 secs=${3:-${CB_FUZZ_SECONDS:-30}}
name=$(basename "$exe")
name=${name#fuzz_}
dir=$(cd "$(dirname "$exe")" && pwd)
work=$dir/fuzz-work/$name
crashes=$dir/fuzz-crashes
mkdir -p "$work" "$crashes"
log=$dir/fuzz-$name.log
# -close_fd_mask=1: the targets' own stdout is noise; libFuzzer's and the
# sanitizers' reports go to stderr, into the log (not to a log_path).
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
	-max_len=65536 -print_final_stats=1 -close_fd_mask=1 \
	-artifact_prefix="$crashes/$name-" "$work" "$corpus" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
if [ $rc -ne 0 ]; then
	tail -60 "$log"
	echo "fuzz $name: FAILED after ${runs:-?} runs ($cov); input: $(ls -t "$crashes/$name-"* 2>/dev/null | head -1)"
	exit 1
fi
echo "fuzz $name: ${runs:-?} runs in ${secs}s, $cov, corpus $(ls "$work" | wc -l) + $(ls "$corpus" | wc -l) seeds, no crash"
