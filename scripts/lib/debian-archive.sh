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
