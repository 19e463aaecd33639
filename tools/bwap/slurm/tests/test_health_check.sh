#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bwap-health-check against this host's real bwapd in a /tmp state dir and
# fakes of Slurm's scontrol and sinfo, as TAP:
#  - what fails --bwap jobs gives exit 1 and one line naming it and what to
#    do: a bad bwap.so argument, a bad VALUE (default=big:5:300, parsed by
#    bwap.so's own code), no matrix with missing=fail, a matrix that gives
#    no weights, bwapd not answering on a stock kernel;
#  - what only degrades BWAP (missing=run) is said, exit 0, never drained;
#  - --drain drains Slurm's name for the node (SLURMD_NODENAME, or the node
#    whose NodeHostName is this host), leaves someone else's drain alone,
#    and undrains a node it drained once the node is healthy;
#  - bwapd is asked "ping", never root's full status (a bwapctl that
#    refuses status changes nothing);
#  - configless Slurm: the bwap.so line is found in slurmd's copy of the
#    configuration (/run/slurm/conf), through plugstack.conf's include.
here=$(cd "$(dirname "$0")" && pwd)
CHECK=${HEALTH_CHECK:-$here/../bwap-health-check}
BWAPD=${BWAPD:-$here/../../bwapd}
# bwap-slurm-check, built here if make check did not (../Makefile runs this script too)
[ -x "$here/../bwap-slurm-check" ] || make -s -C "$here/.." bwap-slurm-check >/dev/null 2>&1
export BWAP_SLURM_CHECK=${BWAP_SLURM_CHECK:-$here/../bwap-slurm-check}
tmp=$(mktemp -d /tmp/bwap-test-health.XXXXXX)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
n=0 failed=0

# Slurm's commands, faked: scontrol records what it is asked; sinfo prints $tmp/sinfo.out
mkdir -p "$tmp/bin"
cat > "$tmp/bin/scontrol" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/scontrol.log"
[ "\$1 \$2 \$3" = "-o show node" ] && cat "$tmp/nodes.out" 2>/dev/null
exit 0
EOF
printf '#!/bin/sh\ncat "%s/sinfo.out" 2>/dev/null\n' "$tmp" > "$tmp/bin/sinfo"
# a bwapctl that refuses root's status: the check must not need it
printf '#!/bin/sh\necho "$*" >> "%s/bwapctl.log"\nexit 1\n' "$tmp" > "$tmp/bin/bwapctl"
chmod +x "$tmp/bin/scontrol" "$tmp/bin/sinfo" "$tmp/bin/bwapctl"
export SCONTROL=$tmp/bin/scontrol SINFO=$tmp/bin/sinfo BWAPCTL=$tmp/bin/bwapctl
export SLURMD_NODENAME=cn042
# no node's configuration of this host is read unless a case says so
export BWAP_SLURM_CONF_DIRS=$tmp/none
unset SLURM_CONF

ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
# health RC MESSAGE [ARGS...]: the check exits RC and prints MESSAGE (fixed string; "" = nothing at all)
health() {
	want_rc=$1 want=$2
	shift 2
	: > "$tmp/scontrol.log"
	out=$("$CHECK" "$@" 2>&1)
	rc=$?
	if [ -z "$want" ]; then [ "$rc" = "$want_rc" ] && [ -z "$out" ]; else
		[ "$rc" = "$want_rc" ] && printf '%s' "$out" | grep -qF -- "$want"; fi
	ok $? "$(printf "exit %s, '%s' (got %s: %s)" "$want_rc" "$want" "$rc" "$out" | sed "s|$tmp|TMP|g")"
}
# drained RC WHAT DESCRIPTION: scontrol was (RC 0) or was not (1) asked WHAT (fixed string)
asked() {
	grep -qF -- "$2" "$tmp/scontrol.log"
	r=$?
	[ "$1" = 0 ] || r=$((1 - r))
	ok $r "$3 (scontrol: $(tr '\n' '|' < "$tmp/scontrol.log" | sed "s|$tmp|TMP|g"))"
}
conf="$tmp/bwap.conf"

printf '# bwap.so\n\nrequired /usr/lib/x/slurm-wlm/bwap.so missing=maybe\n' > "$conf"
health 1 "$conf:3: 'missing=maybe': missing= takes fail or run (--bwap jobs fail here)" --conf "$conf"
printf 'required /usr/lib/x/slurm-wlm/bwap.so state_dir=%s default=big:5:300\n' "$tmp" > "$conf"
health 1 "$conf:1: 'default=big:5:300': weight '300' for node 5 in '5:300' is above 255" \
	--conf "$conf"

# missing=run: --bwap jobs run without BWAP; said, never drained
printf 'required /usr/lib/x/slurm-wlm/bwap.so missing=run state_dir=%s report=stderr\n' "$tmp" > "$conf"
health 0 "no bandwidth matrix at $tmp/matrix (--bwap jobs run without BWAP here: missing=run)" --conf "$conf" --drain
asked 1 "state=drain" "missing=run without a matrix: the node is not drained"

