# SPDX-License-Identifier: GPL-2.0
# The Debian archive as this machine's apt knows it, and private apt
# configurations that read other suites of it (trixie, trixie-backports)
# without touching the host's apt or dpkg.  No archive host is written
# here: the URIs come from the host's apt sources.  Sourced after
# common.sh, never run.

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# debian_archive_uri [security]: the URI of Debian's main archive (or, with
# "security", of its security archive) from this machine's apt sources.
# Dies with advice when none is configured.
debian_archive_uri() {
	local want=Debian uri
	[ "${1:-}" = security ] && want=Debian-Security
	uri=$(apt-get indextargets --format '$(LABEL) $(REPO_URI)' \
		'Origin: Debian' 'Identifier: Packages' 2>/dev/null |
		awk -v l="$want" '$1 == l { print $2; exit }')
	[ -n "$uri" ] || die "this machine's apt has no Debian ${1:-main} archive configured (or no lists yet).
Add one, for example /etc/apt/sources.list.d/debian.sources:
  Types: deb
  URIs: <your Debian mirror>/debian$([ "${1:-}" = security ] && echo -security)
  Suites: $(. /etc/os-release && echo "$VERSION_CODENAME")$([ "${1:-}" = security ] && echo -security)
  Components: main
  Signed-By: $DEBIAN_KEYRING
then run 'apt-get update' and try again."
	echo "${uri%/}"
}

# private_apt DIR LINE...: a private apt configuration in DIR whose sources
# are the given one-line entries (see sources.list(5)); runs apt-get update,
# which checks every InRelease against the Debian keyring, and sets the
# array PRIVATE_APT to the options that select it.  No dpkg status: only
# indices, downloads and "apt-get source" are meant to use it.
private_apt() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts"
	printf '%s\n' "$@" > "$dir/sources.list"
	PRIVATE_APT=(-q -o Dir::Etc::SourceList="$dir/sources.list"
		-o Dir::Etc::SourceParts="$dir/parts" -o Dir::State::Lists="$dir/lists"
		-o Dir::Cache="$dir/cache" -o Dir::State::status=/dev/null
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	apt-get "${PRIVATE_APT[@]}" update >"$dir/update.log" 2>&1 || {
		cat "$dir/update.log" >&2
		die "apt-get update of the private indices in $dir failed (sources: $*); check the network and this machine's apt sources"
	}
}

# apt_pick_version PKG PIN SERIES [source]: the version of PKG to fetch
# through PRIVATE_APT.  The pin when the archive still serves it;
# otherwise the newest served version whose string starts with SERIES (the
# same upstream series, e.g. "7.3." or "2.0.19-"), said loudly on stderr.
# With "source", source packages are searched instead of binary ones.
# Dies when the series is gone.
apt_pick_version() {
	local pkg=$1 pin=$2 series=$3 versions newest
	versions=$(apt-cache "${PRIVATE_APT[@]}" madison "$pkg" 2>/dev/null |
		awk -F'|' -v src="${4:-}" '(src == "source") == ($3 ~ /Sources/) { gsub(/ /, "", $2); print $2 }' |
		sort -u)
	if grep -qxF -- "$pin" <<< "$versions"; then
		echo "$pin"
		return 0
	fi
	newest=$(awk -v s="$series" 'index($0, s) == 1' <<< "$versions" | sort -V | tail -n1)
	[ -n "$newest" ] || die "the archive serves no $pkg of the $series series (pinned: $pin; served: $(echo $versions))"
	warn "*************************************************************"
	warn "the archive no longer serves the pinned $pkg $pin;"
	warn "using $newest, the newest of the same series.  Check that the"
	warn "series still applies, then move the pin in the scripts."
	warn "*************************************************************"
	echo "$newest"
}

