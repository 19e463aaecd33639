# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the scripts in scripts/.  Sourced, never run.

BWAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BWAP_BUILD=${BWAP_BUILD:-$BWAP_ROOT/build}

# The kernel bases.  Each is a Debian linux-source package, pinned so that
# every machine builds the same tree, with its own series in patches/BASE/:
#   6.12  the LTS backport users run: linux-source-6.12 from this host's
#         release (Debian 12: bookworm-security);
#   7.3   mainline, what the cover letter offers upstream: linux-source-7.3
#         from trixie-backports.
# Each base's source comes with Debian's own config of the same revision
# (linux-config-BASE).  scripts/setup decides once, per build directory
# (so per machine and clone), which revision of the pair to use
# (kernel_source_decide in lib/debian-archive.sh: the pin where the archive
# serves both packages, else, loudly, the newest revision it serves of
# both), records it in build/src/linux-source-BASE/version, and downloads
# both .debs through a private apt configuration and unpacks them there:
# the host's dpkg never sees them.  Every script then uses that record
# (kernel_source_version); only "scripts/setup --refresh" decides again,
# and never for an older revision.  select_base BASE sets:
#   BASE                 6.12 or 7.3
#   KERNEL_SOURCE_PKG, KERNEL_SOURCE_VERSION (the pin), KERNEL_SOURCE_SERIES
#   KERNEL_CONFIG_PKG    Debian's config package of the base
#   KERNEL_SOURCE_SUITES the Debian suites serving them
#   KERNEL_SRC_DIR       where setup keeps the pair and its record
#   KERNEL_TARBALL       the source tarball prepare-tree extracts
#   KERNEL_CONFIG_DIR    Debian's configs (/usr/src/linux-config-BASE's files)
#   KTREE                the patched tree, a git repository
#   PATCHES              the series: BASE's patches, series and cover letter
#   BASE_FRAGMENT        configs/ fragment added after base.config ("" none)
BASES=(6.12 7.3)
select_base() {
	BASE=$1
	case "$BASE" in
	6.12)
		KERNEL_SOURCE_VERSION=6.12.118-1~deb12u1
		KERNEL_SOURCE_SUITES="bookworm bookworm-security"
		KTREE=$BWAP_BUILD/linux
		BASE_FRAGMENT=
		;;
	7.3)
		KERNEL_SOURCE_VERSION=7.3.4-1~bpo13+1
		KERNEL_SOURCE_SUITES=trixie-backports
		KTREE=$BWAP_BUILD/linux-7.3
		BASE_FRAGMENT=$BWAP_ROOT/configs/7.3.config
		;;
	*) die "unknown kernel base '$BASE' (known: ${BASES[*]})" ;;
	esac
	KERNEL_SOURCE_PKG=linux-source-$BASE
	KERNEL_CONFIG_PKG=linux-config-$BASE
	KERNEL_SOURCE_SERIES=$BASE.
	KERNEL_SRC_DIR=$BWAP_BUILD/src/linux-source-$BASE
	KERNEL_TARBALL=$KERNEL_SRC_DIR/linux-source-$BASE.tar.xz
	KERNEL_CONFIG_DIR=$KERNEL_SRC_DIR/config
	PATCHES=$BWAP_ROOT/patches/$BASE
	export BWAP_BASE=$BASE
}

# Debian 13's own stock kernel (linux-image-amd64 from trixie and
# trixie-security, pinned; the newest 6.12 revision if the pin is gone):
# a real kernel without the series, with upstream's weighted interleave.
# setup downloads it and keeps only its vmlinuz; run-tests boots it for
# the upstream and portable suites instead of building one.
STOCK_KERNEL_PKG=linux-image-amd64
STOCK_KERNEL_VERSION=6.12.118-1
STOCK_KERNEL_SUITE=trixie
STOCK_KERNEL=$BWAP_BUILD/src/stock-kernel/vmlinuz
# Debian 13's stock 7.3 kernel, linux-image-amd64 from trixie-backports
# (the newest 7.3 revision if the pin is gone), fetched the same way: a
# kernel without the series that has DAMON (DAMON, DAMON_VADDR,
# DAMON_SYSFS) with weighted migration destinations (6.17+), on which
# bwapd's DAMON backend runs (scripts/test-bwapd --damon).
STOCK73_KERNEL_VERSION=7.3.4-1~bpo13+1
STOCK73_KERNEL_SUITE=trixie-backports
STOCK73_KERNEL=$BWAP_BUILD/src/stock-kernel-7.3/vmlinuz

