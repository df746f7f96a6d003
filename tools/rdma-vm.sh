#!/bin/bash
# tools/rdma-vm.sh - run a command on the Linux kernel's own RDMA stack:
# 1-4 QEMU guests (software emulation, TCG) on Debian's stock kernel, each
# with a soft RDMA device on its Ethernet - rxe (RoCE v2) or siw (iWARP) -
# the guests joined by one private link and nothing else.
#
#   tools/rdma-vm.sh [OPTIONS] -- CMD [ARGS...]   CMD in every guest
#   tools/rdma-vm.sh --prepare [--dev siw]        fill the cache, boot nothing
#
# Options:
#   --guests N      1-4 guests (default 1): rdma-vm0..N-1 at 10.77.0.1..N/24
#   --dev rxe|siw|none   the soft device made on the link: rxe0 or siw0
#   --netdev NAME   eth0 (the link between guests; default when N > 1) or
#                   dummy0 (a dummy device; default for one guest)
#   --boot-timeout S    a guest not ready S s after its start is killed (180)
#   --timeout S     CMD's deadline in every guest, after boot (300)
#   --smp N --mem MB    per guest (1, 1024); --mtu BYTES (eth0/dummy0, 1500)
#   --keep          keep the run folder (console logs, outputs)
#   --save DIR      copy into DIR each guest's output and console, and what
#                   the guests left in /run/rdma-vm as *.log or *.dmesg (a
#                   test's full logs), replacing what an earlier --save
#                   there wrote (listed in DIR/.rdma-vm-saved), nothing else
#
# In each guest CMD runs as root in the current directory (the host's / is
# the guest's, read-only, under a tmpfs overlay: writes vanish at power-off),
# `ulimit -l unlimited`, with a torchrun-style environment: RANK=NODE_RANK=i
# WORLD_SIZE=N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.77.0.1
# MASTER_PORT=29500, and RDMA_VM_GUEST=i RDMA_VM_IP=10.77.0.(i+1)
# RDMA_VM_DEV=rxe0|siw0 RDMA_VM_NETDEV, and the caller's COLLBENCH_*
# variables. /etc/hosts names every guest.
# Each guest's output is printed after the run, prefixed "[rdma-vmI] ".
# Fault tests: a guest's CMD that creates /run/rdma-vm/kill-J has guest J's
# QEMU SIGKILLed by this host at once (a host lost mid-run: no shutdown, no
# TCP reset, its link just goes quiet); the harness names it, and such a
# guest asked to be killed does not count in the exit status.  A QEMU that
# dies of a signal nobody asked for is named with the signal.
# Exit status: the first non-zero status a guest's CMD ended with (in the
# order they ended), else 0; 124 when a guest missed a deadline (it is killed
# and named), 125 when one died without a status (137 when its QEMU was
# SIGKILLed unasked), 77 (one line) when qemu, the kernel or siw's sources
# cannot be had, 2 on bad usage.
#
# What it needs it installs with apt-get (qemu-system-x86, busybox-static,
# kmod, cpio, rdma-core, ibverbs-utils, rdmacm-utils, perftest; for siw
# linux-headers-KVER). The cache (RDMA_VM_CACHE, default
# ${XDG_CACHE_HOME:-/var/cache}/collbench-rdma-vm, ~500 MB) holds KVER/kroot
# (Debian's linux-image-KVER unpacked with dpkg-deb -x, never installed on
# the host; depmod -b), KVER/initrd.gz (busybox-static and the virtio, 9p and
# overlay modules) and KVER/siw.ko (siw is not in Debian's kernel: built out
# of tree from linux-source-6.1, once). KVER: RDMA_VM_KERNEL, else what
# linux-image-amd64 depends on. Why TCG and not KVM, and the timings:
# docs/rdma-vm.md.
set -u
me=rdma-vm.sh
say() { echo "$me: $*" >&2; }
refuse() {
	say "$*"
	exit 77
}
usage() {
	say "$*"
	say "usage: tools/rdma-vm.sh [--guests N] [--dev rxe|siw|none] [--netdev eth0|dummy0] [--timeout S] [--boot-timeout S] [--smp N] [--mem MB] [--mtu N] [--keep] [--save DIR] -- CMD [ARGS...]"
	exit 2
}

