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
# the DAMON backend's permission to write the global table: off unless yes
expect 2 "write_global_weights = 'maybe': expected yes or no" "$BWAPD" --set write_global_weights=maybe
printf 'write_global_weights = yes\n' > "$tmp/wgw.conf"
out=$("$BWAPD" -c "$tmp/wgw.conf" --check-config 2>&1)
echo "$out" | grep -qx 'write_global_weights = yes'
ok $? "bwapd.conf write_global_weights = yes is taken ($(echo "$out" | grep write_global))"
: > "$tmp/empty.conf"
out=$("$BWAPD" -c "$tmp/empty.conf" --check-config 2>&1)
echo "$out" | grep -qx 'write_global_weights = no'
ok $? "write_global_weights is no by default ($(echo "$out" | grep write_global))"
grep -qx 'write_global_weights = no' "$here/../daemon/bwapd.conf"
ok $? "the example bwapd.conf shows write_global_weights = no"
# ---- stall events by name, under libpfm's forced PMUs -------------------------
signals() {	# signals PMU: bwapd --list-signals as if on that PMU
	out=$(LIBPFM_FORCE_PMU=$1 "$BWAPD" --list-signals 2>&1)
	echo "$out" | sed 's/^/# /'
}
signals skl
echo "$out" | grep -q '^PMU: skl (Intel Skylake), family Intel \[forced' &&
	echo "$out" | grep -q '^  CYCLE_ACTIVITY:STALLS_L3_MISS  *type 4 config 0x60006a3 config1 0  <- auto.s choice$'
ok $? "Intel Skylake: auto takes CYCLE_ACTIVITY:STALLS_L3_MISS, raw 0x60006a3 (event a3, umask 06, cmask 6)"
signals amd64_fam19h_zen4
echo "$out" | grep -q '^PMU: amd64_fam19h_zen4 .*family AMD ' &&
	echo "$out" | grep -q '^  DISPATCH_STALLS_1:BE_STALLS  *type 4 config 0x100001ea0 config1 0  <- auto.s choice$'
ok $? "AMD Zen 4: auto takes DISPATCH_STALLS_1:BE_STALLS, raw 0x100001ea0"
signals amd64_fam17h_zen2
echo "$out" | grep -q '^  DISPATCH_STALLS_1:BE_STALLS  *not on this PMU' &&
	echo "$out" | grep -q '^  DISPATCH_RESOURCE_STALL_CYCLES_1:LOAD_QUEUE_RSRC_STALL  *type 4 config 0x2ae config1 0  <- auto.s choice$'
ok $? "AMD Zen 2: no BE_STALLS, so DISPATCH_RESOURCE_STALL_CYCLES_1:LOAD_QUEUE_RSRC_STALL, raw 0x2ae"
signals arm_n1
echo "$out" | grep -q 'LIBPFM_FORCE_PMU=arm_n1 is not one it has' &&
	echo "$out" | grep -q '^signal = auto will use: MODELLED'
ok $? "Arm on an x86 libpfm: no such PMU here, and auto says it falls back to MODELLED"
expect 2 "perf_event = NO_SUCH_EVENT: libpfm4 cannot encode it" env LIBPFM_FORCE_PMU=skl "$BWAPD" --set perf_event=NO_SUCH_EVENT --list-signals

# ---- bwapctl search ----------------------------------------------------------
printf 'bwap-matrix 1\nnodes 1\nbw 0: 10000\n' > "$tmp/m1"
expect 2 "--better higher needs --metric" "$BWAPCTL" search --better higher -- true
expect 2 "--policies: unknown policy 'bwap'" "$BWAPCTL" search --policies interleave,bwap -- true
expect 2 "--budget 0 is below 1" "$BWAPCTL" search --budget 0 -- true
expect 2 "no command given" "$BWAPCTL" search --matrix "$tmp/m1"
expect 1 "no number matching --metric 'rate: ([0-9]+)'" "$BWAPCTL" search --matrix "$tmp/m1" \
	--state-dir "$tmp/s0" --metric 'rate: ([0-9]+)' -- echo no rate
