# SPDX-License-Identifier: GPL-2.0
# The QEMU machine every guest runs on, and reading its results: shared by
# run-vm (busybox initramfs guests) and test-distro (the Debian image).
# Sourced after common.sh and topology.sh, never run.  One verdict for
# both: guest_verdict.

# The architectures a guest can be: x86_64 (q35) and arm64 ("virt", booted
# through UEFI: the firmware hands the kernel the ACPI tables, SRAT, SLIT
# and HMAT, that QEMU builds from the same -numa arguments as for q35).
# arm64 guests run Debian's arm64 busybox-static; it and the firmware
# (Debian 13's qemu-efi-aarch64; see scripts/setup for why not Debian 12's)
# are fetched by "scripts/setup --cross".
QEMU_ARM64_DIR=$BWAP_BUILD/cross/arm64
QEMU_ARM64_BUSYBOX=$QEMU_ARM64_DIR/busybox
QEMU_EFI_AARCH64=$QEMU_ARM64_DIR/QEMU_EFI.fd
# The firmware's package, pinned like every download
# (Documentation/DESIGN.md, "Pins and a moving archive"): this version
# when trixie still serves it, else the newest 2025.02 revision,
# loudly.  apt checks the .deb against trixie's signed index;
# build/cross/arm64/versions records what was fetched, and
# scripts/setup --cross fetches again when that is not the pin.
QEMU_EFI_AARCH64_PKG=qemu-efi-aarch64
QEMU_EFI_AARCH64_VERSION=2025.02-8+deb13u1
QEMU_EFI_AARCH64_SERIES=2025.02-
QEMU_EFI_AARCH64_SUITE=trixie

# qemu_ttys ARCH: sets QEMU_CONSOLE, the guest's kernel-log console, and
# QEMU_GUEST_TTY, the port where the guest writes its results.  "virt" has
# a single UART (PL011), so arm64 results go to a virtio console.
qemu_ttys() {
	case "$1" in
	x86_64) QEMU_CONSOLE=ttyS0 QEMU_GUEST_TTY=ttyS1 ;;
	arm64) QEMU_CONSOLE=ttyAMA0 QEMU_GUEST_TTY=hvc0 ;;
	*) die "unknown architecture '$1' (x86_64 or arm64)" ;;
	esac
}

# qemu_machine TOPO_FILE KERNEL CMDLINE LOGDIR [ARCH]: sets QEMU_CMD (array)
# to a TCG machine of ARCH (default x86_64) shaped like the topology,
# booting KERNEL with CMDLINE.  The kernel log (QEMU_CONSOLE) goes to
# LOGDIR/kernel.log; QEMU_GUEST_TTY, where the guest writes its results, is
# QEMU's stdout.  Callers append their disks or initramfs.
qemu_machine() {
	local topo=$1 kernel=$2 cmdline=$3 logdir=$4 arch=${5:-x86_64}
	qemu_ttys "$arch"
	case "$arch" in
	x86_64)
		topology_qemu_args "$topo"
		QEMU_CMD=(qemu-system-x86_64 -accel tcg -cpu max "${TOPO_QEMU_ARGS[@]}"
			-kernel "$kernel" -append "$cmdline"
			-nodefaults -display none -no-reboot
			-serial "file:$logdir/kernel.log"
			-chardev stdio,id=guestout,signal=off -serial chardev:guestout)
		;;
	arm64)
		[ -r "$QEMU_EFI_AARCH64" ] || die "no UEFI firmware at $QEMU_EFI_AARCH64; run scripts/setup --cross"
		topology_qemu_args "$topo" virt,gic-version=3
		# pauth-impdef: QEMU's own pointer-authentication hash instead of
		# QARMA, which TCG emulates several times slower.  No variable
		# store: nothing is kept from one boot to the next.
		QEMU_CMD=(qemu-system-aarch64 -accel tcg -cpu max,pauth-impdef=on "${TOPO_QEMU_ARGS[@]}"
			-bios "$QEMU_EFI_AARCH64"
			-kernel "$kernel" -append "$cmdline"
			-nodefaults -display none -no-reboot
			-serial "file:$logdir/kernel.log"
			-device virtio-serial-device
			-chardev stdio,id=guestout,signal=off -device virtconsole,chardev=guestout)
		;;
	esac
}

