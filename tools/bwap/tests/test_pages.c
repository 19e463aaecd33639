// SPDX-License-Identifier: GPL-2.0
/* numa_maps parsing and largest-remainder targets, as the kernel computes them. */
#include <string.h>

#include "bwap.h"
#include "bwap.h"
#include "tap.h"

/* Lines in the format of a BWAP kernel (fs/proc/task_mmu.c with patch 0005). */
static const char maps[] =
	"00400000 weighted interleave:0-3 file=/bwap/bin/bwap-toucher mapped=20 N0=20 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"004c4000 weighted interleave:0-3 file=/bwap/bin/bwap-toucher anon=3 dirty=3 N0=3 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"004c8000 weighted interleave:0-3 heap anon=2 dirty=2 N0=1 N1=1 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"7f0000000000 weighted interleave:0-3 anon=3000 dirty=3000 N0=1396 N1=698 N2=558 N3=348 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"7f0000800000 default anon=10 dirty=10 N0=10 kernelpagesize_kB=4\n"
	"7ffd00000000 weighted interleave:0-3 stack anon=3 dirty=3 N0=1 N2=2 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"7ffd00100000 weighted interleave:0-3 N0=2 kernelpagesize_kB=4 il_weights=0:20,1:10,2:8,3:5\n"
	"7ffd00200000 weighted interleave:0-3 file=/memfd:ring\\040(deleted) dirty=8 N0=4 N1=4 kernelpagesize_kB=4 il_weights=0:1,1:1,2:0,3:0\n";

static int fake_shmem(const char *path)
{
	return !strcmp(path, "/bwap/bin/bwap-toucher") || !strncmp(path, "/memfd:", 7);
}

int main(void)
{
	struct bwap_pagedist d;
	unsigned char w[4] = { 20, 10, 8, 5 }, w1[4] = { 1, 0, 0, 0 };
	long t[4], cur[4] = { 0, 0, 0, 0 }, move;
	int parsed;

	CHECK(!bwap_pagedist_parse(maps, 4, &d), "numa_maps text parses");
	CHECK(d.nr_vmas == 3, "only anonymous weighted-interleave VMAs count: heap, buffer, stack (%d)", d.nr_vmas);
	CHECK(d.pages[0] == 1398 && d.pages[1] == 699 && d.pages[2] == 560 && d.pages[3] == 348 && d.total == 3005,
	      "pages per node summed over them: %ld,%ld,%ld,%ld", d.pages[0], d.pages[1], d.pages[2], d.pages[3]);
	/* 3000 pages at 20:10:8:5 (sum 43): floors 1395,697,558,348 = 2998; remainders 15,35,8,35 of 43 */
	bwap_largest_remainder(3000, w, cur, 4, t);
	CHECK(t[0] == 1395 && t[1] == 698 && t[2] == 558 && t[3] == 349,
	      "3000 pages at 20,10,8,5: 1395,698,558,349 (%ld,%ld,%ld,%ld)", t[0], t[1], t[2], t[3]);
	cur[3] = 10;
	bwap_largest_remainder(1, (unsigned char[]){ 1, 0, 0, 1 }, cur, 4, t);
	CHECK(t[3] == 1 && t[0] == 0, "equal remainders go to the node holding more pages now");
	cur[3] = 0;
	bwap_largest_remainder(1, (unsigned char[]){ 1, 0, 0, 1 }, cur, 4, t);
	CHECK(t[0] == 1 && t[3] == 0, "then to the lower node id");
	move = bwap_pagedist_targets(&d, w, t);
	CHECK(t[0] + t[1] + t[2] + t[3] == d.total, "targets keep every page (%ld)", d.total);
	/* heap (2 pages) gets 1,1,0,0 as it is; stack (3) gets 1,1,1,0 */
	CHECK(move == 1 + 1, "moves: buffer N0 1396->1395, stack N2 2->1: %ld", move);
	move = bwap_pagedist_targets(&d, w1, t);
	CHECK(move == d.total - d.pages[0] && t[0] == d.total, "all on node 0: every other page moves (%ld)", move);
	bwap_pagedist_free(&d);
	parsed = bwap_pagedist_parse_ex(maps, 4, &d, fake_shmem);
	CHECK(!parsed && d.nr_vmas == 4 && d.pages[0] == 1398 + 4 && d.pages[1] == 699 + 4,
	      "tmpfs: the binary's VMAs (under the task policy) do not count, the memfd's own shared policy does (%d VMAs, %ld on node 0)",
	      d.nr_vmas, d.pages[0]);
	bwap_pagedist_free(&d);
	CHECK(bwap_path_is_shmem("/dev/shm") || !bwap_path_is_shmem("/proc"), "statfs tells tmpfs apart (/proc is not)");
	return tap_done();
}
