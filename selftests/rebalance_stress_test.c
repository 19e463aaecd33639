// SPDX-License-Identifier: GPL-2.0
/*
 * Rebalance under load: contents survive and the final placement is exact.
 *
 * Worker threads each own a range under a weighted-interleave VMA policy
 * and keep rewriting it: every page holds its range, its index and the
 * worker's generation, plus a payload derived from them, and a worker
 * checks the previous generation of each page before writing the next.
 * Now and then a worker unmaps its whole range and maps it again.
 * Meanwhile the main thread reweights and rebalances, through
 * process_mpol_reweight() on its own pidfd and through mbind2() on one
 * range, with random weights over 4 nodes, some of them 0; a racer thread
 * maps, faults and unmaps a scratch range, forks children that write and
 * exit, and reweights those children while they exit.
 *
 * Every loop is bounded by a count, not by time, and threads meet only at a
 * pthread barrier; nothing sleeps.  At the end, with everything quiet, one
 * last reweight with rebalance must move exactly sum(max(0, cur - target))
 * pages, leave each range with the largest-remainder share of each node,
 * and every page must still hold the contents last written.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define NR_TEST_NODES 4
/*
 * Sizes of the run.  Larger values race longer but cost time; these keep
 * the test near a minute on a slow 4-CPU machine.
 */
#define NR_WORKERS 4		/* threads, one range each */
#define RANGE_PAGES 192		/* pages per worker range */
#define WORKER_GENERATIONS 16	/* full rewrites of its range by each worker */
#define REMAP_EVERY 5		/* a worker remaps its range every N generations */
#define MAIN_ITERATIONS 40	/* reweights with rebalance by the main thread, at least */
#define MAIN_MAX_ITERATIONS 400	/* ... and more while workers still run, up to this */
#define RACER_ROUNDS 24		/* scratch map/fault/unmap + fork/exit rounds */
#define SCRATCH_PAGES 32

#define PG 4096UL
#define WORDS (PG / sizeof(uint64_t))
#define PAGE_MAGIC 0xb3a9c0de5eed0000ULL

/* ---- page contents ---------------------------------------------------------- */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 * Page layout: word 0 magic, 1 range << 32 | index, 2 generation, 3 the
 * checksum of words 4.., then the payload seeded by words 1 and 2.
 */
static void write_page(uint64_t *p, unsigned int range, unsigned int index, uint64_t gen)
{
	uint64_t seed = mix(((uint64_t)range << 32 | index) ^ mix(gen)), sum = 0;
	size_t i;

	for (i = 4; i < WORDS; i++) {
		p[i] = seed + i * 0x9e3779b97f4a7c15ULL;
		sum = (sum ^ p[i]) * 0x100000001b3ULL;
	}
	p[1] = (uint64_t)range << 32 | index;
	p[2] = gen;
	p[3] = sum;
	p[0] = PAGE_MAGIC;
}

/*
 * Check a page against what was last written to it (gen 0: never written
 * since mapped, so all zero).  Returns 0 or a short reason.
 */
static const char *check_page(const uint64_t *p, unsigned int range,
			      unsigned int index, uint64_t gen)
{
	uint64_t seed, sum = 0;
	size_t i;

	if (!gen) {
		for (i = 0; i < WORDS; i++)
			if (p[i])
				return "fresh page is not zero";
		return NULL;
	}
	if (p[0] != PAGE_MAGIC)
		return "bad magic";
	if (p[1] != ((uint64_t)range << 32 | index))
		return "wrong range/index";
	if (p[2] != gen)
		return "wrong generation";
	seed = mix(((uint64_t)range << 32 | index) ^ mix(gen));
	for (i = 4; i < WORDS; i++) {
		if (p[i] != seed + i * 0x9e3779b97f4a7c15ULL)
			return "payload differs";
		sum = (sum ^ p[i]) * 0x100000001b3ULL;
	}
	if (p[3] != sum)
		return "checksum differs";
	return NULL;
}

/* ---- shared state ------------------------------------------------------------- */
struct stress;