# the command interrupts bwapctl search itself at its second point: what
# was measured (the baseline) stays in results.json, the cut point does not
"$BWAPCTL" search --matrix "$tmp/m1" --state-dir "$tmp/si" --budget all -- \
	sh -c '[ "$BWAP_SEARCH_POINT" = 0 ] || kill -INT $PPID' > "$tmp/si.out" 2> "$tmp/si.err"
rc=$?
[ $rc = 130 ] && grep -q '"runs":1,' "$tmp/si/search/results.json" &&
	grep -q '"interrupted":true' "$tmp/si/search/results.json" && grep -q 'INTERRUPTED' "$tmp/si.out" &&
	[ ! -e "$tmp/si/search/results.json.tmp" ]
ok $? "search: Ctrl-C at the second point exits 130 and keeps the baseline in results.json (rc $rc)"
"$BWAPCTL" search --matrix "$tmp/m1" --state-dir "$tmp/sm" --budget all --metric 'rate: ([0-9]+)' -- \
	sh -c 'echo rate: 1; echo rate: $((OMP_NUM_THREADS * 10))' > "$tmp/sm.out" 2>/dev/null
grep -q '^best: point [0-9]*, threads 0 x2 .*: 20 (2.000x\|: 20 (1.000x' "$tmp/sm.out"
ok $? "search: --metric takes the last match, higher is better: 2 threads score 20"
"$BWAPCTL" search --matrix "$tmp/m1" --state-dir "$tmp/sp" --budget all --phases -- \
	sh -c 'echo load >> "$BWAP_PHASE"; echo solve >> "$BWAP_PHASE"; echo load >> "$BWAP_PHASE"' > "$tmp/sp.out" 2>/dev/null
rc=$?
[ $rc = 0 ] && grep -q '^phase load: best point' "$tmp/sp.out" && grep -q '^phase solve: best point' "$tmp/sp.out" &&
	[ "$(cut -d' ' -f1 "$tmp/sp/search/phase-weights" | tr '\n' ' ')" = "load solve " ] &&
	grep -q '"phase_seconds":{' "$tmp/sp/search/results.json"
ok $? "search --phases: both phases scored, phase-weights lists load and solve (rc $rc)"

# ---- bench: numbers, and a real run on this machine ------------------------
expect 2 "--repeats 0 is below 1" "$BWAPCTL" bench --repeats 0
expect 2 "--repeats '2.5' is not a whole number" "$BWAPCTL" bench --repeats 2.5
expect 2 "--size 'inf' is not a finite number" "$BWAPCTL" bench --size inf
expect 2 "--size -4 is below 0.0625" "$BWAPCTL" bench --size -4
expect 2 "--dwp-step 0 is below 0.05" "$BWAPCTL" bench --dwp-step 0
expect 2 "--probe-seconds 'nan' is not a finite number" "$BWAPCTL" bench --probe-seconds nan
expect 2 "--threads 0 is below 1" "$BWAPCTL" bench --threads 0
expect 2 "--model-threads 0 is below 1" "$BWAPCTL" bench --model-threads 0
expect 2 "--model-threads 'inf' is not a whole number" "$BWAPCTL" bench --model-threads inf
expect 2 "--workers: empty node set" "$BWAPCTL" bench --workers ""
expect 1 "have no CPUs" "$BWAPCTL" bench --workers 63
expect 2 "name it FILE.png or FILE.svg" "$BWAPCTL" bench -o "$tmp/b.jpg"
expect 2 "option --repeats given twice" "$BWAPCTL" bench --repeats 1 --repeats 2
"$BWAPCTL" bench --size 1 --repeats 3 --probe-seconds 0.01 --quiet --state-dir "$tmp/bs" \
	--save "$tmp/bench.json" -o "$tmp/bench.svg" > "$tmp/bench.out" 2>&1
rc=$?
rows=$(awk '$3 ~ /^(copy|scale|add|triad|sum)$/ && $4 + 0 > 0 && ($8 == "EMULATED" || $8 == "measured")' "$tmp/bench.out" | wc -l)
[ $rc = 0 ] && [ "$rows" -ge 25 ] && grep -q '^# first-touch: .* (verified)$' "$tmp/bench.out" &&
	grep -q '"bwapctl": "bench"' "$tmp/bench.json" && grep -q '^<svg' "$tmp/bench.svg"
