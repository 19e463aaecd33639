# SPDX-License-Identifier: GPL-2.0
# The DAMON series and their trees.  Two series, each a folder of
# patches/ and a tree of its own, a detached git worktree of build/linux-7.3
# (so the 7.3 tree's checkout and branch stay as they are):
#   damon-7.3        the dests "shares" mode, on the BWAP tree (bwap-applied):
#                    build/linux-7.3-damon, the "damon" kernel variant
#                    (run-bench --peers);
#   damon-fixes-7.3  the two vaddr migration fixes, on the plain base
#                    (bwap-base): build/linux-7.3-damon-fixes, the
#                    "damon-fixes" kernel variant.
# damon_select_series NAME picks one; damon-7.3 is the default.  Sourced
# after lib/common.sh.

DAMON_BASE_TREE=$BWAP_BUILD/linux-7.3

# damon_select_series NAME: set DAMON_SERIES, DAMON_PATCHES (its folder),
# DAMON_TREE (its tree) and DAMON_FROM (the tag of build/linux-7.3 the tree
# starts from).
damon_select_series() {
	case "$1" in
	damon-7.3) DAMON_TREE=$BWAP_BUILD/linux-7.3-damon DAMON_FROM=bwap-applied ;;
	damon-fixes-7.3) DAMON_TREE=$BWAP_BUILD/linux-7.3-damon-fixes DAMON_FROM=bwap-base ;;
	*) die "unknown DAMON series '$1' (damon-7.3 or damon-fixes-7.3)" ;;
	esac
	DAMON_SERIES=$1
	DAMON_PATCHES=$BWAP_ROOT/patches/$1
}
damon_select_series damon-7.3

