#!/bin/bash
# mpirun.sh COLLBENCH - three ranks started by Debian's Open MPI mpirun (no
# MPI linked in: ranks read OMPI_COMM_WORLD_RANK/SIZE and meet at the
# rendezvous), over shm (auto) and tcp, results checked.
. "$(dirname "$0")/lib.sh"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (Debian openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep Open MPI's own runtime on loopback and quiet.
mpi=(mpirun -np 3 --oversubscribe --mca btl self --mca oob_tcp_if_include lo
	--mca plm_rsh_agent false)

for tr in auto tcp; do
	port=$(free_port)
	timeout 120 "${mpi[@]}" "$CB" --transport "$tr" --rendezvous 127.0.0.1:"$port" \
		--format csv -d float32,int32 -o sum,min -b 4 -e 1M -f 5 -n 3 -w 1 --timeout 20 \
		>"$TMP/out.csv" 2>"$TMP/err"
	rc=$?
	rows=$(tail -n +2 "$TMP/out.csv" | wc -l)
	bad=$(tail -n +2 "$TMP/out.csv" | awk -F, '$14 != 0 || $6 != 3 { print }' | head -3)
	want=$(( 8 * 2 * 2 * 2 )) # sizes 4 20 100 500 2500 12500 62500 312500
	want_tr=$([ "$tr" = auto ] && echo shm || echo tcp)
	got_tr=$(sed -n 2p "$TMP/out.csv" | cut -d, -f3)
	if [ "$rc" -ne 0 ]; then
		fail "mpirun $tr: exit $rc: $(head -5 "$TMP/err")"
	elif [ "$rows" -ne "$want" ] || [ -n "$bad" ]; then
		fail "mpirun $tr: $rows rows (want $want); bad: $bad"
	elif [ "$got_tr" != "$want_tr" ]; then
		fail "mpirun $tr: ran over '$got_tr', want $want_tr"
	else
		pass "mpirun -np 3, transport $tr ($got_tr): $rows rows, all exact"
	fi
done
finish