guests=1 dev=rxe netdev='' timeout=300 boot_timeout=180 smp=1 mem=1024 mtu=1500
keep=0 prepare=0 save=''
num() { [[ "$2" =~ ^[0-9]+$ ]] || usage "$1 wants a number, not '$2'"; }
while [ $# -gt 0 ]; do
	case $1 in
	--guests | --dev | --netdev | --timeout | --boot-timeout | --smp | --mem | --mtu | --save)
		[ $# -ge 2 ] || usage "$1 wants a value"
		case $1 in
		--guests) num "$1" "$2" && guests=$2 ;;
		--dev) dev=$2 ;;
		--netdev) netdev=$2 ;;
		--timeout) num "$1" "$2" && timeout=$2 ;;
		--boot-timeout) num "$1" "$2" && boot_timeout=$2 ;;
		--smp) num "$1" "$2" && smp=$2 ;;
		--mem) num "$1" "$2" && mem=$2 ;;
		--mtu) num "$1" "$2" && mtu=$2 ;;
		--save) save=$(realpath -m -- "$2") ;;
		esac
		shift 2
		;;
	--keep) keep=1 && shift ;;
	--prepare) prepare=1 && shift ;;
	--) shift && break ;;
	-*) usage "unknown option $1" ;;
	*) break ;;
	esac