# --- The kernel bases' source and config: one revision, decided once -------
#
# Each base (common.sh, select_base) uses one revision of the pair
# linux-source-BASE + linux-config-BASE.  kernel_source_decide chooses it;
# kernel_source_setup, which scripts/setup runs for each base, records it
# in KERNEL_SRC_DIR/version, downloads both .debs through a private apt
# configuration and unpacks the tarball and the configs beside the record.
# The host's dpkg never sees them, so nothing is installed, upgraded or
# downgraded.  Later runs read the record and touch nothing; only
# "scripts/setup --refresh", or a moved pin, decides again, and never
# takes a revision older than the recorded one.
#
# BWAP_KERNEL_ARCHIVE_6_12 (7_3): sources.list lines to read instead of
# the Debian archive (scripts/test-source-pin's local repository).

# kernel_source_apt DIR: the private apt configuration that reads the
# selected base's suites (sets PRIVATE_APT).
kernel_source_apt() {
	local dir=$1 suite lines=() var=BWAP_KERNEL_ARCHIVE_${BASE//./_}
	if [ -n "${!var:-}" ]; then
		mapfile -t lines <<< "${!var}"
	else
		for suite in $KERNEL_SOURCE_SUITES; do
			case "$suite" in
			*-security) lines+=("deb [signed-by=$DEBIAN_KEYRING] $(debian_archive_uri security) $suite main") ;;
			*) lines+=("deb [signed-by=$DEBIAN_KEYRING] $(debian_archive_uri) $suite main") ;;
			esac
		done
	fi
	log "setup: reading $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG's revisions with a private apt configuration in ${dir#"$BWAP_ROOT"/}"
	private_apt "$dir" "${lines[@]}"
}

# served_versions PKG: the binary versions of PKG PRIVATE_APT's archive
# serves, one a line.
served_versions() {
	apt-cache "${PRIVATE_APT[@]}" madison "$1" 2>/dev/null |
		awk -F'|' '$3 !~ /Sources/ { gsub(/ /, "", $2); print $2 }' | sort -u
}

# kernel_source_decide [FLOOR]: THE choice of the selected base's
# revision (through PRIVATE_APT): the pin when the archive serves both
# linux-source-BASE and linux-config-BASE at it; otherwise the newest
# revision of the base's series at which it serves both, said loudly.
# With FLOOR (the recorded revision), nothing older than FLOOR is taken:
# when the pin is older, FLOOR itself if it is still served as a pair.
# Dies when no revision qualifies.
kernel_source_decide() {
	local floor=${1:-} src cfg both v newest=
	src=$(served_versions "$KERNEL_SOURCE_PKG")
	cfg=$(served_versions "$KERNEL_CONFIG_PKG")
	both=$(comm -12 <(echo "$src") <(echo "$cfg") | grep -F -- "$KERNEL_SOURCE_SERIES" || true)
	if grep -qxF -- "$KERNEL_SOURCE_VERSION" <<< "$both" &&
	   { [ -z "$floor" ] || dpkg --compare-versions "$KERNEL_SOURCE_VERSION" ge "$floor"; }; then
		echo "$KERNEL_SOURCE_VERSION"
		return 0
	fi
	while IFS= read -r v; do
		[ -n "$v" ] && [ "${v#"$KERNEL_SOURCE_SERIES"}" != "$v" ] || continue
		[ -z "$floor" ] || dpkg --compare-versions "$v" ge "$floor" || continue
		[ -z "$newest" ] || dpkg --compare-versions "$v" gt "$newest" || continue
		newest=$v
	done <<< "$both"
	if [ -z "$newest" ] && [ -n "$floor" ]; then
		warn "the archive serves $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG at no common revision at or above the recorded $floor; keeping it"
		echo "$floor"
		return 0
	fi
	[ -n "$newest" ] || die "the archive serves $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG at no common revision of the $KERNEL_SOURCE_SERIES series${floor:+ at or above the recorded $floor} (pinned: $KERNEL_SOURCE_VERSION; $KERNEL_SOURCE_PKG: $(echo $src); $KERNEL_CONFIG_PKG: $(echo $cfg))"
	if [ "$newest" != "$floor" ] || [ "$floor" = "" ]; then
		warn "*************************************************************"
		if grep -qxF -- "$KERNEL_SOURCE_VERSION" <<< "$both"; then
			warn "the pinned $KERNEL_SOURCE_VERSION is older than the recorded $floor,"
			warn "which is kept: a base's source is never downgraded."
		else
			warn "the archive no longer serves both $KERNEL_SOURCE_PKG and"
			warn "$KERNEL_CONFIG_PKG at the pinned $KERNEL_SOURCE_VERSION"
			warn "($KERNEL_SOURCE_PKG: $(echo $src); $KERNEL_CONFIG_PKG: $(echo $cfg));"
			warn "using $newest for both, the newest revision of the $KERNEL_SOURCE_SERIES"
			warn "series served as a pair.  Check that the series still applies,"
			warn "then move the pin in scripts/lib/common.sh."
		fi
		warn "*************************************************************"
	fi
	echo "$newest"
}

