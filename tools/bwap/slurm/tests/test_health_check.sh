#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bwap-health-check against this host's real bwapctl and bwapd in a /tmp
# state dir, as TAP: each broken part gives exit 1 and one line naming it
# and what to do; a healthy node gives exit 0 and says nothing.  (--drain
# needs Slurm's scontrol: scripts/test-slurm.)
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../bwap-health-check
BWAPD=${BWAPD:-$here/../../bwapd}
export BWAPCTL=${BWAPCTL:-$here/../../bwapctl}
tmp=$(mktemp -d /tmp/bwap-test-health.XXXXXX)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
n=0 failed=0

ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
# health RC MESSAGE: the check exits RC and prints MESSAGE (fixed string; "" = nothing at all)
health() {
	out=$("$CHECK" --conf "$tmp/bwap.conf" 2>&1)
	rc=$?
	if [ -z "$2" ]; then [ "$rc" = "$1" ] && [ -z "$out" ]; else
		[ "$rc" = "$1" ] && printf '%s' "$out" | grep -qF -- "$2"; fi
	ok $? "$(printf "exit %s, '%s' (got %s: %s)" "$1" "$2" "$rc" "$out" | sed "s|$tmp|TMP|g")"
}

printf '# bwap.so\n\nrequired /usr/lib/x/slurm-wlm/bwap.so missing=maybe\n' > "$tmp/bwap.conf"
health 1 "$tmp/bwap.conf:3: bwap.so argument 'missing=maybe' is not one it takes"
printf 'required /usr/lib/x/slurm-wlm/bwap.so missing=run state_dir=%s report=stderr\n' "$tmp" > "$tmp/bwap.conf"
health 1 "no bandwidth matrix at $tmp/matrix (--bwap jobs fail here); save one with 'bwapctl measure'"
printf 'bwap-matrix 1\nnodes 1\nbw 0: -5\n' > "$tmp/matrix"
health 1 "$tmp/matrix gives no weights"
printf 'bwap-matrix 1\nnodes 1\nbw 0: 10000\n' > "$tmp/matrix"
case "$("$BWAPCTL" topology 2>/dev/null | sed -n 's/^kernel: //p')" in
"BWAP series"*) echo "ok $((n + 1)) - # SKIP bwapd is needed only for --bwap-tune on the BWAP series"; n=$((n + 1)) ;;
*) health 1 "bwapd does not answer on $tmp/bwapd.sock within 5 s" ;;
esac
: > "$tmp/bwapd.conf"
mkfifo "$tmp/ready"
"$BWAPD" --config "$tmp/bwapd.conf" --state-dir "$tmp" --ready-fd 3 3> "$tmp/ready" 2> "$tmp/bwapd.log" &
pid=$!
read -r ready < "$tmp/ready"
ok "$([ "$ready" = ready ]; echo $?)" "bwapd is ready in TMP"
health 0 ""
echo "1..$n"
[ "$failed" -eq 0 ]