# missing=fail: drained, under Slurm's name for the node
printf 'required /usr/lib/x/slurm-wlm/bwap.so missing=fail state_dir=%s\n' "$tmp" > "$conf"
echo 'idle|none' > "$tmp/sinfo.out"
health 1 "no bandwidth matrix at $tmp/matrix (--bwap jobs fail here); save one with 'bwapctl measure'" \
	--conf "$conf" --drain
asked 0 "update nodename=cn042 state=drain reason=bwap: no bandwidth matrix at $tmp/matrix (--bwap jobs fail here)" \
	"missing=fail without a matrix: SLURMD_NODENAME cn042 drained with the reason"
# Slurm's HealthCheckProgram takes no arguments: the -drain name drains
ln -s "$CHECK" "$tmp/bin/bwap-health-check-drain"
: > "$tmp/scontrol.log"
"$tmp/bin/bwap-health-check-drain" --conf "$conf" > /dev/null 2>&1
asked 0 "update nodename=cn042 state=drain" "bwap-health-check-drain (HealthCheckProgram, no arguments) drains as --drain does"
echo 'drained|maintenance' > "$tmp/sinfo.out"
health 1 "no bandwidth matrix" --conf "$conf" --drain
asked 1 "state=drain" "a node someone else drained (maintenance) keeps their reason"
(
	unset SLURMD_NODENAME
	echo 'idle|none' > "$tmp/sinfo.out"
	printf 'NodeName=cn007 Arch=x86_64 NodeAddr=10.0.0.7 NodeHostName=%s Version=24.11\n' "$(hostname -s)" \
		> "$tmp/nodes.out"
	: > "$tmp/scontrol.log"
	"$CHECK" --conf "$conf" --drain > /dev/null 2>&1
	grep -qF "update nodename=cn007 state=drain" "$tmp/scontrol.log"
)
ok $? "without SLURMD_NODENAME: the node whose NodeHostName is $(hostname -s), cn007, is drained"

printf 'bwap-matrix 1\nnodes 1\nbw 0: -5\n' > "$tmp/matrix"
health 1 "$tmp/matrix gives no weights" --conf "$conf"
printf 'bwap-matrix 1\nnodes 1\nbw 0: 10000\n' > "$tmp/matrix"
case "$("$here/../../bwapctl" topology 2>/dev/null | sed -n 's/^kernel: //p')" in
"BWAP series"*) echo "ok $((n + 1)) - # SKIP bwapd is needed only for --bwap-tune on the BWAP series"; n=$((n + 1)) ;;
*) health 1 "bwapd does not answer ping on $tmp/bwapd.sock within 2000 ms" --conf "$conf" ;;
esac

: > "$tmp/bwapd.conf"
mkfifo "$tmp/ready"
"$BWAPD" --config "$tmp/bwapd.conf" --state-dir "$tmp" --ready-fd 3 3> "$tmp/ready" 2> "$tmp/bwapd.log" &
pid=$!
read -r ready < "$tmp/ready"
ok "$([ "$ready" = ready ]; echo $?)" "bwapd is ready in TMP"
health 0 "" --conf "$conf"
ok "$(! grep -q status "$tmp/bwapctl.log" 2>/dev/null; echo $?)" "bwapd was asked ping, not status (bwapctl: $(cat "$tmp/bwapctl.log" 2>/dev/null))"
echo 'drained|bwap: no bandwidth matrix at /var/lib/bwap/matrix (--bwap jobs fail here)' > "$tmp/sinfo.out"
health 0 "bwap: cn042 undrained" --conf "$conf" --drain
asked 0 "update nodename=cn042 state=undrain" "healthy again: the node this check drained is undrained"
echo 'drained|maintenance' > "$tmp/sinfo.out"
health 0 "" --conf "$conf" --drain
asked 1 "state=undrain" "healthy, drained by someone else: left drained"

# configless Slurm: no /etc/slurm/slurm.conf; slurmd's copy in /run/slurm/conf, includes by base name
mkdir -p "$tmp/etc" "$tmp/run"
echo 'ClusterName=c' > "$tmp/run/slurm.conf"
echo 'include /etc/slurm/plugstack.conf.d/*.conf' > "$tmp/run/plugstack.conf"
printf 'required /usr/lib/x/slurm-wlm/bwap.so missing=fail state_dir=%s max_weight=0\n' "$tmp" > "$tmp/run/bwap.conf"
BWAP_SLURM_CONF_DIRS="$tmp/etc $tmp/run" health 1 \
	"$tmp/run/bwap.conf:1: 'max_weight=0': max_weight= takes a whole number from 1 to 255"
echo "1..$n"
[ "$failed" -eq 0 ]
