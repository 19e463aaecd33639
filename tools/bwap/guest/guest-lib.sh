# SPDX-License-Identifier: GPL-2.0
# Shell helpers of the busybox-sh guest tests, sourced from
# /bwap/lib/guest-lib.sh (the scripts/test-* runners copy it there).
#
# TAP checks, and how the tests talk to the helper processes they start.
#
# Helpers answer on FIFOs.  Two rules keep that free of races:
#  - A FIFO is opened read-write by this shell.  Opening one end of a FIFO
#    read-only or write-only blocks until the other end is opened, and
#    busybox sh gives up on an open() that a signal interrupts (SIGCHLD
#    from any background job does: "can't open /tmp/ready: Interrupted
#    system call").  A read-write open never blocks.
#  - A helper runs under a wrapper that writes "exited RC" on its output
#    FIFO when it ends.  This shell holds a write end of that FIFO, so it
#    would never see EOF; the line is how a read learns that the helper
#    died, instead of waiting forever or going on with empty values.

# A helper that dies with its FIFO unread must fail a check, not kill the test.
trap '' PIPE
n=0
failed=0
# The description of the failed check the rest of the section needs, or
# empty.  While it is set, checks are not run but reported as failed.
blocked=

# ok RC DESCRIPTION: one TAP check, passed when RC is 0
ok() {
	n=$((n + 1))
	if [ -n "$blocked" ]; then
		echo "not ok $n - $2 (not run: '$blocked' failed)"
		failed=$((failed + 1))
		return 1
	fi
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
		return 0
	fi
	echo "not ok $n - $2"
	failed=$((failed + 1))
	return 1
}

# need RC DESCRIPTION: a check the rest of the section depends on; when it
# fails, the section's later checks say so instead of failing on their own
need() {
	ok "$@" && return 0
	[ -n "$blocked" ] || blocked=$2
	return 1
}

# section TITLE: a new group of checks, independent of earlier failures
section() {
	blocked=
	echo "# ---- $1"
}

# run_show CMD...: run CMD (not while blocked), print it and its output as
# comments; sets $out and $rc
run_show() {
	if [ -n "$blocked" ]; then
		out= rc=1
		return 1
	fi
	echo "# \$ $*"
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	return $rc
}

vmstat_moved() { grep '^mpol_rebalance_moved ' /proc/vmstat | cut -d' ' -f2; }

# spawn NAME IN OUT CMD...: run CMD in the background, its stdin the FIFO
# /tmp/NAME.in (this shell writes to it on fd IN), its stdout /tmp/NAME.out
# (read on fd OUT), its stderr /tmp/NAME.err.  When CMD ends, "exited RC"
# follows its output.  Sets spawn_job to the wrapper's pid.
spawn() {
	sp_name=$1 sp_in=$2 sp_out=$3
	shift 3
	rm -f /tmp/$sp_name.in /tmp/$sp_name.out
	mkfifo /tmp/$sp_name.in /tmp/$sp_name.out
	eval "exec $sp_in<>/tmp/$sp_name.in $sp_out<>/tmp/$sp_name.out"
	# The wrapper opens its ends once, by name (no open blocks: this
	# shell holds both FIFOs), so its "exited" line reaches this FIFO even
	# if a later spawn of NAME has made new ones.  It keeps none of this
	# shell's fds, so CMD sees EOF on its stdin once this shell hangs up.
	{
		"$@" < /tmp/$sp_name.in 2> /tmp/$sp_name.err
		# EPIPE if this shell has hung up: nobody needs the line then
		echo "exited $?" 2> /dev/null
	} > /tmp/$sp_name.out 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	spawn_job=$!
}

# receive NAME OUT: read the next line of helper NAME from fd OUT into
# $reply; fails, saying why, if the helper has exited instead
receive() {
	reply=
	[ -z "$blocked" ] || return 1
	read -r reply <&"$2"
	case "$reply" in
	exited\ *)
		echo "# $1 ${reply} before it answered; its stderr:"
		sed 's/^/#   /' /tmp/$1.err
		return 1 ;;
	esac
}

# ask NAME IN OUT REQUEST: send REQUEST to helper NAME, its answer in $reply
ask() {
	reply=
	[ -z "$blocked" ] || return 1
	echo "$4" >&"$2"
	receive "$1" "$3"
}

# tell IN LINE: send LINE to a helper that does not answer it ("quit"),
# blocked or not; the FIFO is this shell's, so the write cannot block
tell() {
	echo "$2" >&"$1"
}

# hang_up IN OUT: close this shell's ends of a helper's FIFOs
hang_up() {
	eval "exec $1>&- $2>&-"
}

# start_bwapd ARGS...: start bwapd (state dir $S, matrix $TOPO, stderr
# appended to $LOG) and return once it listens; sets bwapd_pid.  Its
# ready line and, later, its wrapper's "exited RC" come on fd 3.
start_bwapd() {
	bwapd_pid=
	[ -z "$blocked" ] || return 1
	rm -f /tmp/ready
	mkfifo /tmp/ready
	exec 3<>/tmp/ready
	{
		bwapd --state-dir $S --matrix $TOPO --signal model --ready-fd 3 "$@" 2>>$LOG
		echo "exited $?" >&3 2> /dev/null
	} 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	bwapd_job=$!
	read -r line <&3
	if [ "$line" != ready ]; then
		echo "# bwapd did not start (${line:-no answer}); the end of $LOG:"
		tail -n 5 $LOG | sed 's/^/#   /'
		return 1
	fi
	bwapd_pid=$(cat $S/bwapd.pid)
}

# stop_bwapd SIGNAL: send SIGNAL to bwapd and wait for it to end; returns
# its exit status
stop_bwapd() {
	[ -n "$bwapd_pid" ] || return 1
	kill -"$1" "$bwapd_pid"
	read -r word bwapd_rc <&3
	wait "$bwapd_job"
	exec 3>&-
	bwapd_pid=
	return "$bwapd_rc"
}
