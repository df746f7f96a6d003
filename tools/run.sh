#!/bin/bash
# tools/run.sh [collbench options] - install what is missing, build, and run
# collbench on its embedded default: 2 local ranks forked here (no launcher),
# allreduce, --algo auto, shared memory, 8 B .. 64 MiB, checked.
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
exec build/collbench "$@"
