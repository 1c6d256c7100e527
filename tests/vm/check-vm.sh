#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The real-systemd test: boots Debian 12 with systemd as PID 1 in a
# virtual machine of our own (qemu; this machine's PID 1 and cgroups are
# never touched), installs the jsampled package there, starts the service
# with `systemctl start jsampled`, starts a JVM with no flags, and reads its
# CCT with jsamplectl -- as a user would. Prints the guest's verdict and
# figures; exits non-zero on any failure, saying why.
#
#   tests/vm/check-vm.sh            (root; `make check-vm` builds the package first)
#
# The guest root file system is built once with debootstrap and cached in
# build/vm/rootfs (about 700 MB); each run boots a fresh disk image made from
# it, so every run installs the package from scratch.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
VM=$B/vm
ROOTFS=$VM/rootfs
MIRROR=${MIRROR:-http://deb.debian.org/debian}
GUEST_PACKAGES=systemd,systemd-sysv,dbus,linux-image-amd64,initramfs-tools,openjdk-17-jdk-headless,libbpf1,libelf1,libcap2,zlib1g,adduser,init-system-helpers,procps,util-linux
TIMEOUT_S=${TIMEOUT_S:-1500}
# On these machines /dev/kvm opens but a guest kernel hangs right after the
# real-mode setup (the vCPU has no VMX; nested virtualization is not really
# there), so the guest runs under QEMU's TCG emulation by default: slower
# (the JVM starts in ~20 s), but a real kernel and a real systemd.
# ACCEL=kvm where KVM works.
ACCEL=${ACCEL:-tcg}

fail() { echo "FAIL [check-vm]: $*" >&2; exit 1; }
note() { echo "[check-vm] $*"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, mkfs, KVM)"
if [ "$ACCEL" = kvm ]; then
	[ -w /dev/kvm ] || fail "/dev/kvm is not usable (ACCEL=tcg works without it)"
	ACCEL_ARGS=(-enable-kvm -cpu host)
else
	ACCEL_ARGS=(-accel tcg,thread=multi -cpu max)
fi
for tool in qemu-system-x86_64 debootstrap mkfs.ext4; do
	command -v "$tool" >/dev/null || fail "$tool missing (make check-vm installs qemu-system-x86 and debootstrap)"
done
DEB=$(ls "$B"/jsampled_*_amd64.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || fail "no package in $B (run 'make deb')"
[ -f "$B/java/.stamp" ] || fail "Java test programs not built (run 'make java')"

# 1. The guest system, once.
if [ ! -f "$ROOTFS/.complete" ]; then
	note "building the guest root file system with debootstrap (once; cached in $ROOTFS)"
	rm -rf "$ROOTFS"
	mkdir -p "$ROOTFS"
	debootstrap --variant=minbase --include="$GUEST_PACKAGES" bookworm "$ROOTFS" "$MIRROR" \
		>"$VM/debootstrap.log" 2>&1 || fail "debootstrap failed (see $VM/debootstrap.log)"
	# Root on the virtio disk, a console on the serial port, no password prompt needed.
	echo "/dev/vda / ext4 defaults 0 1" >"$ROOTFS/etc/fstab"
	echo jsampled-vm >"$ROOTFS/etc/hostname"
	chroot "$ROOTFS" passwd -d root >/dev/null
	ls "$ROOTFS"/boot/vmlinuz-* "$ROOTFS"/boot/initrd.img-* >/dev/null || fail "no kernel in the guest"
	touch "$ROOTFS/.complete"
fi
KERNEL=$(ls "$ROOTFS"/boot/vmlinuz-* | sort -V | tail -1)
INITRD=$(ls "$ROOTFS"/boot/initrd.img-* | sort -V | tail -1)

# 2. A fresh disk for this run: the cached system, the package, a test
#    program, and a unit that runs the test once the system is up.
WORK=$(mktemp -d "$VM/run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
STAGE=$WORK/stage
mkdir -p "$STAGE"
cp -a "$ROOTFS"/. "$STAGE"/
cp "$DEB" "$STAGE/root/jsampled.deb"
cp -r "$B/java" "$STAGE/root/java"
install -m 0755 "$ROOT/tests/vm/guest-test.sh" "$STAGE/root/guest-test.sh"
cat >"$STAGE/etc/systemd/system/vm-test.service" <<'UNIT'
[Unit]
Description=jsampled acceptance test (runs once, then powers off)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/root/guest-test.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
ExecStopPost=/bin/systemctl poweroff --no-block
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/vm-test.service "$STAGE/etc/systemd/system/multi-user.target.wants/vm-test.service"
# No login prompt on the serial console: its vhangup would cut the test's output.
ln -sf /dev/null "$STAGE/etc/systemd/system/serial-getty@ttyS0.service"
mkfs.ext4 -q -L root -d "$STAGE" "$WORK/disk.img" 4G >/dev/null || fail "cannot make the guest disk"

# 3. Boot it.
note "booting $(basename "$KERNEL") with systemd as PID 1 ($ACCEL, 2 vCPUs, 3 GiB)"
start=$(date +%s)
timeout "$TIMEOUT_S" qemu-system-x86_64 "${ACCEL_ARGS[@]}" -smp 2 -m 3072 -nographic -no-reboot \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "root=/dev/vda rw console=ttyS0 systemd.show_status=0 loglevel=4" \
	-drive "file=$WORK/disk.img,format=raw,if=virtio" -nic none \
	-serial "file:$VM/console.log" -monitor none -display none >"$VM/qemu.log" 2>&1 ||
	note "qemu exited with $? (timeout is $TIMEOUT_S s)"
note "the VM ran for $(( $(date +%s) - start )) s; console in $VM/console.log"
sed -n '/^VMTEST/p' "$VM/console.log"
grep -q "^VMTEST PASS" "$VM/console.log" || fail "the guest test did not pass (see $VM/console.log)"
note "passed"