ok $? "bench on this machine: pages verified, $rows rows (25 to 40), JSON and SVG written (rc $rc)"
expect 0 "" "$BWAPCTL" report --from "$tmp/bench.json" -o "$tmp/bench.png"
# upstream-auto where auto is on: the kernel's table (a stand-in here, with a weight the
# rule cannot give), and the rule's own answer beside it.  One memory node only: on more,
# the kernel's real table would place upstream-wi, not the stand-in's.
if [ "$(cat /sys/devices/system/node/has_memory 2>/dev/null)" = 0 ]; then
	mkdir -p "$tmp/wiauto" && echo true > "$tmp/wiauto/auto" && echo 3 > "$tmp/wiauto/node0"
	BWAP_SYSFS_WEIGHTS=$tmp/wiauto "$BWAPCTL" bench --size 1 --repeats 1 --dwp-step 1 --probe-seconds 0.01 \
		--quiet --state-dir "$tmp/bs" > "$tmp/bench-auto.out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^# upstream-auto: weights 0:3; pages per node 0:[0-9]* (verified)' "$tmp/bench-auto.out" &&
		grep -q "^#   upstream-auto weights: read from the kernel (weighted_interleave/auto is true); 7.3's rule on the HMAT bandwidth sysfs shows (none) gives 0:1, not what the kernel holds$" "$tmp/bench-auto.out"
	ok $? "bench: upstream-auto reads the table where auto is on, and says what 7.3's rule gives instead (rc $rc)"
else
	ok 0 "# SKIP bench's auto-on stand-in needs one memory node, this machine has $(cat /sys/devices/system/node/has_memory)"
fi
expect 1 "No such file or directory" "$BWAPCTL" report --from "$tmp/none.json" -o "$tmp/x.png"
echo '{"bwapctl": "topology"}' > "$tmp/other.json"
expect 1 "not a result bwapctl draws" "$BWAPCTL" report --from "$tmp/other.json" -o "$tmp/x.png"
echo '{"bwapctl": "bench", "placements": [' > "$tmp/cut.json"
expect 1 "cut.json: not JSON: unexpected end of data" "$BWAPCTL" report --from "$tmp/cut.json" -o "$tmp/x.png"
echo '{"bwapctl": "bench", "placements": []}' > "$tmp/empty.json"
expect 1 "1 to 10 placements, this one 0" "$BWAPCTL" report --from "$tmp/empty.json" -o "$tmp/x.png"
expect 2 "give one of --workers SET, --search PID|LOG, --from FILE.json or --peers REPORT.txt" "$BWAPCTL" report -o "$tmp/x.png"
# rebalance-bench --peers' report: drawn; a bad line refused by its number
expect 0 "" "$BWAPCTL" report --peers "$here/data/peers-7.3-8node-opteron.txt" -o "$tmp/peers.svg"
[ -s "$tmp/peers.svg" ]
ok $? "report --peers: the SVG is written"
sed 's/^  DAMON  .*/  DAMON      lots/' "$here/data/peers-7.3-8node-opteron.txt" > "$tmp/peers-bad.txt"
expect 1 "peers-bad.txt:13: not 'moved /min x shares layout instr /kernel x /moved goal'" \
	"$BWAPCTL" report --peers "$tmp/peers-bad.txt" -o "$tmp/x.png"
# the static build draws nothing, and says so before reading anything
if [ -x "$here/../bwapctl-static" ]; then
	expect 2 "charts need the dynamic bwapctl" "$here/../bwapctl-static" report \
		--peers "$here/data/peers-7.3-8node-opteron.txt" -o "$tmp/x.png"
fi
[ ! -e "$tmp/x.png" ]
ok $? "report: no chart file left by the refused ones"

expect 0 "" "$BWAPD" --version
expect 0 "" "$BWAPCTL" --version

echo "1..$n"
[ $failed = 0 ]
