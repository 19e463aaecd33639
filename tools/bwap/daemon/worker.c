// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's worker: the one thread that does a push's work (a portable
 * placement with move_pages, or process_mpol_reweight and the page counts
 * around it, or on the series' parts 1-2 process_mpol_reweight and then
 * a move_pages placement), so that the poll loop that serves the control
 * socket never waits on it.  The loop queues a job with worker_queue() and goes on; the
 * worker does it and says so through a pipe that the loop polls
 * (worker_fd()); the loop then takes the finished jobs (worker_reap()) and
 * applies them to their targets.
 *
 * A job carries copies of all it needs (pid, a dup of the pidfd, the
 * weights) and the worker writes only into the job: it never reads or
 * changes struct target or struct bwapd_state, so neither needs a lock.
 * The queues are guarded by lock; the worker holds it only to take or
 * return a job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include "bwapd.h"
#include "../lib/mempolicy2.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static struct push_job *todo, **todo_tail = &todo;	/* FIFO: first queued, first done */
static struct push_job *done;				/* finished, for the loop */
static int done_pipe[2] = { -1, -1 };
static int stopping, started;
static pthread_t thread;
static struct push_job *running;			/* the job the worker is on (for status) */

/*
 * CAP_DAC_READ_SEARCH in this thread's effective set, on or off.  bwapd
 * keeps it only in its permitted set (bwapd_drop_dac() at start), so the
 * loop that reads clients' requests never has it; the worker raises it
 * around a placement only, because /proc/PID/pagemap of another user's
 * process is mode 0400 and without it the placement cannot see large
 * folios.  The paths opened then are /proc/PID/{maps,pagemap} of a target
 * bwapd holds a pidfd for, never one a client named.  Capabilities are
 * per thread, so the raw syscalls (not libcap's process-wide view) are
 * what is wanted here.
 */
static void dac_read(int on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return;
	if (!(d[0].permitted & (1u << CAP_DAC_READ_SEARCH)))
		return;
	if (on)
		d[0].effective |= 1u << CAP_DAC_READ_SEARCH;
	else
		d[0].effective &= ~(1u << CAP_DAC_READ_SEARCH);
	syscall(SYS_capset, &h, d);
}

