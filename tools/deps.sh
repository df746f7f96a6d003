#!/bin/bash
# tools/deps.sh - install what collbench needs from Debian's archive, if it is
# missing.  Needs root (or sudo) only when something is missing.
#   build:  meson ninja-build pkg-config gcc, libhwloc-dev (topology and
#           binding), libjson-c-dev (`collbench topo --format json`),
#           libpmix-dev (the rendezvous under mpirun / srun --mpi=pmix;
#           optional to the build, installed so the default build has it),
#           scdoc (the man page, from docs/collbench.1.scd)
#   run:    gnuplot-nox (collbench plot, --plot and the report's images;
#           found on PATH at run time, optional)
#   tests:  openmpi-bin (the mpirun test), python3 (the misbehaving-peer
#           test), procps (pgrep), iproute2 (the network-namespace
#           test hosts), nftables (a test host that drops packets), valgrind (the topology and results memory checks),
#           libibverbs-dev and librdmacm-dev (the verbs emulation,
#           tests/verbs-emu, is generated from them), ibverbs-utils and
#           perftest (the stock programs the emulation is checked with),
#           clang and libclang-rt-14-dev (clang 14's sanitizer and libFuzzer
#           runtimes: the ASan+UBSan, TSan and fuzzing builds)
set -eu
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have meson || need+=(meson)
have ninja || need+=(ninja-build)
have pkg-config || need+=(pkg-config)
have cc || need+=(gcc)
# Libraries: ask pkg-config (which may itself be missing yet).
pc() { have pkg-config && pkg-config --exists "$1"; }
pc hwloc || need+=(libhwloc-dev)
pc json-c || need+=(libjson-c-dev)
pc pmix || need+=(libpmix-dev)
have gnuplot || need+=(gnuplot-nox)
have scdoc || need+=(scdoc) # the man page (docs/collbench.1.scd)
if [ "${1:-}" = "--test" ]; then
	have mpirun || need+=(openmpi-bin)
	have python3 || need+=(python3)
	have pgrep || need+=(procps)
	have ip || need+=(iproute2)
	have nft || need+=(nftables)
	have valgrind || need+=(valgrind)
	pc libibverbs || need+=(libibverbs-dev)
	pc librdmacm || need+=(librdmacm-dev)
	have ibv_devinfo || need+=(ibverbs-utils)
	have ib_write_bw || need+=(perftest)
	have clang || need+=(clang)
	rt=$(clang --print-runtime-dir 2>/dev/null)
	[ -n "$rt" ] && [ -e "$rt/libclang_rt.fuzzer-x86_64.a" ] &&
		[ -e "$rt/libclang_rt.tsan-x86_64.a" ] || need+=(libclang-rt-14-dev)
fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "tools/deps.sh: installing ${need[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
