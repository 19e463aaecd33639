# SPDX-License-Identifier: GPL-2.0
# Parse a topologies/*.topo file and turn it into QEMU arguments.
# Sourced by run-vm.  The file format is described in topologies/README.md.

# Resolve a topology name ("4node-asymmetric") or path to a file path.
topology_path() {
	local t=$1
	if [ -f "$t" ]; then realpath "$t"; return; fi
	[ -f "$BWAP_ROOT/topologies/$t.topo" ] && { echo "$BWAP_ROOT/topologies/$t.topo"; return; }
	die "unknown topology '$t'; choose one of: $(cd "$BWAP_ROOT/topologies" && ls *.topo | sed 's/\.topo$//' | xargs)"
}

# Size "512M" / "1G" in MiB.
size_mib() {
	case "$1" in
	*G) echo $(( ${1%G} * 1024 )) ;;
	*M) echo "${1%M}" ;;
	*) die "bad size '$1' (use M or G)" ;;
	esac
}

# topology_qemu_args FILE [MACHINE]: sets TOPO_QEMU_ARGS (array), TOPO_NAME,
# TOPO_NODES, TOPO_CPUS and TOPO_MEM_MIB.  MACHINE is QEMU's -machine type
# with its options (default q35; "virt,gic-version=3" for arm64); either
# takes the topology's SRAT, SLIT and HMAT through ACPI.  Dies with the line
# number on a malformed file.
topology_qemu_args() {
	local file=$1 machine=${2:-q35} lineno=0 kw rest id cpus mem init row tgt val
	local -a words nodes_cpus=() nodes_mem=() nodes_init=()
	local -a dist_rows=() bw_rows=() lat_rows=()
	TOPO_NAME=$(basename "$file" .topo)
	while IFS= read -r line; do
		lineno=$((lineno + 1))
		line=${line%%#*}
		read -r -a words <<< "$line"
		[ ${#words[@]} -gt 0 ] || continue
		kw=${words[0]}
		case "$kw" in
		name) TOPO_NAME=${line#*name }; TOPO_NAME=$(echo "$TOPO_NAME" | xargs) ;;
		node)
			id=${words[1]}; cpus=; mem=; init=
			for w in "${words[@]:2}"; do
				case "$w" in
				cpus=*) cpus=${w#cpus=} ;;
				mem=*) mem=${w#mem=} ;;
				initiator=*) init=${w#initiator=} ;;
				*) die "$file:$lineno: unknown node attribute '$w'" ;;
				esac
			done
			[ "$id" = "${#nodes_cpus[@]}" ] || die "$file:$lineno: nodes must be numbered 0,1,2... in order"
			[ -n "$cpus" ] && [ -n "$mem" ] || die "$file:$lineno: node needs cpus= and mem="
			[ "$cpus" -gt 0 ] || [ -n "$init" ] || die "$file:$lineno: a CPU-less node needs initiator="
			nodes_cpus+=("$cpus"); nodes_mem+=("$(size_mib "$mem")"); nodes_init+=("${init:-$id}")
			;;
		distance|bandwidth|latency)
			row=${words[1]%:}
			[ "${words[1]}" = "$row:" ] || die "$file:$lineno: expected '$kw N: values...'"
			case "$kw" in
			distance) dist_rows[$row]="${words[*]:2}" ;;
			bandwidth) bw_rows[$row]="${words[*]:2}" ;;
			latency) lat_rows[$row]="${words[*]:2}" ;;
			esac
			;;
		*) die "$file:$lineno: unknown keyword '$kw'" ;;
		esac
	done < "$file"

	TOPO_NODES=${#nodes_cpus[@]}
	[ "$TOPO_NODES" -gt 0 ] || die "$file: no nodes"
	TOPO_CPUS=0 TOPO_MEM_MIB=0
	local hmat=off
	[ ${#bw_rows[@]} -gt 0 ] && hmat=on
	TOPO_QEMU_ARGS=()
	local n first
	for ((n = 0; n < TOPO_NODES; n++)); do
		TOPO_QEMU_ARGS+=(-object "memory-backend-ram,id=m$n,size=${nodes_mem[$n]}M")
		local spec="node,nodeid=$n,memdev=m$n"
		if [ "${nodes_cpus[$n]}" -gt 0 ]; then
			first=$TOPO_CPUS
			TOPO_CPUS=$((TOPO_CPUS + nodes_cpus[n]))
			spec+=",cpus=$first-$((TOPO_CPUS - 1))"
		fi
		[ $hmat = on ] && spec+=",initiator=${nodes_init[$n]}"
		TOPO_QEMU_ARGS+=(-numa "$spec")
		TOPO_MEM_MIB=$((TOPO_MEM_MIB + nodes_mem[n]))
	done
	for ((n = 0; n < TOPO_NODES; n++)); do
		[ -n "${dist_rows[$n]:-}" ] || die "$file: no distance row for node $n"
		read -r -a words <<< "${dist_rows[$n]}"
		[ ${#words[@]} -eq "$TOPO_NODES" ] || die "$file: distance row $n has ${#words[@]} values, want $TOPO_NODES"
		[ "${words[$n]}" = 10 ] || die "$file: distance $n->$n must be 10"
		for ((tgt = 0; tgt < TOPO_NODES; tgt++)); do
			[ $tgt -eq $n ] && continue
			TOPO_QEMU_ARGS+=(-numa "dist,src=$n,dst=$tgt,val=${words[$tgt]}")
		done
	done
	if [ $hmat = on ]; then
		for ((n = 0; n < TOPO_NODES; n++)); do
			[ "${nodes_cpus[$n]}" -gt 0 ] || continue
			[ -n "${bw_rows[$n]:-}" ] && [ -n "${lat_rows[$n]:-}" ] ||
				die "$file: initiator node $n needs bandwidth and latency rows"
			read -r -a words <<< "${bw_rows[$n]}"
			[ ${#words[@]} -eq "$TOPO_NODES" ] || die "$file: bandwidth row $n needs $TOPO_NODES values"
			for ((tgt = 0; tgt < TOPO_NODES; tgt++)); do
				TOPO_QEMU_ARGS+=(-numa "hmat-lb,initiator=$n,target=$tgt,hierarchy=memory,data-type=access-bandwidth,bandwidth=${words[$tgt]}")
			done
			read -r -a words <<< "${lat_rows[$n]}"
			[ ${#words[@]} -eq "$TOPO_NODES" ] || die "$file: latency row $n needs $TOPO_NODES values"
			for ((tgt = 0; tgt < TOPO_NODES; tgt++)); do
				TOPO_QEMU_ARGS+=(-numa "hmat-lb,initiator=$n,target=$tgt,hierarchy=memory,data-type=access-latency,latency=${words[$tgt]}")
			done
		done
	fi
	# One socket per vCPU: a socket split across nodes makes the guest WARN
	# in topology_sane() (LLC siblings on different nodes).
	TOPO_QEMU_ARGS=(-machine "$machine,hmat=$hmat" -smp "$TOPO_CPUS,sockets=$TOPO_CPUS,cores=1,threads=1" -m "${TOPO_MEM_MIB}M" "${TOPO_QEMU_ARGS[@]}")
}
