#!/bin/bash
# benchmarks/gpu-check.sh - the gpu transport on a GPU machine, in one call:
# build, test, verify, measure.  From the repository root:
#
#   benchmarks/gpu-check.sh --fetch-debs   here (Debian, with its archive):
#       put json-c and hwloc .debs in .gpu-debs/ (git-ignored), for a GPU
#       machine that has no package registry; carry .gpu-debs with the tree
#       (the device tool: run(command="benchmarks/gpu-check.sh",
#       carry=[".gpu-debs"], timeout_s=600))
#   benchmarks/gpu-check.sh                on the GPU machine
#   benchmarks/gpu-check.sh --dry-run      anywhere: the same steps on the
#       tests' stand-in driver (tests/gpu/fakecuda.c) at small sizes, to
#       check this script; its numbers mean nothing
#
# Steps, each timed:
#   1. the machine: GPUs, driver, nvcc, NCCL;
#   2. build into build-gpu/ with -Werror (json-c and hwloc from the system,
#      else from .gpu-debs/ through benchmarks/gpu_pkgconfig.py; without
#      hwloc: -Dhwloc=disabled, and the header has no gpu paths);
#   3. the gpu tests (meson --suite gpu: conformance on the real driver,
#      the unit and stand-in tests), and conformance of tcp and shm staging
#      device memory on the real driver;
#   4. every collective x algorithm x datatype x op, checked bit-exact, with
#      per-rank schedules (tests/integration/colls.py --slow), on 2, 4 and 8
#      ranks sharing the GPU(s); load/store copies on 3 ranks; tcp staging
#      device memory on 2;
#   5. the figures, each the median of 3 runs, beside their anchors in the
#      same run (benchmarks/gpu_anchor.cu): peer copy between two ranks
#      (pingpong bw, 256 MiB, copy engine and load/store kernel) against
#      cudaMemcpy device to device; allreduce busbw at 256 MiB on 2 ranks
#      (ring; chunks of 4, 16 and 64 MiB) against what the reduce kernel's
#      memory traffic allows, with the arithmetic; NCCL where it runs (it
#      refuses two ranks on one GPU: its answer is printed).
# Everything goes to stdout and to gpu-check.log; the figures also to
# summary.txt and perf.csv; all three in $OUT when set (the device tool),
# else in gpu-check-out/.  Exit 0 when every check passed, 1 otherwise, 77
# without a GPU (and not --dry-run).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
MODE=real
case "${1:-}" in
--dry-run) MODE=dry ;;
--fetch-debs)
	# (.gitignore'd: a device run takes it along only when carried)
	mkdir -p .gpu-debs && cd .gpu-debs &&
		apt-get download libjson-c5 libjson-c-dev libhwloc15 libhwloc-dev ||
		exit 1
	ls -l
	exit 0
	;;
"") ;;
*)
	echo "usage: $0 [--dry-run | --fetch-debs]" >&2
	exit 2
	;;
esac
OUTDIR=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUTDIR"
exec > >(tee "$OUTDIR/gpu-check.log") 2>&1
T0=$(date +%s)
FAILS=$OUTDIR/.fails # a file: checks fail inside subshells too
: >"$FAILS"
SUMMARY=$OUTDIR/summary.txt
PERF=$OUTDIR/perf.csv
: >"$SUMMARY"
echo "what,mode,ranks,bytes,chunk,value_gbps,runs" >"$PERF"

stage() { echo; echo "=== $* [$(($(date +%s) - T0)) s]"; }
bad() { echo "FAIL: $*"; echo "$*" >>"$FAILS"; }
say() { echo "$*" | tee -a "$SUMMARY"; }

stage "1. the machine"
uname -srm
echo "cores: $(nproc)"
if [ $MODE = real ]; then
	if ! nvidia-smi -L; then
		echo "no GPU here (nvidia-smi): nothing to check (--dry-run checks"
		echo "this script on the tests' stand-in driver)"
		exit 77
	fi
	nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id \
		--format=csv,noheader
	nvidia-smi topo -m 2>/dev/null | head -20
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$NVCC" --version | tail -2
NGPU=1
[ $MODE = real ] && NGPU=$(nvidia-smi -L | grep -c '^GPU')

