# SPDX-License-Identifier: GPL-2.0
# The claims table beside each cover letter (patches/BASE/claims.md): every
# factual sentence of the letter and of the documentation's Limits and
# Return value sections, each with what shows it.  A row is a Markdown
# table row whose last cell holds one or more pieces of evidence in
# backquotes:
#   `test:FILE:CASE`   a selftest case: selftests/FILE has the word CASE
#   `kunit:FILE:CASE`  a KUnit case: mm/tests/FILE has KUNIT_CASE(CASE)
#   `code:PATH:TEXT`   the series' tree has TEXT in PATH (at the series'
#                      end, local patches excluded)
#   `untouched:PATH`   the series does not change PATH
#   `kunit-cases:N`    the series' KUnit suites (mm/tests/mempolicy*) have
#                      N cases in all
#   `part-code:P:PATH:TEXT`  as code:, in the tree at the end of part P
#                      (patches/BASE/parts): what a part's letter says of
#                      that part alone
#   `part-kunit-cases:P:N`   as kunit-cases:, at the end of part P
#   `repo:PATH[:TEXT]` a file of this repository (a script that runs the
#                      check the sentence states), with TEXT in it
#   `link:URL`         a published source the sentence cites
# A row with none fails, as does evidence that is not there.  Sourced
# after common.sh by check-series, never run.

# claims_part_end KTREE END P: the last commit of part P of the series
# ending at END (the one before the first patch of part P+1), from the
# parts file beside claims_check's $table; nothing if no patch has that
# subject (the caller says so: a die here would only end the $(...)).
claims_part_end() {
	local ktree=$1 end=$2 p=$3 next c
	next=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$(dirname "$table")/parts" | sed -n "$((p + 1))p")
	[ -n "$next" ] || { echo "$end"; return; }
	for c in $(git -C "$ktree" rev-list --reverse "bwap-base..$end"); do
		if [ "$(git -C "$ktree" log -1 --format=%s "$c")" = "$next" ]; then
			echo "$c~1"
			return
		fi
	done
}

# claims_check TABLE KTREE END: dies on the first row not shown; prints
# how many rows and pieces of evidence were checked.
claims_check() {
	local table=$1 ktree=$2 end=$3 line ev kind rest path text n=0 e=0 where rev
	where=${table#"$BWAP_ROOT"/}
	[ -f "$table" ] || die "no $where: every cover letter needs its claims table"
	while IFS= read -r line; do
		# Rows only: not the header, not the separator.
		[[ "$line" == '|'* ]] || continue
		[[ "$line" =~ ^\|[[:space:]]*(claim|-+)[[:space:]]*\| ]] && continue
		n=$((n + 1))
		local cell=${line%|}
		cell=${cell##*|}
		local found=0
		while [[ "$cell" =~ \`([a-z-]+):([^\`]*)\` ]]; do
			cell=${cell#*"${BASH_REMATCH[0]}"}
			kind=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
			found=$((found + 1)) e=$((e + 1))
			case "$kind" in
			test|kunit)
				path=${rest%%:*} text=${rest#*:}
				local dir=selftests
				[ "$kind" = kunit ] && dir=mm/tests
				[ -f "$BWAP_ROOT/$dir/$path" ] ||
					die "$where row $n: no $dir/$path"
				if [ "$kind" = kunit ]; then
					grep -q "KUNIT_CASE[A-Z_]*($text)" "$BWAP_ROOT/$dir/$path" ||
						die "$where row $n: $dir/$path has no KUnit case $text"
				else
					grep -qw -- "$text" "$BWAP_ROOT/$dir/$path" ||
						die "$where row $n: $dir/$path has no case $text"
				fi ;;
			code)
				path=${rest%%:*} text=${rest#*:}
				# grep reads it all: -q would cut git show's pipe (pipefail).
				git -C "$ktree" show "$end:$path" 2>/dev/null | grep -F -- "$text" >/dev/null ||
					die "$where row $n: $path at the series' end has no '$text'"
				;;
			untouched)
				[ -z "$(git -C "$ktree" diff --name-only bwap-base "$end" -- "$rest")" ] ||
					die "$where row $n: the series changes $rest"
				;;
			kunit-cases|part-kunit-cases)
				local got
				rev=$end
				if [ "$kind" = part-kunit-cases ]; then
					rev=$(claims_part_end "$ktree" "$end" "${rest%%:*}")
					[ -n "$rev" ] || die "$where row $n: part ${rest%%:*} has no end in the series (parts)"
					rest=${rest#*:}
				fi
				got=$( { git -C "$ktree" grep -h 'KUNIT_CASE' "$rev" -- 'mm/tests/mempolicy*_kunit.c' || true; } |
					grep -c 'KUNIT_CASE[A-Z_]*(' || true)
				[ "$got" = "$rest" ] ||
					die "$where row $n: the KUnit suites have $got cases, not $rest ($kind)"
				;;
			part-code)
				rev=$(claims_part_end "$ktree" "$end" "${rest%%:*}")
				[ -n "$rev" ] || die "$where row $n: part ${rest%%:*} has no end in the series (parts)"
				rest=${rest#*:}
				path=${rest%%:*} text=${rest#*:}
				git -C "$ktree" show "$rev:$path" 2>/dev/null | grep -F -- "$text" >/dev/null ||
					die "$where row $n: $path at the end of its part has no '$text'"
				;;
			repo)
				path=${rest%%:*} text=
				[ "$path" = "$rest" ] || text=${rest#*:}
				[ -f "$BWAP_ROOT/$path" ] || die "$where row $n: no $path in the repository"
				[ -z "$text" ] || grep -qF -- "$text" "$BWAP_ROOT/$path" ||
					die "$where row $n: $path has no '$text'"
				;;
			link)
				[[ "$rest" =~ ^(https?://|arXiv:) ]] ||
					die "$where row $n: '$rest' is not a link"
				;;
			*) die "$where row $n: unknown evidence kind '$kind'" ;;
			esac
		done
		[ $found -gt 0 ] || die "$where row $n states a claim with nothing that shows it"
	done < "$table"
	[ $n -gt 0 ] || die "$where has no rows"
	echo "$n claims, $e pieces of evidence"
}
