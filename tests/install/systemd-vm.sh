#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The .deb under a real systemd: build the package, boot a Debian 12 guest
# (systemd as PID 1, dbus, polkitd) in qemu TCG on a Granite-Rapids-like
# SNC-3 topology (2 sockets x 3 cores x 2 threads, 3 NUMA nodes per socket),
# twice:
# - on Debian's stock 6.1 kernel, an operator's whole session: apt install
#   ./topotune_*.deb (the maintainer scripts enable and start topotuned),
#   systemctl status, topotunectl status/plan/verify, busctl, an
#   unprivileged caller, a profile drop-in (hpc) and reload, isolation at work
#   (a workload started with systemd-run --slice=topotune.slice, the
#   partition, /proc/schedstat, DomainLayout), topotunectl metrics and the
#   metrics textfile (parsed on the host by prometheus_client), the journal
#   records and their catalog entry, a kill -9 within the IRQ pass and the
#   restart's recovery, a virtio NIC hot-added through qemu's QMP socket
#   (its IRQs moved off the isolated CPUs on the driver's bind, put back as
#   they came by a revert), set-profile (throughput: applied without the missing
#   SMT_BUDDY_ASSIST, State degraded), revert, apply, restart, stop, an
#   upgrade (the daemon is not restarted), apt purge;
# - on the patched 7.3 kernel (kernel-patches/, built by build.sh --systemd:
#   the qemu fragment plus config/systemd.config, no initrd): the GNR rule's
#   relax_domain_level applied at runtime through its sysctl, throughput's
#   SMT_BUDDY_ASSIST through kernel.sched_smt_buddy_assist, hpc's isolation
#   (the kernel's cpuset.cpus.isolated too), layout --compare equal to the
#   planner's prediction, the metrics with the series' counters, verify,
#   the kill -9 within the IRQ pass and the hot-added NIC as on the stock
#   kernel, and a stop that puts every value back.
# The host checks the transcripts and facts the guests leave.
#
# Usage: tests/install/systemd-vm.sh [--transcript FILE]   (as root; needs the
#        Debian mirror for a cold cache, qemu-system-x86_64, debootstrap, and
#        the kernel tier's build tools for the patched kernel)
#   --transcript FILE        where the stock guest's transcript goes (default:
#                            the work directory); the patched guest's goes to
#                            FILE less .txt plus -patched.txt
#   TOPOTUNE_DEB=FILE        test this .deb instead of building one
#   TOPOTUNE_WORKTREE=1      build from the working tree, not from HEAD
#   TOPOTUNE_CACHE_DIR=DIR   cache (/var/cache/topotune): the debootstrap
#                            tarball (shared with run.sh), the package of the
#                            HEAD tree, and the guest's base image, kernel and
#                            initrd in systemd-vm-SUITE-KEY/, KEY a hash of
#                            the package list and of the image recipe
#   TOPOTUNE_KCACHE=DIR      the kernel cache (kernel-patches/scripts)
#   TOPOTUNE_SYSTEMD_VM_PATCHED=0  leave out the patched kernel's boot
#   TOPOTUNE_MIRROR=URI      Debian mirror (default: from this machine's apt sources)
#   TOPOTUNE_KEEP=1          keep the whole work directory
#   TOPOTUNE_VM_TIMEOUT=S    seconds per boot before qemu is killed (2400; one TCG
#                            thread per guest, as the kernel tier boots)
#   TOPOTUNE_VM_PARALLEL=N   guests at a time (default 1); with 2 or more the
#                            stock and the patched boot run side by side, after
#                            the patched kernel's build. Not the default: on
#                            2026-12-06 the patched guest hung in SMP bring-up
#                            (calibrate_delay_direct) beside the stock one
#
# Prints PASS/FAIL per check and ends with "N passed, M failed"; exit 0 only
# when every check passed. Needs no loop mounts: the images are made with
# mkfs.ext4 -d, read back with debugfs, and the guests write to qcow2
# overlays of the cached base image.
#
# Time on the 2-core machine: see docs/hacking.md ("The systemd VM").
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=bookworm
CACHE_DIR=${TOPOTUNE_CACHE_DIR:-/var/cache/topotune}
VM_TIMEOUT=${TOPOTUNE_VM_TIMEOUT:-2400}
VM_PARALLEL=${TOPOTUNE_VM_PARALLEL:-1}
# shellcheck source=tests/install/lib.sh
. "$SRC/tests/install/lib.sh"

TRANSCRIPT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--transcript) [ $# -ge 2 ] || { echo "usage: $0 [--transcript FILE]" >&2; exit 2; }
		TRANSCRIPT=$2; shift 2 ;;
	--transcript=*) TRANSCRIPT=${1#--transcript=}; shift ;;
	*) echo "usage: $0 [--transcript FILE]" >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: tests/install/systemd-vm.sh needs root (debootstrap, chroot)"
	exit 77
fi
# The host's tools, installed when missing (as tests/vm does).
need=""
command -v qemu-system-x86_64 >/dev/null || need="$need qemu-system-x86"
command -v qemu-img >/dev/null || need="$need qemu-utils"
/usr/bin/python3 -c "import prometheus_client" 2>/dev/null || need="$need python3-prometheus-client"
if [ -n "$need" ]; then
	echo "# installing$need" >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
		--no-install-recommends $need >/dev/null 2>&1 || true
fi
for tool in debootstrap dpkg-buildpackage dh git qemu-system-x86_64 qemu-img mkfs.ext4 debugfs; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool missing (apt-get install debootstrap dpkg-dev debhelper git qemu-system-x86 qemu-utils e2fsprogs)"
		exit 77
	fi
done

WORK=$(mktemp -d /var/tmp/topotune-systemd-vm.XXXXXX)
[ -n "$TRANSCRIPT" ] || TRANSCRIPT="$WORK/transcript.txt"
BUILD=""
cleanup() {
	local p
	# A guest still running (an early exit): stop it with its timeout.
	for p in "$WORK"/*/pid; do
		[ -f "$p" ] || continue
		pkill -TERM -P "$(cat "$p")" 2>/dev/null || true
	done
	if [ -n "$BUILD" ]; then
		if mountpoint -q "$BUILD/root/proc" 2>/dev/null; then
			umount "$BUILD/root/proc" || umount -l "$BUILD/root/proc"
		fi
		rm -rf "$BUILD"
	fi
	if [ "${TOPOTUNE_KEEP:-0}" = 1 ]; then
		echo "# kept $WORK"
	elif [ "$TRANSCRIPT" = "$WORK/transcript.txt" ]; then
		# The default transcript lives here: keep it and the small logs.
		find "$WORK" -mindepth 1 -maxdepth 1 ! -name '*.txt' ! -name '*.log' -exec rm -rf {} +
		echo "# transcript and logs in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# 1. the package, and an upgrade of it: the same files with a higher version
build_deb reuse
VERSION=$(dpkg-deb -f "$DEB" Version)
UPVERSION="$VERSION+vmupgrade1"
IO="$WORK/io"
mkdir -p "$IO" "$WORK/repack"
cp "$DEB" "$IO/"
dpkg-deb -R "$DEB" "$WORK/repack/pkg"
sed -i "s/^Version: .*/Version: $UPVERSION/" "$WORK/repack/pkg/DEBIAN/control"
if dpkg-deb -b "$WORK/repack/pkg" "$IO/topotune_${UPVERSION}_amd64.deb" >"$WORK/repack.log" 2>&1; then
	pass "upgrade package topotune_${UPVERSION}_amd64.deb (same files, higher version)"
else
	cat "$WORK/repack.log"
	fail "dpkg-deb -b the upgrade package"
fi
rm -rf "$WORK/repack"

# 2. the guest's base image: a Debian 12 root with systemd, dbus, polkitd,
# the kernel and the package's dependencies (so that apt needs no network
# in the guest). Cached by the hash of everything that goes into it.
PACKAGES="systemd-sysv udev dbus polkitd linux-image-amd64 initramfs-tools
	kmod util-linux procps e2fsprogs apt grub-common grub2-common irqbalance strace"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
# The guest's operator unit: runs /mnt/tt/guest.sh from the second disk,
# after topotuned.service when that is installed, then the guest powers off.
GUEST_UNIT='[Unit]
Description=topotune operator session (tests/install/systemd-vm.sh)
After=multi-user.target topotuned.service dbus.service polkit.service
ConditionPathExists=/dev/vdb

[Service]
Type=oneshot
ExecStart=/bin/sh -c "mount /dev/vdb /mnt/tt && exec /bin/sh /mnt/tt/guest.sh"
ExecStopPost=/bin/systemctl --no-block poweroff
StandardOutput=journal+console
StandardError=inherit
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target'
# virtio disk, ext4 and its checksum: all the initrd needs for root=/dev/vda.
INITRD_MODULES="virtio_pci virtio_blk ext4 crc32c_generic"
# Besides these, every timer the packages ship is masked (build_base): a
# daily job (dpkg-db-backup at midnight, say) would write files between the
# guest's file-system snapshots.
MASKED="e2scrub_reap.service systemd-timesyncd.service"
# shellcheck disable=SC2086
KEY=$(printf '%s\n' "recipe 2: every timer masked" "$SUITE" $PACKAGES "$DEPENDS" "$GUEST_UNIT" \
	"$INITRD_MODULES" $MASKED | sha256sum | cut -c1-16)
BASE="$CACHE_DIR/systemd-vm-$SUITE-$KEY"

build_base() {
	minbase_tarball
	BUILD="$CACHE_DIR/.systemd-vm-build.$$"
	R="$BUILD/root"
	mkdir -p "$R"
	tar -C "$R" -xzf "$TARBALL"
	cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
	mount -t proc proc "$R/proc"
	# No daemons started in the chroot; an initrd with only what root needs.
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	mkdir -p "$R/etc/initramfs-tools/conf.d" "$R/usr/share/initramfs-tools/modules.d"
	echo "MODULES=list" >"$R/etc/initramfs-tools/conf.d/topotune-vm.conf"
	# shellcheck disable=SC2086
	printf '%s\n' $INITRD_MODULES >"$R/usr/share/initramfs-tools/modules.d/topotune-vm"
	# shellcheck disable=SC2086,SC2016
	if ! chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive DEPS="$DEPENDS" sh -c '
			apt-get -qq update &&
			apt-get -y -qq --no-install-recommends install "$@" &&
			apt-get -y -qq --no-install-recommends satisfy "$DEPS" &&
			apt-get clean' sh $PACKAGES >"$BUILD/apt.log" 2>&1; then
		tail -n 30 "$BUILD/apt.log"
		fail "base image: apt-get install in the chroot (log above)"
		summary
		exit 1
	fi
	umount "$R/proc"
	rm -f "$R/usr/sbin/policy-rc.d" "$R/etc/resolv.conf"
	rm -rf "$R/var/lib/apt/lists/"*
	echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$R/etc/fstab"
	echo topotune-vm >"$R/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\ttopotune-vm\n' >"$R/etc/hosts"
	for u in $MASKED "$R"/usr/lib/systemd/system/*.timer; do
		ln -sf /dev/null "$R/etc/systemd/system/${u##*/}"
	done
	printf '%s\n' "$GUEST_UNIT" >"$R/etc/systemd/system/topotune-operator.service"
	mkdir -p "$R/etc/systemd/system/multi-user.target.wants" "$R/mnt/tt"
	ln -sf /etc/systemd/system/topotune-operator.service \
		"$R/etc/systemd/system/multi-user.target.wants/topotune-operator.service"
	cp -L "$R/vmlinuz" "$BUILD/vmlinuz"
	cp -L "$R/initrd.img" "$BUILD/initrd.img"
	chroot "$R" dpkg-query -W >"$BUILD/packages.txt"
	# Room for the package, the journal and the snapshots.
	size=$(du -sm "$R" | cut -f1)
	truncate -s "$((size + 1024))M" "$BUILD/root.img"
	if ! mkfs.ext4 -q -F -L topotune-vm -d "$R" "$BUILD/root.img" >"$BUILD/mkfs.log" 2>&1; then
		cat "$BUILD/mkfs.log"
		fail "base image: mkfs.ext4 -d"
		summary
		exit 1
	fi
	rm -rf "$R"
	if [ -d "$BASE" ]; then
		rm -rf "$BUILD"	# another run was faster
	else
		mv "$BUILD" "$BASE"
	fi
	BUILD=""
	# Older recipes' images are stale now.
	for old in "$CACHE_DIR"/systemd-vm-"$SUITE"-*; do
		[ "$old" = "$BASE" ] || rm -rf "$old"
	done
}

