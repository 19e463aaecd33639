#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bwapd.service as systemd rates it, as TAP: the unit, with its @...@ paths
# filled in as 'make install' does, must score at most 3.0 in
# 'systemd-analyze security --offline', keep the few capabilities bwapd's
# job needs and no others, and say why each stays.  Skips without
# systemd-analyze (252 or later has --offline).
here=$(cd "$(dirname "$0")" && pwd)
unit=${BWAPD_UNIT:-$here/../daemon/bwapd.service}
tmp=$(mktemp -d /tmp/bwap-test-unit.XXXXXX)
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

if ! systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	echo "ok 1 - # SKIP systemd-analyze security --offline is not on this machine"
	echo "1..1"
	exit 0
fi
sed 's#@SBINDIR@#/usr/sbin#g; s#@SYSCONFDIR@#/etc#g; s#@LOCALSTATEDIR@#/var#g' "$unit" > "$tmp/bwapd.service"
out=$(systemd-analyze security --offline=true "$tmp/bwapd.service" 2>&1)
score=$(echo "$out" | sed -n 's/.*Overall exposure level for bwapd.service: \([0-9.]*\).*/\1/p')
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }'
ok $? "systemd-analyze security rates bwapd.service ${score:-?} (at most 3.0)"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
[ "$caps" = "CAP_SYS_NICE CAP_SYS_PTRACE CAP_PERFMON CAP_DAC_READ_SEARCH" ]
ok $? "the unit keeps only CAP_SYS_NICE CAP_SYS_PTRACE CAP_PERFMON CAP_DAC_READ_SEARCH ($caps)"
missing=
for cap in CAP_SYS_PTRACE CAP_SYS_NICE CAP_PERFMON CAP_DAC_READ_SEARCH; do
	grep -q "^# .*$cap:" "$unit" || missing="$missing $cap"
done
[ -z "$missing" ]
ok $? "a comment says why each capability stays (missing:${missing:- none})"
grep -q '^LimitNOFILE=' "$unit" && grep -q '^UMask=0077' "$unit"
ok $? "a descriptor limit (LimitNOFILE) and UMask=0077"
echo "1..$n"
[ $failed = 0 ]