stage "2. build (build-gpu, -Werror)"
export PATH="$(dirname "$NVCC"):$PATH"
MESON=$(command -v meson || echo "python3 -m mesonbuild.mesonmain")
if ! command -v ninja >/dev/null; then
	nb=$(python3 -c 'import ninja, os; print(ninja.BIN_DIR)' 2>/dev/null)
	[ -n "$nb" ] && export PATH="$nb:$PATH"
fi
havepc() { command -v pkg-config >/dev/null && pkg-config --exists "$1"; }
if ! havepc json-c || [ -n "${GPU_CHECK_DEBS:-}" ]; then
	if ! ls .gpu-debs/*.deb >/dev/null 2>&1; then
		bad "json-c is not on this machine and .gpu-debs/ has no .debs (run $0 --fetch-debs where apt works, and carry .gpu-debs)"
		exit 1
	fi
	export GPU_SYSROOT=$ROOT/.gpu-sysroot
	rm -rf "$GPU_SYSROOT"
	for d in .gpu-debs/*.deb; do dpkg -x "$d" "$GPU_SYSROOT" || bad "unpacking $d"; done
	export PKG_CONFIG=$ROOT/benchmarks/gpu_pkgconfig.py
	export LD_LIBRARY_PATH="$(echo "$GPU_SYSROOT"/usr/lib/*-linux-gnu | tr ' ' :)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	echo "json-c and hwloc from .gpu-debs, unpacked in $GPU_SYSROOT"
fi
HWLOC=-Dhwloc=enabled
if ! { [ -n "${PKG_CONFIG:-}" ] && "$PKG_CONFIG" --exists hwloc; } && ! havepc hwloc; then
	HWLOC=-Dhwloc=disabled
	echo "no hwloc: building without it (no binding, no gpu paths in the header)"
fi
B=build-gpu
rm -rf "$B"
if ! $MESON setup "$B" --buildtype=release -Dwerror=true -Dgpu=enabled $HWLOC >"$OUTDIR/setup.txt" 2>&1; then
	tail -30 "$OUTDIR/setup.txt"
	bad "meson setup"
	exit 1
fi
grep -E "gpu transport|hwloc|json-c" "$OUTDIR/setup.txt"
rm -f "$OUTDIR/setup.txt"
if ! ninja -C "$B" -j "$(nproc)" >/dev/null; then
	ninja -C "$B" | tail -30
	bad "build"
	exit 1
fi
CB=$ROOT/$B/collbench
export COLLBENCH_PLUGIN_PATH=$ROOT/$B/transports
if [ $MODE = dry ]; then
	export COLLBENCH_GPU_LIBCUDA=$ROOT/$B/tests/libfakecuda.so FAKECUDA_DEVICES=1
	echo "dry run: the stand-in driver, one 'GPU'"
fi
"$CB" info | sed -n '/^transports/,/^algorithms/p' | grep -A8 '^  gpu'

stage "3. gpu tests (conformance on this driver, unit and stand-in tests)"
# meson runs each test with its own environment: the stand-in tests name
# theirs; conformance-gpu uses this machine's driver
env -u COLLBENCH_GPU_LIBCUDA $MESON test -C "$B" --suite gpu --print-errorlogs \
	--num-processes 4 | grep -E "^ *[0-9]+/|Ok:|Fail:|Skipped:"
python3 - "$B/meson-logs/testlog.json" $MODE <<'PY' || bad "the gpu suite (above)"
import json, sys
bad = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    name, res = t["name"].split(" / ")[-1], t["result"]
    if res not in ("OK", "SKIP", "EXPECTEDFAIL"):
        print(f"  {name}: {res}")
        bad = 1
    if res == "SKIP" and sys.argv[2] == "real":
        print(f"  {name} skipped on a GPU machine: {t['stdout'][:300]}")
        bad = 1
sys.exit(bad)
PY
for tr in tcp shm; do
	"$B/tests/test_conformance" $tr 2 gpu | tail -1
	[ "${PIPESTATUS[0]}" -eq 0 ] || bad "conformance of $tr staging device memory"
done

stage "4. every collective x algorithm x datatype x op, checked"
COLLS=$ROOT/tests/integration/colls.py
SLOW=--slow # every dtype and op, 0 B to 1 MiB
[ $MODE = dry ] && SLOW="" # the stand-in on a small machine: 4 of each
for np in 2 4 8; do
	echo "--- $np ranks over gpu, sharing $NGPU GPU(s) ${SLOW:+(every dtype and op, 0 B to 1 MiB)}"
	python3 "$COLLS" "$CB" $np gpu $SLOW | tail -3
	[ "${PIPESTATUS[0]}" -eq 0 ] || bad "colls gpu np $np"
done
echo "--- 3 ranks, load/store copies (COLLBENCH_GPU_COPY=kernel)"
COLLBENCH_GPU_COPY=kernel python3 "$COLLS" "$CB" 3 gpu | tail -3
[ "${PIPESTATUS[0]}" -eq 0 ] || bad "colls gpu np 3, copy kernel"
echo "--- 2 ranks over tcp, device memory staged through pinned memory"
python3 "$COLLS" "$CB" 2 tcp --mem gpu | tail -3
[ "${PIPESTATUS[0]}" -eq 0 ] || bad "colls tcp --mem gpu"

stage "5. figures"
BIG=$((256 << 20))
[ $MODE = dry ] && BIG=$((4 << 20))
# The median of 3 runs of collbench's CSV column COLUMN (algbw_gbps or
# busbw_gbps) of the out-of-place row, which must be exact (#wrong 0).
cb3() { # WHAT MODE RANKS CHUNK COLUMN ARGS...
	local what=$1 mode=$2 np=$3 chunk=$4 col=$5 v vals=""
	shift 5
	for _ in 1 2 3; do
		v=$("$CB" --np "$np" --format csv -b $BIG -e $BIG -n 20 -w 5 "$@" |
			awk -F, -v c="$col" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == c) k = i; if ($i == "wrong") w = i } }
			NR > 1 && $10 == 0 { print $k, $w; exit }')
		[ -n "$v" ] || { bad "$what: no row (collbench $*)"; echo 0; return 1; }
		[ "${v#* }" = 0 ] || bad "$what: ${v#* } wrong values (collbench $*)"
		vals="$vals ${v% *}"
	done
	v=$(tr ' ' '\n' <<<"$vals" | grep . | sort -g | sed -n 2p)
	echo "$what,$mode,$np,$BIG,$chunk,$v,$(echo $vals | tr ' ' ';')" >>"$PERF"
	echo "$v"
}

anchor="$B/gpu_anchor"
NCCL_INC="" NCCL_LIB=""
for d in /usr/local/cuda /usr $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null); do
	if [ -f "$d/include/nccl.h" ]; then
		NCCL_INC=$d/include
		for l in "$d/lib64" "$d/lib" "$d/lib/x86_64-linux-gnu"; do
			ls "$l"/libnccl.so* >/dev/null 2>&1 && NCCL_LIB=$l && break
		done
		[ -n "$NCCL_LIB" ] && break
	fi
done
if [ -n "$NCCL_LIB" ]; then
	[ -e "$NCCL_LIB/libnccl.so" ] || ln -sf "$(ls "$NCCL_LIB"/libnccl.so.* | head -1)" "$B/libnccl.so"
	"$NVCC" -O3 -std=c++17 -arch=sm_90 -DWITH_NCCL -I"$NCCL_INC" -L"$NCCL_LIB" -L"$B" \
		-Xlinker -rpath="$NCCL_LIB" -o "$anchor" benchmarks/gpu_anchor.cu -lnccl ||
		bad "building the anchors"
else
	echo "NCCL not found (nccl.h and libnccl): its anchor is skipped"
	"$NVCC" -O3 -std=c++17 -arch=sm_90 -o "$anchor" benchmarks/gpu_anchor.cu ||
		bad "building the anchors"
fi

if [ $MODE = real ]; then
	cp_line=$("$anchor" memcpy $BIG) && echo "$cp_line" || bad "memcpy anchor"
	add_line=$("$anchor" add $BIG) && echo "$add_line" || bad "add anchor"
else
	cp_line="anchor memcpy_d2d copy_gbps=1" add_line="anchor add_f32 hbm_gbps=1"
	echo "dry run: no anchors (made-up 1 GB/s)"
fi
CP=$(sed -n 's/.*copy_gbps=\([0-9.]*\).*/\1/p' <<<"$cp_line")
HBM=$(sed -n 's/.*hbm_gbps=\([0-9.]*\).*/\1/p' <<<"$add_line")
echo "memcpy_d2d,anchor,1,$BIG,,$CP,median of 5" >>"$PERF"
echo "add_f32_hbm,anchor,1,$BIG,,$HBM,median of 5" >>"$PERF"

