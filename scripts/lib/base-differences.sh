# SPDX-License-Identifier: GPL-2.0
# The owned files on the selected base: this repository's text (6.12's)
# with the base's named differences applied (patches/BASE/differences; 6.12
# has none): whole-word renames, then hunks where the base's idiom needs a
# different text.  Sourced after common.sh, never run.

# base_differences: the selected base's rules, comments and blank lines
# dropped: "NAME FILE COUNT FROM TO" (a rename) or "NAME FILE diff PATH"
# (a hunk, PATH relative to patches/BASE/).
base_differences() {
	[ -f "$PATCHES/differences" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/differences"
}

# base_difference_files: the hunk files the rules name, one a line.
base_difference_files() {
	base_differences | awk '$3 == "diff" { print $4 }'
}

# owned_renamed FILE: the repository's FILE with only the renames applied.
owned_renamed() {
	BWAP_NO_HUNKS=1 owned_for_base "$1"
}

# remake_hunk NAME: rewrite hunk NAME from the tree ($KTREE): the diff from
# the renamed repository file to the tree's, under the hunk file's comment
# lines.  A file has at most one hunk, so the hunks never stack.
remake_hunk() {
	local name=$1 file path new
	read -r file path < <(base_differences | awk -v n="$name" '$1 == n && $3 == "diff" { print $2, $4 }')
	[ -n "$file" ] || { echo "error: no hunk named $name in patches/$BASE/differences" >&2; return 1; }
	[ -s "$KTREE/$file" ] || { echo "error: $KTREE/$file is missing or empty; hunk $name not remade" >&2; return 1; }
	new=$(mktemp) || return 1
	{ [ ! -f "$PATCHES/$path" ] || sed -n '/^#/p' "$PATCHES/$path"
	  diff -u --label "a/$file" --label "b/$file" \
		<(owned_renamed "$file") "$KTREE/$file"
	} > "$new"
	mkdir -p "$(dirname "$PATCHES/$path")"
	mv "$new" "$PATCHES/$path"
}

# owned_for_base FILE: print the repository's FILE as the selected base has
# it.  Dies when a rename does not match exactly COUNT times, or a hunk does
# not apply without fuzz, so a rule cannot silently stop applying.
owned_for_base() {
	local f=$1 renames hunks tmp hunk name
	renames=$(base_differences | awk -v f="$f" '$2 == f && $3 != "diff"')
	hunks=
	[ -n "${BWAP_NO_HUNKS:-}" ] ||
		hunks=$(base_differences | awk -v f="$f" '$2 == f && $3 == "diff" { print $1, $4 }')
	if [ -z "$renames$hunks" ]; then
		cat "$BWAP_ROOT/$f"
		return
	fi
	tmp=$(mktemp) || return 1
	RULES=$renames perl -0777 -ne '
		my $text = $_;
		for my $rule (split /\n/, $ENV{RULES}) {
			my ($name, $file, $count, $from, $to) = split " ", $rule;
			my $n = () = $text =~ /\b\Q$from\E\b/g;
			if ($n != $count) {
				print STDERR "error: difference $name: $file has $from $n times, patches/'"$BASE"'/differences says $count; update the list\n";
				exit 1;
			}
			$text =~ s/\b\Q$from\E\b/$to/g;
		}
		print $text;' "$BWAP_ROOT/$f" > "$tmp" || { rm -f "$tmp"; return 1; }
	while read -r name hunk; do
		[ -n "$name" ] || continue
		if ! patch -s -F0 --no-backup-if-mismatch -r - "$tmp" \
			< "$PATCHES/$hunk" >&2; then
			echo "error: difference $name: patches/$BASE/$hunk no longer applies to $f without fuzz; remake it (patches/$BASE/differences says how)" >&2
			rm -f "$tmp"
			return 1
		fi
	done <<< "$hunks"
	cat "$tmp"
	rm -f "$tmp"
}

# The series' Kconfig entries have one source too: Kconfig.bwap at the
# top of this repository (Documentation/DESIGN.md), which the series
# carries inside mm/Kconfig, from "config NUMA_POLICY_WEIGHTS" to the
# last entry before mm/Kconfig's "endmenu".  Kconfig.bwap's lines before
# that first entry are its own comments.  patches/BASE/differences may
# rename in it, as in any owned file.
KCONFIG_SOURCE=Kconfig.bwap
KCONFIG_FIRST="config NUMA_POLICY_WEIGHTS"

# kconfig_block_for_base: Kconfig.bwap's entries as the selected base has them.
kconfig_block_for_base() {
	owned_for_base "$KCONFIG_SOURCE" | sed -n "/^$KCONFIG_FIRST\$/,\$p"
}

# kconfig_block_of FILE: the series' entries in a whole mm/Kconfig (stdin
# when FILE is -), trailing blank lines dropped.
kconfig_block_of() {
	awk -v first="$KCONFIG_FIRST" '
		$0 == first { on = 1 }
		on && /^endmenu/ { exit }
		on { buf = buf $0 "\n" }
		END { sub(/\n+$/, "\n", buf); printf "%s", buf }' "$1"
}

# kconfig_splice BLOCK_FILE: put BLOCK_FILE's entries into the tree's
# mm/Kconfig in place of the series' (or before the last "endmenu").
kconfig_splice() {
	python3 - "$KTREE/mm/Kconfig" "$1" "$KCONFIG_FIRST" <<'PY'
import sys
path, block, first = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
lines = open(path).read().split('\n')
end = max(i for i, l in enumerate(lines) if l.startswith('endmenu'))
start = lines.index(first) if first in lines else end
new = lines[:start] + block.rstrip('\n').split('\n') + [''] + lines[end:]
open(path, 'w').write('\n'.join(new))
PY
}
