# SPDX-License-Identifier: GPL-2.0
# The selftests the series carries.  selftests/ is their one source; the
# series' last patch adds the same files to tools/testing/selftests/mm/ and
# lists them in that folder's Makefile and run_vmtests.sh.  Every file of
# selftests/ goes in but the rig's own (RIG_FILES in selftests/Makefile).
# The text is the same on both bases, so no differences apply.  Sourced
# after common.sh, never run.

SELFTESTS_TREE_DIR=tools/testing/selftests/mm
# New files the series adds there that are not tests: 7.3's run_vmtests.sh
# wants one ksft_CATEGORY.sh wrapper a category.
SELFTESTS_TREE_ONLY=(ksft_mempolicy2.sh)

# selftests_in_repo: the names of the files of selftests/ the series
# carries, one a line, sorted.
selftests_in_repo() {
	local rig
	rig=$(make -s -C "$BWAP_ROOT/selftests" list-rig-files)
	(cd "$BWAP_ROOT/selftests" && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n') |
		grep -vxF -f <(echo "$rig") | sort
}

# selftests_in_tree REV: the names of the files the tree at REV has in
# SELFTESTS_TREE_DIR and the plain base has not, wrappers apart, sorted.
selftests_in_tree() {
	git -C "$KTREE" diff --name-only --diff-filter=A bwap-base "$1" -- "$SELFTESTS_TREE_DIR" |
		sed 's|.*/||' | grep -vxF -f <(printf '%s\n' "${SELFTESTS_TREE_ONLY[@]}") | sort
}

# selftests_patch: the series' patches that add or change the tests, one
# for each part that has tests (for messages).
selftests_patch() {
	local p out=()
	for p in $(grep -l "^+++ b/$SELFTESTS_TREE_DIR/" "$PATCHES"/[0-9]*.patch 2>/dev/null); do
		out+=("${p##*/}")
	done
	echo "patches/$BASE/{$(IFS=,; echo "${out[*]}")}"
}

# selftests_compare REV: 0 when the tree at REV carries exactly the
# repository's selftests, each the same text, and lists every test in
# SELFTESTS_TREE_DIR's Makefile and run_vmtests.sh; otherwise says which
# file differs and how, and returns 1.
selftests_compare() {
	local rev=$1 f rc=0 prog where
	where="$(selftests_patch) (the tree's $SELFTESTS_TREE_DIR)"
	while read -r f; do
		echo "selftests/$f is not in $where: commit it there"
		rc=1
	done < <(comm -23 <(selftests_in_repo) <(selftests_in_tree "$rev"))
	while read -r f; do
		echo "$SELFTESTS_TREE_DIR/$f is new in $TREE but not in selftests/: copy it there (scripts/export-series --base 6.12 does)"
		rc=1
	done < <(comm -13 <(selftests_in_repo) <(selftests_in_tree "$rev"))
	while read -r f; do
		if ! git -C "$KTREE" show "$rev:$SELFTESTS_TREE_DIR/$f" |
			cmp -s - "$BWAP_ROOT/selftests/$f"; then
			git -C "$KTREE" show "$rev:$SELFTESTS_TREE_DIR/$f" |
				diff -u --label "selftests/$f (repository)" \
					--label "$SELFTESTS_TREE_DIR/$f ($TREE)" \
					"$BWAP_ROOT/selftests/$f" - | head -20
			echo "selftests/$f differs from its copy in $where (above)"
			rc=1
		fi
	done < <(comm -12 <(selftests_in_repo) <(selftests_in_tree "$rev"))
	# Each test built by the kernel's own Makefile and run by run_vmtests.sh.
	while read -r f; do
		prog=${f%.c}
		git -C "$KTREE" show "$rev:$SELFTESTS_TREE_DIR/Makefile" |
			grep -qx "TEST_GEN_FILES += $prog" ||
			{ echo "$SELFTESTS_TREE_DIR/Makefile has no 'TEST_GEN_FILES += $prog'"; rc=1; }
		git -C "$KTREE" show "$rev:$SELFTESTS_TREE_DIR/run_vmtests.sh" |
			grep -qx "CATEGORY=\"mempolicy2\" run_test ./$prog" ||
			{ echo "$SELFTESTS_TREE_DIR/run_vmtests.sh does not run ./$prog in the mempolicy2 category"; rc=1; }
	done < <(selftests_in_repo | grep '\.c$')
	return $rc
}

# selftests_check REV: check-series --quick's check of the series (REV,
# the series' end in the tree, which git am of patches/BASE/ was just
# shown to give) against selftests/.  Dies saying how to fix a difference.
selftests_check() {
	local n
	if ! selftests_compare "$1" >&2; then
		die "the series' selftests differ from selftests/ (above); selftests/ is their one source:
edit selftests/ and copy the files to $TREE/$SELFTESTS_TREE_DIR, or edit them in build/linux
(6.12); commit them into the patch of $(selftests_patch) that added what changed (git commit --fixup, then git rebase -i
--autosquash bwap-base) and run scripts/export-series --base $BASE"
	fi
	n=$(selftests_in_repo | wc -l)
	log "check-series: $(selftests_patch) carry the $n files of selftests/ the series takes, each equal at the series' end"
}

# selftests_export REV: export-series on a base without named differences
# (6.12): write the tree's copies at REV (the series' end) into
# selftests/, delete those the tree no longer has.  The rig's own files
# are left alone.
selftests_export() {
	local f rev=$1
	if [ -z "$(selftests_in_tree "$rev")" ]; then
		warn "$TREE carries none of selftests/ (no selftests patch yet?); selftests/ left as it is"
		return 0
	fi
	while read -r f; do
		git -C "$KTREE" show "$rev:$SELFTESTS_TREE_DIR/$f" > "$BWAP_ROOT/selftests/$f"
	done < <(selftests_in_tree "$rev")
	while read -r f; do
		rm -f "$BWAP_ROOT/selftests/$f"
	done < <(comm -23 <(selftests_in_repo) <(selftests_in_tree "$rev"))
}
