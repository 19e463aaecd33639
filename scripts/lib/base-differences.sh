# SPDX-License-Identifier: GPL-2.0
# The owned files on the selected base: this repository's text (6.12's)
# with the base's named renames applied (patches/BASE/differences; 6.12
# has none).  Sourced after common.sh, never run.

# base_differences: the selected base's rules, one "NAME FILE COUNT FROM
# TO" a line, comments and blank lines dropped.
base_differences() {
	[ -f "$PATCHES/differences" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/differences"
}

# owned_for_base FILE: print the repository's FILE as the selected base has
# it.  Dies when a rule for FILE does not match exactly COUNT times, so a
# rule cannot silently stop applying.
owned_for_base() {
	local f=$1 rules
	rules=$(base_differences | awk -v f="$f" '$2 == f')
	if [ -z "$rules" ]; then
		cat "$BWAP_ROOT/$f"
		return
	fi
	RULES=$rules perl -0777 -ne '
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
		print $text;' "$BWAP_ROOT/$f"
}