# damon_series_files: the patch files patches/$DAMON_SERIES/series names, in
# order, one path a line; dies on a name that is not there.
damon_series_files() {
	local line
	[ -f "$DAMON_PATCHES/series" ] || die "no patches/$DAMON_SERIES/series"
	while IFS= read -r line; do
		line=${line%%#*}
		line=$(echo "$line" | xargs)
		[ -n "$line" ] || continue
		[ -f "$DAMON_PATCHES/$line" ] || die "patches/$DAMON_SERIES/series names $line, which does not exist"
		echo "$DAMON_PATCHES/$line"
	done < "$DAMON_PATCHES/series"
}

# damon_git ARGS...: git in DIR ($1) with prepare-tree's identity and no
# user or system configuration, so git am makes the same commits anywhere.
damon_git() {
	local dir=$1
	shift
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git -C "$dir" -c user.name="BWAP developers" -c user.email=bwap@example.org \
		-c core.attributesFile=/dev/null "$@"
}

# damon_apply_series DIR: git am the series in DIR (a checkout of the base
# the series goes on), patch by patch; dies naming the patch that fails.
# WHAT names the base in the message.
damon_apply_series() {
	local dir=$1 what=$2 p n=0 files
	mapfile -t files < <(damon_series_files)
	[ ${#files[@]} -gt 0 ] || die "patches/$DAMON_SERIES/series names no patch"
	for p in "${files[@]}"; do
		n=$((n + 1))
		if ! damon_git "$dir" am -q --whitespace=nowarn --committer-date-is-author-date "$p" >/dev/null 2>&1; then
			damon_git "$dir" am --abort >/dev/null 2>&1 || true
			die "patches/$DAMON_SERIES/${p##*/} ($n of ${#files[@]}) does not apply to $what.
Rebase the DAMON series onto it (in a worktree of build/linux-7.3 at that
commit: git am the patches before it, then 'git am -3' this one and fix the
conflict), then rewrite the folder with scripts/export-damon-series --series $DAMON_SERIES --tree DIR"
		fi
	done
}

# damon_tree_inputs: what the tree is made from, one line: the commit of
# DAMON_FROM and the sha256 of each patch of the series, in order.
damon_tree_inputs() {
	local p
	{
		git -C "$DAMON_BASE_TREE" rev-parse "$DAMON_FROM"
		while IFS= read -r p; do
			sha256sum < "$p" | cut -d' ' -f1
		done < <(damon_series_files)
	} | tr '\n' ' '
}

# prepare_damon_tree: make the selected series' tree, or leave it if its inputs
# did not change since it was made.  A remake checks out DAMON_FROM in
# the same worktree, so only the files that changed get new times and the
# next build is incremental.  Commits or edits made in the tree (it is
# export-damon-series's default tree) are never thrown away.
prepare_damon_tree() {
	local want stamp gitdir made
	[ -d "$DAMON_BASE_TREE/.git" ] || die "no build/linux-7.3; run scripts/prepare-tree --base 7.3"
	git -C "$DAMON_BASE_TREE" rev-parse -q --verify "$DAMON_FROM" >/dev/null ||
		die "build/linux-7.3 has no $DAMON_FROM tag; run scripts/prepare-tree --base 7.3"
	want=$(damon_tree_inputs)
	# A worktree whose git directory is gone (prepare-tree rebuilt the 7.3
	# tree) is made anew.
	if [ -e "$DAMON_TREE" ] && ! git -C "$DAMON_TREE" rev-parse --git-dir >/dev/null 2>&1; then
		log "damon-tree: ${DAMON_TREE#"$BWAP_ROOT"/} is no longer a worktree of build/linux-7.3; making it anew"
		rm -rf "$DAMON_TREE"
	fi
	git -C "$DAMON_BASE_TREE" worktree prune
	if [ ! -e "$DAMON_TREE" ]; then
		git -C "$DAMON_BASE_TREE" worktree add -q --detach "$DAMON_TREE" "$DAMON_FROM"
	fi
	gitdir=$(git -C "$DAMON_TREE" rev-parse --absolute-git-dir)
	stamp=$gitdir/bwap-damon-inputs
	made=$(cat "$gitdir/bwap-damon-head" 2>/dev/null || true)
	if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		[ "$made" = "$(git -C "$DAMON_TREE" rev-parse HEAD)" ] ||
			log "damon-tree: ${DAMON_TREE#"$BWAP_ROOT"/} has commits beyond the series; building them as they are"
		log "damon-tree: ${DAMON_TREE#"$BWAP_ROOT"/} is up to date"
		return 0
	fi
	if [ -n "$made" ] && { [ "$made" != "$(git -C "$DAMON_TREE" rev-parse HEAD)" ] ||
		[ -n "$(git -C "$DAMON_TREE" status --porcelain --untracked-files=no)" ]; }; then
		die "${DAMON_TREE#"$BWAP_ROOT"/} has work not in patches/$DAMON_SERIES/ (commits or changes), and its inputs changed.
Export it first (scripts/export-damon-series --series $DAMON_SERIES), or drop it (git -C ${DAMON_BASE_TREE#"$BWAP_ROOT"/} worktree remove --force ${DAMON_TREE#"$BWAP_ROOT"/})"
	fi
	log "damon-tree: making ${DAMON_TREE#"$BWAP_ROOT"/}: $DAMON_FROM + patches/$DAMON_SERIES/series"
	damon_git "$DAMON_TREE" am --abort >/dev/null 2>&1 || true
	damon_git "$DAMON_TREE" checkout -q -f --detach "$DAMON_FROM"
	damon_git "$DAMON_TREE" clean -q -fdx
	rm -f "$stamp"
	damon_apply_series "$DAMON_TREE" "build/linux-7.3 at $DAMON_FROM ($(git -C "$DAMON_BASE_TREE" log -1 --format='%h %s' "$DAMON_FROM"))"
	git -C "$DAMON_TREE" rev-parse HEAD > "$gitdir/bwap-damon-head"
	echo "$want" > "$stamp"
	log "damon-tree: ${DAMON_TREE#"$BWAP_ROOT"/} at $(git -C "$DAMON_TREE" log -1 --format='%h %s')"
}
