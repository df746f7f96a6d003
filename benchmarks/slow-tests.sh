#!/bin/bash
# benchmarks/slow-tests.sh - the full collective matrix (every collective x
# algorithm x dtype x op, sizes 0..1 MiB, 1-8 ranks, shm and tcp; 1-5
# ranks over verbs on the emulation in each link layer), which CI leaves
# out for time: about an hour on a 2-core machine.
# Installs nothing: needs build-test (tools/test.sh).
set -eu
cd "$(dirname "$0")/.."
exec tools/test.sh --suite slow
