# SPDX-License-Identifier: GPL-2.0
# Debian 12's numactl source package, pinned: shared by scripts/build-numactl
# (static guest build) and scripts/package (the rebuilt .deb).  Sourced after
# common.sh, never run.

# The base: Debian 12 (bookworm) numactl.  The SHA-256 sums pin the exact
# files; apt also checks them against the signed Sources index.  Change the
# version and all three sums together.
NUMACTL_VERSION=2.0.16-1
NUMACTL_SHA256="\
d77b5d389ac5cf5098752fd27c382fce13e0340cf15c84a52ba38b167999fb95  numactl_2.0.16-1.dsc
a35c3bdb3efab5c65927e0de5703227760b1101f5e27ab741d8f32b3d5f0a44c  numactl_2.0.16.orig.tar.gz
3e55d97df079693a12b92462ef9526bd305ff22e55ecbd6e37e37049e41b0a2c  numactl_2.0.16-1.debian.tar.xz"
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# numactl_fetch DL APTDIR: make sure DL holds the pinned numactl source
# files, fetching them with apt-get source through a private apt
# configuration in APTDIR.  Dies if they cannot be fetched or do not match.
numactl_fetch() {
	local DL apt aptopts
	DL=$(realpath -m "$1") apt=$(realpath -m "$2")
	mkdir -p "$DL"
	if ! numactl_verify "$DL" 2>/dev/null; then
		log "fetching numactl $NUMACTL_VERSION source"
		rm -rf "$apt"
		mkdir -p "$apt/lists/partial" "$apt/parts" "$apt/cache/archives/partial"
		# deb-src lines for the Debian suites in this machine's apt sources.
		# The security archive is left out: its Sources index lists packages
		# it does not carry in its pool (404 for numactl 2.0.16-1).
		apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' \
			'Origin: Debian' 'Identifier: Packages' 2>/dev/null | sort -u |
			while read -r uri suite comp; do
				case "$suite" in *-security) continue ;; esac
				echo "deb-src [signed-by=$DEBIAN_KEYRING] $uri $suite $comp"
			done > "$apt/sources.list"
		if ! grep -q ' bookworm ' "$apt/sources.list"; then
			warn "apt has no Debian bookworm suite configured (or no lists yet); using deb.debian.org"
			echo "deb-src [signed-by=$DEBIAN_KEYRING] http://deb.debian.org/debian bookworm main" >> "$apt/sources.list"
		fi
		aptopts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts"
			-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
			-o APT::Sandbox::User=root -q)
		# 'update' checks the InRelease signatures against the Debian keyring;
		# 'source' then checks each file against the signed Sources index.
		apt-get "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
			{ cat "$apt/update.log" >&2; die "apt-get update for deb-src failed (is deb.debian.org reachable?)"; }
		(cd "$DL" && apt-get "${aptopts[@]}" source --download-only "numactl=$NUMACTL_VERSION") >"$apt/source.log" 2>&1 ||
			{ cat "$apt/source.log" >&2; die "apt-get source numactl=$NUMACTL_VERSION failed"; }
		numactl_verify "$DL" || die "numactl source in $DL does not match the pinned SHA-256 sums"
	fi
}

# numactl_verify DL: 0 when DL holds the pinned files, unchanged.
numactl_verify() {
	(cd "$1" && sha256sum --quiet --check --status - <<< "$NUMACTL_SHA256")
}