done
[ "$guests" -ge 1 ] && [ "$guests" -le 4 ] || usage "--guests is 1 to 4, not $guests"
case $dev in rxe | siw | none) ;; *) usage "--dev is rxe, siw or none, not '$dev'" ;; esac
[ -n "$netdev" ] || { [ "$guests" -gt 1 ] && netdev=eth0 || netdev=dummy0; }
case $netdev in eth0 | dummy0) ;; *) usage "--netdev is eth0 or dummy0, not '$netdev'" ;; esac
[ "$netdev" = eth0 ] || [ "$guests" -eq 1 ] || usage "--netdev dummy0 joins no guests: with --guests $guests use eth0"
[ $prepare = 1 ] || [ $# -gt 0 ] || usage "no command"

cache=${RDMA_VM_CACHE:-${XDG_CACHE_HOME:-/var/cache}/collbench-rdma-vm}
export DEBIAN_FRONTEND=noninteractive

# apt_need PKG:FILE...: install each PKG whose FILE (a command, or an
# absolute path) is missing.  No fork when nothing is missing.
apt_need() {
	local miss=() p f
	for p in "$@"; do
		f=${p#*:}
		if [ "${f#/}" != "$f" ]; then [ -e "$f" ]; else command -v "$f" >/dev/null; fi ||
			miss+=("${p%%:*}")
	done
	[ ${#miss[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || return 1
	say "installing ${miss[*]}"
	local apt=(apt-get -q -y -o DPkg::Lock::Timeout=600 --no-install-recommends)
	"${apt[@]}" install "${miss[@]}" >"$cache/apt.log" 2>&1 ||
		{ apt-get -q -o DPkg::Lock::Timeout=600 update >>"$cache/apt.log" 2>&1 &&
			"${apt[@]}" install "${miss[@]}" >>"$cache/apt.log" 2>&1; }
}

mkdir -p "$cache" || refuse "cannot make the cache folder $cache"
apt_need qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox \
	kmod:modprobe cpio:cpio iproute2:rdma ibverbs-utils:ibv_devinfo \
	ibverbs-providers:/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so \
	rdmacm-utils:rping perftest:ib_write_bw ||
	refuse "cannot install qemu-system-x86 and the RDMA tools (see $cache/apt.log)"
command -v qemu-system-x86_64 >/dev/null || refuse "no qemu-system-x86_64"

# The kernel: RDMA_VM_KERNEL, else the one last used (file "kernel" in the
# cache; --prepare looks again), else the one linux-image-amd64 names.
kver=${RDMA_VM_KERNEL:-}
[ -n "$kver" ] || [ $prepare = 1 ] || read -r kver 2>/dev/null <"$cache/kernel"
[ -n "$kver" ] || kver=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -1)
[ -n "$kver" ] || refuse "cannot tell which kernel linux-image-amd64 is (apt-cache depends linux-image-amd64)"
kdir=$cache/$kver
kroot=$kdir/kroot

# The kernel, unpacked, with modules.dep.
if [ ! -e "$kdir/.unpacked" ]; then
	rm -rf "$kdir" && mkdir -p "$kdir/dl" || refuse "cannot write $kdir"
	say "fetching linux-image-$kver into $kdir"
	(cd "$kdir/dl" && apt-get download "linux-image-$kver" >"$kdir/dl.log" 2>&1) ||
		{ rm -rf "$kdir"; refuse "cannot download linux-image-$kver (apt-get download)"; }
	dpkg-deb -x "$kdir"/dl/linux-image-*.deb "$kroot" &&
		depmod -b "$kroot" "$kver" && rm -rf "$kdir/dl" &&
		: >"$kdir/.unpacked" || refuse "cannot unpack linux-image-$kver"
fi
vmlinuz=$kroot/boot/vmlinuz-$kver
mods=$kroot/lib/modules/$kver

# The initramfs: busybox-static, the boot modules in dependency order, /init.
build_initrd() {
	local t=$kdir/initrd.tmp m
	rm -rf "$t" && mkdir -p "$t"/{bin,mods,proc,sys,dev,lower,upper,newroot} || return 1
	cp /bin/busybox "$t/bin/busybox" || return 1
	: >"$t/mods/order"
	for m in $(for b in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$kroot" -S "$kver" --show-depends "$b"
	done | awk '$1 == "insmod" {print $2}'); do
		grep -qx "${m##*/}" "$t/mods/order" && continue
		cp "$m" "$t/mods/" && echo "${m##*/}" >>"$t/mods/order" || return 1
	done
	cat >"$t/init" <<'EOF'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t devtmpfs dev /dev
for m in $($B cat /mods/order); do $B insmod /mods/$m || echo "init: insmod $m failed"; done
o=trans=virtio,version=9p2000.L,msize=262144
$B mount -t 9p -o $o,ro,cache=loose hostroot /lower || echo "init: no host root"
$B mount -t tmpfs -o mode=0755 upper /upper
$B mkdir -p /upper/u /upper/w
$B mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w root /newroot ||
	echo "init: no overlay"
# (a host whose own kernel has no modules has no /lib/modules to mount on)
$B mkdir -p /newroot/lib/modules
$B mount -t 9p -o $o,ro,cache=loose modules /newroot/lib/modules
$B mount -t tmpfs -o mode=0755 run /newroot/run
$B mkdir -p /newroot/run/rdma-vm
$B mount -t 9p -o $o,cache=none rundir /newroot/run/rdma-vm
$B mount --move /dev /newroot/dev
$B umount /proc
exec $B switch_root /newroot /bin/bash /run/rdma-vm/stage2
echo "init: switch_root failed"; $B poweroff -f
EOF
	chmod +x "$t/init"
	(cd "$t" && find . | cpio -o -H newc --quiet | gzip -1) >"$kdir/initrd.gz.tmp" &&
		mv "$kdir/initrd.gz.tmp" "$kdir/initrd.gz" && rm -rf "$t"
}
# Built again when this script's recipe for it changed (its text's sum).
initrd_id=$(declare -f build_initrd | md5sum | cut -d' ' -f1)
if [ ! -e "$kdir/initrd.gz" ] || [ "$(cat "$kdir/initrd.id" 2>/dev/null)" != "$initrd_id" ]; then
	build_initrd && echo "$initrd_id" >"$kdir/initrd.id" ||
		refuse "cannot build the initramfs in $kdir"
fi

# siw, out of tree from Debian's own source of the same kernel.
build_siw() {
	local b=$kdir/siw-build src
	apt_need "linux-headers-$kver:/usr/src/linux-headers-$kver/Makefile" ||
		refuse "cannot install linux-headers-$kver (for siw; see $cache/apt.log)"
	rm -rf "$b" && mkdir -p "$b" || return 1
	say "building siw.ko from linux-source (once, ~1 min)"
	src=linux-source-$(echo "$kver" | cut -d. -f1-2)
	(cd "$b" && apt-get download "$src" >"$b/dl.log" 2>&1) ||
		refuse "cannot download $src (apt-get download; it holds siw's source)"
	dpkg-deb --fsys-tarfile "$b"/"$src"_*.deb | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
		tar -xJ -C "$b" --wildcards '*/drivers/infiniband/sw/siw/*' || return 1
	rm -f "$b"/*.deb
	local d
	d=$(echo "$b"/linux-source-*/drivers/infiniband/sw/siw)
	make -C "/usr/src/linux-headers-$kver" M="$d" CONFIG_RDMA_SIW=m modules >"$b/make.log" 2>&1 ||
		{ say "siw build failed: $b/make.log"; return 1; }
	mkdir -p "$mods/extra" && cp "$d/siw.ko" "$mods/extra/siw.ko" &&
		depmod -b "$kroot" "$kver" && cp "$d/siw.ko" "$kdir/siw.ko" && rm -rf "$b"
}
if [ "$dev" = siw ] && [ ! -e "$kdir/siw.ko" ]; then
	build_siw || refuse "cannot build siw for $kver"
fi
[ -n "${RDMA_VM_KERNEL:-}" ] || echo "$kver" >"$cache/kernel"
[ $prepare = 0 ] || { say "cache ready: $kdir"; exit 0; }

# One run: a folder the guests share (9p, read-write), per-guest files.
run=$(mktemp -d /tmp/rdma-vm.XXXXXX) || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "$save" ]; then
		# what an earlier run saved there goes (its list), nothing else
		local m=$save/.rdma-vm-saved
		if mkdir -p "$save"; then
			[ -f "$m" ] && (cd "$save" && xargs -r rm -f -- <"$m")
			(cd "$run" && ls g*.out g*.console ./*.log ./*.dmesg 2>/dev/null | sed 's|^\./||') >"$m"
			(cd "$run" && xargs -r cp -t "$save" -- <"$m")
		fi
	fi
	if [ $keep = 1 ]; then say "run folder kept: $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{
	echo "RDMA_VM_CMD=($(printf '%q ' "$@"))"
	echo "RDMA_VM_CWD=$(printf '%q' "$PWD")"
	export -p | grep '^declare -x COLLBENCH_' || :
	echo "RDMA_VM_N=$guests RDMA_VM_DEVTYPE=$dev RDMA_VM_NETDEV=$netdev RDMA_VM_MTU=$mtu"
} >"$run/job"
cat >"$run/stage2" <<'EOF'
# Stage 2: PID 1 on the host's own userland (no systemd, no udev).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sys /sys
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs tmp /tmp && chmod 1777 /tmp
ln -sf /proc/self/fd /dev/fd && ln -sf fd/0 /dev/stdin && ln -sf fd/1 /dev/stdout && ln -sf fd/2 /dev/stderr
g=$(sed -n 's/.*rdmavm\.guest=\([0-9]\).*/\1/p' /proc/cmdline)
R=/run/rdma-vm
. $R/job
off() { sync; echo o >/proc/sysrq-trigger; sleep 30; }
fail() { echo "guest $g: $*" >$R/g$g.err; off; }
hostname rdma-vm$g
for i in $(seq 0 $((RDMA_VM_N - 1))); do echo "10.77.0.$((i + 1)) rdma-vm$i"; done >>/etc/hosts
ip link set lo up
if [ "$RDMA_VM_NETDEV" = dummy0 ]; then
	modprobe dummy && ip link add dummy0 type dummy || fail "no dummy0"
else
	modprobe virtio_net && [ -e /sys/class/net/eth0 ] || fail "no eth0"
fi
ip link set "$RDMA_VM_NETDEV" mtu "$RDMA_VM_MTU" up &&
	ip addr add "10.77.0.$((g + 1))/24" dev "$RDMA_VM_NETDEV" || fail "cannot configure $RDMA_VM_NETDEV"
for _ in $(seq 100); do # the carrier (dummy0 says "unknown")
	read -r st </sys/class/net/$RDMA_VM_NETDEV/operstate
	[ "$st" = up ] || [ "$st" = unknown ] && break
	sleep 0.1
done
case $RDMA_VM_DEVTYPE in
rxe) modprobe -a rdma_rxe ib_uverbs rdma_ucm && rdma link add rxe0 type rxe netdev "$RDMA_VM_NETDEV" ||
	fail "cannot make rxe0 on $RDMA_VM_NETDEV" ;;
siw) modprobe -a siw ib_uverbs rdma_ucm iw_cm && rdma link add siw0 type siw netdev "$RDMA_VM_NETDEV" ||
	fail "cannot make siw0 on $RDMA_VM_NETDEV" ;;