struct worker {
	struct stress *st;
	unsigned int id;
	char *range;
	uint64_t gen[RANGE_PAGES];	/* generation last written to each page */
	unsigned long errors;
	char first_error[160];
};

struct stress {
	int nodes[NR_TEST_NODES];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	atomic_uint weights;	/* latest weights, one byte per test node */
	atomic_int workers_running;
	pthread_barrier_t start;
	struct worker worker[NR_WORKERS];
	char *scratch;			/* racer's reservation */
	unsigned long racer_errors;
	char racer_error[160];
	unsigned long racer_child_reweights, racer_child_esrch;
};

static void note_error(unsigned long *count, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if ((*count)++)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Expand packed weights into a WI_MAXNODE table indexed by node id. */
static void unpack_weights(const struct stress *st, uint32_t packed, unsigned char *w)
{
	int i;

	memset(w, 0, WI_MAXNODE);
	for (i = 0; i < NR_TEST_NODES; i++)
		w[st->nodes[i]] = packed >> (8 * i) & 0xff;
}

static long mbind2_weights(struct stress *st, char *addr, size_t len,
			   const unsigned char *w, unsigned int flags)
{
	struct mpol_args args;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];

	wi_args(&args, mask, st->nodes, NR_TEST_NODES, w);
	return wi_mbind2(addr, len, &args, flags);
}

/* Random weights 0..6 over the test nodes, about a quarter 0, never all 0. */
static uint32_t random_weights(uint64_t *rng)
{
	uint32_t packed = 0;
	int i;

	for (i = 0; i < NR_TEST_NODES; i++) {
		uint64_t r;

		*rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
		r = *rng >> 33;
		packed |= (uint32_t)(r % 4 == 0 ? 0 : 1 + (r >> 4) % 6) << (8 * i);
	}
	if (!packed)
		packed = 1;
	return packed;
}

