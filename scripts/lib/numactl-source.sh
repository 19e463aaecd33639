# SPDX-License-Identifier: GPL-2.0
# Debian 13's numactl source package, pinned: shared by scripts/build-numactl
# (static guest build) and scripts/package (the rebuilt .deb).  The archive
# is the one this machine's apt uses (debian_archive_uri); trixie's Sources
# index is read through a private apt configuration (private_apt), so a
# Debian 12 host needs no trixie entry of its own.  Sourced after common.sh
# and debian-archive.sh, never run.

# The base: Debian 13 (trixie) numactl.  The SHA-256 sums pin the exact
# files of the pinned revision; apt also checks every file against the
# signed Sources index.  Change the version and all three sums together.
NUMACTL_SUITE=trixie
NUMACTL_VERSION=2.0.19-1
# The upstream series the queue is written for: if the archive stops
# serving the pin, the newest served revision of it is taken (loudly).
NUMACTL_SERIES=2.0.19-
NUMACTL_SHA256="\
b56e7893fc7da5374946f3767518e8d7b3707e0487a4d92fb76d672a988921e2  numactl_2.0.19-1.dsc
8b84ffdebfa0d730fb2fc71bb7ec96bb2d38bf76fb67246fde416a68e04125e4  numactl_2.0.19.orig.tar.gz
93b4e00d8b7b1e465d931b29e65d220fadd84ac76431437307ecd075277355d3  numactl_2.0.19-1.debian.tar.xz"

# The packaging fallback of scripts/package: when the archive serves the
# 2.0.19 upstream tarball but not trixie's .dsc or .debian.tar.xz, Debian's
# debian/ directory comes from bookworm's numactl 2.0.16-1 instead (see
# packaging/README.md).  Only its .debian.tar.xz is fetched, pinned here
# and checked by apt against bookworm's signed Sources index.
NUMACTL_FALLBACK_SUITE=bookworm
NUMACTL_FALLBACK_VERSION=2.0.16-1
NUMACTL_FALLBACK_SHA256="\
3e55d97df079693a12b92462ef9526bd305ff22e55ecbd6e37e37049e41b0a2c  numactl_2.0.16-1.debian.tar.xz"