if [ -f "$BASE/root.img" ] && [ -f "$BASE/initrd.img" ]; then
	pass "base image from the cache ($BASE)"
else
	note "building the guest's base image (cold run)"
	build_base
	pass "base image built in $(elapsed): $(grep -c . "$BASE/packages.txt") packages, kernel $(sed -n 's/^linux-image-\([0-9][^ \t]*\)\t.*/\1/p' "$BASE/packages.txt" | head -n1)"
fi

# 3. the guest's disks: a qcow2 overlay of the base (the base stays
# untouched) and an ext4 image with the packages and the operator script,
# where the guest also leaves its transcript.
cat >"$IO/guest.sh" <<'GUEST'
#!/bin/sh
# The operator's session, in the guest (topotune-operator.service): install,
# inspect, change profiles, revert, restart, stop, upgrade, purge. Every
# command and its output go to transcript.txt; facts.txt has KEY=VALUE lines
# for the host's checks.
TT=/mnt/tt
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 COLUMNS=160
. "$TT/env"
MSGID=01961099a93344438c354e25c11845f3
BUS="org.topotune1 /org/topotune1 org.topotune1.Manager"
cd "$TT" || exit 1

rc=0
x() {	# run a command line, show it and its output, keep its exit status
	printf '$ %s\n' "$*"
	sh -c "$*" 2>&1
	rc=$?
	[ "$rc" = 0 ] || echo "(exit $rc)"
	return 0
}
sec() { printf '\n### %s\n' "$*"; }
fact() { printf '%s=%s\n' "$1" "$2" >>"$TT/facts.txt"; }
show() { systemctl show -P "$1" topotuned.service 2>/dev/null; }
prop() { busctl get-property $BUS "$1" 2>&1; }

# Everything topotuned may change on this kernel, one line each (grub.d itself
# comes with the package; the drop-in in it is what topotune-bootloader.service
# renders from topotuned's request).
controls() {
	for f in /proc/sys/kernel/sched_smt_buddy_assist /proc/sys/kernel/sched_relax_domain_level \
		 /proc/sys/kernel/numa_balancing /proc/sys/kernel/sched_autogroup_enabled \
		 /sys/kernel/debug/sched/features /sys/fs/cgroup/cgroup.subtree_control \
		 /sys/fs/cgroup/cpuset.cpus.isolated \
		 /sys/fs/cgroup/topotune.slice/cpuset.cpus \
		 /sys/fs/cgroup/topotune.slice/cpuset.cpus.partition /run/topotune/bootloader.request \
		 /etc/default/grub.d/topotune.cfg \
		 /proc/irq/default_smp_affinity /sys/devices/virtual/workqueue/cpumask; do
		if [ -e "$f" ]; then echo "$f: $(cat "$f" 2>&1)"; else echo "$f: (absent)"; fi
	done
	echo "topotune.slice: $(systemctl show -P ActiveState topotune.slice)" \
		"AllowedCPUs=$(systemctl show -P AllowedCPUs topotune.slice)"
}
# The kernel's values without the slice's state: while topotuned.service
# runs, the slice it wants is active (and empty after a revert).
kvalues() { grep -v '^topotune.slice: ' "$1"; }
# After a stop the slice goes when nothing needs it (StopWhenUnneeded=):
# wait for systemd's queue, 10 s at most.
# The boot loader drop-in follows the request asynchronously
# (topotune-bootloader.path starts the helper): with the request gone,
# wait for the drop-in to go too, bounded.
dropin_follows() {
	i=0
	while [ -e /etc/default/grub.d/topotune.cfg ] && [ ! -e /run/topotune/bootloader.request ] &&
	      [ $i -lt 60 ]; do
		sleep 0.5
		i=$((i + 1))
	done
}
slice_gone() {
	i=0
	while [ "$(systemctl show -P ActiveState topotune.slice)" != inactive ] && [ $i -lt 20 ]; do
		sleep 0.5
		i=$((i + 1))
	done
}

# The unit's sandbox (TAG names the facts): systemd-analyze's exposure, and
# from inside the daemon's mount namespace (nsenter -m, so root's
# capabilities but the sandbox's mounts) which files may be opened for
# writing. ": >FILE" opens with O_TRUNC and writes nothing, which proc, sys
# and cgroupfs ignore: nothing changes either way.
sandbox() {
	t=$1
	x 'systemd-analyze security topotuned.service | tail -n 16'
	fact "${t}_exposure" "$(systemd-analyze security topotuned.service 2>/dev/null |
		sed -n 's/.*exposure level for topotuned.service: \([0-9.]*\).*/\1/p')"
	pid=$(show MainPID)
	open_ok="" open_refused=""
	for w in /proc/sys/kernel/sched_smt_buddy_assist /proc/sys/kernel/sched_relax_domain_level \
		 /proc/sys/kernel/numa_balancing /sys/kernel/debug/sched/features \
		 /proc/sys/kernel/sched_autogroup_enabled /sys/devices/virtual/workqueue/cpumask \
		 /run/topotune/irq/default_smp_affinity \
		 /sys/fs/cgroup/topotune.slice/cpuset.cpus.partition /run/topotune/probe; do
		[ -e "$w" ] || [ "$w" = /run/topotune/probe ] || continue
		x "nsenter -t $pid -m sh -c ': >$w'"
		if [ "$rc" = 0 ]; then open_ok="$open_ok $w"; else open_refused="$open_refused $w"; fi
	done
	x "nsenter -t $pid -m rm -f /run/topotune/probe"
	fact "${t}_own_refused" "${open_refused# }"
	open_ok="" others=""
	for w in /proc/sys/vm/swappiness /proc/sys/kernel/sched_rt_runtime_us /proc/sys/kernel/hostname \
		 /sys/kernel/debug/sched/verbose /sys/kernel/mm/transparent_hugepage/enabled \
		 /sys/fs/cgroup/cgroup.subtree_control /sys/fs/cgroup/system.slice/cgroup.procs \
		 /sys/fs/cgroup/topotune.slice/../cgroup.subtree_control /etc/hostname \
		 /proc/irq/default_smp_affinity; do
		[ -e "$w" ] || continue
		others="$others $w"
		x "nsenter -t $pid -m sh -c ': >$w'"
		[ "$rc" != 0 ] || open_ok="$open_ok $w"
	done
	fact "${t}_others" "$(echo $others | wc -w)"
	fact "${t}_others_writable" "${open_ok# }"
	# update-grub sources /etc/default/grub.d/*.cfg as root: the daemon must
	# not be able to create a file there (issue 29), only its request.
	x "nsenter -t $pid -m sh -c ': >/etc/default/grub.d/topotune-probe.cfg'"
	fact "${t}_grubd_rc" "$rc"
	rm -f /etc/default/grub.d/topotune-probe.cfg
}

# Wait until /boot/grub/grub.cfg has WORD (or, WORD empty, has no
# relax_domain_level): topotune-bootloader.path runs update-grub after the
# drop-in changed. 60 s at most.
grub_has() {
	i=0
	while [ $i -lt 120 ]; do
		if [ -n "$1" ]; then
			grep -q "$1" /boot/grub/grub.cfg && return 0
		else
			grep -q relax_domain_level /boot/grub/grub.cfg || return 0
		fi
		sleep 0.5
		i=$((i + 1))
	done
}

# A profile with numa_balancing = off (no shipped profile sets it): the
# daemon writes kernel.numa_balancing and reverts it.
numa_profile() {
	x 'printf "[profile]\ndescription = automatic NUMA balancing off\n[scheduler]\nnuma_balancing = off\n" >/etc/topotune/profiles/numa-off.ini'
	x 'topotunectl set-profile numa-off'
	fact numa_rc "$rc"
	fact numa_value "$(cat /proc/sys/kernel/numa_balancing 2>&1)"
	x 'cat /proc/sys/kernel/numa_balancing'
	x 'topotunectl verify'
	fact numa_verify_rc "$rc"
	x 'rm /etc/topotune/profiles/numa-off.ini'
}

# Every file outside the volatile and bookkeeping trees.
snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /mnt/tt -o -path /var/log -o -path /var/cache -o -path /var/lib/apt \
		-o -path /var/lib/dpkg -o -path /var/tmp \) -prune -o -print | LC_ALL=C sort
}

# The operator selects hpc (isolated CPUs) with a drop-in and reloads.
hpc_dropin() {
	x 'mkdir -p /etc/topotune/topotune.conf.d'
	x 'printf "[daemon]\nprofile = hpc\n" >/etc/topotune/topotune.conf.d/50-site.conf'
	x 'topotunectl reload'
	fact reload_rc "$rc"
	x 'topotunectl status'
	fact profile_reload "$(prop ActiveProfile)"
	fact hpc_state "$(prop State)"
}

