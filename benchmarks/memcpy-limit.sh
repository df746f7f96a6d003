#!/bin/bash
# benchmarks/memcpy-limit.sh [THREADS] [MIN_KIB] [MAX_KIB] - this machine's
# memory-copy ceiling (benchmarks/memcpy_bw.c: memcpy, per thread, by size),
# the bound on what shared memory moves: at np 2 an allreduce moves each
# byte across once per direction, so shm's busbw cannot pass about this.
# Installs (apt, when missing): gcc.  CSV on stdout: threads,bytes,gbps.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/need.sh"
need gcc command -v cc || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/memcpy_bw" "$here/memcpy_bw.c" || exit 1
"$tmp/memcpy_bw" "$@"