esac
ulimit -l unlimited
: >$R/g$g.up
cd "$RDMA_VM_CWD" 2>/dev/null || cd /
RANK=$g NODE_RANK=$g GROUP_RANK=$g WORLD_SIZE=$RDMA_VM_N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
	MASTER_ADDR=10.77.0.1 MASTER_PORT=29500 RDMA_VM_GUEST=$g RDMA_VM_IP=10.77.0.$((g + 1)) \
	RDMA_VM_DEV=$([ "$RDMA_VM_DEVTYPE" = none ] || echo "${RDMA_VM_DEVTYPE}0") \
	"${RDMA_VM_CMD[@]}" >$R/g$g.out 2>&1 </dev/null
echo $? >$R/g$g.rc.tmp && mv $R/g$g.rc.tmp $R/g$g.rc
off
EOF

# The link: two guests face each other; three or four meet at a small
# learning switch on this host (AF_UNIX datagrams, nothing else).
if [ "$guests" -gt 2 ]; then
	python3 - "$run" "$guests" <<'PY' &
import os, select, socket, sys
run, n = sys.argv[1], int(sys.argv[2])
socks, where = [], {}
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(f"{run}/hub{i}.sock")
    socks.append(s)
open(f"{run}/hub.up", "w").close()
while True:
    for s in select.select(socks, [], [])[0]:
        i = socks.index(s)
        f = s.recv(65536)
        where[f[6:12]] = i
        dst = where.get(f[0:6]) if not f[0] & 1 else None
        for j in ([dst] if dst is not None else range(n)):
            if j != i:
                try:
                    s.sendto(f, f"{run}/g{j}.sock")
                except OSError:
                    pass