# The isolation at work (TAG names the facts): a workload the operator starts
# in the slice, the CPUs it may use, the partition, what the kernel isolated,
# the CPUs outside every scheduler domain (/proc/schedstat: a cpu line with
# no domain lines), and what topotuned's layout says for them.
isolation() {
	t=$1
	x 'systemctl show -p ActiveState -p AllowedCPUs topotune.slice'
	x 'cat /sys/fs/cgroup/cgroup.subtree_control /sys/fs/cgroup/topotune.slice/cpuset.cpus.partition'
	x 'cat /sys/fs/cgroup/cpuset.cpus.isolated'
	x "systemd-run --unit=tt-work-$t --slice=topotune.slice -p Type=exec /bin/sleep 600"
	pid=$(systemctl show -P MainPID "tt-work-$t.service")
	x "grep Cpus_allowed_list /proc/$pid/status"
	fact "${t}_iso_prop" "$(prop IsolatedCpus)"
	fact "${t}_work_cpus" "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status")"
	fact "${t}_partition" "$(cat /sys/fs/cgroup/topotune.slice/cpuset.cpus.partition 2>&1)"
	fact "${t}_kernel_isolated" "$(cat /sys/fs/cgroup/cpuset.cpus.isolated 2>/dev/null || echo absent)"
	x "awk '/^cpu[0-9]/ { if (c != \"\" && !d) print c; c = \$1; d = 0; next } /^domain/ { d = 1 } END { if (!d) print c }' /proc/schedstat"
	nodom=$(awk '/^cpu[0-9]/ { if (c != "" && !d) print substr(c, 4); c = $1; d = 0; next }
		/^domain/ { d = 1 } END { if (c != "" && !d) print substr(c, 4) }' /proc/schedstat | paste -sd, -)
	fact "${t}_nodomain" "$nodom"
	first=${nodom%%,*}
	x "busctl call $BUS GetCpuDomains u ${first:-0}"
	fact "${t}_cpudomains" "$(busctl call $BUS GetCpuDomains u "${first:-0}" 2>&1)"
	x 'topotunectl layout --compare'
	fact "${t}_compare_rc" "$rc"
	x "systemctl stop tt-work-$t"
}

