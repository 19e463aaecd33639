#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A step's tasks registering with this host's real bwapd at once, through
# task.c as bwap.so's task_init does (portable mode), as TAP: 128 tasks
# alone, then 128 tasks while bwapd attaches and pushes a 1 GiB target.
# Each must be answered within the plugin's 5 s (or with missing=fail the
# task fails), and beside the push within 1 s: a push must not hold the
# socket (the task's own work is some 0.1-0.3 s of that).  make check runs
# it with a 256 MiB target (STORM_BIG_MIB); 'make storm' with 1 GiB.  With
# a bwapd that pushed in the loop serving its socket, the second case
# failed: every task waited out the push.
here=$(cd "$(dirname "$0")" && pwd)
BWAPD=${BWAPD:-$here/../../bwapd}
[ -x "$here/attach_storm" ] || make -s -C "$here/.." tests/attach_storm >/dev/null 2>&1
tmp=$(mktemp -d /tmp/bwap-test-storm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
mkdir "$tmp/alone" "$tmp/big"
"$here/attach_storm" "$BWAPD" "$tmp/alone" 128 | sed 's/^1\.\.1$//; /^$/d' || rc=1
"$here/attach_storm" "$BWAPD" "$tmp/big" 128 "${STORM_BIG_MIB:-256}" 1000 | sed 's/^ok 1 /ok 2 /; s/^not ok 1 /not ok 2 /; s/^1\.\.1$//; /^$/d' || rc=1
echo "1..2"
exit $rc