PY
	pids+=($!)
	for _ in $(seq 50); do [ -e "$run/hub.up" ] && break; sleep 0.1; done
fi

start_guest() {
	local i=$1 net=()
	if [ "$netdev" = eth0 ]; then
		local peer=$run/hub$i.sock
		[ "$guests" -le 2 ] && peer=$run/g$((1 - i)).sock
		[ "$guests" -gt 1 ] || peer=$run/nowhere.sock
		net=(-netdev "dgram,id=n0,local.type=unix,local.path=$run/g$i.sock,remote.type=unix,remote.path=$peer"
			-device "virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:77:00:0$i")
	fi
	qemu-system-x86_64 -accel tcg,thread=multi -cpu max -machine q35 -nodefaults \
		-no-user-config -display none -no-reboot -smp "$smp" -m "$mem" \
		-kernel "$vmlinuz" -initrd "$kdir/initrd.gz" \
		-append "console=ttyS0 loglevel=4 panic=-1 no_timer_check rdmavm.guest=$i" \
		-serial "file:$run/g$i.console" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$kroot/lib/modules,mount_tag=modules,security_model=none,readonly=on" \
		-virtfs "local,path=$run,mount_tag=rundir,security_model=none" \
		"${net[@]}" >"$run/g$i.qemu" 2>&1 &
	qpid[$i]=$!
	pids+=($!)
}

