#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Bad input to bwapctl and bwapd, as TAP: each case must exit with the
# given status, print the given message, and leave nothing half-written.
# Runs the binaries next to this folder (or $BWAPCTL, $BWAPD); needs no
# root and no BWAP kernel.
here=$(cd "$(dirname "$0")" && pwd)
BWAPCTL=${BWAPCTL:-$here/../bwapctl}
BWAPD=${BWAPD:-$here/../bwapd}
tmp=$(mktemp -d /tmp/bwap-test-cli.XXXXXX)
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

# expect RC MESSAGE CMD...: CMD exits RC and its stderr contains MESSAGE (fixed string)
expect() {
	want_rc=$1 want_msg=$2
	shift 2
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = "$want_rc" ] && { [ -z "$want_msg" ] || printf '%s' "$out" | grep -qF -- "$want_msg"; }
	ok $? "exit $want_rc, '$want_msg': $(echo "$*" | sed "s|$BWAPCTL|bwapctl|; s|$BWAPD|bwapd|; s|$tmp|TMP|g") (got $rc: $out)"
}

matrix_with() {	# a 2-node matrix file whose bw 1 row holds $1
	printf 'bwap-matrix 1\nnodes 2\nbw 0: 20 10\nbw 1: %s 20\n' "$1" > "$tmp/m-$2"
	echo "$tmp/m-$2"
}

# ---- numbers in matrices ---------------------------------------------------
expect 1 "line 4: 'inf' is not a finite number" "$BWAPCTL" weights --workers 0,1 --matrix "$(matrix_with inf inf)"
expect 1 "line 4: 'nan' is not a finite number" "$BWAPCTL" weights --workers 0,1 --matrix "$(matrix_with nan nan)"
expect 1 "line 4: '1e400' is not a finite number" "$BWAPCTL" weights --workers 0,1 --matrix "$(matrix_with 1e400 big)"
expect 1 "Is a directory" "$BWAPCTL" weights --workers 0 --matrix "$tmp"

# ---- numbers and lists on the command line ---------------------------------
expect 2 "--capacities '1,,2': item 2 is empty" "$BWAPCTL" weights --capacities 1,,2
expect 2 "--capacities '1,2,': item 3 is empty" "$BWAPCTL" weights --capacities 1,2,
expect 2 "--capacities (node 0) 'nan' is not a finite number" "$BWAPCTL" weights --capacities nan,1
expect 2 "--mlp 'nan' is not a finite number" "$BWAPCTL" model --mlp nan
expect 2 "--dwp 'inf' is not a finite number" "$BWAPCTL" weights --capacities 1,2 --dwp inf
expect 2 "--dwp 1.5 is above 1" "$BWAPCTL" weights --capacities 1,2 --dwp=1.5
expect 2 "--max-weight '2.5' is not a whole number" "$BWAPCTL" weights --capacities 1,2 --max-weight 2.5
expect 2 "--max-weight 300 is above 255" "$BWAPCTL" weights --capacities 1,2 --max-weight 300
expect 2 "--nodes: node number in '99999999999999999999' is far above the highest supported node 63" \
	"$BWAPCTL" weights --capacities 1,2 --nodes 99999999999999999999
expect 2 "--workers: node set '0,' ends in a comma" "$BWAPCTL" weights --capacities 1,2 --workers 0,
expect 2 "option --workers given twice" "$BWAPCTL" weights --workers 0 --workers 1 --capacities 1,2
expect 2 "option --workers needs a value" "$BWAPCTL" run --workers
expect 2 "unknown option '--frob'" "$BWAPCTL" status --frob
expect 2 "PID '12x' is not a whole number" "$BWAPCTL" attach 12x
expect 2 "--threads '1.5' is not a whole number" "$BWAPCTL" measure --workers 0 --threads 1.5
expect 0 "" "$BWAPCTL" weights --capacities=4,2 --max-weight=10

# ---- state: checked first, written whole -----------------------------------
start=$(date +%s)
expect 1 "cannot create state directory /proc/bwap-no" "$BWAPCTL" measure --workers 0 --state-dir /proc/bwap-no/x
[ $(( $(date +%s) - start )) -le 2 ]
ok $? "an unusable state dir is refused before measuring"
mkdir "$tmp/full"
# a file size limit of 0 blocks: every write fails as on a full disk (EFBIG)
out=$(sh -c "trap '' XFSZ; ulimit -f 0; exec '$BWAPCTL' measure --workers 0 --seconds 0.01 --size 1 --rounds 1 --state-dir '$tmp/full'" 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && printf '%s' "$out" | grep -q "cannot write $tmp/full/.*: File too large"
ok $? "measure on a full disk: exit 1 and errno's text (got $rc: $out)"
[ -z "$(find "$tmp/full" -type f)" ]
ok $? "measure on a full disk leaves no file, empty or partial ($(find "$tmp/full" -type f -printf '%s bytes %p; '))"

# ---- the global sysfs table: all or nothing ---------------------------------
mkdir "$tmp/wi"
for i in 0 1 2; do echo $((i + 5)) > "$tmp/wi/node$i"; done
ln -s /dev/full "$tmp/wi/node2" 2>/dev/null || { rm "$tmp/wi/node2"; ln -s /dev/full "$tmp/wi/node2"; }
BWAP_SYSFS_WEIGHTS=$tmp/wi expect 1 "No space left on device; nothing was changed (the nodes written before it were rolled back)" \
	"$BWAPCTL" weights --capacities 4,2,1 --apply-sysfs --state-dir "$tmp/st"
[ "$(cat "$tmp/wi/node0") $(cat "$tmp/wi/node1")" = "5 6" ]
ok $? "--apply-sysfs failing on node 2 leaves nodes 0 and 1 at 5 and 6 ($(cat "$tmp/wi/node0") $(cat "$tmp/wi/node1"))"

# ---- bwapd's command line -----------------------------------------------------
expect 2 "config $tmp is not a regular file (a directory)" "$BWAPD" -c "$tmp"
expect 2 "--matrix given twice" "$BWAPD" --matrix a --matrix=b
expect 2 "--set needs KEY=VALUE" "$BWAPD" --set samples
expect 2 "--ready-fd '3x' is not an open file descriptor" "$BWAPD" --ready-fd 3x
expect 0 "" "$BWAPD" --version
expect 0 "" "$BWAPCTL" --version

echo "1..$n"
[ $failed = 0 ]
