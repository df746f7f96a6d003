#!/bin/bash
# badinput.sh COLLBENCH - every bad input gets one clear line on stderr and
# the documented exit status (2 usage, 77 transport not available), before
# any rank starts; nothing crashes, nothing hangs.
. "$(dirname "$0")/lib.sh"

expect_fail 2 "carrier-pigeon" "$CB" --transport carrier-pigeon
expect_fail 2 "bogus" "$CB" --algo bogus
expect_fail 2 "gather9" "$CB" --coll gather9
expect_fail 2 "float128" "$CB" -d float128
expect_fail 2 "avg2" "$CB" -o avg2
expect_fail 2 "'1X'" "$CB" -b 1X
expect_fail 2 "'-4'" "$CB" -b -4
expect_fail 2 "below -b" "$CB" -b 1M -e 1K
expect_fail 2 "--np" "$CB" --np 0
expect_fail 2 "--np" "$CB" --np 100000
expect_fail 2 "-n" "$CB" -n -3
expect_fail 2 "--timeout" "$CB" --timeout never
expect_fail 2 "xml" "$CB" --format xml
expect_fail 2 "nohostport" "$CB" --rendezvous nohostport
expect_fail 2 "99999" "$CB" --rendezvous 127.0.0.1:99999
expect_fail 2 "--frobnicate" "$CB" --frobnicate
expect_fail 2 "launch" "$CB" launch
# launcher variables that do not parse, or disagree
expect_fail 2 "COLLBENCH_WORLD" env COLLBENCH_RANK=0 COLLBENCH_WORLD=zero "$CB"
expect_fail 2 "COLLBENCH_RANK" env COLLBENCH_RANK=5 COLLBENCH_WORLD=2 "$CB"
expect_fail 2 "needs a rendezvous" env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 "$CB"
expect_fail 2 "disagrees" env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 "$CB" --np 2 --rendezvous 127.0.0.1:1
expect_fail 2 "COLLBENCH_ROOT" env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 COLLBENCH_ROOT=nowhere "$CB"
# transport options that do not parse reach the transport: still usage
expect_fail 2 "tcp-streams" "$CB" --tcp-streams 0
expect_fail 2 "streams per peer" env COLLBENCH_TCP_STREAMS=99 "$CB" -b 8 -e 8 --transport tcp
expect_fail 2 "interface 'nosuchif0'" "$CB" --tcp-if nosuchif0 -b 8 -e 8 --transport tcp
expect_fail 2 "'4k'" env COLLBENCH_TCP_SPLIT_BYTES=4k "$CB" -b 8 -e 8 --transport tcp
expect_fail 2 "'yes'" env COLLBENCH_SHM_CMA=yes "$CB" -b 8 -e 8 --transport shm
expect_fail 2 "'maybe'" env COLLBENCH_SHM_MAP=maybe "$CB" -b 8 -e 8 --transport shm
expect_fail 2 "'-5'" env COLLBENCH_SHM_RNDV_BYTES=-5 "$CB" -b 8 -e 8 --transport shm
# a real transport that this machine cannot run: 77 (meson's skip)
expect_fail 77 "verbs" "$CB" --transport verbs -b 8 -e 8
# (no driver, whatever this machine has: the gpu tests cover the rest)
expect_fail 77 "gpu" env COLLBENCH_GPU_LIBCUDA=/nonexistent/libcuda.so.1 \
	"$CB" --transport gpu -b 8 -e 8
expect_fail 77 "--mem gpu" env COLLBENCH_GPU_LIBCUDA=/nonexistent/libcuda.so.1 \
	"$CB" --mem gpu -b 8 -e 8
expect_fail 2 "--mem" "$CB" --mem hbm
expect_fail 2 "--mem host does not apply" "$CB" --transport gpu --mem host
# collectives and algorithms that do not fit the job
expect_fail 2 "exactly 2 ranks" "$CB" --np 3 --coll pingpong --algo latency
expect_fail 2 "--root 4" "$CB" --np 3 --coll broadcast -r 4
expect_fail 2 "ps" "$CB" --np 3 --algo ps --ps-servers 3
expect_fail 2 "implements alltoall" "$CB" --coll alltoall --algo tree
expect_fail 2 "--ranks '9'" "$CB" --np 2 --ranks 9
expect_fail 2 "nothing to run" "$CB" --np 4 --ranks 3 --coll pingpong -b 8 -e 8
expect_fail 2 "COLLBENCH_REPRODUCIBLE" env COLLBENCH_REPRODUCIBLE=maybe "$CB" -b 8 -e 8
# lists with an empty item and overlapping size ranges are ambiguous
expect_fail 2 "empty item" "$CB" --coll allreduce,
expect_fail 2 "empty item" "$CB" --algo "ring,,tree"
expect_fail 2 "overlap" "$CB" --algo "ring:0-1M;rd:512K-max"
# nccl-tests' and perftest's flags collbench has no feature for
expect_fail 2 "always blocking" "$CB" -z 1
expect_fail 2 "-D/--duration 'soon'" "$CB" -D soon
expect_fail 2 "-D/--duration '0'" "$CB" --duration 0
expect_fail 2 "give one" "$CB" -D 1 -n 10
expect_fail 2 "ps-async runs sessions" "$CB" --algo ps-async -D 1
expect_fail 2 "tune: -D" "$CB" tune -D 1
expect_fail 2 "-a" "$CB" -a 4
expect_fail 2 "-N" "$CB" -N forever
expect_fail 2 "-O x.csv" "$CB" -J x.csv
expect_fail 2 "above 8K" "$CB" --verbs-eager-bytes 16K
# an option the environment no longer sets: read as nothing, not as --nic
COLLBENCH_NIC=nosuch0 "$CB" --np 2 -b 8 -e 8 -n 1 -w 0 --transport tcp \
	>"$TMP/out" 2>&1 && pass "COLLBENCH_NIC is not read" ||
	fail "COLLBENCH_NIC was read: $(tail -2 "$TMP/out")"
# more memory than any host has: a clear line, not a crash
expect_fail 1 "cannot allocate" "$CB" --np 1 -b 1T -e 1T
finish
