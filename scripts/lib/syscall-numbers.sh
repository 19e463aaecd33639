# SPDX-License-Identifier: GPL-2.0
#
# The one place that maps between the two numberings of the four syscalls
# (Documentation/DESIGN.md, "System call numbers"):
#   - posted: the series in patches/BASE/ takes the next free numbers of
#     its base in every architecture's table (473-476 on 7.3, 463-466 on
#     6.12; a merge assigns the real ones);
#   - packaged: the kernels we build, test and package keep 1000-1003 on
#     x86_64 and the generic table (arm64), far above upstream's range, so
#     that our tools work on every base and a kernel without the series
#     answers ENOSYS.
# prepare-tree puts one commit on top of the series in the base's tree,
# LOCAL_NUMBERS_SUBJECT, that renumbers x86_64's table, the generic table
# and asm-generic/unistd.h.  export-series and check-series stop below it:
# it is never posted.  Sourced after lib/common.sh (KTREE set).

MPOL2_SYSCALLS=(set_mempolicy2 get_mempolicy2 mbind2 process_mpol_reweight)
PACKAGED_NR_FIRST=1000
LOCAL_NUMBERS_SUBJECT="LOCAL: mempolicy2 syscalls at 1000-1003, as the kernels we build have them"
LOCAL_NUMBERS_FILES=(arch/x86/entry/syscalls/syscall_64.tbl scripts/syscall.tbl
	include/uapi/asm-generic/unistd.h)

# Local patches: commits whose subject starts with LOCAL_PREFIX, between the
# series and the local numbers commit, that the kernels we build carry but
# the list never sees (a test-only debugfs knob).  export-series writes
# them to patches/BASE/local/; prepare-tree applies them after the series.
LOCAL_PREFIX="LOCAL: "

# below_numbers [REF]: REF (default HEAD), or its parent when REF is the
# local numbers commit: the series plus its local patches.
below_numbers() {
	local ref=${1:-HEAD}
	if [ "$(git -C "$KTREE" log -1 --format=%s "$ref")" = "$LOCAL_NUMBERS_SUBJECT" ]; then
		git -C "$KTREE" rev-parse "$ref^"
	else
		git -C "$KTREE" rev-parse "$ref"
	fi
}

# series_end [REF]: the series' last commit below REF (default HEAD), the
# local numbers commit and the local patches under it left out.
series_end() {
	local ref
	ref=$(below_numbers "${1:-HEAD}")
	while [[ "$(git -C "$KTREE" log -1 --format=%s "$ref")" == "$LOCAL_PREFIX"* ]]; do
		ref=$(git -C "$KTREE" rev-parse "$ref^")
	done
	echo "$ref"
}

# Die unless the local numbers commit is REF (default HEAD) and nothing
# below it, and the local patches are all above the series: a commit made
# on top of either would be left out of the series.
require_local_numbers_on_top() {
	local ref=${1:-HEAD} n
	n=$(git -C "$KTREE" log --format=%s "bwap-base..$ref" | grep -cxF "$LOCAL_NUMBERS_SUBJECT" || true)
	[ "$n" -le 1 ] || die "$KTREE has $n '$LOCAL_NUMBERS_SUBJECT' commits; keep one, the last"
	if [ "$n" -eq 1 ] && [ "$(git -C "$KTREE" log -1 --format=%s "$ref")" != "$LOCAL_NUMBERS_SUBJECT" ]; then
		die "'$LOCAL_NUMBERS_SUBJECT' is not the last commit in $KTREE; move it last (git rebase -i bwap-base) or drop it and run scripts/prepare-tree --base $BASE --local-numbers"
	fi
	n=$(git -C "$KTREE" log --format=%s "bwap-base..$(series_end "$ref")" | grep -c "^$LOCAL_PREFIX" || true)
	[ "$n" -eq 0 ] || die "$KTREE has $n '$LOCAL_PREFIX' commits inside the series; move them above its last patch (git rebase -i bwap-base)"
}