# qemu_run TIMEOUT QUIET LOGDIR: run QEMU_CMD, its guest output (CRs
# dropped) saved to LOGDIR/output.log and, unless QUIET is 1, shown.
# Sets QEMU_RC (124 on timeout).  The command line is kept in LOGDIR/qemu.cmd.
qemu_run() {
	local timeout=$1 quiet=$2 logdir=$3
	printf '%q ' "${QEMU_CMD[@]}" > "$logdir/qemu.cmd"
	set +e
	if [ "$quiet" -eq 1 ]; then
		timeout -k 10 "$timeout" "${QEMU_CMD[@]}" < /dev/null 2>"$logdir/qemu.err" | tr -d '\r' > "$logdir/output.log"
	else
		timeout -k 10 "$timeout" "${QEMU_CMD[@]}" < /dev/null 2>"$logdir/qemu.err" | tr -d '\r' | tee "$logdir/output.log"
	fi
	QEMU_RC=${PIPESTATUS[0]}
	set -e
}

# Kernel log lines that fail a run: WARN/BUG/oops, lockdep, KASAN, stalls
# (x86 prints "Call Trace:", arm64 "Call trace:").
KERNEL_SPLAT_RE='WARNING:|BUG:|Oops|Kernel panic|kernel BUG|general protection fault|KASAN:|UBSAN:|KFENCE:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|rcu_.*stall|Call [Tt]race:'

# tap_counts INDENT < FILE: "passed failed skipped" over the TAP result
# lines that start at INDENT.
tap_counts() {
	awk -v ind="$1" '
		$0 ~ "^" ind "not ok [0-9]+" { f++; next }
		$0 ~ "^" ind "ok [0-9]+.*# SKIP" { s++; next }
		$0 ~ "^" ind "ok [0-9]+" { p++ }
		END { print p + 0, f + 0, s + 0 }'
}

# guest_verdict LOGDIR TIMEOUT DONE_LINE [NAME]: judge one guest run of
# qemu_run (QEMU_RC; LOGDIR/output.log, kernel.log and qemu.err), the same
# way for every guest:
#   - QEMU killed at TIMEOUT seconds, or exiting non-zero;
#   - no line of output.log starts with DONE_LINE, the guest's last word
#     (it crashed or hung before the end of its work);
#   - a kernel splat (KERNEL_SPLAT_RE) in kernel.log, whose first lines go
#     to stderr;
#   - the TAP counts of output.log.
# Sets GUEST_PASSED, GUEST_FAILED, GUEST_SKIPPED and the array
# GUEST_PROBLEMS (one line per problem, prefixed "NAME: " when NAME is
# given; empty when the guest ran clean).  The caller adds its own checks
# and counts a run with problems but no failed TAP test as one failure.
guest_verdict() {
	local logdir=$1 timeout=$2 done_line=$3 name=${4:+$4: }
	local out=$1/output.log klog=$1/kernel.log
	GUEST_PROBLEMS=()
	[ "$QEMU_RC" -eq 124 ] && GUEST_PROBLEMS+=("${name}timeout after ${timeout}s")
	[ "$QEMU_RC" -ne 0 ] && [ "$QEMU_RC" -ne 124 ] &&
		GUEST_PROBLEMS+=("${name}qemu exited with $QEMU_RC: $(head -c 300 "$logdir/qemu.err" 2>/dev/null)")
	awk -v d="$done_line" 'index($0, d) == 1 { found = 1; exit } END { exit !found }' "$out" 2>/dev/null ||
		GUEST_PROBLEMS+=("${name}the guest did not finish (no '$done_line'; crash or hang, see $klog)")
	if grep -Eq "$KERNEL_SPLAT_RE" "$klog" 2>/dev/null; then
		GUEST_PROBLEMS+=("${name}kernel splat in $klog")
		grep -E -m5 "$KERNEL_SPLAT_RE" "$klog" >&2
	fi
	read -r GUEST_PASSED GUEST_FAILED GUEST_SKIPPED < <(tap_counts "" < "$out")
}