# Metrics: topotunectl metrics, then the textfile topotuned writes while a
# drop-in sets metrics_textfile (every 2 s here), gone again when a reload
# turns it off. The host parses both with prometheus_client and holds them
# against status, the properties and the kernel's own files. The directory
# exists before topotuned starts: its ReadWritePaths=- needs it then.
PROM=/var/lib/prometheus/node-exporter/topotune.prom
metrics() {
	x 'topotunectl metrics'
	topotunectl metrics >"$TT/metrics.prom" 2>/dev/null
	fact m_rc "$?"
	fact m_state "$(prop State)"
	fact m_profile "$(prop ActiveProfile)"
	# The SYNC column, from status --json: the table's values may hold spaces.
	topotunectl status --json >"$TT/status.json" 2>/dev/null
	fact m_schedstat "$(sed -n 's/^version //p' /proc/schedstat)"
	fact m_schedstats "$(cat /proc/sys/kernel/sched_schedstats 2>/dev/null)"
	fact m_buddy "$(sed -n 's/^version //p' /proc/sched_smt_buddy_stat 2>/dev/null)"
	x "printf '[daemon]\nmetrics_textfile = $PROM\nmetrics_interval = 2\n' >/etc/topotune/topotune.conf.d/60-metrics.conf"
	x 'topotunectl reload'
	i=0
	while [ ! -f $PROM ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
	x "ls -l --time-style=+%T.%N /var/lib/prometheus/node-exporter"
	fact m_mode "$(stat -c '%a %U' $PROM 2>&1)"
	m=$(stat -c %y $PROM 2>&1)
	i=0
	while [ "$(stat -c %y $PROM 2>&1)" = "$m" ] && [ $i -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
	fact m_rewritten "$([ "$(stat -c %y $PROM 2>&1)" != "$m" ] && echo yes)"
	cp $PROM "$TT/textfile.prom"
	x 'rm /etc/topotune/topotune.conf.d/60-metrics.conf && topotunectl reload'
	x 'ls -A /var/lib/prometheus/node-exporter'
	fact m_off "$(ls -A /var/lib/prometheus/node-exporter)"
}

# CPU lists and masks in the guest's shell (no python3 there).
expand() {	# LIST -> one CPU per line
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		[ -n "$a" ] || continue
		i=$a
		while [ "$i" -le "${b:-$a}" ]; do echo "$i"; i=$((i + 1)); done
	done
}
in_mask() {	# MASK LIST -> how many CPUs of LIST the hex MASK holds
	m=$((0x$(echo "$1" | tr -d ',')))
	n=0
	for c in $(expand "$2"); do [ $(((m >> c) & 1)) = 0 ] || n=$((n + 1)); done
	echo $n
}
# Each IRQ's number and smp_affinity_list, one line each.
irq_affinities() {
	for d in /proc/irq/[0-9]*; do echo "${d##*/} $(cat "$d/smp_affinity_list" 2>&1)"; done | sort -n
}
overlap() {	# LIST LIST -> how many CPUs they share
	expand "$1" >/tmp/tt-a
	expand "$2" | grep -cxF -f /tmp/tt-a
}
# The IRQs whose affinity holds an isolated CPU, as "movable" (the kernel
# takes a write of their own value back) or "managed" (it refuses it: EIO).
irqs_on() {	# ISOLATED-LIST
	irq_affinities | while read -r irq aff; do
		[ "$(overlap "$aff" "$1")" = 0 ] && continue
		if echo "$aff" 2>/dev/null >"/proc/irq/$irq/smp_affinity_list"; then
			echo "movable:$irq"
		else
			echo "managed:$irq"
		fi
	done | paste -sd' ' -
}
# The IRQ lines of the record, counted with builtins only (no fork: fast
# enough to catch the daemon within its IRQ pass).
record_irqs() {	# -> ri, and rp: the record's entries not yet done (a write under way)
	ri=0 rp=0
	[ -f /run/topotune/state ] || return 0
	while read -r w k d rest; do
		[ "$w $k" = "change irq" ] && ri=$((ri + 1))
		[ "$w $d" = "change 0" ] && rp=$((rp + 1))
	done </run/topotune/state
	return 0
}
# A function of this script, shown and run as x runs a command line.
xf() {
	printf '$ %s\n' "$*"
	"$@" 2>&1
	rc=$?
	[ "$rc" = 0 ] || echo "(exit $rc)"
	return 0
}
# Device interrupts (numbered lines of /proc/interrupts) between two
# readings, summed over the CPUs of LIST, and over all CPUs.
irq_delta() {	# BEFORE AFTER LIST
	awk -v want="$(expand "$3" | paste -sd, -)" '
		BEGIN { n = split(want, w, ","); for (i = 1; i <= n; i++) on[w[i]] = 1 }
		FNR == 1 { ncpu = NF; next }
		$1 !~ /^[0-9]+:$/ { next }
		{ for (c = 0; c < ncpu; c++) { v = $(c + 2) + 0; if (FILENAME == ARGV[1]) b[$1, c] = v
			else { d = v - b[$1, c]; all += d; if (c in on) iso += d } } }
		END { print iso + 0, all + 0 }' "$1" "$2"
}

# Quiet isolated CPUs (hpc: housekeeping = all): the IRQ default affinity,
# the unbound workqueues' cpumask and every IRQ that takes a write keep off
# them (a managed IRQ refuses), no device interrupt lands on them over 10 s
# of disk I/O, and irqbalance, told through its socket, moves none back
# within its interval (10 s).
quiet() {	# TAG
	t=$1
	iso=$(prop IsolatedCpus | sed -n 's/^s "\(.*\)"$/\1/p')
	x 'systemctl is-active irqbalance; ls /run/irqbalance'
	fact "${t}_irqbalance" "$(systemctl is-active irqbalance)"
	x 'cat /proc/irq/default_smp_affinity /sys/devices/virtual/workqueue/cpumask'
	fact "${t}_q_default" "$(in_mask "$(cat /proc/irq/default_smp_affinity)" "$iso")"
	fact "${t}_q_wq" "$(in_mask "$(cat /sys/devices/virtual/workqueue/cpumask)" "$iso")"
	x 'topotunectl plan | grep -i -A3 housekeeping'
	xf irq_affinities
	irq_affinities >"$TT/$t-irqs.txt"
	record_irqs
	fact "${t}_q_records" "$ri"
	on=$(irqs_on "$iso")
	x "echo 'IRQs on the isolated CPUs $iso: ${on:-none}'"
	fact "${t}_q_movable" "$(echo "$on" | tr ' ' '\n' | sed -n 's/^movable://p' | paste -sd, -)"
	fact "${t}_q_managed" "$(echo "$on" | tr ' ' '\n' | sed -n 's/^managed://p' | paste -sd, -)"
	fact "${t}_q_irqs" "$(grep -c . "$TT/$t-irqs.txt")"
	cat /proc/interrupts >"$TT/$t-int0.txt"
	x "timeout 10 sh -c 'while :; do dd if=/dev/zero of=/var/tmp/tt-io bs=256k count=32 oflag=direct status=none; done'; rm -f /var/tmp/tt-io"
	cat /proc/interrupts >"$TT/$t-int1.txt"
	x "grep -E '^ *[0-9]+:' /proc/interrupts"
	fact "${t}_q_delta" "$(irq_delta "$TT/$t-int0.txt" "$TT/$t-int1.txt" "$iso")"
	# irqbalance's interval is 10 s: two of them, then again.
	sleep 20
	xf irq_affinities
	on=$(irqs_on "$iso")
	fact "${t}_q_movable_later" "$(echo "$on" | tr ' ' '\n' | sed -n 's/^movable://p' | paste -sd, -)"
	x 'journalctl -u irqbalance --no-pager -o cat | tail -n 5'
}

# kill -9 while the daemon writes the IRQs. strace, attached to the daemon
# before the apply, stops it (an injected SIGSTOP) at its first write to an
# IRQ's smp_affinity_list: the write is made, the record (written before
# it) names the IRQ, and its entry is not yet done. Then kill -9. A loop
# polling the record lost the race when the IRQ pass was quicker than one
# poll (CI, 2026-12-05: no IRQ record at the kill). systemd restarts it
# (Restart=on-failure); it restores what the record holds and applies
# again, and a revert then leaves every control and every IRQ as before the
# apply. irqbalance is stopped meanwhile: it moves IRQs on its own.
crash_apply() {	# TAG
	t=$1
	x 'systemctl stop irqbalance'
	x 'topotunectl revert'
	controls >"$TT/$t-crash-before.txt"
	irq_affinities >"$TT/$t-crash-irqs-before.txt"
	pid=$(show MainPID)
	# Every IRQ's file: strace's -P matches the write's descriptor by its
	# path, which is the unit's bind of /proc/irq (IRQ_BIND_DIR) when it has one.
	set --
	for d in /proc/irq/[0-9]*; do
		set -- "$@" -P "$d/smp_affinity_list" -P "/run/topotune/irq/${d##*/}/smp_affinity_list"
	done
	rm -f "$TT/$t-crash-strace.txt"
	strace -qq -o "$TT/$t-crash-strace.txt" -p "$pid" -e trace=write,pwrite64 \
		-e inject=write,pwrite64:signal=STOP "$@" &
	st=$!
	i=0
	while [ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status")" = 0 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	topotunectl apply >"$TT/$t-crash-apply.txt" 2>&1 &
	bg=$!
	# Until strace has stopped it (120 s at most): not until the client is
	# done, which says nothing of where the daemon is.
	i=0
	until grep -q '^--- stopped by SIGSTOP' "$TT/$t-crash-strace.txt" 2>/dev/null || [ $i -ge 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# The client still waits for its reply: the apply is under way.
	if kill -0 "$bg" 2>/dev/null; then fact "${t}_crash_apply_waiting" yes; else fact "${t}_crash_apply_waiting" no; fi
	x "cat $TT/$t-crash-strace.txt"
	record_irqs
	echo "\$ (the record names $ri IRQ files, $rp writes under way: kill -9 $pid)"
	fact "${t}_crash_irqs" "$ri"
	fact "${t}_crash_pending" "$rp"
	cp /run/topotune/state "$TT/$t-crash-record.txt" 2>/dev/null
	kill -9 "$pid"
	wait "$bg"
	brc=$?
	fact "${t}_crash_apply_bg" "exit $brc: $(tr '\n' ' ' <"$TT/$t-crash-apply.txt" | cut -c1-200)"
	wait "$st"
	i=0
	while { [ "$(show MainPID)" = "$pid" ] || [ "$(show MainPID)" = 0 ] || [ "$(show SubState)" != running ]; } &&
	      [ $i -lt 120 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	x 'systemctl status topotuned --no-pager | head -n 5'
	x 'topotunectl status'
	fact "${t}_crash_state" "$(prop State)"
	fact "${t}_crash_recovered" "$(prop StateReasons | grep -o 'recovered: restored [0-9]* of [0-9]* change' | head -n 1)"
	record_irqs
	fact "${t}_crash_final" "$ri"
	x 'journalctl -u topotuned --no-pager -o cat -n 8'
	x 'topotunectl revert'
	controls >"$TT/$t-crash-after.txt"
	irq_affinities >"$TT/$t-crash-irqs-after.txt"
	x "diff -u $TT/$t-crash-before.txt $TT/$t-crash-after.txt && diff -u $TT/$t-crash-irqs-before.txt $TT/$t-crash-irqs-after.txt && echo 'every control and IRQ as before the apply'"
	fact "${t}_crash_same" "$rc"
	x 'systemctl start irqbalance'
	x 'topotunectl apply'
	fact "${t}_crash_apply_rc" "$rc"
}

# A device hot-added while hpc keeps the isolated CPUs quiet (issue 30):
# the guest asks the host for a virtio NIC (a line on the serial port the
# host's watcher reads; it sends device_add through qemu's QMP socket).
# The driver's probe allocates its IRQs and virtio_net spreads its queues
# over every CPU; the bind uevent makes topotuned move them within a bounded
# wait. irqbalance is stopped meanwhile (it would move IRQs itself). A
# revert then puts each IRQ topotuned moved back as it came (the record's
# original) and leaves the others as they are.
hotadd() {	# TAG
	t=$1
	# Only the driver's bind may move the new IRQs here: the poll (every
	# 5 s) lands in the bind's 250 ms debounce now and then, and before a
	# slow probe's bind once in a while, and would then take the pass (CI,
	# 2026-12-06). A runtime drop-in puts it an hour away for this step.
	mkdir -p /run/systemd/system/topotuned.service.d
	printf '[Service]\nExecStart=\nExecStart=%s --poll-interval 3600\n' \
		"$(sed -n 's/^ExecStart=//p' /lib/systemd/system/topotuned.service)" \
		>/run/systemd/system/topotuned.service.d/zz-hotadd-poll.conf
	x 'systemctl daemon-reload && systemctl restart topotuned && systemctl show -P ExecStart topotuned'
	iso=$(prop IsolatedCpus | sed -n 's/^s "\(.*\)"$/\1/p')
	x 'systemctl stop irqbalance'
	irq_affinities >"$TT/$t-hot-before.txt"
	jl=$(journalctl -u topotuned --no-pager -o cat | grep -c .)
	echo "\$ (asking the host for a virtio-net-pci device: hot-add)"
	echo "TT-HOTADD-REQ-$t" >/dev/ttyS0
	# The new IRQs: numbers not there before, with a virtio name in /proc/interrupts.
	i=0 new=""
	while [ $i -lt 240 ]; do
		new=$(irq_affinities | while read -r irq aff; do
			grep -q "^$irq " "$TT/$t-hot-before.txt" && continue
			grep -q "^ *$irq:.*virtio" /proc/interrupts && echo "$irq"
		done | paste -sd' ' -)
		[ -n "$new" ] && [ -n "$(ls /sys/bus/virtio/drivers/virtio_net/ 2>/dev/null | grep virtio)" ] && break
		sleep 0.5
		i=$((i + 1))
	done
	t0=$(date +%s%N)
	# Bounded: 10 s for topotuned to move them off the isolated CPUs.
	j=0
	while [ $j -lt 40 ]; do
		on=""
		for irq in $new; do
			[ "$(overlap "$(cat "/proc/irq/$irq/smp_affinity_list")" "$iso")" = 0 ] || on="$on $irq"
		done
		[ -z "$on" ] && break
		sleep 0.25
		j=$((j + 1))
	done
	x "ip -br link 2>/dev/null || ls /sys/class/net"
	x "grep -E 'virtio[0-9]*-(input|output|config)' /proc/interrupts"
	for irq in $new; do x "cat /proc/irq/$irq/smp_affinity_list"; done
	fact "${t}_hot_new" "$new"
	fact "${t}_hot_wait_ms" "$(( ($(date +%s%N) - t0) / 1000000 ))"
	# A managed IRQ refuses (EIO): named in irqs-refused, not ours to move.
	refused=$(sed -n 's/^\([0-9]*\) .*/\1/p' /run/topotune/irqs-refused 2>/dev/null | paste -sd' ' -)
	left=""
	for irq in $on; do
		case " $refused " in *" $irq "*) ;; *) left="$left $irq" ;; esac
	done
	fact "${t}_hot_on_isolated" "${left# }"
	x "journalctl -u topotuned --no-pager -o cat | tail -n +$((jl + 1))"
	fact "${t}_hot_journal" "$(journalctl -u topotuned --no-pager -o cat | tail -n +$((jl + 1)) |
		sed -n 's/^a driver bound to a device[^:]*: \([0-9]*\) IRQs\{0,1\} moved.*/\1/p' | tail -n 1)"
	# What the record holds of the new IRQs: their affinity as they came.
	x "grep -E 'proc/irq/($(echo $new | tr ' ' '|'))/' /run/topotune/state"
	recd=""
	for irq in $new; do
		old=$(sed -n "s|^change irq 1 housekeeping =proc/irq/$irq/smp_affinity_list =\([^ ]*\) .*|\1|p" /run/topotune/state)
		old=${old%%%0A}
		old=${old#=}
		[ -n "$old" ] && recd="$recd $irq=$old"
	done
	fact "${t}_hot_recorded" "${recd# }"
	irq_affinities >"$TT/$t-hot-tuned.txt"
	x 'topotunectl revert'
	fact "${t}_hot_revert_rc" "$rc"
	# Each moved IRQ back as it came; every other new IRQ as the tuned system left it.
	bad=""
	for irq in $new; do
		now=$(cat "/proc/irq/$irq/smp_affinity_list")
		want=""
		for e in $recd; do [ "${e%%=*}" = "$irq" ] && want=${e#*=}; done
		[ -n "$want" ] || want=$(sed -n "s/^$irq //p" "$TT/$t-hot-tuned.txt")
		[ "$now" = "$want" ] || bad="$bad $irq:$now(want $want)"
	done
	for irq in $new; do x "cat /proc/irq/$irq/smp_affinity_list"; done
	fact "${t}_hot_revert_bad" "${bad# }"
	x 'systemctl start irqbalance'
	x 'topotunectl apply'
	fact "${t}_hot_apply_rc" "$rc"
	rm /run/systemd/system/topotuned.service.d/zz-hotadd-poll.conf
	x 'systemctl daemon-reload && systemctl restart topotuned'
}

session() {
	sec "the guest"
	x 'uname -r'
	x 'readlink /proc/1/exe'
	fact pid1 "$(readlink /proc/1/exe)"
	x 'lscpu | grep -E "^(Vendor ID|Model name|CPU family|Model|Thread|Core|Socket|NUMA node)"'
	# A GRUB machine (grub-common and grub2-common are in the image; the
	# guest boots with qemu -kernel, so no boot sector is written): Debian's
	# /etc/default/grub and a generated /boot/grub/grub.cfg.
	x 'cp /usr/share/grub/default/grub /etc/default/grub && mkdir -p /boot/grub && update-grub'
	fact grub_rc "$rc"
	x 'systemctl list-timers --all --no-pager'
	fact timers "$(systemctl list-units --type=timer --state=active --plain --no-legend | cut -d' ' -f1 | tr '\n' ' ')"
	x 'mkdir -p /var/lib/prometheus/node-exporter'
	controls >"$TT/controls-orig.txt"
	snapshot >"$TT/before.txt"

	sec "install"
	x "apt-get install -y ./topotune_${VERSION}_amd64.deb"
	fact install_rc "$rc"
	x 'systemctl is-enabled topotuned.service'
	fact enabled "$(systemctl is-enabled topotuned.service 2>&1)"
	x 'systemctl status topotuned --no-pager'
	fact active1 "$(show ActiveState)/$(show SubState)"
	fact type1 "$(show Type)"
	fact cpu_start "$(show CPUUsageNSec)"
	x 'journalctl -u topotuned --no-pager -o short-monotonic'

	sec "status"
	x 'topotunectl status'
	x 'topotunectl plan'
	x 'topotunectl verify'
	fact verify1_rc "$rc"

	sec "metrics"
	metrics

	sec "busctl"
	x "busctl get-property $BUS State ActiveProfile CpuVendor CpuFamily CpuModel CpuName"
	x "busctl get-property $BUS Settings"
	fact settings1 "$(prop Settings)"
	x "busctl get-property $BUS RebootRequired PendingKernelCmdline StateReasons"
	fact pending1 "$(prop PendingKernelCmdline)"
	x "busctl get-property $BUS KernelCapabilities"
	x "busctl introspect --no-pager $BUS"
	x "busctl call $BUS Verify"

	sec "the sandbox"
	sandbox stock

	sec "an unprivileged user"
	x "setpriv --reuid=nobody --regid=nogroup --clear-groups busctl get-property $BUS State"
	fact nobody_read_rc "$rc"
	x 'setpriv --reuid=nobody --regid=nogroup --clear-groups topotunectl set-profile hpc'
	fact nobody_set_rc "$rc"

	sec "a profile by drop-in"
	hpc_dropin
	x 'topotunectl verify'
	fact verify_hpc_rc "$rc"
	controls >"$TT/controls-hpc.txt"
	x 'diff -u /mnt/tt/controls-orig.txt /mnt/tt/controls-hpc.txt'

	sec "isolation under systemd"
	isolation hpc

	sec "quiet isolated CPUs: IRQs, workqueues, irqbalance"
	quiet hpc

	sec "kill -9 during the apply"
	crash_apply hpc

	sec "a NIC hot-added while the isolated CPUs are quiet"
	hotadd hpc

	sec "the journal"
	x "journalctl --no-pager -o cat MESSAGE_ID=$MSGID"
	fact records "$(journalctl --no-pager -o cat MESSAGE_ID=$MSGID | grep -c .)"
	x "journalctl --no-pager -o verbose --output-fields=MESSAGE,SETTING,OLD,NEW,SOURCE,PATH -n 1 MESSAGE_ID=$MSGID"
	x "journalctl --no-pager -x -n 1 -u topotuned MESSAGE_ID=$MSGID"
	fact catalog "$(journalctl --no-pager -x -n 1 MESSAGE_ID=$MSGID | grep -c 'Subject: topotune changed')"

	sec "the boot loader"
	x 'printf "manage_bootloader = yes\n" >>/etc/topotune/topotune.conf.d/50-site.conf'
	x 'topotunectl reload'
	x 'systemctl status topotune-bootloader.path --no-pager'
	fact bootpath "$(systemctl is-active topotune-bootloader.path)"

	sec "set-profile"
	# An operator's profile that asks only for SMT_BUDDY_ASSIST (the shipped
	# throughput also sets relax_domain_level = auto, which on this kernel
	# is pending-reboot, a state that outranks degraded).
	x 'printf "[profile]\ninclude = throughput\n[scheduler]\nrelax_domain_level = keep\n" >/etc/topotune/profiles/buddy.ini'
	x 'topotunectl set-profile buddy'
	fact throughput_rc "$rc"
	fact throughput_state "$(prop State)"
	fact throughput_reasons "$(prop StateReasons)"
	x 'topotunectl status'
	x 'topotunectl verify'
	fact throughput_verify_rc "$rc"
	fact throughput_verify "$(topotunectl verify 2>&1 | grep '^not applied: ' | paste -sd'|' -)"
	x 'journalctl -u topotuned -p warning --no-pager -o cat'
	fact warnings "$(journalctl -u topotuned -p warning --no-pager -o cat | grep -c 'Profile buddy applied .*state degraded')"
	numa_profile
	x 'topotunectl set-profile latency'
	fact setprofile_rc "$rc"
	x 'rm /etc/topotune/profiles/buddy.ini'	# not in use any more; purge leaves the operator's files
	x 'topotunectl status'
	fact profile_set "$(prop ActiveProfile)"
	fact pending_set "$(prop PendingKernelCmdline)"
	x 'topotunectl verify'
	x 'cat /run/topotune/bootloader.request /etc/default/grub.d/topotune.cfg'
	fact boot_request "$(cat /run/topotune/bootloader.request 2>&1)"
	grub_has relax_domain_level=3
	fact grub_set "$(grep -c 'relax_domain_level=3' /boot/grub/grub.cfg)"
	x 'journalctl -u topotune-bootloader --no-pager -o cat'
	x 'grep -m 2 "relax_domain_level" /boot/grub/grub.cfg'

	sec "revert and apply"
	x 'topotunectl revert'
	fact revert_rc "$rc"
	dropin_follows
	controls >"$TT/controls-revert.txt"
	x 'diff -u /mnt/tt/controls-orig.txt /mnt/tt/controls-revert.txt'
	kvalues "$TT/controls-orig.txt" >"$TT/k-orig.txt"
	kvalues "$TT/controls-revert.txt" >"$TT/k-revert.txt"
	x 'diff -u /mnt/tt/k-orig.txt /mnt/tt/k-revert.txt && echo "every kernel value as before the install"'
	fact revert_same "$rc"
	fact revert_slice "$(grep '^topotune.slice: ' "$TT/controls-revert.txt")"
	grub_has ''
	fact grub_revert "$(grep -c 'relax_domain_level' /boot/grub/grub.cfg)"
	fact state_revert "$(prop State)"
	x 'topotunectl status | head -n 2'
	x 'topotunectl apply'
	fact apply_rc "$rc"
	fact state_apply "$(prop State)"

	sec "restart"
	x 'systemctl restart topotuned'
	fact restart_rc "$rc"
	fact cpu_restart "$(show CPUUsageNSec)"
	x 'journalctl -u topotuned --no-pager -o short-monotonic -n 12'
	x 'topotunectl status'
	fact profile_restart "$(prop ActiveProfile)"

	sec "stop"
	x 'systemctl stop topotuned'
	fact stop_rc "$rc"
	fact result_stop "$(show Result)"
	slice_gone
	dropin_follows
	controls >"$TT/controls-stop.txt"
	x 'diff -u /mnt/tt/controls-orig.txt /mnt/tt/controls-stop.txt && echo "every value as before the install"'
	fact stop_same "$rc"
	x 'journalctl -u topotuned --no-pager -o short-monotonic -n 4'
	x 'systemctl start topotuned'
	fact start_rc "$rc"

	sec "upgrade"
	fact pid_before "$(show MainPID)"
	fact inv_before "$(show InvocationID)"
	x 'dpkg-query -W topotune'
	x "dpkg -i ./topotune_${UPVERSION}_amd64.deb"
	fact upgrade_rc "$rc"
	x 'dpkg-query -W topotune'
	fact version_after "$(dpkg-query -W -f='${Version}' topotune)"
	x 'systemctl show topotuned -p ActiveState -p SubState -p MainPID -p NRestarts -p InvocationID'
	fact pid_after "$(show MainPID)"
	fact inv_after "$(show InvocationID)"
	fact nrestarts "$(show NRestarts)"
	x "busctl get-property $BUS Version State"

	sec "purge"
	x 'apt-get purge -y topotune'
	fact purge_rc "$rc"
	# No waiting here: the prerm waits for a regeneration under way.
	fact purge_boot "$(systemctl show -P ActiveState topotune-bootloader.service)"
	fact purge_grub "$(grep -c relax_domain_level /boot/grub/grub.cfg) $(find /boot/grub -maxdepth 1 -name grub.cfg.new | wc -l)"
	slice_gone
	x 'systemctl status topotuned --no-pager'
	fact unit_purge "$(show LoadState)/$(show ActiveState)"
	controls >"$TT/controls-purge.txt"
	x 'diff -u /mnt/tt/controls-orig.txt /mnt/tt/controls-purge.txt && echo "every value as before the install"'
	fact purge_same "$rc"
	snapshot >"$TT/after.txt"
	x 'diff /mnt/tt/before.txt /mnt/tt/after.txt && echo "no file left behind"'
	fact leftovers "$(diff "$TT/before.txt" "$TT/after.txt" | sed -n 's/^> //p' | tr '\n' ' ')"
	fact missing "$(diff "$TT/before.txt" "$TT/after.txt" | sed -n 's/^< //p' | tr '\n' ' ')"
	x 'ls -A /run/topotune'
	fact finished 1
}

# The patched kernel (kernel-patches/, built with config/systemd.config):
# the series' controls at runtime under the same systemd and package.
session_patched() {
	sec "the guest (patched kernel)"
	x 'uname -r'
	x 'readlink /proc/1/exe'
	fact pid1 "$(readlink /proc/1/exe)"
	x 'ls -l /proc/sys/kernel/sched_smt_buddy_assist /proc/sys/kernel/sched_relax_domain_level'
	controls >"$TT/controls-orig.txt"
	x 'mkdir -p /var/lib/prometheus/node-exporter'

	sec "install"
	x "apt-get install -y ./topotune_${VERSION}_amd64.deb"
	fact install_rc "$rc"
	fact active1 "$(show ActiveState)/$(show SubState)"
	x 'topotunectl status'
	fact state1 "$(prop State)"
	fact reboot1 "$(prop RebootRequired)"
	fact relax1 "$(cat /proc/sys/kernel/sched_relax_domain_level)"
	fact relax1_setting "$(topotunectl status | awk '$1 == "relax_domain_level" { print $2 " " $3 " " $4 }')"
	x 'topotunectl verify'
	fact verify1_rc "$rc"
	x 'topotunectl layout --compare'
	fact compare1_rc "$rc"
	x 'topotunectl layout | head -n 12'

	sec "metrics (patched kernel)"
	metrics

	sec "the sandbox (patched kernel)"
	sandbox patched

	sec "hpc by drop-in: isolation under systemd"
	hpc_dropin
	isolation phpc
	x 'topotunectl verify'
	fact hpc_verify_rc "$rc"

	sec "quiet isolated CPUs (patched kernel)"
	quiet phpc
	x "journalctl --no-pager -o cat MESSAGE_ID=$MSGID"

	sec "kill -9 during the apply (patched kernel)"
	crash_apply phpc

	sec "a NIC hot-added while the isolated CPUs are quiet (patched kernel)"
	hotadd phpc

	sec "throughput: SMT_BUDDY_ASSIST through kernel.sched_smt_buddy_assist"
	x 'topotunectl set-profile throughput'
	fact throughput_rc "$rc"
	fact throughput_state "$(prop State)"
	fact smt_throughput "$(cat /proc/sys/kernel/sched_smt_buddy_assist)"
	x 'cat /proc/sys/kernel/sched_smt_buddy_assist'
	x 'topotunectl verify'
	fact throughput_verify_rc "$rc"
	x 'topotunectl layout --compare'
	fact throughput_compare_rc "$rc"

	sec "stop"
	x 'systemctl stop topotuned'
	fact stop_rc "$rc"
	slice_gone
	dropin_follows
	controls >"$TT/controls-stop.txt"
	x 'diff -u /mnt/tt/controls-orig.txt /mnt/tt/controls-stop.txt && echo "every value as before the install"'
	fact stop_same "$rc"
	fact finished 1
}

if [ "$KERNEL" = patched ]; then
	session_patched 2>&1 | tee -a "$TT/transcript.txt"
else
	session 2>&1 | tee -a "$TT/transcript.txt"
fi
sync
GUEST
chmod 755 "$IO" "$IO/guest.sh"
chmod 644 "$IO"/*.deb

# 4. the boots. 12 vCPUs: 2 sockets x 3 cores x 2 threads, one core per NUMA
# node, the SNC-3 SLIT the kernel tier uses, and a Granite Rapids identity
# (family 6 model 0xad): the shipped hardware rule 50-intel-gnr-snc3 matches.
# (An AMD/Hygon identity would lose SMT here: Debian's 6.1 kernel finds AMD
# siblings through CPUID 0x8000001e, which TCG does not offer.)
SLIT="10 15 17 21 28 26
15 10 15 23 26 23
17 15 10 26 23 21
21 28 26 10 15 17
23 26 23 15 10 15
26 23 21 17 15 10"
NUMA=""
for n in 0 1 2 3 4 5; do
	NUMA="$NUMA -object memory-backend-ram,id=m$n,size=256M -numa node,nodeid=$n,cpus=$((2 * n))-$((2 * n + 1)),memdev=m$n"
done
s=0
for row in $(echo "$SLIT" | tr ' ' ','); do
	d=0
	for v in $(echo "$row" | tr ',' ' '); do
		[ "$s" = "$d" ] || NUMA="$NUMA -numa dist,src=$s,dst=$d,val=$v"
		d=$((d + 1))
	done
	s=$((s + 1))
done

# The guest asks for a hot-added NIC with a line on its serial port
# ("TT-HOTADD-REQ-TAG"); this watcher answers each once, through qemu's QMP
# socket: device_add virtio-net-pci (no network behind it: the guest only
# needs the device, its driver and its IRQs). What QMP said goes to
# DIR/qmp.log.
hotadd_watch() {	# DIR
	wd=$1 done_tags=""
	while :; do
		for tag in $(grep -ao 'TT-HOTADD-REQ-[a-z0-9]*' "$wd/console.log" 2>/dev/null | sort -u); do
			case " $done_tags " in *" $tag "*) continue ;; esac
			done_tags="$done_tags $tag"
			/usr/bin/python3 - "$wd/qmp.sock" "ttnic-${tag#TT-HOTADD-REQ-}" >>"$wd/qmp.log" 2>&1 <<'EOF' || true
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
print(f.readline().strip())
for cmd in ({"execute": "qmp_capabilities"},
            {"execute": "device_add", "arguments": {"driver": "virtio-net-pci", "id": sys.argv[2]}}):
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    while True:
        line = f.readline()
        print(line.strip())
        if not line or "return" in json.loads(line) or "error" in json.loads(line):
            break
EOF
		done
		sleep 1
	done
}

# One boot of a fresh overlay of the base image with the session for KIND
# (stock: Debian's kernel and initrd; patched: the series' bzImage, which
# needs no initrd): boot_start starts the guest in the background,
# boot_wait waits for it and copies its results out of its disk (the facts
# to $WORK/KIND/facts.txt), boot_end judges the boot and copies its
# transcript to TRANSCRIPT_FILE.
boot_start() {	# KIND TCG_THREADS QEMU_KERNEL_ARGS...
	local kind=$1 threads=$2 d="$WORK/$1"
	shift 2
	mkdir -p "$d/io"
	cp "$IO"/* "$d/io/"
	printf 'VERSION=%s\nUPVERSION=%s\nKERNEL=%s\n' "$VERSION" "$UPVERSION" "$kind" >"$d/io/env"
	chmod 755 "$d/io"
	chmod 644 "$d/io/env"
	qemu-img create -q -f qcow2 -F raw -b "$BASE/root.img" "$d/root.qcow2"
	truncate -s 64M "$d/io.img"
	mkfs.ext4 -q -F -L tt -d "$d/io" "$d/io.img"
	date +%s >"$d/start"
	rm -f "$d/qmp.sock"
	# shellcheck disable=SC2086
	{
		rc=0
		hotadd_watch "$d" &
		watcher=$!
		timeout "$VM_TIMEOUT" qemu-system-x86_64 -accel "tcg,thread=$threads" -M pc -m 1536 \
			-smp 12,sockets=2,cores=3,threads=2 -cpu Icelake-Server,vendor=GenuineIntel,family=6,model=173 $NUMA \
			"$@" \
			-drive "file=$d/root.qcow2,if=virtio,format=qcow2" \
			-drive "file=$d/io.img,if=virtio,format=raw" \
			-nic none -display none -monitor none -serial "file:$d/console.log" -no-reboot \
			-qmp "unix:$d/qmp.sock,server=on,wait=off" \
			2>"$d/qemu.log" || rc=$?
		kill "$watcher" 2>/dev/null || true
		wait "$watcher" 2>/dev/null || true
		echo "$rc" >"$d/rc"
		date +%s >"$d/end"
	} &
	echo $! >"$d/pid"
}

boot_wait() {	# KIND
	local d="$WORK/$1" x
	[ -f "$d/pid" ] || return 0
	wait "$(cat "$d/pid")" 2>/dev/null || true
	rm -f "$d/pid" "$d/root.qcow2"
	for x in facts.txt transcript.txt metrics.prom textfile.prom status.json; do
		rm -f "$d/$x"
		# debugfs exits 0 when the file is not in the image: test for it.
		debugfs -R "dump /$x $d/$x" "$d/io.img" >/dev/null 2>&1 || true
		[ -f "$d/$x" ] || : >"$d/$x"
	done
}

boot_end() {	# KIND TRANSCRIPT_FILE
	local kind=$1 tfile=$2 d="$WORK/$1" rc
	boot_wait "$kind"
	rc=$(cat "$d/rc" 2>/dev/null || echo "?")
	cp "$d/transcript.txt" "$tfile"
	cp "$d/console.log" "$WORK/console-$kind.log" 2>/dev/null || true
	cp "$d/console.log" "${tfile%.txt}-console.txt" 2>/dev/null || true
	cp "$d/qemu.log" "$WORK/qemu-$kind.log" 2>/dev/null || true
	FACTS="$d/facts.txt"
	if [ "$rc" = 0 ] && [ "$(f finished)" = 1 ]; then
		pass "$kind kernel: the guest booted, ran the operator session and powered off ($(($(cat "$d/end") - $(cat "$d/start"))) s)"
	else
		grep -v "TCG doesn't support requested feature" "$d/qemu.log" | tail -n 5
		tail -n 30 "$d/console.log"
		fail "$kind kernel: boot: qemu exit $rc, session finished: $(f finished) (serial console above)"
	fi
}
f() { sed -n "s/^$1=//p" "$FACTS" | tail -n 1; }

# The patched kernel: the series on Debian's linux-source-7.3 with the
# systemd fragment, built (or taken from the cache) by the kernel scripts.
PATCHED=""
if [ "${TOPOTUNE_SYSTEMD_VM_PATCHED:-1}" = 1 ]; then
	klog="$WORK/kernel-build.log"
	if "$SRC/kernel-patches/scripts/fetch.sh" >"$klog" 2>&1 &&
	   PATCHED=$("$SRC/kernel-patches/scripts/build.sh" --systemd 2>>"$klog") && [ -f "$PATCHED" ]; then
		pass "patched kernel with config/systemd.config: $PATCHED ($(elapsed) so far)"
	else
		tail -n 30 "$klog"
		fail "patched kernel: fetch.sh / build.sh --systemd (log above)"
		PATCHED=""
	fi
fi

# One TCG thread per guest, as the kernel tier boots: with multi-threaded TCG a CPU
# can run a stale translation of code the kernel is patching (a static key's int3),
# and the patched kernel then died in the int3 handler ("Oops: int3" in
# sched_cache_enabled(), 2 of 4 boots); the stock boot, too, once hung early in
# multi-threaded TCG (8 minutes at 4 s of guest time). With two host CPUs or more
# the two guests run side by side, each on its own.
boot_start stock single -kernel "$BASE/vmlinuz" -initrd "$BASE/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1"
[ "$VM_PARALLEL" -ge 2 ] 2>/dev/null || boot_wait stock
[ -z "$PATCHED" ] ||
	boot_start patched single -kernel "$PATCHED" -append "root=/dev/vda rw rootwait console=ttyS0 panic=-1"
boot_end stock "$TRANSCRIPT"

# 5. the checks
check() {	# NAME ACTUAL EXPECTED
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', wanted '$3'"; fi
}
# The lines a command printed in the transcript.
output() { awk -v c="\$ $1" '$0 == c { on = 1; next } /^\$ |^### / { on = 0 } on' "${OUT:-$TRANSCRIPT}"; }
# A cpulist ("4-5,10-11") as one CPU per comma ("4,5,10,11").
cpus() { echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) print i; next } NF { print }' | paste -sd, -; }
# The isolation facts of TAG: the workload, the partition, the kernel, the domains, the layout.
check_isolation() {	# TAG WHAT KERNEL_ISOLATED_FILE(yes|no)
	t=$1
	iso=$(f "${t}_iso_prop" | sed -n 's/^s "\(.*\)"$/\1/p')
	if [ -n "$iso" ] && [ "$iso" != none ]; then
		pass "$2: IsolatedCpus $iso"
	else
		fail "$2: IsolatedCpus '$(f "${t}_iso_prop")'"
	fi
	check "$2: systemd-run --slice=topotune.slice: the workload's Cpus_allowed_list is the isolated set" \
		"$(cpus "$(f "${t}_work_cpus")")" "$(cpus "$iso")"
	check "$2: the slice's cgroup is a valid isolated partition" "$(f "${t}_partition")" isolated
	if [ "$3" = yes ]; then
		check "$2: the kernel's cpuset.cpus.isolated lists them" "$(cpus "$(f "${t}_kernel_isolated")")" "$(cpus "$iso")"
	else
		check "$2: this kernel has no cpuset.cpus.isolated (before 6.7)" "$(f "${t}_kernel_isolated")" absent
	fi
	check "$2: /proc/schedstat: exactly these CPUs are outside every scheduler domain" \
		"$(f "${t}_nodomain")" "$(cpus "$iso")"
	check "$2: DomainLayout (GetCpuDomains) says so for CPU ${iso%%[-,]*}" "$(f "${t}_cpudomains")" "a(ussas) 0"
	# The model is checked against 7.3's layouts (tests/model); on other kernels only noted.
	if [ "$3" = yes ]; then
		check "$2: topotunectl layout --compare: the kernel's domains match the prediction" "$(f "${t}_compare_rc")" 0
	else
		note "$2: topotunectl layout --compare exit $(f "${t}_compare_rc") (the model predicts 7.3's domains)"
	fi
}

check_quiet() {	# TAG WHAT
	t=$1
	check "$2: irqbalance runs in the guest" "$(f "${t}_irqbalance")" active
	check "$2: /proc/irq/default_smp_affinity and the workqueue cpumask: no isolated CPU" \
		"$(f "${t}_q_default") $(f "${t}_q_wq")" "0 0"
	check "$2: of $(f "${t}_q_irqs") IRQs none that takes a write keeps an isolated CPU (managed, left: $(f "${t}_q_managed"))" \
		"$(f "${t}_q_movable")" ""
	d=$(f "${t}_q_delta")
	if [ "${d#* }" -gt 0 ] 2>/dev/null; then
		check "$2: 10 s of disk I/O: ${d#* } device interrupts, none on an isolated CPU" "${d%% *}" 0
	else
		fail "$2: 10 s of disk I/O raised no device interrupt to count ('$d')"
	fi
	check "$2: 20 s later (irqbalance's interval is 10 s) still none back on them" "$(f "${t}_q_movable_later")" ""
}
check_crash() {	# TAG WHAT
	t=$1
	# Within the pass: an IRQ write under way (its entry not done), or fewer IRQs than the whole pass has.
	n=$(f "${t}_crash_irqs") all=$(f "${t}_crash_final") p=$(f "${t}_crash_pending")
	if [ "$n" -gt 0 ] 2>/dev/null && { [ "$p" -gt 0 ] || [ "$n" -lt "$all" ]; }; then
		pass "$2: stopped and killed within the IRQ pass: $n IRQ records ($p write under way; the apply after the restart has $all)"
	else
		fail "$2: the kill did not come within the IRQ pass: $n IRQ records, '$p' under way, '$all' in the apply after the restart; the apply: $(f "${t}_crash_apply_bg")"
	fi
	check "$2: topotunectl apply was waiting for its reply when the daemon stopped, and failed with the kill" \
		"$(f "${t}_crash_apply_waiting") $(f "${t}_crash_apply_bg" | sed 's/^exit 0:.*/exit 0/; s/^exit [1-9][0-9]*:.*/failed/')" \
		"yes failed"
	# Every change of the record put back: a refused IRQ write under way (EIO) is no problem.
	rec=$(f "${t}_crash_recovered")
	got=$(echo "$rec" | sed -n 's/^recovered: restored \([0-9]*\) of \([0-9]*\) change$/\1 \2/p')
	if [ -n "$got" ] && [ "${got% *}" = "${got#* }" ]; then
		pass "$2: systemd restarted it: ${rec}s, every one, State $(f "${t}_crash_state")"
	else
		fail "$2: after the restart: StateReasons says '$rec' (wanted every change restored), State $(f "${t}_crash_state")"
	fi
	check "$2: a revert then: every control and every IRQ's affinity byte for byte as before the apply" \
		"$(f "${t}_crash_same")" 0
	check "$2: apply again: exit 0" "$(f "${t}_crash_apply_rc")" 0
}

# The hot-added NIC (hotadd in the guest): its IRQs, moved within the bounded
# wait by the IRQ pass a driver's bind starts, and a revert after it.
check_hotadd() {	# TAG WHAT KIND
	t=$1
	if [ -n "$(f "${t}_hot_new")" ]; then
		pass "$2: device_add virtio-net-pci through QMP: the driver bound, new IRQs $(f "${t}_hot_new")"
	else
		grep -v '^{"QMP"' "$WORK/$3/qmp.log" 2>/dev/null | tail -n 3
		fail "$2: no new virtio IRQ after the hot-add (QMP's answers above)"
	fi
	check "$2: within $(f "${t}_hot_wait_ms") ms (10 s at most) none of them that takes a write holds an isolated CPU" \
		"$(f "${t}_hot_on_isolated")" ""
	if [ "$(f "${t}_hot_journal")" -ge 1 ] 2>/dev/null; then
		pass "$2: topotuned's journal: \"a driver bound to a device: $(f "${t}_hot_journal") IRQs moved\" (record: $(f "${t}_hot_recorded"))"
	else
		fail "$2: topotuned's journal has no IRQ moved for the driver's bind ('$(f "${t}_hot_journal")')"
	fi
	check "$2: revert puts each IRQ it moved back as it came, leaves the other new ones as they are" \
		"$(f "${t}_hot_revert_rc") $(f "${t}_hot_revert_bad")" "0 "
	check "$2: apply again: exit 0" "$(f "${t}_hot_apply_rc")" 0
}

# A metrics file through prometheus_client's text parser (Debian's, on the
# host, so the guest's cached image stays as it is): one line per sample,
# NAME{LABEL=VALUE,...} VALUE (labels sorted); nothing when it does not parse.
prom() {
	/usr/bin/python3 - "$1" <<'EOF' 2>/dev/null
import sys
from prometheus_client.parser import text_string_to_metric_families as families
print("\n".join("%s{%s} %g" % (s.name, ",".join("%s=%s" % l for l in sorted(s.labels.items())), s.value)
                for f in families(open(sys.argv[1]).read()) for s in f.samples))
EOF
}
# The guest's topotunectl metrics and textfile (in DIR), against its status,
# properties and kernel files (the facts).
check_metrics() {	# DIR WHAT SERIES(yes|no)
	m=$(prom "$1/metrics.prom" || true) t=$(prom "$1/textfile.prom" || true) dir=$1
	shift
	check "$1: topotunectl metrics: exit 0, parsed by prometheus_client ($(echo "$m" | grep -c .) samples)" \
		"$(f m_rc) $(echo "$m" | grep -c '^topotune_info{version='"$VERSION"'} 1$')" "0 1"
	check "$1: topotune_state: one-hot over the 5 states, 1 for State" \
		"$(echo "$m" | grep -c '^topotune_state{') $(echo "$m" | sed -n 's/^topotune_state{state=\(.*\)} 1$/s "\1"/p')" \
		"5 $(f m_state)"
	check "$1: topotune_active_profile: ActiveProfile, 1" \
		"$(echo "$m" | sed -n 's/^topotune_active_profile{profile=\([^,]*\),reason=[^}]*} 1$/s "\1"/p')" "$(f m_profile)"
	insync=$(echo "$m" | sed -n 's/^topotune_setting_in_sync{setting=\(.*\)} \([01]\)$/\1=\2/p' | sort | paste -sd' ' -)
	case "$insync" in
	*relax_domain_level=*smt_buddy_assist=*)
		check "$1: topotune_setting_in_sync per setting as status's SYNC column ($insync)" \
			"$insync" "$(/usr/bin/python3 -c 'import json, sys
print(" ".join(sorted("%s=%d" % (s["setting"], s["in_sync"]) for s in json.load(open(sys.argv[1]))["settings"])))' \
			"$dir/status.json" 2>&1)" ;;
	*) fail "$1: topotune_setting_in_sync: '$insync'" ;;
	esac
	n=$(echo "$insync" | wc -w)
	# desired and actual: a numeric gauge (relax_domain_level may be -1) or, for a value that is no number, _info.
	check "$1: per setting ($n): desired, actual (gauge or _info), drift_total and repairs_total (>= 0)" "$(for x in \
		desired actual drift_total repairs_total; do echo "$m" | grep -c "^topotune_setting_$x\(_info\)\?{.*} -\?[0-9]"
		done | paste -sd' ' -)" "$n $n $n $n"
	check "$1: topotune_domain_levels: live, the number of domain names as value" "$(echo "$m" |
		awk -F'domains=|,source=|} ' '/^topotune_domain_levels\{/ { n++; if ($3 != "live" || split($2, w, " ") != $4) bad++ }
		END { print (n > 0 && !bad) }')" 1
	check "$1: topotune_schedstat_version: /proc/schedstat's, schedstats_enabled: kernel.sched_schedstats" \
		"$(echo "$m" | sed -n 's/^topotune_schedstat_version{} //p') $(echo "$m" | sed -n 's/^topotune_schedstats_enabled{} //p')" \
		"$(f m_schedstat) $(f m_schedstats)"
	lb=$(echo "$m" | grep -c '^topotune_schedstat_lb_count_total{domain=[A-Z]*,idle=[a-z_]*,index=[0-9]*} [0-9]' || true)
	if [ "$(f m_schedstat)" = 17 ]; then
		check "$1: version 17: lb_count per domain level and idle state, as many as lb_failed and lb_gained" \
			"$([ "$lb" -gt 0 ] && echo "$lb $lb $lb")" "$lb $(echo "$m" | grep -c '^topotune_schedstat_lb_failed_total{') $(echo "$m" | grep -c '^topotune_schedstat_lb_gained_total{')"
	else
		check "$1: /proc/schedstat version $(f m_schedstat): no load-balance counters" "$lb" 0
	fi
	if [ "$2" = yes ]; then
		check "$1: the series' /proc/sched_smt_buddy_stat (version $(f m_buddy)): version 2, its 2 counters" "$(echo "$m" |
			sed -n 's/^topotune_smt_buddy_stat_version{} //p') $(f m_buddy) $(echo "$m" |
			grep -c '^topotune_smt_buddy_[a-z_]*_total{} [0-9]')" "2 2 2"
	else
		check "$1: no /proc/sched_smt_buddy_stat: smt_buddy_stat_version 0, no counters" "$(echo "$m" |
			sed -n 's/^topotune_smt_buddy_stat_version{} //p')$(f m_buddy) $(echo "$m" | grep -c '^topotune_smt_buddy_')" "0 1"
	fi
	check "$1: metrics_textfile: written (mode, owner), rewritten within metrics_interval, removed when turned off" \
		"$(f m_mode) $(f m_rewritten) '$(f m_off)'" "644 root yes ''"
	check "$1: the textfile parses, with the samples (names and labels) of topotunectl metrics" \
		"$(echo "$t" | sed 's/ [^ ]*$//' | sort | md5sum) $(echo "$t" | grep -c .)" \
		"$(echo "$m" | sed 's/ [^ ]*$//' | sort | md5sum) $(echo "$m" | grep -c .)$([ -n "$t" ] || echo ', empty')"
}