say "GPU check, $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)${MODE/real/}"
say ""
say "Peer copy between two ranks (pingpong bw, $((BIG >> 20)) MiB messages, algbw; median of 3):"
for m in ce kernel; do
	v=$(COLLBENCH_GPU_COPY=$m cb3 peercopy $m 2 - algbw_gbps --transport gpu \
		--coll pingpong --algo bw)
	r=$(python3 -c "print(f'{$v / $CP:.2f}')" 2>/dev/null)
	say "  copy $m: $v GB/s = $r x cudaMemcpy D2D ($CP GB/s, same GPU, same run; target >= 0.9)"
done
say ""
say "allreduce, 2 ranks, $((BIG >> 20)) MiB float32, ring (busbw, median of 3):"
say "  a + b kernel alone moves $HBM GB/s of HBM traffic (reads a and b, writes c)."
say "  2 ranks on one GPU, ring: each rank's reduce-scatter reads its half and the"
say "  peer's and writes its half (1.5 n bytes), its allgather copies the other half"
say "  (n): 2.5 n per rank, 5 n for both, through one HBM; busbw = algbw * 1 at 2"
say "  ranks, so the traffic allows busbw = HBM / 5 = $(python3 -c "print(f'{$HBM / 5:.1f}')") GB/s."
for chunk in 4M 16M 64M; do
	v=$(cb3 allreduce ce 2 $chunk busbw_gbps --transport gpu --algo ring \
		--chunk-bytes $chunk)
	r=$(python3 -c "print(f'{$v / ($HBM / 5):.2f}')" 2>/dev/null)
	say "  chunk $chunk: busbw $v GB/s = $r x that (target >= 0.8)"