declare -a qpid tstart tup asked
t0=$(date +%s)
for ((i = 0; i < guests; i++)); do
	start_guest $i
	tstart[$i]=$t0
done

# Wait: every guest up within its boot deadline, then done within the run's.
status=0 done_n=0
declare -a fin
show() {
	local i=$1
	[ -s "$run/g$i.out" ] && sed "s/^/[rdma-vm$i] /" "$run/g$i.out"
}
console_tail() {
	say "guest $1 (rdma-vm$1) console, last lines:"
	tail -n 15 "$run/g$1.console" 2>/dev/null | sed "s/^/[rdma-vm$1 console] /" >&2
	[ -s "$run/g$1.qemu" ] && sed "s/^/[rdma-vm$1 qemu] /" "$run/g$1.qemu" >&2
}
while [ $done_n -lt "$guests" ]; do
	now=$(date +%s)
	for ((i = 0; i < guests; i++)); do
		[ -n "${fin[$i]:-}" ] && continue
		rc=
		if [ -e "$run/g$i.rc" ]; then
			rc=$(cat "$run/g$i.rc")
			[ "$rc" = 0 ] || [ $status != 0 ] || status=$rc
		elif [ -e "$run/g$i.err" ]; then
			say "$(cat "$run/g$i.err")"
			console_tail $i
			rc=125
		elif [ -e "$run/kill-$i" ] && [ -z "${asked[$i]:-}" ]; then
			kill -KILL "${qpid[$i]}" 2>/dev/null
			asked[$i]=$now
			continue
		elif ! kill -0 "${qpid[$i]}" 2>/dev/null; then
			wait "${qpid[$i]}" 2>/dev/null
			q=$?
			if [ -n "${asked[$i]:-}" ]; then
				say "guest $i (rdma-vm$i) killed (QEMU SIGKILLed, status $q) $((asked[i] - ${tup[$i]:-$now})) s into its command, as the run asked (/run/rdma-vm/kill-$i)"
				rc=0 # asked for: the others' statuses tell
			elif [ $q -gt 128 ]; then
				say "guest $i (rdma-vm$i) killed: its QEMU died of signal $((q - 128)) ($(kill -l $((q - 128)))) $((now - ${tup[$i]:-$now})) s into its command"
				rc=$q
			else
				# Powered off: the status may land just after.
				sleep 0.5
				[ -e "$run/g$i.rc" ] && continue
				say "guest $i (rdma-vm$i) stopped without a status"
				console_tail $i
				rc=125
			fi
		elif [ ! -e "$run/g$i.up" ] && [ $((now - tstart[i])) -ge "$boot_timeout" ]; then
			say "guest $i (rdma-vm$i) not ready within $boot_timeout s: killed"
			console_tail $i
			rc=124
		elif [ -e "$run/g$i.up" ]; then
			[ -n "${tup[$i]:-}" ] || tup[$i]=$now
			if [ $((now - tup[i])) -ge "$timeout" ]; then
				say "guest $i (rdma-vm$i) still running its command after $timeout s: killed"
				rc=124
			fi
		fi
		[ -n "$rc" ] || continue
		fin[$i]=$rc
		done_n=$((done_n + 1))
		[ "$rc" = 0 ] || [ $status != 0 ] || status=$rc
		[ "$rc" = 124 ] || [ "$rc" = 125 ] || continue
		kill "${qpid[$i]}" 2>/dev/null
	done
	[ $done_n -lt "$guests" ] && sleep 0.5
done
for ((i = 0; i < guests; i++)); do
	show $i
	[ "${fin[$i]}" = 0 ] || say "guest $i (rdma-vm$i): status ${fin[$i]}"
done
say "$guests guest(s), $dev on $netdev: $(($(date +%s) - t0)) s, status $status"
exit "$status"