check "systemd is PID 1 in the guest" "$(f pid1)" /usr/lib/systemd/systemd
check "apt-get install ./$(basename "$DEB"): exit 0" "$(f install_rc)" 0
check "postinst enabled topotuned.service (deb-systemd-helper)" "$(f enabled)" enabled
check "postinst started it: active (running), Type=notify, so READY=1 came" \
	"$(f active1) $(f type1)" "active/running notify"
if output "systemctl status topotuned --no-pager" | grep -q "Active: active (running)"; then
	pass "systemctl status topotuned: Active: active (running)"
else
	fail "systemctl status topotuned: no 'Active: active (running)'"
fi
status=$(output "topotunectl status" | head -n 40)
for s in smt_buddy_assist relax_domain_level isolated_cpus; do
	if echo "$status" | grep -q "^ *$s "; then
		pass "topotunectl status reports $s"
	else
		fail "topotunectl status reports $s"
	fi
done
if echo "$status" | grep -q "State: pending-reboot" &&
   echo "$status" | grep -q "add to the kernel command line: relax_domain_level="; then
	pass "stock kernel: the GNR rule's relax_domain_level is pending a reboot, with the argument"
else
	fail "stock kernel: no 'State: pending-reboot' with the kernel argument in topotunectl status"
fi
case "$(f pending1)" in
's "relax_domain_level='*) pass "PendingKernelCmdline: $(f pending1)" ;;
*) fail "PendingKernelCmdline: '$(f pending1)'" ;;
esac
case "$(f settings1)" in
"a(sssbs) "*'"smt_buddy_assist"'*'"relax_domain_level"'*'"isolated_cpus"'*)
	pass "busctl get-property Settings: a(sssbs) with smt_buddy_assist, relax_domain_level, isolated_cpus" ;;