done
for np in 4 8; do
	v=$(cb3 allreduce ce $np 16M busbw_gbps --transport gpu --algo ring)
	say "  $np ranks sharing the GPU(s), chunk 16M: busbw $v GB/s"
done
say ""
say "NCCL beside it:"
if [ -x "$anchor" ] && [ -n "$NCCL_LIB" ] && [ $MODE = real ]; then
	l=$("$anchor" nccl 0,0 $BIG 2>&1 | tail -1)
	say "  2 ranks on GPU 0: $l"
	if [ "$NGPU" -ge 2 ]; then
		l=$("$anchor" nccl 0,1 $BIG 2>&1 | tail -1)
		v=$(cb3 allreduce ce 2 16M busbw_gbps --transport gpu --algo ring)
		say "  2 GPUs: $l; collbench ring on GPUs 0 and 1: busbw $v GB/s"
	else
		say "  one GPU here: no pair of GPUs for NCCL to compare on"
	fi
else
	say "  not run (no NCCL, or a dry run)"
fi
say ""
n=$(wc -l <"$FAILS")
say "$([ "$n" -eq 0 ] && echo "all checks passed" || echo "$n check(s) FAILED: $(tr '\n' ';' <"$FAILS")") in $(($(date +%s) - T0)) s"
rm -f "$FAILS"
exit $((n > 0))
