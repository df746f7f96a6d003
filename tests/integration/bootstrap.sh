#!/bin/bash
# bootstrap.sh COLLBENCH - how ranks meet, from the command line:
#  - the job token: with COLLBENCH_JOB_TOKEN set on rank 0, a rank without
#    the token and a rank with another one are refused (one line each, on
#    the refused rank and in rank 0's log), and the job goes on with the
#    rank that has it;
#  - PMIx: three ranks under Debian's mpirun with no --rendezvous meet
#    through the launcher's PMIx server (skipped without mpirun or in a
#    build without PMIx); the same without PMIx in the environment stops
#    with the usage line that asks for a rendezvous.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
env COLLBENCH_RANK=0 COLLBENCH_WORLD=2 COLLBENCH_JOB_TOKEN=job-secret-1 \
	"$CB" --rendezvous 127.0.0.1:"$port" --timeout 30 -b 1K -e 1K \
	>"$TMP/t0.out" 2>"$TMP/t0.err" &
r0=$!
sleep 0.3
expect_fail 1 "refused this rank: it has no job token" \
	env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 "$CB" --rendezvous 127.0.0.1:"$port" --timeout 10 -b 1K -e 1K
expect_fail 1 "refused this rank: its job token is not the job's" \
	env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 COLLBENCH_JOB_TOKEN=another-job \
	"$CB" --rendezvous 127.0.0.1:"$port" --timeout 10 -b 1K -e 1K
env COLLBENCH_RANK=1 COLLBENCH_WORLD=2 COLLBENCH_JOB_TOKEN=job-secret-1 \
	"$CB" --rendezvous 127.0.0.1:"$port" --timeout 30 -b 1K -e 1K >/dev/null 2>"$TMP/t1.err"
rc1=$?
wait "$r0"
rc0=$?
refusals=$(grep -c "rendezvous: refused 127.0.0.1:.* (says rank 1 on " "$TMP/t0.err")
if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
	fail "token: the job failed ($rc0/$rc1): $(cat "$TMP/t0.err" "$TMP/t1.err")"
elif [ "$refusals" -ne 2 ] || [ "$(wc -l <"$TMP/t0.err")" -ne 2 ]; then
	fail "token: rank 0 logged $refusals refusals: $(cat "$TMP/t0.err")"
elif grep -q job-secret "$TMP/t0.err"; then
	fail "token: rank 0's log shows the token: $(cat "$TMP/t0.err")"
elif ! grep -q "^ *1024 " "$TMP/t0.out"; then
	fail "token: no result row: $(cat "$TMP/t0.out")"
else
	pass "token: two clients refused, the job went on: $(tr '\n' '|' <"$TMP/t0.err")"
fi
# The token is a secret: a results file says it was set, not what it is.
COLLBENCH_JOB_TOKEN=tok-in-json "$CB" --np 2 -b 8 -e 8 -O "$TMP/r.json" >/dev/null 2>&1
if grep -q tok-in-json "$TMP/r.json" || ! grep -q '"COLLBENCH_JOB_TOKEN": "(set, not shown)"' "$TMP/r.json"; then
	fail "token in JSON: $(grep -i token "$TMP/r.json")"
else
	pass "token not written to the results file"
fi

if ! command -v mpirun >/dev/null; then
	echo "SKIP (PMIx part): mpirun not found (Debian openmpi-bin)"
elif ! "$CB" info | grep -q "^bootstrap: .*PMIx"; then
	echo "SKIP (PMIx part): built without PMIx (libpmix-dev)"
else
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	mpi=(mpirun -np 3 --oversubscribe --mca btl self --mca oob_tcp_if_include lo
		--mca plm_rsh_agent false)
	unset COLLBENCH_ROOT MASTER_ADDR MASTER_PORT
	timeout 120 "${mpi[@]}" "$CB" --transport tcp --format csv -b 4 -e 64K -f 16 \
		-n 3 -w 1 --timeout 20 -v >"$TMP/p.csv" 2>"$TMP/p.err"
	rc=$?
	# sizes 4, 64, 1K, 16K, out of place and in place
	rows=$(tail -n +2 "$TMP/p.csv" | awk -F, '$14 == 0 && $6 == 3 && $3 == "tcp"' | wc -l)
	if [ "$rc" -ne 0 ] || [ "$rows" -ne 8 ]; then
		fail "mpirun without --rendezvous: exit $rc, $rows good rows: $(head -5 "$TMP/p.err")"
	elif ! grep -q "rendezvous from PMIx" "$TMP/p.err"; then
		fail "mpirun without --rendezvous: no PMIx line at -v: $(head -5 "$TMP/p.err")"
	else
		pass "mpirun -np 3 without --rendezvous: met through PMIx, $rows rows exact"
	fi
	# Without PMIx in the environment the same job has no way to meet.
	timeout 120 "${mpi[@]}" env -u PMIX_NAMESPACE "$CB" --transport tcp -b 4 -e 4 \
		--timeout 20 >/dev/null 2>"$TMP/n.err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q "needs a rendezvous" "$TMP/n.err"; then
		fail "mpirun without PMIx: exit $rc: $(head -3 "$TMP/n.err")"
	else
		pass "mpirun without PMIx in the environment: $(head -1 "$TMP/n.err")"
	fi
fi
finish
