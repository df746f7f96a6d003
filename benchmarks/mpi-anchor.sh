#!/bin/bash
# benchmarks/mpi-anchor.sh NP sm|tcp [mpi_anchor options] - Open MPI's own
# collectives on this machine, the anchor anchors.py sets collbench beside.
# Builds benchmarks/mpi_anchor.c with mpicc (into a temporary folder) and
# runs it under mpirun on NP local ranks, over Open MPI's shared memory
# (sm: the vader BTL) or over loopback TCP only (tcp).  Prints
# mpi_anchor's CSV (see mpi_anchor.c: -c COLL -b MIN -e MAX -f F -n ITERS).
# Installs (apt, when missing): openmpi-bin libopenmpi-dev.
# MPI_ANCHOR_BIND=none leaves the ranks unbound (default: a core each).
# Exit 77 when Open MPI cannot be had, 2 on a usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/need.sh"
[ $# -ge 2 ] || { echo "usage: $0 NP sm|tcp [-c COLL] [-b MIN] [-e MAX] [-f F] [-n ITERS]" >&2; exit 2; }
np=$1 tr=$2
shift 2
case $tr in
sm) mca=(--mca btl vader,self) ;;
tcp) mca=(--mca btl tcp,self --mca btl_tcp_if_include lo --mca pml ob1) ;;
*) echo "mpi-anchor.sh: the transport is sm or tcp, not '$tr'" >&2; exit 2 ;;
esac
need openmpi-bin command -v mpirun || exit 77
need libopenmpi-dev sh -c "echo '#include <mpi.h>' | mpicc -E -x c -" || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/mpi_anchor" "$here/mpi_anchor.c" || exit 1
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
# Open MPI's own binding (a core each) where the cores suffice, as collbench's
# --bind auto does; none when the ranks outnumber the cores.
bind=${MPI_ANCHOR_BIND:-core}
[ "$np" -le "$(nproc)" ] || bind=none
OMPI_MCA_rmaps_base_oversubscribe=1 exec mpirun "${root[@]}" -np "$np" --bind-to $bind \
	"${mca[@]}" "$tmp/mpi_anchor" "$@"
