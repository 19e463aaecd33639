#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest/guest-lib.sh under busybox sh, the guests' shell, as TAP: a helper
# still answers when a SIGCHLD arrives while the test waits for it (the
# race that failed a cold CI run: "can't open /tmp/ready: Interrupted
# system call"), a helper that dies is reported with its exit status and
# stderr, and checks after a failed prerequisite are not run but counted
# as failed.  Needs busybox (Debian's busybox-static or busybox); no root.
here=$(cd "$(dirname "$0")" && pwd)
BUSYBOX=${BUSYBOX:-$(command -v busybox)}
tmp=$(mktemp -d /tmp/bwap-test-guest-lib.XXXXXX)
export tmp
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

if [ -z "$BUSYBOX" ]; then
	ok 1 "busybox is installed (apt-get install busybox-static)"
	echo "1..$n"
	exit 1
fi

# guest SCRIPT: run SCRIPT under busybox sh with the library sourced; the
# helpers' FIFOs go to $tmp, as the guests' go to /tmp
guest() {
	sed "s|/tmp/|$tmp/|g" "$here/../guest/guest-lib.sh" > "$tmp/lib.sh"
	printf '. %s/lib.sh\n%s\n' "$tmp" "$1" > "$tmp/script.sh"
	out=$("$BUSYBOX" sh "$tmp/script.sh" 2>&1)
}

# The old way, kept to show the race is real on this busybox: a blocking
# FIFO open that a SIGCHLD interrupts.  The child exits once this shell
# is blocked in the open (wchan wait_for_partner; after 5 s if this
# kernel's wchan names no function); nothing writes before 20 s.
guest 'rm -f $tmp/f; mkfifo $tmp/f
me=$$
( i=0; until grep -q wait_for_partner /proc/$me/wchan || [ $i = 500 ]; do i=$((i + 1)); sleep 0.01; done ) > /dev/null 2>&1 &
( sleep 20; echo late 1<> $tmp/f ) > /dev/null 2>&1 &
read -r line < $tmp/f
echo "line=[$line]"'
echo "$out" | sed 's/^/# old way: /'
echo "$out" | grep -q "can't open .*: Interrupted system call"
ok $? "a blocking FIFO open in busybox sh fails on a SIGCHLD (the race guest-lib.sh avoids)"

# The same SIGCHLD while receive waits: the child exits once this shell
# sleeps in the read's poll(); the helper answers once that child is a
# zombie, so the signal has come by then.
guest 'me=$$
( i=0; until grep -q poll /proc/$me/wchan || [ $i = 500 ]; do i=$((i + 1)); sleep 0.01; done ) > /dev/null 2>&1 &
a=$!
spawn h 4 5 sh -c "while ! grep -q \"^State:.*Z\" /proc/$a/status 2>/dev/null && [ -d /proc/$a ]; do sleep 0.01; done; echo ready 42"
receive h 5
echo "rc=$? reply=[$reply]"'
[ "$out" = "rc=0 reply=[ready 42]" ]
ok $? "spawn/receive: the answer arrives although a SIGCHLD came while waiting ($out)"

guest 'spawn h 4 5 sh -c "read x; echo got \$x; read y; echo eof"
ask h 4 5 hello
echo "ask=[$reply]"
exec 4>&-
read -r a <&5; read -r b <&5
echo "after=[$a][$b]"'
[ "$out" = "ask=[got hello]
after=[eof][exited 0]" ]
ok $? "ask gets the answer; closing its stdin gives the helper EOF; 'exited 0' follows its output ($(echo $out))"

guest 'spawn d 6 7 sh -c "echo cannot start >&2; exit 7"
receive d 7
echo "rc=$? reply=[$reply]"'
echo "$out" | grep -q '^# d exited 7 before it answered; its stderr:$' &&
	echo "$out" | grep -q '^#   cannot start$' && echo "$out" | grep -q '^rc=1 reply=\[exited 7\]$'
ok $? "a helper that dies at once: receive fails, with its status and stderr"

guest 'S='"$tmp"'/state LOG='"$tmp"'/bwapd.log TOPO=none
mkdir -p $S
bwapd() { echo "bwapd: cannot read the matrix" >&2; return 2; }
start_bwapd
echo "start=$? pid=[$bwapd_pid]"'
echo "$out" | grep -q '^# bwapd did not start (exited 2); the end of' &&
	echo "$out" | grep -q 'cannot read the matrix' && echo "$out" | grep -q '^start=1 pid=\[\]$'
ok $? "start_bwapd: a bwapd that exits before it is ready is reported, with no pid"

guest 'spawn d 6 7 sh -c "exit 1"
receive d 7
need $? "helper ready"
run_show echo ran
ask d 6 7 x
ok 0 "a check after the step"
section "next"
ok 0 "an independent check"
echo "n=$n failed=$failed"'
echo "$out" | grep -q "^not ok 1 - helper ready$" &&
	echo "$out" | grep -q "^not ok 2 - a check after the step (not run: 'helper ready' failed)$" &&
	echo "$out" | grep -q '^ok 3 - an independent check$' &&
	echo "$out" | grep -q '^n=3 failed=2$' && ! echo "$out" | grep -q ran
ok $? "need: later checks of the section are not run and count as failed; a new section runs"

echo "1..$n"
[ $failed -eq 0 ]
