# SPDX-License-Identifier: GPL-2.0
# Posted text names nothing of ours: not the project, its tools, its
# test machines or the distribution it packages for (issue 40).  Figures
# in it come from code in the posted tree.  Checked over everything the
# list receives: the cover letter and every patch, messages and added
# lines alike (docs, Kconfig help, selftest comments), and the placeholder
# identity the commits carry until export-series --postable puts the
# submitter's in.  Sourced after common.sh, never run.

# Extended regular expressions, matched case-insensitively.
NEUTRAL_WORDS=(
	'\bbwap'			# the project, bwapd, bwapctl
	'\b(rebalance|fault)-bench\b'	# our benchmarks
	'\b(wi-demo|mpol-fuzz)\b'	# our guest programs
	'\bdebian\b'			# the distribution we package for
	'\b[0-9]+-node guest\b'		# our test machines
	"\b(our|the series') (rig|repository|tools|guests?)\b"
	'\bthe rig\b'
	'\b1000-1003\b'			# the numbers our kernels use
	'\bupstream'			# the list's kernel is not "upstream" to itself
	# How our test machines behaved (issue 49 item 6): the list's machines
	# are not ours, so timings and counts seen on ours are not facts.
	'\bthe ([0-9.]+ )?debug kernels?\b'	# our debug kernel variant
	'\bemulated ([a-z0-9-]+ )?(machines?|rig|CPUs?|arm64|x86_64|guests?)\b'
	'\bmade [0-9]+ in [0-9]+\b'		# a count from one of our runs
	'\bon the (6\.12|7\.3)( LTS)? backport\b'	# the backport we keep
	'\b(6\.12|7\.3) and later\b'		# one of our bases as a boundary
)

# neutral_words_hits FILE...: each line of FILE that uses one of the words,
# as FILE:LINE:TEXT; nothing when the text is neutral.
neutral_words_hits() {
	local re
	re=$(IFS='|'; echo "${NEUTRAL_WORDS[*]}")
	grep -n -i -E "$re" "$@" /dev/null || true
}

# The bases we build (patches/BASE/), mainline's last.  Text that lands
# in the tree (the documentation and the selftests) and the man pages
# read the same whatever base they were written on: they name none of
# them.  The mainline posting names no other base: those are our
# backports.  Versions where mainline gained something (auto mode in
# 6.16) are history, not ours, and stay allowed.
NEUTRAL_BASES=(6.12 7.3)

# neutral_version_re VERSION...: an extended regular expression for any of
# the versions as a whole number (not 6.120, not 16.12).
neutral_version_re() {
	local IFS='|' v=("${@//./\\.}")
	printf '(^|[^0-9.])(%s)([^0-9]|$)' "${v[*]}"
}

# neutral_tree_hits PATCH...: each added line of a patch's
# Documentation/ or tools/testing/selftests/ files that names one of our
# bases, as PATCH:LINE:TEXT.
neutral_tree_hits() {
	local p re
	re=$(neutral_version_re "${NEUTRAL_BASES[@]}")
	for p in "$@"; do
		awk -v re="$re" -v f="$p" '
			/^diff --git / { tree = ($3 ~ /^a\/(Documentation|tools\/testing\/selftests)\//); next }
			tree && /^\+/ && !/^\+\+\+ / && $0 ~ re { print f ":" FNR ":" $0 }' "$p"
	done
}

# neutral_posted_hits BASE PATCH... [-- MANPAGE...]: every check of this
# file over what is posted for BASE, as FILE:LINE:TEXT: the words above
# in the patches and the man pages; our bases in the tree's text
# (neutral_tree_hits) and in the man pages; and, when BASE is mainline's,
# the other bases anywhere in its patches and letter.
neutral_posted_hits() {
	local base=$1 patches=() pages=() others=() b
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do patches+=("$1"); shift; done
	[ $# -eq 0 ] || shift
	pages=("$@")
	neutral_words_hits "${patches[@]}" "${pages[@]}"
	neutral_tree_hits "${patches[@]}"
	[ ${#pages[@]} -eq 0 ] ||
		grep -n -E "$(neutral_version_re "${NEUTRAL_BASES[@]}")" "${pages[@]}" /dev/null || true
	[ "$base" = "${NEUTRAL_BASES[-1]}" ] || return 0
	for b in "${NEUTRAL_BASES[@]}"; do [ "$b" = "$base" ] || others+=("$b"); done
	[ ${#others[@]} -eq 0 ] ||
		grep -n -E "$(neutral_version_re "${others[@]}")" "${patches[@]}" /dev/null || true
}
