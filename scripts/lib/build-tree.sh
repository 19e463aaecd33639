# SPDX-License-Identifier: GPL-2.0
# Clean build trees of Debian suites for scripts/package: each package is
# built, checked by lintian and test-installed inside a tree of its target
# suite, never on the host.  A suite's tree is made once by mmdebstrap
# (buildd variant + TREE_PACKAGES, apt indices kept) from the Debian archive
# this machine's apt uses, cached as build/pkg/tree-SUITE-HASH and used
# read-only: every job runs in a fresh overlay of it whose writes are
# thrown away.  Needs root.  Sourced after common.sh and debian-archive.sh.

# What a tree holds besides the buildd variant (build-essential, apt):
# lintian checks the packages with the suite's own version.  Build
# dependencies are not here: each build installs them from its own
# debian/control, so a tree serves any package.
TREE_PACKAGES=(lintian)
TREE_LIB=${BASH_SOURCE[0]}

# tree_key SUITE: the hash naming SUITE's tree: the suite, the archive URI,
# the package list and tree_make, the code that makes it (not the rest of
# this file, so that changing how trees are used does not remake them).
# Not the archive's Release date, so a tree stays valid while the archive
# moves; a stale index is refreshed in the overlay when apt needs it
# (tree_apt).
tree_key() {
	local uri
	uri=$(debian_archive_uri) || exit 1
	{ echo "$1 $uri"; printf '%s\n' "${TREE_PACKAGES[@]}"; sed -n '/^tree_make() {/,/^}/p' "$TREE_LIB"; } |
		sha256sum | cut -c1-16
}

# tree_path SUITE: where SUITE's tree is (or will be).
tree_path() { echo "$WORK/tree-$1-$(tree_key "$1")"; }

# tree_make SUITE LOG: mmdebstrap SUITE's tree unless it exists.  Made in a
# temporary directory and renamed, under a per-suite lock, so that an
# overlapping run waits and then reuses it instead of making it twice.
tree_make() {
	local suite=$1 log=$2 tree tmp uri fd t=$(now)
	tree=$(tree_path "$suite")
	uri=$(debian_archive_uri) || exit 1
	exec {fd}>"$WORK/tree-$suite.lock"
	flock "$fd"
	if [ -d "$tree" ]; then
		exec {fd}>&-
		return 0
	fi
	tmp=$tree.tmp.$$
	rm -rf "$tmp"
	log "package: mmdebstrap $suite buildd + ${TREE_PACKAGES[*]} into $(basename "$tree") (log $log)"
	if ! mmdebstrap --variant=buildd --mode=root --format=directory \
		--keyring="$DEBIAN_KEYRING" --skip=cleanup/apt/lists \
		--include="$(IFS=,; echo "${TREE_PACKAGES[*]}")" \
		--aptopt='Acquire::Languages "none"' \
		"$suite" "$tmp" "deb [signed-by=$DEBIAN_KEYRING] $uri $suite main" >"$log" 2>&1; then
		tail -20 "$log" >&2
		rm -rf "$tmp"
		die "mmdebstrap of the $suite build tree failed (see $log); check the network and that $uri serves $suite"
	fi
	mv "$tmp" "$tree"
	exec {fd}>&-
	log "package: $suite build tree ready in $(elapsed "$t")"
	tree_prune "$suite"
}

# tree_start SUITE: make SUITE's tree in the background if it is missing
# (mostly downloads and unpacking: it overlaps well with the kernel build
# and the other suite's, even on 2 cores); tree_wait SUITE waits for it.
declare -A TREE_PIDS=()
tree_start() {
	[ ! -d "$(tree_path "$1")" ] || return 0
	tree_make "$1" "$WORK/tree-$1.log" &
	TREE_PIDS[$1]=$!
}
tree_wait() {
	local pid=${TREE_PIDS[$1]:-}
	[ -n "$pid" ] || return 0
	wait "$pid" || die "the $1 build tree could not be made (see above)"
	TREE_PIDS[$1]=
}

# tree_prune SUITE: remove SUITE's trees with other keys that no job holds
# (tree_run holds a shared lock on the tree it uses).
tree_prune() {
	local suite=$1 keep old fd
	keep=$(tree_path "$suite")
	for old in "$WORK"/tree-"$suite"-*; do
		[ -d "$old" ] && [ "$old" != "$keep" ] || continue
		case "$old" in *.tmp.*) continue ;; esac
		exec {fd}>"$old.lock"
		if flock -n -x "$fd"; then
			log "package: removing the old build tree $(basename "$old")"
			rm -rf "$old"
			rm -f "$old.lock"
		fi
		exec {fd}>&-
	done
}

# tree_run SUITE SCRATCH BINDS CMD: run the shell command CMD as root in a
# fresh overlay of SUITE's tree (writes go to SCRATCH, emptied first and
# removed after success, kept for a look after a failure), in private mount
# and PID namespaces so that nothing outlives it.  BINDS: "HOST:PATH[:ro]"
# words, directories mounted into the tree.  The suite's apt downloads are
# kept in build/pkg/apt-SUITE between runs.
tree_run() {
	local suite=$1 scratch=$2 binds=$3 cmd=$4 tree fd rc=0
	tree=$(tree_path "$suite")
	[ -d "$tree" ] || die "no $suite build tree $tree (internal: trees_make first)"
	exec {fd}>"$tree.lock"
	flock -s "$fd"
	rm -rf "$scratch"
	mkdir -p "$scratch/upper" "$scratch/work" "$scratch/root" "$WORK/apt-$suite/partial"
	unshare --mount --pid --fork --kill-child bash -euo pipefail -c '
		tree=$1 s=$2 cache=$3 binds=$4 cmd=$5
		mount -t overlay overlay -o "lowerdir=$tree,upperdir=$s/upper,workdir=$s/work" "$s/root"
		mount --rbind /dev "$s/root/dev"
		mount -t proc proc "$s/root/proc"
		mount -t sysfs -o ro sysfs "$s/root/sys"
		mount --bind "$cache" "$s/root/var/cache/apt/archives"
		for b in $binds; do
			IFS=: read -r host path opt <<< "$b"
			mkdir -p "$s/root$path"
			mount --bind "$host" "$s/root$path"
			[ "$opt" != ro ] || mount -o remount,bind,ro "$s/root$path"
		done
		# The host'\''s resolver, for apt.
		rm -f "$s/root/etc/resolv.conf"
		cp -L /etc/resolv.conf "$s/root/etc/resolv.conf"
		exec chroot "$s/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			/bin/bash -euo pipefail -c "$cmd"
	' tree-run "$tree" "$scratch" "$WORK/apt-$suite" "$binds" "$cmd" || rc=$?
	exec {fd}>&-
	[ $rc -ne 0 ] || rm -rf "$scratch"
	return $rc
}

# TREE_APT: a shell function for tree_run commands.  tree_apt ARGS runs
# apt-get ARGS; when that fails (the tree's index may be older than the
# archive, which removes superseded files), it refreshes the index in the
# overlay and tries once more.
TREE_APT='tree_apt() {
	apt-get -q -y -o APT::Install-Recommends=false "$@" && return 0
	echo "tree_apt: apt-get $* failed; refreshing the index and trying again" >&2
	apt-get -q update && apt-get -q -y -o APT::Install-Recommends=false "$@"
}'