*) fail "busctl get-property Settings: '$(f settings1)'" ;;
esac
if output "busctl introspect --no-pager org.topotune1 /org/topotune1 org.topotune1.Manager" |
   grep -q '^\.SetProfile *method *sb'; then
	pass "busctl introspect lists SetProfile(sb)"
else
	fail "busctl introspect lists SetProfile(sb)"
fi
# The unit's sandbox (units/topotuned.service).
check_sandbox() {	# TAG WHAT
	check "$2: every file topotuned writes may be opened for writing in its sandbox" "$(f "${1}_own_refused")" ""
	if [ "$(f "${1}_others")" -ge 6 ] 2>/dev/null; then
		check "$2: $(f "${1}_others") other /proc/sys, /sys, cgroup and /etc files are read-only in the sandbox" \
			"$(f "${1}_others_writable")" ""
	else
		fail "$2: only '$(f "${1}_others")' of the other files exist in the guest"
	fi
	if [ "$(f "${1}_grubd_rc")" != 0 ] && [ -n "$(f "${1}_grubd_rc")" ]; then
		pass "$2: topotuned cannot create a file in /etc/default/grub.d (update-grub sources it as root)"
	else
		fail "$2: topotuned can write /etc/default/grub.d from its sandbox (rc '$(f "${1}_grubd_rc")')"
	fi
	if awk -v e="$(f "${1}_exposure")" 'BEGIN { exit !(e != "" && e + 0 < 2.4) }'; then
		pass "$2: systemd-analyze security: exposure $(f "${1}_exposure") (2.4 before ProtectKernelTunables=/ProtectControlGroups=)"
	else
		fail "$2: systemd-analyze security: exposure '$(f "${1}_exposure")', wanted below 2.4"
	fi
}
check_sandbox stock "stock kernel"
check "an unprivileged user may read" "$(f nobody_read_rc)" 0
check "an unprivileged user may not set-profile (polkit, no agent): exit 2" "$(f nobody_set_rc)" 2
check "stock kernel: set-profile buddy (throughput's SMT_BUDDY_ASSIST only) applies what the kernel supports: exit 0, State degraded" \
	"$(f throughput_rc) $(f throughput_state)" '0 s "degraded"'
