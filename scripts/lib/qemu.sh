# SPDX-License-Identifier: GPL-2.0
# The QEMU machine every guest runs on, and reading its results: shared by
# run-vm (busybox initramfs guests) and test-distro (the Debian image).
# Sourced after common.sh and topology.sh, never run.

# qemu_machine TOPO_FILE KERNEL CMDLINE LOGDIR: sets QEMU_CMD (array) to a
# TCG machine shaped like the topology, booting KERNEL with CMDLINE.  The
# kernel log (ttyS0) goes to LOGDIR/kernel.log; the guest's second serial
# port (ttyS1) is QEMU's stdout, where the guest writes its results.
# Callers append their disks or initramfs.
qemu_machine() {
	local topo=$1 kernel=$2 cmdline=$3 logdir=$4
	topology_qemu_args "$topo"
	QEMU_CMD=(qemu-system-x86_64 -accel tcg -cpu max "${TOPO_QEMU_ARGS[@]}"
		-kernel "$kernel" -append "$cmdline"
		-nodefaults -display none -no-reboot
		-serial "file:$logdir/kernel.log"
		-chardev stdio,id=guestout,signal=off -serial chardev:guestout)
}

# qemu_run TIMEOUT QUIET LOGDIR: run QEMU_CMD, its ttyS1 output (CRs
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

# Kernel log lines that fail a run: WARN/BUG/oops, lockdep, KASAN, stalls.
KERNEL_SPLAT_RE='WARNING:|BUG:|Oops|Kernel panic|kernel BUG|general protection fault|KASAN:|UBSAN:|KFENCE:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|rcu_.*stall|Call Trace:'

# tap_counts INDENT < FILE: "passed failed skipped" over the TAP result
# lines that start at INDENT.
tap_counts() {
	awk -v ind="$1" '
		$0 ~ "^" ind "not ok [0-9]+" { f++; next }
		$0 ~ "^" ind "ok [0-9]+.*# SKIP" { s++; next }
		$0 ~ "^" ind "ok [0-9]+" { p++ }
		END { print p + 0, f + 0, s + 0 }'
}
