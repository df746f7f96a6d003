# tests/integration/lib.sh - shared by the integration tests (bash).
# Each test gets the collbench binary as $1 and exits 0 (pass), 77 (skip,
# with the reason on stdout) or 1 (fail, with what differed).
set -u
CB=${1:?usage: $0 path/to/collbench}
shift
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

pass() {
	echo "ok: $*"
}

finish() {
	[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
	exit 0
}

# need_verbs EMU: the verbs emulation (EMU is tools/emulated-rdma.sh) and a
# verbs module that loads on it and finds its device.  Without them: a skip
# (77) when run by hand; a failure under meson in a build that has the
# verbs module (COLLBENCH_EMU_REQUIRED=1, with COLLBENCH_EMU_LIBDIR): there,
# a verbs test never passes as a skip.
need_verbs() {
	local rc info why
	"$1" true 2>"$TMP/emu.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$([ "$rc" -eq 77 ] && echo SKIP || echo FAIL): $(head -1 "$TMP/emu.err")"
		exit "$rc"
	fi
	info=$("$1" "$CB" info 2>&1)
	grep -q '^  verbs  *available' <<<"$info" && return 0
	why=$(grep -m1 '^  verbs' <<<"$info" | sed 's/^  verbs  *//')
	if [ "${COLLBENCH_EMU_REQUIRED:-0}" = 1 ]; then
		echo "FAIL: this build has the verbs module, and it is not usable on the emulation: ${why:-not listed by collbench info}"
		exit 1
	fi
	echo "SKIP: no usable verbs module: ${why:-not built}"
	exit 77
}

# expect_fail WANT_RC NEEDLE CMD... : the command exits WANT_RC, prints
# exactly one line on stderr, and that line contains NEEDLE.
expect_fail() {
	local want=$1 needle=$2 rc lines
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -ne "$want" ]; then
		fail "'$*' exited $rc, want $want; stderr: $(head -c 300 "$TMP/err")"
	elif [ "$lines" -ne 1 ]; then
		fail "'$*' printed $lines lines on stderr, want 1: $(head -c 500 "$TMP/err")"
	elif ! grep -qF -- "$needle" "$TMP/err"; then
		fail "'$*' said '$(cat "$TMP/err")', want it to mention '$needle'"
	else
		pass "$* -> $rc: $(cat "$TMP/err")"
	fi
}

# A TCP port on 127.0.0.1 that nothing uses right now, below the kernel's
# ephemeral range (so no outgoing connection of a parallel test takes it
# between this check and its use).
free_port() {
	python3 - <<'PY'
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randint(10000, max(10001, lo - 1))
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        print(p)
        break
    except OSError:
        pass
    finally:
        s.close()
PY
}
