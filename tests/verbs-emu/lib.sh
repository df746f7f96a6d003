# tests/verbs-emu/lib.sh - shared by the emulation's test scripts (bash).
# $1 collbench (for tests/integration/lib.sh), $2 the emulation's build
# directory.  Every test gets its own fabric (state directory), so tests
# may run side by side.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
EMU_LIBDIR=${1:?usage: $0 collbench emulation-libdir}
shift
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EMU=$ROOT/tools/emulated-rdma.sh
export COLLBENCH_EMU_LIBDIR=$EMU_LIBDIR
export COLLBENCH_EMU_STATE=$TMP/fabric
unset COLLBENCH_EMU_LINK COLLBENCH_EMU_DEVICES COLLBENCH_EMU_FAULTS \
	COLLBENCH_EMU_NETDEV
command -v ibv_devinfo >/dev/null || {
	echo "SKIP: no ibv_devinfo (Debian ibverbs-utils)"
	exit 77
}

# emu [VAR=VALUE...] CMD... : CMD on the emulation, with a deadline.
emu() {
	local vars=()
	while [[ "${1:-}" == *=* ]]; do
		vars+=("$1")
		shift
	done
	env "${vars[@]}" timeout 60 "$EMU" "$@"
}

# pair NAME 'ENV...' 'SERVER ARGS' 'CLIENT ARGS' [NS_SERVER NS_CLIENT ADDR]:
# a server and a client of one program, the client retrying until the
# server listens; sets rc_srv/rc_cli, output in $TMP/NAME.{srv,cli}.
pair() {
	local name=$1 envs=$2 sargs=$3 cargs=$4 nss=${5:-} nsc=${6:-}
	local addr=${7:-127.0.0.1} spid i
	local sx=() cx=()
	[ -n "$nss" ] && sx=(ip netns exec "$nss")
	[ -n "$nsc" ] && cx=(ip netns exec "$nsc")
	# shellcheck disable=SC2086
	"${sx[@]}" env $envs timeout 60 "$EMU" $sargs >"$TMP/$name.srv" 2>&1 &
	spid=$!
	for i in $(seq 1 50); do
		sleep 0.2
		# shellcheck disable=SC2086
		"${cx[@]}" env $envs timeout 60 "$EMU" $cargs $addr \
			>"$TMP/$name.cli" 2>&1
		rc_cli=$?
		grep -q "Couldn't connect to\|Unable to open file descriptor\|Couldn't connect" \
			"$TMP/$name.cli" || break
	done
	wait "$spid"
	rc_srv=$?
}