case "$(f throughput_reasons)" in
*'"smt_buddy_assist: unsupported: kernel lacks SMT_BUDDY_ASSIST'*)
	pass "... StateReasons names smt_buddy_assist and what the kernel lacks" ;;
*) fail "... StateReasons: $(f throughput_reasons)" ;;
esac
check "... the journal files that apply as a warning (journalctl -p warning finds it)" "$(f warnings)" 1
case "$(f throughput_verify_rc) $(f throughput_verify)" in
"0 not applied: smt_buddy_assist: unsupported: "*)
	pass "... topotunectl verify: exit 0, 'not applied: smt_buddy_assist: unsupported: ...'" ;;
*) fail "... topotunectl verify: exit $(f throughput_verify_rc), '$(f throughput_verify)'" ;;
esac
check "topotunectl set-profile latency: exit 0" "$(f setprofile_rc)" 0
check "ActiveProfile after set-profile" "$(f profile_set)" 's "latency"'
check "latency's relax_domain_level = 3 pending a reboot" "$(f pending_set)" 's "relax_domain_level=3"'
check "the guest is a GRUB machine: update-grub exit 0" "$(f grub_rc)" 0
check "no timer is armed in the guest: nothing time-driven writes between the file-system snapshots" \
	"$(f timers)" ""
