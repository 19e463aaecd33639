// SPDX-License-Identifier: GPL-2.0
/*
 * The read benchmark behind 'bwapctl measure': threads pinned one per CPU
 * of the worker set stream through a buffer bound to one memory node
 * (mbind MPOL_BIND before the first touch) for a fixed time and count the
 * bytes.  Each thread reads its own slice, 64 bytes apart with four
 * independent sums, so the loop is limited by memory, not by a dependency
 * chain.  Before timing, move_pages confirms that every page of the
 * buffer is on that node.  The result is the total over threads, in MB/s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwap.h"

#define BWAP_MPOL_BIND 2
#define CHUNK (256 * 1024)	/* bytes read between clock checks */

struct reader {
	pthread_t thread;
	int cpu;
	const char *base;
	size_t len;
	double seconds;
	pthread_barrier_t *start;
	uint64_t bytes;
	uint64_t sum;
	int pin_error;
};

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t read_chunk(const char *p, size_t len)
{
	const volatile uint64_t *q = (const volatile uint64_t *)p;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t n = len / sizeof(uint64_t);

	for (size_t i = 0; i + 32 <= n; i += 32) {
		s0 += q[i];
		s1 += q[i + 8];
		s2 += q[i + 16];
		s3 += q[i + 24];
	}
	return s0 + s1 + s2 + s3;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned char cpus[BWAP_MAX_CPUS] = { 0 };
	double end;
	size_t off = 0;

	cpus[r->cpu] = 1;
	r->pin_error = bwap_pin_to_cpus(0, cpus) ? errno : 0;
	pthread_barrier_wait(r->start);
	end = now_sec() + r->seconds;
	do {
		size_t n = r->len - off < CHUNK ? r->len - off : CHUNK;

		r->sum += read_chunk(r->base + off, n);
		r->bytes += n;
		off += n;
		if (off >= r->len)
			off = 0;
	} while (now_sec() < end);
	return NULL;
}

double bwap_measure_read_bw(const unsigned char *cpus, int mem_node,
			    const struct bwap_measure_opts *o, char *err, size_t errlen)
{
	unsigned long mask[2] = { 0 };
	int cpu_list[BWAP_MAX_CPUS], nr_cpus = 0, nthreads;
	size_t bytes = o->bytes, slice;
	pthread_barrier_t start;
	struct reader *r;
	double t0, t1, mbs;
	uint64_t total = 0;
	char *buf;

	for (int c = 0; c < BWAP_MAX_CPUS; c++)
		if (cpus[c])
			cpu_list[nr_cpus++] = c;
	if (!nr_cpus) {
		snprintf(err, errlen, "the worker set has no CPUs to run readers on");
		return -EINVAL;
	}
	nthreads = o->threads > 0 ? o->threads : nr_cpus;
	slice = (bytes / nthreads) & ~(size_t)(CHUNK - 1);
	if (slice < CHUNK)
		slice = CHUNK;
	bytes = slice * nthreads;
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %zu bytes: %s", bytes, strerror(errno));
		return -errno;
	}
	mask[mem_node / 64] |= 1UL << (mem_node % 64);
	if (bwap_sys_mbind(buf, bytes, BWAP_MPOL_BIND, mask, BWAP_MAX_NODES + 1, 0)) {
		int e = errno;

		snprintf(err, errlen, "cannot bind the buffer to node %d: %s", mem_node, strerror(e));
		munmap(buf, bytes);
		return -e;
	}
	/* Fault in every page now, on mem_node, so the timed loop only reads. */
	memset(buf, 1, bytes);
	{
		long off = bwap_pages_off_node(buf, bytes, mem_node);

		if (off != 0) {
			if (off < 0)
				snprintf(err, errlen, "cannot check where the buffer lives: %s", strerror(errno));
			else
				snprintf(err, errlen, "%ld of %zu buffer pages are not on node %d; is it full? "
					 "try a smaller --size", off, bytes / getpagesize(), mem_node);
			munmap(buf, bytes);
			return -EIO;
		}
	}
	r = calloc(nthreads, sizeof(*r));
	if (!r) {
		munmap(buf, bytes);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		r[i].cpu = cpu_list[i % nr_cpus];
		r[i].base = buf + (size_t)i * slice;
		r[i].len = slice;
		r[i].seconds = o->seconds;
		r[i].start = &start;
		if (pthread_create(&r[i].thread, NULL, reader_main, &r[i])) {
			snprintf(err, errlen, "cannot start reader thread %d", i);
			abort();	/* the barrier would never open */
		}
	}
	pthread_barrier_wait(&start);
	t0 = now_sec();
	for (int i = 0; i < nthreads; i++) {
		pthread_join(r[i].thread, NULL);
		total += r[i].bytes;
	}
	t1 = now_sec();
	pthread_barrier_destroy(&start);
	mbs = total / (t1 - t0) / 1e6;
	for (int i = 0; i < nthreads; i++) {
		if (r[i].pin_error) {
			snprintf(err, errlen, "cannot pin a reader to CPU %d: %s", r[i].cpu,
				 strerror(r[i].pin_error));
			mbs = -r[i].pin_error;
		}
	}
	free(r);
	munmap(buf, bytes);
	return mbs;
}
