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
# a server and a client of one program (both take -p PORT), the client
# started when the server listens; sets rc_srv/rc_cli, output in
# $TMP/NAME.{srv,cli}.
pair() {
	local name=$1 envs=$2 sargs=$3 cargs=$4 nss=${5:-} nsc=${6:-}
	local port=${sargs##*-p }
	port=${port%% *}
	local addr=${7:-127.0.0.1} spid i
	local sx=() cx=()
	[ -n "$nss" ] && sx=(ip netns exec "$nss")
	[ -n "$nsc" ] && cx=(ip netns exec "$nsc")
	# shellcheck disable=SC2086
	"${sx[@]}" env $envs timeout 60 "$EMU" $sargs >"$TMP/$name.srv" 2>&1 &
	spid=$!
	# The client starts once the server listens: perftest's rdma_cm
	# client, refused, retries on ids it has destroyed (its bug).
	for i in $(seq 1 100); do
		"${sx[@]}" ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	for i in $(seq 1 25); do
		# shellcheck disable=SC2086
		"${cx[@]}" env $envs timeout 60 "$EMU" $cargs $addr \
			>"$TMP/$name.cli" 2>&1
		rc_cli=$?
		# the server was not listening yet: try again
		[ $rc_cli -ne 0 ] && kill -0 "$spid" 2>/dev/null &&
			grep -qiE "couldn't connect|unable to init the socket|failed to connect rdma cm" \
				"$TMP/$name.cli" || break
	done
	wait "$spid"
	rc_srv=$?
}

# bw_of FILE: the average bandwidth (MB/s) of perftest's result line
bw_of() {
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { print $4; exit }' "$1"
}