# Rewrite the three files in the work tree from posted to packaged numbers.
local_numbers_edit() {
	python3 - "$KTREE" "$PACKAGED_NR_FIRST" "${MPOL2_SYSCALLS[@]}" <<'PY'
import re, sys
tree, first, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def rw(path, fn):
    p = '%s/%s' % (tree, path)
    s = open(p).read()
    t = fn(s)
    if t == s:
        sys.exit('%s: the posted numbers of %s are not there' % (path, ', '.join(names)))
    open(p, 'w').write(t)

def entry(nr, abi, name, col):
    head = '%d\t%s\t%s' % (nr, abi, name)
    width = 16 + len(name)
    tabs = 0
    while width < col or tabs == 0:
        width = (width // 8 + 1) * 8
        tabs += 1
    return head + '\t' * tabs + 'sys_' + name + '\n'

def table(comment, abi, col):
    def fn(s):
        pat = r'^\d+\tcommon\t(%s)\t+sys_\1\n' % '|'.join(names)
        if len(re.findall(pat, s, re.M)) != len(names):
            return s
        s = re.sub(pat, '', s, flags=re.M)
        return s + comment + ''.join(entry(first + i, abi, n, col) for i, n in enumerate(names))
    return fn

rw('arch/x86/entry/syscalls/syscall_64.tbl', table(
    '#\n# BWAP mempolicy2 syscalls, far above the upstream range so that a kernel\n'
    '# without them answers ENOSYS instead of running another syscall.\n#\n', '64', 40))
rw('scripts/syscall.tbl', table(
    '\n# BWAP mempolicy2 syscalls, with the numbers they have on x86_64: far above\n'
    '# the upstream range, so that a kernel without them answers ENOSYS instead\n'
    '# of running another syscall.\n', 'common', 48))

def unistd(s):
    s = s.replace('\n/* mm/mempolicy.c */\n#define __NR_%s ' % names[0],
                  '\n/* BWAP mempolicy2 syscalls, far above the upstream range, as on x86_64. */\n'
                  '#define __NR_%s ' % names[0])
    for i, n in enumerate(names):
        s = re.sub(r'^#define __NR_%s \d+$' % n, '#define __NR_%s %d' % (n, first + i), s, flags=re.M)
    return re.sub(r'^#define __NR_syscalls \d+$', '#define __NR_syscalls %d' % (first + len(names)),
                  s, count=1, flags=re.M)
rw('include/uapi/asm-generic/unistd.h', unistd)
PY
}

# Put the local numbers commit on top of the tree's HEAD (clean tree),
# with a fixed date: the same tree gives the same commit id.
local_numbers_commit() {
	local_numbers_edit || die "cannot renumber the syscalls in $KTREE (above)"
	git -C "$KTREE" add -f "${LOCAL_NUMBERS_FILES[@]}"
	GIT_AUTHOR_DATE="1970-01-01T00:00:00Z" GIT_COMMITTER_DATE="1970-01-01T00:00:00Z" \
		git -C "$KTREE" commit -q -m "$LOCAL_NUMBERS_SUBJECT" -m \
"Not part of the series: scripts/lib/syscall-numbers.sh makes this commit
on top of it, and scripts/export-series leaves it out."
}

# check_syscall_tables REF: every syscall table of the base (each arch's
# and the generic one) and asm-generic/unistd.h, at the series' end REF,
# gives the four syscalls the next free numbers of that table, in order,
# and their tools/ copies are the base's: perf's maintainers sync those
# (tools/include/uapi/README), not a series.  Prints one line per table;
# returns 1 on a miss.
check_syscall_tables() {
	local ref=$1 f rc=0 base_max got
	while IFS= read -r f; do
		[ "$(git -C "$KTREE" ls-tree "$ref" -- "$f" | awk '{print $1}')" = 120000 ] && continue
		# The highest number on the plain base, below the x32 range
		# (512) on x86_64.
		base_max=$(git -C "$KTREE" show "bwap-base:$f" |
			awk -v lim=$([[ $f = *syscall_64.tbl ]] && echo 512 || echo 1000000) \
			'$1 ~ /^[0-9]+$/ && $1 < lim { if ($1 > m) m = $1 } END { print m + 0 }')
		got=$(git -C "$KTREE" show "$ref:$f" | awk -v names="${MPOL2_SYSCALLS[*]}" '
			BEGIN { n = split(names, want, " ") }
			$1 ~ /^[0-9]+$/ { nr[$3] = $1 }
			END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), (want[i] in nr ? nr[want[i]] : "-") }')
		if [ "$got" = "$((base_max + 1)) $((base_max + 2)) $((base_max + 3)) $((base_max + 4))" ]; then
			printf '  ok    %-52s %s\n' "$f" "$got"
		else
			printf '  WRONG %-52s %s (want %d-%d)\n' "$f" "$got" $((base_max + 1)) $((base_max + 4))
			rc=1
		fi
	done < <(git -C "$KTREE" ls-tree -r --name-only "$ref" -- arch scripts |
		grep -E '(^|/)syscall[^/]*\.tbl$')
	if git -C "$KTREE" diff --quiet bwap-base "$ref" -- tools/include/uapi tools/perf/arch tools/scripts; then
		printf '  ok    %-52s %s\n' "tools/ copies" "the base's"
	else
		printf '  WRONG %-52s %s\n' "tools/ copies" "changed by the series"
		rc=1
	fi
	for f in include/uapi/asm-generic/unistd.h; do
		base_max=$(git -C "$KTREE" show "bwap-base:$f" | sed -n 's/^#define __NR_syscalls \([0-9]*\)$/\1/p')
		got=$(for s in "${MPOL2_SYSCALLS[@]}"; do
			git -C "$KTREE" show "$ref:$f" | sed -n "s/^#define __NR_$s \([0-9]*\)\$/\1/p"; done | xargs)
		if [ "$got" = "$base_max $((base_max + 1)) $((base_max + 2)) $((base_max + 3))" ] &&
		   git -C "$KTREE" show "$ref:$f" | grep -qx "#define __NR_syscalls $((base_max + 4))"; then
			printf '  ok    %-52s %s\n' "$f" "$got"
		else
			printf '  WRONG %-52s %s (want %d-%d, __NR_syscalls %d)\n' "$f" "$got" \
				"$base_max" $((base_max + 3)) $((base_max + 4))
			rc=1
		fi
	done
	return $rc
}
