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
)

# neutral_words_hits FILE...: each line of FILE that uses one of the words,
# as FILE:LINE:TEXT; nothing when the text is neutral.
neutral_words_hits() {
	local re
	re=$(IFS='|'; echo "${NEUTRAL_WORDS[*]}")
	grep -n -i -E "$re" "$@" /dev/null || true
}