check "topotune-bootloader.path is enabled and active after the install" "$(f bootpath)" active
if [ "$(f grub_set)" -ge 1 ] 2>/dev/null; then
	pass "manage_bootloader = yes: the request (\"$(f boot_request)\") made topotune-bootloader.service render the drop-in and update-grub put relax_domain_level=3 on $(f grub_set) boot entries"
else
	fail "manage_bootloader = yes: /boot/grub/grub.cfg has relax_domain_level=3 on '$(f grub_set)' entries"
fi
check "revert removed the drop-in and update-grub took relax_domain_level out of grub.cfg" "$(f grub_revert)" 0
check "topotunectl revert: exit 0, State off" "$(f revert_rc) $(f state_revert)" '0 s "off"'
check "revert restores every kernel value" "$(f revert_same)" 0
check "after revert the slice is active (topotuned.service wants it), with no AllowedCPUs=" \
	"$(f revert_slice)" "topotune.slice: active AllowedCPUs="
check "numa_balancing = off (a profile of the operator's): set-profile exit 0, kernel.numa_balancing 0, verify exit 0" \
	"$(f numa_rc) $(f numa_value) $(f numa_verify_rc)" "0 0 0"
check "topotunectl apply after revert: exit 0" "$(f apply_rc)" 0
check "systemctl restart topotuned: exit 0" "$(f restart_rc)" 0
check "systemctl stop topotuned: exit 0, Result=success" "$(f stop_rc) $(f result_stop)" "0 success"
check "stop restores every value" "$(f stop_same)" 0
check "systemctl start topotuned: exit 0" "$(f start_rc)" 0
check "upgrade to $UPVERSION (dpkg -i): exit 0" "$(f upgrade_rc)" 0
check "upgrade: version installed" "$(f version_after)" "$UPVERSION"
check "upgrade: the daemon was not restarted (MainPID, InvocationID, NRestarts)" \
	"$(f pid_after) $(f inv_after) $(f nrestarts)" "$(f pid_before) $(f inv_before) 0"
check "apt-get purge topotune: exit 0" "$(f purge_rc)" 0
check "purge returned after the boot loader's regeneration: the service inactive, relax_domain_level out of grub.cfg, no grub.cfg.new" \
	"$(f purge_boot) $(f purge_grub)" "inactive 0 0"
check "purge stopped the daemon and removed the unit" "$(f unit_purge)" not-found/inactive
check "purge: every value as before the install" "$(f purge_same)" 0
# dpkg keeps what it does not own: the administrator's drop-in.
check "purge: nothing left behind but the administrator's own drop-in" "$(f leftovers)" \
	"/etc/topotune /etc/topotune/topotune.conf.d /etc/topotune/topotune.conf.d/50-site.conf "
check "purge: no file of the system removed" "$(f missing)" ""

check "topotunectl verify right after the install: exit 0 (in sync; pending-reboot is not drift)" \
	"$(f verify1_rc)" 0
check_metrics "$WORK/stock" "stock kernel: metrics" no
# Isolation under the real systemd: the slice is started, its cgroup made a partition.
check "drop-in profile = hpc + topotunectl reload: exit 0" "$(f reload_rc)" 0
check "ActiveProfile after the reload" "$(f profile_reload)" 's "hpc"'
check_isolation hpc "stock kernel, hpc" no
check_quiet hpc "stock kernel, hpc"
check_crash hpc "stock kernel, hpc"
check_hotadd hpc "stock kernel, hpc, a NIC hot-added" stock
check "after a restart the drop-in's profile is active" "$(f profile_restart)" 's "hpc"'
if [ "$(f records)" -gt 0 ] 2>/dev/null && [ "$(f catalog)" = 1 ]; then
	pass "journal: $(f records) change records (MESSAGE_ID=01961099...), catalog text shown by journalctl -x"
else
	fail "journal: records '$(f records)', catalog '$(f catalog)'"
fi
note "topotuned CPU time: $(f cpu_start) ns after the first start, $(f cpu_restart) ns after the restart with hpc"

# The patched kernel: the whole product under systemd.
if [ -n "$PATCHED" ]; then
	PT="${TRANSCRIPT%.txt}-patched.txt"
	boot_end patched "$PT"
	OUT=$PT
	check "patched kernel: systemd is PID 1" "$(f pid1)" /usr/lib/systemd/systemd
	check "patched kernel: apt-get install: exit 0, topotuned active (running)" \
		"$(f install_rc) $(f active1)" "0 active/running"
	check "patched kernel: the GNR rule's relax_domain_level applied at runtime: State applied, no reboot" \
		"$(f state1) $(f reboot1)" 's "applied" b false'
	case "$(f relax1_setting)" in
	"$(f relax1) $(f relax1) yes") pass "patched kernel: kernel.sched_relax_domain_level = $(f relax1), as planned, in sync" ;;
	*) fail "patched kernel: relax_domain_level: sysctl $(f relax1), status '$(f relax1_setting)'" ;;
	esac
	check_sandbox patched "patched kernel"
	check "patched kernel: verify after start: exit 0" "$(f verify1_rc)" 0
	check "patched kernel: layout --compare: the kernel's domains are the planner's prediction" "$(f compare1_rc)" 0
	check_metrics "$WORK/patched" "patched kernel: metrics" yes
	check "patched kernel: set-profile throughput: exit 0, State applied" \
		"$(f throughput_rc) $(f throughput_state)" '0 s "applied"'
	check "patched kernel: SMT_BUDDY_ASSIST on through kernel.sched_smt_buddy_assist" "$(f smt_throughput)" 1
	check "patched kernel: throughput: verify exit 0, layout --compare exit 0" \
		"$(f throughput_verify_rc) $(f throughput_compare_rc)" "0 0"
	check "patched kernel: drop-in profile = hpc + reload: exit 0, ActiveProfile hpc, State applied" \
		"$(f reload_rc) $(f profile_reload) $(f hpc_state)" '0 s "hpc" s "applied"'
	check_isolation phpc "patched kernel, hpc" yes
	check_quiet phpc "patched kernel, hpc"
	check_crash phpc "patched kernel, hpc"
	check_hotadd phpc "patched kernel, hpc, a NIC hot-added" patched
	check "patched kernel: hpc: verify exit 0" "$(f hpc_verify_rc)" 0
	check "patched kernel: systemctl stop topotuned: exit 0, every value as before the install" \
		"$(f stop_rc) $(f stop_same)" "0 0"
	note "patched transcript: $PT"
fi

note "took $(elapsed)"
note "transcript: $TRANSCRIPT"
summary
[ "$failed" = 0 ]
