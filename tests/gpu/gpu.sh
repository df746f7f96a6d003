#!/bin/bash
# gpu.sh COLLBENCH FAKECUDA - the gpu transport from the command line, on a
# machine without a GPU:
#   - no driver (a libcuda that is not there): --transport gpu and --mem gpu
#     exit 77 with one line naming what is missing; `info` says why gpu is
#     not usable; the real default (libcuda.so.1) too, where this machine
#     has no driver;
#   - the tests' stand-in driver (FAKECUDA, tests/gpu/fakecuda.c) with no
#     device: 77 and one line; with two: `info` lists them, a run is
#     checked bit-exact and its header and JSON say which GPU each rank
#     drives, that ranks share one, and how each transport moves device
#     memory; COLLBENCH_GPU_COPY=kernel runs the load/store copies, a bad
#     value is a usage error (2).
# Numbers measured here mean nothing (the stand-in copies on the CPU);
# benchmarks/gpu-check.sh measures on a GPU.
. "$(dirname "$0")/../integration/lib.sh"
FAKE=$(realpath "${1:?usage: gpu.sh COLLBENCH FAKECUDA}")
NODRV=/nonexistent/libcuda.so.1

expect_fail 77 "no NVIDIA driver: $NODRV cannot be loaded" \
	env COLLBENCH_GPU_LIBCUDA=$NODRV "$CB" --transport gpu -b 8 -e 8
expect_fail 77 "--mem gpu: transport gpu is not available here: no NVIDIA driver" \
	env COLLBENCH_GPU_LIBCUDA=$NODRV "$CB" --transport tcp --mem gpu -b 8 -e 8
line=$(COLLBENCH_GPU_LIBCUDA=$NODRV "$CB" info | grep '^  gpu ')
case "$line" in
*"not usable"*"no NVIDIA driver"*) pass "info: $line" ;;
*) fail "info says: '$line'" ;;
esac
# this machine's own default, if it has no driver
if ! ldconfig -p | grep -q 'libcuda\.so\.1'; then
	expect_fail 77 "libcuda.so.1" env -u COLLBENCH_GPU_LIBCUDA "$CB" --transport gpu
else
	echo "skip: this machine has libcuda.so.1; the default is not tested here"
fi

# the stand-in without a device
expect_fail 77 "CUDA_ERROR_NO_DEVICE" env COLLBENCH_GPU_LIBCUDA="$FAKE" \
	FAKECUDA_DEVICES=0 "$CB" --transport gpu -b 8 -e 8

export COLLBENCH_GPU_LIBCUDA="$FAKE" FAKECUDA_DEVICES=2
info=$("$CB" info)
if grep -q '^  gpu    available' <<<"$info" &&
	grep -q 'cuda1 CUDA up, FakeCUDA GPU 1, 0000:10:00.0' <<<"$info"; then
	pass "info lists the stand-in's GPUs"
else
	fail "info: $(grep -A3 '^  gpu' <<<"$info")"
fi

# a checked run: 3 ranks on 2 GPUs (local ranks 0 and 2 share GPU 0)
"$CB" --np 3 --transport gpu --coll allreduce,allgather --algo ring,rd \
	-d float32,bfloat16 -b 8 -e 64K -f 16 -n 2 -w 1 -O "$TMP/r.json" \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail "a run over gpu exited $rc: $(head -3 "$TMP/err")"
else
	grep -q '^# Wrong values: 0 OK' "$TMP/out" && pass "run over gpu: 0 wrong" ||
		fail "run over gpu: $(grep Wrong "$TMP/out")"
	grep -q '^# memory: buffers in device memory (--mem gpu)' "$TMP/out" &&
		grep -q '^# memory: ranks 0,2 on .*: GPU 0: FakeCUDA GPU 1 (0000:10:00.0, CUDA device 1).*(shared by these ranks)' "$TMP/out" &&
		grep -q '^# memory: rank 1 on .*: GPU 1: FakeCUDA GPU 0 (0000:20:00.0, CUDA device 0)' "$TMP/out" &&
		grep -q '^# memory: gpu pairs: .*CUDA IPC' "$TMP/out" &&
		pass "header: each GPU, its ranks, sharing, the path" ||
		fail "header: $(grep '^# memory' "$TMP/out")"
	python3 - "$TMP/r.json" <<'PY' && pass "JSON: memory.kind and devices" || fail "JSON memory"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert m["kind"] == "gpu", m
assert len(m["devices"]) == 3 and "shared" in m["devices"][0], m
PY
fi

# tcp between the ranks, device buffers staged through pinned memory
"$CB" --np 2 --transport tcp --mem gpu -d int8 -o max -b 1K -e 256K -f 16 \
	-n 2 -w 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^# Wrong values: 0 OK' "$TMP/out" &&
	grep -q '^# memory: tcp pairs: staged through pinned host memory' "$TMP/out" &&
	pass "tcp --mem gpu: staged, 0 wrong" ||
	fail "tcp --mem gpu: exit $rc: $(head -3 "$TMP/err") $(grep '^# memory' "$TMP/out")"

# load/store copies, and a bad copy mode
COLLBENCH_GPU_COPY=kernel "$CB" --np 2 --transport gpu --coll broadcast,alltoall \
	--algo all -b 1K -e 256K -f 16 -n 2 -w 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^# Wrong values: 0 OK' "$TMP/out" &&
	grep -q 'copies on the SMs (load/store kernel)' "$TMP/out" &&
	pass "COLLBENCH_GPU_COPY=kernel: 0 wrong" ||
	fail "COLLBENCH_GPU_COPY=kernel: exit $rc: $(head -3 "$TMP/err")"
expect_fail 2 "COLLBENCH_GPU_COPY takes ce" env COLLBENCH_GPU_COPY=dma \
	"$CB" --np 2 --transport gpu -b 8 -e 8
finish