# numactl_select APTDIR [SOURCE-LINE...]: read the Sources index of the
# given deb-src lines (default: trixie main of this machine's Debian
# archive) into a private apt configuration in APTDIR and choose the
# revision to fetch: NUMACTL_FETCH_VERSION is the pin if it is served,
# else the newest served 2.0.19 revision (with a loud warning).  Dies when
# no archive is configured or no 2.0.19 revision is served.
numactl_select() {
	local apt=$1 uri
	shift
	if [ $# -eq 0 ]; then
		uri=$(debian_archive_uri) || exit 1
		set -- "deb-src [signed-by=$DEBIAN_KEYRING] $uri $NUMACTL_SUITE main"
	fi
	private_apt "$apt" "$@"
	NUMACTL_FETCH_VERSION=$(apt_pick_version numactl "$NUMACTL_VERSION" "$NUMACTL_SERIES" source) ||
		exit 1
}

# numactl_index_sums VERSION: "SHA256  FILE" lines for that source
# revision, from the signed Sources index read by numactl_select.
numactl_index_sums() {
	apt-cache "${PRIVATE_APT[@]}" showsrc numactl 2>/dev/null | awk -v v="$1" '
		/^Package:/ { ver = ""; sums = 0 }
		/^Version:/ { ver = $2 }
		/^Checksums-Sha256:/ { sums = 1; next }
		/^[^ ]/ { sums = 0 }
		sums && ver == v && NF == 3 { print $1 "  " $3 }'
}

# numactl_fetch DL APTDIR orig|all|package [SOURCE-LINE...]: make sure DL
# holds the numactl source to build: with "orig" the upstream tarball (all
# that build-numactl extracts), with "all" the whole source package (.dsc,
# .orig.tar.gz, .debian.tar.xz).  "package" (scripts/package) is "all"
# when the archive serves all three files, and otherwise accepts the
# upstream tarball alone: NUMACTL_MISSING then names the files that were
# not served (else it is empty), and the caller builds with the fallback
# packaging (numactl_fetch_fallback_debian).  Sets NUMACTL_FETCH_VERSION
# (Debian revision) and NUMACTL_ORIG (the tarball's path).  The pinned
# files, once fetched and matching their sums, are used without the
# network.  Otherwise apt-get source fetches them through the private
# index of numactl_select (SOURCE-LINEs as there); apt checks each file
# against the signed Sources index, and the pinned revision must also
# match the sums above.  Dies with the reason when a file is missing.
numactl_fetch() {
	local DL apt what=$3 v sums f missing=() sumsfile
	DL=$(realpath -m "$1") apt=$(realpath -m "$2")
	shift 3
	case "$what" in orig|all|package) ;; *) die "numactl_fetch: want 'orig', 'all' or 'package', not '$what'" ;; esac
	mkdir -p "$DL"
	NUMACTL_FETCH_VERSION=$NUMACTL_VERSION
	NUMACTL_ORIG=$DL/numactl_${NUMACTL_VERSION%-*}.orig.tar.gz
	NUMACTL_MISSING=()
	if [ $# -eq 0 ] && numactl_verify "$DL" "${what/package/all}"; then
		return 0
	fi
	numactl_select "$apt" "$@"
	v=$NUMACTL_FETCH_VERSION
	if [ "$v" = "$NUMACTL_VERSION" ]; then
		sums=$NUMACTL_SHA256
	else
		sums=$(numactl_index_sums "$v")
		[ -n "$sums" ] || die "trixie's Sources index lists numactl $v but no files for it; look at $apt/lists"
		warn "numactl $v is not pinned: its files are checked against the signed Sources index only (apt-get source does that), not against pinned SHA-256 sums"
	fi
	f=$(awk '$2 ~ /\.orig\.tar\./ { print $2 }' <<< "$sums")
	[ -n "$f" ] || die "numactl $v has no upstream tarball (.orig.tar.*) in trixie's Sources index"
	NUMACTL_ORIG=$DL/$f
	log "fetching numactl $v source ($what) with apt-get source"
	# apt-get source checks each file it downloads against the index and
	# keeps those that arrived, so a partly served package can be judged
	# file by file below.
	(cd "$DL" && apt-get "${PRIVATE_APT[@]}" source --download-only "numactl=$v") >"$apt/source.log" 2>&1 || true
	while read -r _ f; do
		case "$what:$f" in all:*|package:*|orig:*.orig.tar.*) ;; *) continue ;; esac
		[ -f "$DL/$f" ] || missing+=("$f")
	done <<< "$sums"
	# "package" without the Debian files: the tarball alone, checked below.
	if [ "$what" = package ] && [ ${#missing[@]} -gt 0 ] && [ -f "$NUMACTL_ORIG" ]; then
		NUMACTL_MISSING=("${missing[@]}")
		missing=()
		what=orig
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		cat "$apt/source.log" >&2
		die "the archive did not serve numactl $v's ${missing[*]} (see apt's output above, also in $apt/source.log).
Its signed Sources index lists them.  A mirror that lacks them cannot build
Debian's numactl $v; point this machine's apt at a complete Debian mirror."
	fi
	sumsfile=$(mktemp)
	if [ "$what" = orig ]; then grep '\.orig\.tar\.' <<< "$sums"; else echo "$sums"; fi > "$sumsfile"
	(cd "$DL" && sha256sum --quiet --check "$sumsfile") >&2 || {
		rm -f "$sumsfile"
		die "numactl $v source in $DL does not match the $([ "$v" = "$NUMACTL_VERSION" ] && echo "pinned SHA-256 sums" || echo "signed Sources index"); delete $DL and try again"
	}
	rm -f "$sumsfile"
}

# numactl_fetch_fallback_debian DL APTDIR [SOURCE-LINE...]: make sure DL
# holds bookworm's numactl_2.0.16-1.debian.tar.xz (the packaging fallback)
# and set NUMACTL_FALLBACK_DEBIAN to its path.  Fetched like the rest:
# apt-get source --diff-only through a private index of bookworm main of
# this machine's Debian archive (or the SOURCE-LINEs given), apt checking
# it against the signed Sources index; it must also match the pinned sum
# above, and the index must list that sum.  A file already in DL with the
# pinned sum is used without the network.  Dies with the reason.
numactl_fetch_fallback_debian() {
	local DL apt uri v=$NUMACTL_FALLBACK_VERSION f listed
	DL=$(realpath -m "$1") apt=$(realpath -m "$2")
	shift 2
	f=$(awk '{ print $2 }' <<< "$NUMACTL_FALLBACK_SHA256")
	NUMACTL_FALLBACK_DEBIAN=$DL/$f
	mkdir -p "$DL"
	if [ $# -eq 0 ] && (cd "$DL" && sha256sum --quiet --check --status - <<< "$NUMACTL_FALLBACK_SHA256") 2>/dev/null; then
		return 0
	fi
	if [ $# -eq 0 ]; then
		uri=$(debian_archive_uri) || exit 1
		set -- "deb-src [signed-by=$DEBIAN_KEYRING] $uri $NUMACTL_FALLBACK_SUITE main"
	fi
	private_apt "$apt" "$@"
	listed=$(numactl_index_sums "$v")
	[ -n "$listed" ] || die "$NUMACTL_FALLBACK_SUITE's Sources index does not list numactl $v, whose debian/ the packaging fallback uses; look at $apt/lists"
	grep -qxF "$NUMACTL_FALLBACK_SHA256" <<< "$listed" ||
		die "$NUMACTL_FALLBACK_SUITE's signed Sources index lists numactl $v's $f with another SHA-256 than the pinned one:
$(grep -F "  $f" <<< "$listed")
Check what changed before moving NUMACTL_FALLBACK_SHA256 in scripts/lib/numactl-source.sh."
	rm -f "$DL/$f"
	log "fetching numactl $v's $f ($NUMACTL_FALLBACK_SUITE) with apt-get source --diff-only"
	(cd "$DL" && apt-get "${PRIVATE_APT[@]}" source --download-only --diff-only "numactl=$v") >"$apt/source.log" 2>&1 || true
	if [ ! -f "$DL/$f" ]; then
		cat "$apt/source.log" >&2
		die "the archive did not serve numactl $v's $f (see apt's output above, also in $apt/source.log);
without it there is no Debian packaging to build numactl with.  Point this
machine's apt at a complete Debian mirror."
	fi
	(cd "$DL" && sha256sum --quiet --check - <<< "$NUMACTL_FALLBACK_SHA256") >&2 ||
		die "$DL/$f does not match its pinned SHA-256; delete it and try again"
}

# numactl_verify DL [orig|all]: 0 when DL holds the pinned files (or only
# the pinned upstream tarball, with "orig"), unchanged.
numactl_verify() {
	local sums=$NUMACTL_SHA256
	[ "${2:-all}" = orig ] && sums=$(grep '\.orig\.tar\.' <<< "$sums")
	(cd "$1" 2>/dev/null && sha256sum --quiet --check --status - <<< "$sums") 2>/dev/null
}

# numactl_extract_patched ORIG SRC PATCHES: SRC becomes upstream's tree
# from the tarball ORIG (what dpkg-source --skip-debianization gives),
# with PATCHES (numactl-patches/) linked as its quilt folder and its
# series pushed without fuzz.  Dies naming the patch that does not apply.
numactl_extract_patched() {
	local orig=$1 src=$2 patches=$3 out bad
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$orig" -C "$src" --strip-components=1 ||
		die "cannot extract $orig; delete it and try again"
	ln -s "$patches" "$src/patches"
	grep -qv '^\s*\(#.*\)\?$' "$patches/series" || return 0
	if ! out=$(cd "$src" && QUILT_PATCHES=patches quilt push -a --fuzz=0 2>&1); then
		bad=$(sed -n 's|^Patch patches/\(.*\) does not apply.*|\1|p' <<< "$out")
		grep -v '^Applying\|^patching\|^Now at\|^$' <<< "$out" >&2
		die "patch ${bad:-?} of numactl-patches/series does not apply cleanly to numactl ${NUMACTL_FETCH_VERSION:-$NUMACTL_VERSION}$(numactl_fallback_note)"
	fi
}

# numactl_fallback_note: for messages after the queue fails to apply.
numactl_fallback_note() {
	[ "${NUMACTL_FETCH_VERSION:-$NUMACTL_VERSION}" = "$NUMACTL_VERSION" ] && return 0
	echo " (numactl ${NUMACTL_FETCH_VERSION} was taken because the archive no longer serves the pinned $NUMACTL_VERSION: the series must be refreshed for it; see numactl-patches/README.md)"
}