# kernel_source_complete: the recorded pair's files are all there.
kernel_source_complete() {
	[ -s "$KERNEL_SRC_DIR/version" ] && [ -r "$KERNEL_TARBALL" ] &&
		[ "$(cat "$KERNEL_CONFIG_DIR/.version" 2>/dev/null)" = "$(cat "$KERNEL_SRC_DIR/version")" ]
}

# kernel_source_fetch VERSION: download the pair at VERSION (PRIVATE_APT;
# apt-get download checks each .deb against the signed index) and unpack
# the tarball and the configs into KERNEL_SRC_DIR, then record VERSION.
# What is already there at VERSION is kept (the tarball of a 7.3
# directory made before the config was fetched too).
# kernel_deb_fetch PKG VER DIR: download PKG=VER into DIR with the private
# apt configuration and check the .deb is that version; prints its path.
kernel_deb_fetch() {
	local deb
	(cd "$3" && apt-get "${PRIVATE_APT[@]}" download "$1=$2" >/dev/null) ||
		die "apt-get download $1=$2 failed; check the network"
	deb=$(ls "$3/${1}_"*.deb)
	[ "$(dpkg-deb -f "$deb" Version)" = "$2" ] || die "$deb is not $1 $2"
	echo "$deb"
}

kernel_source_fetch() {
	local ver=$1 dl=$KERNEL_SRC_DIR/apt/deb deb tarball=${KERNEL_TARBALL##*/} have
	have=$(kernel_source_version)
	mkdir -p "$dl"
	if [ "$have" != "$ver" ] || [ ! -r "$KERNEL_TARBALL" ]; then
		log "setup: downloading $KERNEL_SOURCE_PKG $ver (about 150 MB)"
		deb=$(kernel_deb_fetch "$KERNEL_SOURCE_PKG" "$ver" "$dl") || exit 1
		# The record goes first: it never names a tarball it is not.
		rm -f "$KERNEL_SRC_DIR/version" "$KERNEL_TARBALL"
		dpkg-deb --fsys-tarfile "$deb" | tar -xf - -O "./usr/src/$tarball" > "$KERNEL_TARBALL.tmp" &&
			[ -s "$KERNEL_TARBALL.tmp" ] || die "$deb holds no usr/src/$tarball"
		mv "$KERNEL_TARBALL.tmp" "$KERNEL_TARBALL"
		rm -f "$deb"
	fi
	log "setup: downloading $KERNEL_CONFIG_PKG $ver"
	deb=$(kernel_deb_fetch "$KERNEL_CONFIG_PKG" "$ver" "$dl") || exit 1
	rm -rf "$KERNEL_CONFIG_DIR" "$KERNEL_SRC_DIR/config.tmp"
	mkdir -p "$KERNEL_SRC_DIR/config.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$KERNEL_SRC_DIR/config.tmp" "./usr/src/$KERNEL_CONFIG_PKG" ||
		die "$deb holds no usr/src/$KERNEL_CONFIG_PKG"
	mv "$KERNEL_SRC_DIR/config.tmp/usr/src/$KERNEL_CONFIG_PKG" "$KERNEL_CONFIG_DIR"
	rm -rf "$KERNEL_SRC_DIR/config.tmp"
	echo "$ver" > "$KERNEL_CONFIG_DIR/.version"
	echo "$ver" > "$KERNEL_SRC_DIR/version.tmp" && mv "$KERNEL_SRC_DIR/version.tmp" "$KERNEL_SRC_DIR/version"
	rm -rf "$KERNEL_SRC_DIR/apt"
}

# kernel_source_setup [refresh]: what scripts/setup does for the selected
# base.  With a complete record made against the current pin, nothing at
# all (no network).  A record whose files are missing fetches exactly the
# recorded revision.  No record, a moved pin, or "refresh": decide
# (kernel_source_decide, never below the record), then fetch what changed.
# One setup at a time per base (a lock in KERNEL_SRC_DIR).
kernel_source_setup() {
	local refresh=${1:-} have pin ver lock
	mkdir -p "$KERNEL_SRC_DIR"
	exec {lock}>"$KERNEL_SRC_DIR/.lock"
	flock "$lock"
	have=$(kernel_source_version)
	# A directory from before the pin was recorded (7.3's, tarball only)
	# was decided against the pin of its day: take it as today's.
	pin=$(cat "$KERNEL_SRC_DIR/pin" 2>/dev/null || echo "$KERNEL_SOURCE_VERSION")
	if [ -n "$have" ] && [ "$pin" = "$KERNEL_SOURCE_VERSION" ] && [ "$refresh" != refresh ]; then
		if kernel_source_complete; then
			log "setup: $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG $have (recorded; 'setup --refresh' to look for a newer one)"
		else
			kernel_source_apt "$KERNEL_SRC_DIR/apt"
			grep -qxF -- "$have" <(served_versions "$KERNEL_SOURCE_PKG") &&
				grep -qxF -- "$have" <(served_versions "$KERNEL_CONFIG_PKG") ||
				die "${KERNEL_SRC_DIR#"$BWAP_ROOT"/} records $have, but its files are incomplete and the archive no longer serves $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG at it; remove ${KERNEL_SRC_DIR#"$BWAP_ROOT"/} and run scripts/setup to decide again"
			kernel_source_fetch "$have"
		fi
	else
		kernel_source_apt "$KERNEL_SRC_DIR/apt"
		ver=$(kernel_source_decide "$have")
		if [ "$ver" != "$have" ] || ! kernel_source_complete; then
			[ -z "$have" ] || [ "$ver" = "$have" ] ||
				warn "$KERNEL_SOURCE_PKG: moving base $BASE from the recorded $have to $ver (prepare-tree extracts it once)"
			kernel_source_fetch "$ver"
		fi
		rm -rf "$KERNEL_SRC_DIR/apt"
	fi
	echo "$KERNEL_SOURCE_VERSION" > "$KERNEL_SRC_DIR/pin"
	[ "$(kernel_source_version)" = "$KERNEL_SOURCE_VERSION" ] ||
		warn "base $BASE uses $KERNEL_SOURCE_PKG $(kernel_source_version), not the pinned $KERNEL_SOURCE_VERSION (recorded in ${KERNEL_SRC_DIR#"$BWAP_ROOT"/}/version)"
	exec {lock}>&-
}

# kernel_source_missing: what setup --check reports for the selected base
# (nothing, and status 0, when the record and its files are complete).
kernel_source_missing() {
	local have
	have=$(kernel_source_version)
	kernel_source_complete && [ "$(cat "$KERNEL_SRC_DIR/pin" 2>/dev/null || echo "$KERNEL_SOURCE_VERSION")" = "$KERNEL_SOURCE_VERSION" ] && return 0
	echo "missing: $KERNEL_SOURCE_PKG and $KERNEL_CONFIG_PKG for base $BASE in ${KERNEL_SRC_DIR#"$BWAP_ROOT"/} (pinned: $KERNEL_SOURCE_VERSION${have:+; recorded: $have})"
	return 1
}