void bwapd_drop_dac(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return;
	d[0].effective &= ~((1u << CAP_DAC_READ_SEARCH) | (1u << CAP_DAC_OVERRIDE));
	if (syscall(SYS_capset, &h, d))
		logmsg("cannot drop CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE from the effective set: %s",
		       strerror(errno));
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Page counts of a series-kernel target: per node now, and the shares of w (job->counts). */
static void count_series(struct push_job *j)
{
	struct bwap_pagedist d;
	unsigned char wb[BWAP_MAX_NODES] = { 0 };

	for (int i = 0; i < j->w.nr_nodes; i++)
		wb[i] = bwap_nodeset_has(j->w.nodes, i) ? j->w.w[i] : 0;
	if (bwap_pagedist_read(j->pid, j->nr_nodes, &d, j->err, sizeof(j->err)))
		return;
	bwap_pagedist_targets(&d, wb, j->target);
	memcpy(j->now, d.pages, sizeof(j->now));
	j->total = d.total;
	j->have_counts = 1;
	bwap_pagedist_free(&d);
}

/*
 * A move_pages placement of the job's weights (lib/place.c) into j->st
 * and the counts: of every anonymous mapping the program did not bind
 * itself (portable mode), or with only_wi of the weighted-interleave
 * ones, which the kernel's rebalance would move (parts 1-2).
 */
static void place_job(struct push_job *j, int only_wi)
{
	dac_read(1);
	j->rc = (only_wi ? bwap_place_pages_wi : bwap_place_pages)(j->pid, &j->w, 0, &j->st, j->err,
								   sizeof(j->err));
	dac_read(0);
	j->gone = j->rc && kill(j->pid, 0) && errno == ESRCH;
	if (!j->rc) {
		memcpy(j->now, j->st.after, sizeof(j->now));
		memcpy(j->target, j->st.target, sizeof(j->target));
		j->total = j->st.pages;
		j->have_counts = 1;
	}
}

static void do_job(struct push_job *j)
{
	double t0 = mono();

	j->err[0] = '\0';
	if (j->kind == PUSH_JOB_PLACE) {
		place_job(j, 0);
	} else {
		unsigned char wb[BWAP_MAX_NODES] = { 0 };
		struct bwap_pagedist d;

		j->expect = -1;
		/* the kernel's expected moves, for its log line; parts 1-2 count in the placement */
		if ((j->flags & MPOL_REWEIGHT_REBALANCE) &&
		    !bwap_pagedist_read(j->pid, j->nr_nodes, &d, j->err, sizeof(j->err))) {
			for (int i = 0; i < j->w.nr_nodes; i++)
				wb[i] = bwap_nodeset_has(j->w.nodes, i) ? j->w.w[i] : 0;
			j->expect = bwap_pagedist_targets(&d, wb, j->target);
			memcpy(j->before_target, j->target, sizeof(j->target));
			bwap_pagedist_free(&d);
		}
		j->vm_before = bwap_vmstat_moved();
		j->ret = bwap_process_mpol_reweight(j->pidfd, &j->w, j->flags);
		j->errnum = j->ret < 0 ? errno : 0;
		j->vm_after = bwap_vmstat_moved();
		j->rc = j->ret < 0 ? -1 : 0;
		j->gone = j->errnum == ESRCH;
		if (!j->rc && !(j->flags & MPOL_REWEIGHT_REBALANCE)) {
			/*
			 * Parts 1-2: the weights are set (later faults follow
			 * them); the resident pages under weighted interleave,
			 * those the kernel's rebalance would move, move from
			 * here as portable mode moves them (the minimum, in folio
			 * units).
			 */
			place_job(j, 1);
			j->placed = 1;
		} else if (!j->rc) {
			count_series(j);
		}
	}
	j->seconds = mono() - t0;
}

static void *worker_main(void *arg)
{
	sigset_t all;

	(void)arg;
	/* signals are the loop's (its self-pipe); this thread takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&lock);
	for (;;) {
		struct push_job *j;

		while (!todo && !stopping)
			pthread_cond_wait(&more, &lock);
		if (stopping)
			break;
		j = todo;
		todo = j->next;
		if (!todo)
			todo_tail = &todo;
		running = j;
		pthread_mutex_unlock(&lock);
		do_job(j);
		pthread_mutex_lock(&lock);
		running = NULL;
		j->next = done;
		done = j;
		/* one byte per job; a full pipe already says there is work to reap */
		if (write(done_pipe[1], "d", 1) < 0 && errno != EAGAIN)
			break;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int worker_start(char *err, size_t errlen)
{
	int e;

	if (pipe2(done_pipe, O_CLOEXEC | O_NONBLOCK)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	e = pthread_create(&thread, NULL, worker_main, NULL);
	if (e) {
		snprintf(err, errlen, "cannot start the worker thread: %s", strerror(e));
		return -1;
	}
	started = 1;
	return 0;
}

int worker_fd(void)
{
	return done_pipe[0];
}

void worker_queue(struct push_job *j)
{
	pthread_mutex_lock(&lock);
	j->next = NULL;
	j->queued_at = mono();
	*todo_tail = j;
	todo_tail = &j->next;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&lock);
}

struct push_job *worker_reap(void)
{
	struct push_job *list, *rev = NULL;
	char buf[64];

	while (read(done_pipe[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&lock);
	list = done;
	done = NULL;
	pthread_mutex_unlock(&lock);
	/* in the order they finished */
	while (list) {
		struct push_job *n = list->next;

		list->next = rev;
		rev = list;
		list = n;
	}
	return rev;
}

int worker_backlog(double *oldest)
{
	int n = 0;
	double tnow = mono();

	*oldest = 0;
	pthread_mutex_lock(&lock);
	for (struct push_job *j = todo; j; j = j->next, n++)
		if (tnow - j->queued_at > *oldest)
			*oldest = tnow - j->queued_at;
	if (running) {
		n++;
		if (tnow - running->queued_at > *oldest)
			*oldest = tnow - running->queued_at;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

/*
 * At exit: the jobs not started are dropped (their weights were never
 * pushed); the one running is let finish, so that no move_pages batch is
 * cut short.  Their pidfds close with the process.
 */
void worker_stop(void)
{
	if (!started)
		return;
	pthread_mutex_lock(&lock);
	stopping = 1;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	started = 0;
}