# The revision of the base's source and config that setup chose and
# recorded ("" before the first scripts/setup).  Every script takes this
# one; none asks dpkg or the archive.
kernel_source_version() {
	cat "$KERNEL_SRC_DIR/version" 2>/dev/null || true
}

# require_kernel_source: die with advice unless setup has recorded the
# selected base's revision and its tarball is there.
require_kernel_source() {
	local v
	v=$(kernel_source_version)
	[ -n "$v" ] && [ -r "$KERNEL_TARBALL" ] ||
		die "no recorded $KERNEL_SOURCE_PKG for base $BASE in ${KERNEL_SRC_DIR#"$BWAP_ROOT"/}; run scripts/setup"
}

# Where the files BWAP owns wholly live, both here and in build/linux: new
# files under these paths are created and grown by the patches, and
# scripts/export-series copies them back here.  Markdown files are ours,
# not the kernel's (its documents are reStructuredText and ABI entries):
# each folder's README.md, and Documentation/DESIGN.md.
OWN_PATHS=(mm include Documentation)

# owned_files_in_repo: the owned files present in this repository, one a line.
owned_files_in_repo() {
	local p
	for p in "${OWN_PATHS[@]}"; do
		[ -e "$BWAP_ROOT/$p" ] || continue
		(cd "$BWAP_ROOT" && find "$p" -type f ! -name '*.md')
	done
}
GUEST_OUT=$BWAP_BUILD/guest      # guest binaries and initramfs images

# Output directory of a kernel build for config variant $1 (base, debug, ...)
# on the selected base: build/obj-VARIANT for 6.12, build/obj-7.3-VARIANT.
kernel_objdir() {
	if [ "$BASE" = 6.12 ]; then
		echo "$BWAP_BUILD/obj-${1:-base}"
	else
		echo "$BWAP_BUILD/obj-$BASE-${1:-base}"
	fi
}

# Kernel builds go through ccache.  Paths are hashed relative to build/, and
# the stamps the kernel embeds are pinned, so that rebuilds hit the cache.
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
export CCACHE_BASEDIR=$BWAP_BUILD
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 1970"
export KBUILD_BUILD_USER=bwap KBUILD_BUILD_HOST=bwap

# kernel_make OBJDIR ARGS...: make in build/linux with output in OBJDIR.
# An empty LOCALVERSION stops setlocalversion from appending "+" for the git
# tree, so the release is 6.12.N plus CONFIG_LOCALVERSION, whatever the
# tree's state.
kernel_make() {
	local obj=$1
	shift
	make -C "$KTREE" O="$obj" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION= "$@"
}

# lock_objdir OBJDIR: hold OBJDIR's build lock until this shell exits, so
# that two builds never write one output directory (run-tests builds later
# kernels in the background while the first one's tests run).
lock_objdir() {
	mkdir -p "$1"
	exec 9>"$1/.bwap-build.lock"
	if ! flock -n 9; then
		log "waiting for the build already running in $1"
		flock 9
	fi
}

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

select_base "${BWAP_BASE:-6.12}"

# Run as root, or through sudo when we are not.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Seconds since the epoch, for stage timings.
now() { date +%s; }
elapsed() { echo "$(( $(now) - $1 ))s"; }

# require_free_space DIR GIB WHAT: stop before a long run that would fail
# half-way for want of disk (tar and the linker then fail far from the
# cause), naming what needs the space.
require_free_space() {
	local dir=$1 need=$2 what=$3 avail_kib
	mkdir -p "$dir"
	avail_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
	[ "$avail_kib" -ge $((need * 1024 * 1024)) ] ||
		die "$dir has $((avail_kib / 1024 / 1024)) GiB free; $what needs about $need GiB. Free some (old clones' build/ directories, 'ccache -C') and run again"
}