/* ---- threads -------------------------------------------------------------------- */
/* Map the worker's range (again) at its address under the latest weights. */
static int map_range(struct worker *wk)
{
	unsigned char w[WI_MAXNODE];
	char *p;

	p = mmap(wk->range, RANGE_PAGES * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != wk->range) {
		note_error(&wk->errors, wk->first_error, sizeof(wk->first_error),
			   "worker %u: mmap at %p: %s", wk->id, wk->range,
			   p == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
		return -1;
	}
	madvise(p, RANGE_PAGES * PG, MADV_NOHUGEPAGE);
	unpack_weights(wk->st, atomic_load(&wk->st->weights), w);
	if (mbind2_weights(wk->st, p, RANGE_PAGES * PG, w, 0)) {
		note_error(&wk->errors, wk->first_error, sizeof(wk->first_error),
			   "worker %u: mbind2 of a fresh range: %s", wk->id, strerror(errno));
		return -1;
	}
	memset(wk->gen, 0, sizeof(wk->gen));
	return 0;
}

static void *worker_fn(void *arg)
{
	struct worker *wk = arg;
	uint64_t gen;
	unsigned int i;

	pthread_barrier_wait(&wk->st->start);
	for (gen = 1; gen <= WORKER_GENERATIONS; gen++) {
		if (gen % REMAP_EVERY == 0) {
			if (munmap(wk->range, RANGE_PAGES * PG) || map_range(wk)) {
				note_error(&wk->errors, wk->first_error, sizeof(wk->first_error),
					   "worker %u: remap failed", wk->id);
				atomic_fetch_sub(&wk->st->workers_running, 1);
				return NULL;
			}
		}
		for (i = 0; i < RANGE_PAGES; i++) {
			uint64_t *p = (uint64_t *)(wk->range + i * PG);
			const char *why = check_page(p, wk->id, i, wk->gen[i]);

			if (why)
				note_error(&wk->errors, wk->first_error, sizeof(wk->first_error),
					   "worker %u page %u before generation %lu: %s",
					   wk->id, i, (unsigned long)gen, why);
			write_page(p, wk->id, i, gen);
			wk->gen[i] = gen;
		}
	}
	atomic_fetch_sub(&wk->st->workers_running, 1);
	return NULL;
}

static void *racer_fn(void *arg)
{
	struct stress *st = arg;
	unsigned char w[WI_MAXNODE];
	uint64_t rng = 12345;
	unsigned int round, i;

	pthread_barrier_wait(&st->start);
	for (round = 0; round < RACER_ROUNDS; round++) {
		char *s = mmap(st->scratch, SCRATCH_PAGES * PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		pid_t pid;
		int pidfd;
		long ret;

		if (s != st->scratch) {
			note_error(&st->racer_errors, st->racer_error, sizeof(st->racer_error),
				   "racer: mmap of scratch: %s",
				   s == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
			return NULL;
		}
		unpack_weights(st, random_weights(&rng), w);
		if (mbind2_weights(st, s, SCRATCH_PAGES * PG, w, 0))
			note_error(&st->racer_errors, st->racer_error, sizeof(st->racer_error),
				   "racer: mbind2 of scratch: %s", strerror(errno));
		for (i = 0; i < SCRATCH_PAGES; i++)
			s[i * PG] = (char)round;

		pid = fork();
		if (pid < 0) {
			note_error(&st->racer_errors, st->racer_error, sizeof(st->racer_error),
				   "racer: fork: %s", strerror(errno));
			return NULL;
		}
		if (pid == 0) {
			/* Break COW on scratch and on a worker range, then exit. */
			for (i = 0; i < SCRATCH_PAGES; i++)
				s[i * PG] = (char)(round + 1);
			for (i = 0; i < RANGE_PAGES; i += 7)
				st->worker[round % NR_WORKERS].range[i * PG + 100] ^= 1;
			_exit(0);
		}
		pidfd = sys_pidfd_open(pid);
		if (pidfd >= 0) {
			unpack_weights(st, random_weights(&rng), w);
			ret = sys_process_mpol_reweight(pidfd, w, WI_MAXNODE,
							MPOL_REWEIGHT_REBALANCE |
							MPOL_REWEIGHT_MOVE_ALL);
			if (ret >= 0)
				st->racer_child_reweights++;
			else if (errno == ESRCH)
				st->racer_child_esrch++;
			else
				note_error(&st->racer_errors, st->racer_error,
					   sizeof(st->racer_error),
					   "racer: reweight of an exiting child: %s",
					   strerror(errno));
			close(pidfd);
		}
		waitpid(pid, NULL, 0);
		if (munmap(s, SCRATCH_PAGES * PG))
			note_error(&st->racer_errors, st->racer_error, sizeof(st->racer_error),
				   "racer: munmap: %s", strerror(errno));
	}
	return NULL;
}

/* ---- checks ------------------------------------------------------------------------ */
/* The node of each page of a range, by move_pages(2) in query mode. */
static int range_nodes(char *range, int *status)
{
	void *pages[RANGE_PAGES];
	int i;

	for (i = 0; i < RANGE_PAGES; i++)
		pages[i] = range + i * PG;
	return sys_move_pages(0, RANGE_PAGES, pages, NULL, status, 0);
}

/* ---- the test ------------------------------------------------------------------------ */
FIXTURE(stress) {
	struct stress st;
	char *reservation;
	size_t reservation_len;
	int pidfd;
};

FIXTURE_SETUP(stress)
{
	int ids[WI_MAX_NODES], n, i;
	char *p;

	n = wi_memory_nodes(ids, WI_MAX_NODES);
	if (n < NR_TEST_NODES)
		SKIP(return, "Not enough NUMA nodes available (need %d, have %d)",
		     NR_TEST_NODES, n);

	memset(&self->st, 0, sizeof(self->st));
	for (i = 0; i < NR_TEST_NODES; i++) {
		self->st.nodes[i] = ids[i];
		wi_nodemask_set(self->st.mask, ids[i]);
	}
	self->pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, self->pidfd);

	/*
	 * One PROT_NONE reservation holds every range, one guard page apart
	 * so that neighbouring ranges never merge into one VMA.  Each range
	 * is then unmapped, so that map_range() maps it as fresh memory.
	 */
	self->reservation_len = (NR_WORKERS * (RANGE_PAGES + 1) + SCRATCH_PAGES + 1) * PG;
	p = mmap(NULL, self->reservation_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->reservation = p;
	atomic_store(&self->st.weights, 0x01010101);
	for (i = 0; i < NR_WORKERS; i++) {
		struct worker *wk = &self->st.worker[i];

		wk->st = &self->st;
		wk->id = i;
		wk->range = p + (i * (RANGE_PAGES + 1) + 1) * PG;
		ASSERT_EQ(0, munmap(wk->range, RANGE_PAGES * PG));
		ASSERT_EQ(0, map_range(wk)) TH_LOG("%s", wk->first_error);
	}
	self->st.scratch = p + (NR_WORKERS * (RANGE_PAGES + 1) + 1) * PG;
	ASSERT_EQ(0, munmap(self->st.scratch, SCRATCH_PAGES * PG));
}

FIXTURE_TEARDOWN(stress)
{
	if (self->reservation)
		munmap(self->reservation, self->reservation_len);
}

TEST_F_TIMEOUT(stress, rebalance_keeps_contents_and_ends_exact, 600)
{
	struct stress *st = &self->st;
	pthread_t workers[NR_WORKERS], racer;
	unsigned char w[WI_MAXNODE];
	uint64_t rng = 0x5eed;
	unsigned long reweights = 0, range_rebalances = 0, range_holes = 0;
	unsigned long not_moved = 0, iterations;
	long needed = 0, changed = 0, moved_before, moved_after, ret;
	uint32_t last;
	int i, r;

	ASSERT_EQ(0, pthread_barrier_init(&st->start, NULL, NR_WORKERS + 2));
	atomic_store(&st->workers_running, NR_WORKERS);
	for (i = 0; i < NR_WORKERS; i++)
		ASSERT_EQ(0, pthread_create(&workers[i], NULL, worker_fn, &st->worker[i]));
	ASSERT_EQ(0, pthread_create(&racer, NULL, racer_fn, st));
	pthread_barrier_wait(&st->start);

	for (i = 0; i < MAIN_MAX_ITERATIONS &&
	     (i < MAIN_ITERATIONS || atomic_load(&st->workers_running)); i++) {
		uint32_t packed = random_weights(&rng);

		atomic_store(&st->weights, packed);
		unpack_weights(st, packed, w);
		if (i % 3 != 2) {
			ret = sys_process_mpol_reweight(self->pidfd, w, WI_MAXNODE,
							MPOL_REWEIGHT_REBALANCE);
			/* check after joining: threads must not be left running */
			if (ret < 0)
				break;
			not_moved += ret;
			reweights++;
		} else {
			struct worker *wk = &st->worker[(i / 3) % NR_WORKERS];

			ret = mbind2_weights(st, wk->range, RANGE_PAGES * PG, w,
					     WI_REBALANCE);
			if (ret < 0 && (errno == EFAULT || errno == ENOMEM)) {
				/* the worker is between munmap and mmap */
				range_holes++;
				ret = 0;
			}
			if (ret < 0)
				break;
			range_rebalances++;
		}
	}
	r = errno;
	iterations = i;
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i], NULL);
	pthread_join(racer, NULL);

	TH_LOG("%lu main iterations: %lu reweights of the whole process", iterations, reweights);
	TH_LOG("%lu pages not moved (busy, or shared with a forked child)", not_moved);
	TH_LOG("%lu range rebalances, %lu of them hit a range being remapped",
	       range_rebalances, range_holes);
	TH_LOG("racer: %lu child reweights, %lu ESRCH",
	       st->racer_child_reweights, st->racer_child_esrch);
	ASSERT_LE(0, ret) TH_LOG("reweight/rebalance failed: %s", strerror(r));
	ASSERT_EQ(iterations, reweights + range_rebalances);
	for (i = 0; i < NR_WORKERS; i++) {
		struct worker *wk = &st->worker[i];

		EXPECT_EQ(0UL, wk->errors) TH_LOG("%lu errors, first: %s", wk->errors,
						  wk->first_error);
	}
	ASSERT_EQ(0UL, st->racer_errors) TH_LOG("racer: %s", st->racer_error);

	/* Quiet now.  Record where every page is, then rebalance once more. */
	{
		static int before[NR_WORKERS][RANGE_PAGES], after[NR_WORKERS][RANGE_PAGES];
		long cur[NR_WORKERS][NR_TEST_NODES], target[NR_TEST_NODES];
		long got[NR_TEST_NODES];
		unsigned char wv[NR_TEST_NODES];
		int n, p;

		for (n = 0; n < NR_WORKERS; n++) {
			ASSERT_EQ(0, range_nodes(st->worker[n].range, before[n]));
			memset(cur[n], 0, sizeof(cur[n]));
			for (p = 0; p < RANGE_PAGES; p++) {
				int k;

				for (k = 0; k < NR_TEST_NODES; k++)
					if (before[n][p] == st->nodes[k])
						cur[n][k]++;
				ASSERT_LE(0, before[n][p])
					TH_LOG("range %d page %d not resident", n, p);
			}
		}
		/* final weights: random, with node 1 drained to 0 */
		last = random_weights(&rng) & ~0xff00U;
		if (!last)
			last = 1;
		unpack_weights(st, last, w);
		for (i = 0; i < NR_TEST_NODES; i++)
			wv[i] = w[st->nodes[i]];
		TH_LOG("final weights %u,%u,%u,%u", wv[0], wv[1], wv[2], wv[3]);

		moved_before = wi_vmstat("mpol_rebalance_moved");
		ASSERT_LE(0, moved_before) TH_LOG("/proc/vmstat has no mpol_rebalance_moved");
		ret = sys_process_mpol_reweight(self->pidfd, w, WI_MAXNODE,
						MPOL_REWEIGHT_REBALANCE);
		ASSERT_EQ(0, ret) TH_LOG("final rebalance: ret %ld (%s)", ret,
					 ret < 0 ? strerror(errno) : "pages not moved");
		moved_after = wi_vmstat("mpol_rebalance_moved");

		for (n = 0; n < NR_WORKERS; n++) {
			ASSERT_EQ(0, range_nodes(st->worker[n].range, after[n]));
			wi_lr_targets(RANGE_PAGES, cur[n], wv, NR_TEST_NODES, target);
			memset(got, 0, sizeof(got));
			for (p = 0; p < RANGE_PAGES; p++) {
				int k;

				for (k = 0; k < NR_TEST_NODES; k++)
					if (after[n][p] == st->nodes[k])
						got[k]++;
				changed += after[n][p] != before[n][p];
			}
			for (i = 0; i < NR_TEST_NODES; i++) {
				if (cur[n][i] > target[i])
					needed += cur[n][i] - target[i];
				EXPECT_EQ(target[i], got[i])
					TH_LOG("range %d node %d: had %ld, w %u, want %ld, has %ld",
					       n, st->nodes[i], cur[n][i], wv[i],
					       target[i], got[i]);
			}
			TH_LOG("range %d: before %ld/%ld/%ld/%ld, after %ld/%ld/%ld/%ld",
			       n, cur[n][0], cur[n][1], cur[n][2], cur[n][3],
			       got[0], got[1], got[2], got[3]);
		}
		TH_LOG("final rebalance: minimum %ld, %ld changed node, mpol_rebalance_moved +%ld",
		       needed, changed, moved_after - moved_before);
		EXPECT_EQ(needed, changed);
		EXPECT_EQ(needed, moved_after - moved_before);
	}

	/* Every page still holds what its worker wrote last. */
	for (i = 0; i < NR_WORKERS; i++) {
		struct worker *wk = &st->worker[i];
		unsigned int p;

		for (p = 0; p < RANGE_PAGES; p++) {
			const char *why = check_page((uint64_t *)(wk->range + p * PG),
						     wk->id, p, wk->gen[p]);

			EXPECT_TRUE(!why) TH_LOG("range %d page %u: %s", i, p, why);
			if (why)
				break;
		}
	}
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
