// SPDX-License-Identifier: GPL-2.0
/* bwapd's signal sources; signal.h says what each one measures. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <signal.h>

#include "bwapd.h"

/* The descriptors all targets' perf counters hold (two per counted thread). */
int bwap_perf_fds;

static int perf_open(pid_t tid, uint32_t type, uint64_t config, uint64_t config1)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.config1 = config1;
	a.exclude_kernel = 1;	/* works at perf_event_paranoid 2 */
	a.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *perf_why(int e)
{
	switch (e) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return "no hardware counter for backend stalls on this CPU (TCG guests and many VMs have no PMU)";
	case EACCES:
	case EPERM:
		return "not permitted (raise the capability or lower /proc/sys/kernel/perf_event_paranoid)";
	case ENOSYS:
		return "the kernel has no perf events (CONFIG_PERF_EVENTS)";
	default:
		return strerror(e);
	}
}

int bwap_perf_probe(pid_t pid, const struct bwap_stall_event *ev, char *err, size_t errlen)
{
	int fd;

	if (!ev) {
		snprintf(err, errlen, "no stall event for this CPU (see 'bwapd --list-signals')");
		return -1;
	}
	fd = perf_open(pid, ev->type, ev->config, ev->config1);
	if (fd < 0) {
		snprintf(err, errlen, "perf_event_open(%s) failed: %s", ev->name, perf_why(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Open counters for threads not seen yet; threads that exited keep their last counts. */
static int perf_scan_threads(struct bwap_signal *s, char *err, size_t errlen)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
	d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "cannot list %s: %s", path, strerror(errno));
		errno = ESRCH;
		return -1;
	}
	/* threads that exited since the last scan give their two fds back */
	for (int i = 0; i < s->nr_threads; i++)
		s->thr[i].seen = 0;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		int known = 0;

		if (tid <= 0)
			continue;
		for (int i = 0; i < s->nr_threads; i++)
			if (s->thr[i].tid == tid)
				known = s->thr[i].seen = 1;
		if (known || s->nr_threads >= BWAP_SIGNAL_MAX_THREADS)
			continue;
		/*
		 * Every target's counters share bwapd's descriptors with its
		 * clients: past BWAP_PERF_FDS_MAX, a new thread is not counted
		 * (the signal covers the threads it has), so that no set of
		 * targets can starve the control socket.
		 */
		if (bwap_perf_fds + 2 > BWAP_PERF_FDS_MAX) {
			if (!s->fd_budget_said) {
				logmsg("pid %d: perf counters of bwapd's targets are at their bound (%d descriptors): "
				       "its new threads are not counted", (int)s->pid, BWAP_PERF_FDS_MAX);
				s->fd_budget_said = 1;
			}
			continue;
		}
		bwap_perf_fds += 2;
		s->thr[s->nr_threads].tid = tid;
		s->thr[s->nr_threads].fd_cycles = perf_open(tid, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0);
		s->thr[s->nr_threads].fd_stall = perf_open(tid, s->ev->type, s->ev->config, s->ev->config1);
		s->thr[s->nr_threads].cycles = s->thr[s->nr_threads].stall = 0;
		s->thr[s->nr_threads].seen = 1;
		s->nr_threads++;
	}
	closedir(d);
	for (int i = 0; i < s->nr_threads;) {
		if (s->thr[i].seen) {
			i++;
			continue;
		}
		if (s->thr[i].fd_cycles >= 0)
			close(s->thr[i].fd_cycles);
		if (s->thr[i].fd_stall >= 0)
			close(s->thr[i].fd_stall);
		bwap_perf_fds -= 2;
		s->thr[i] = s->thr[--s->nr_threads];
	}
	return 0;
}

static uint64_t read_counter(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static int perf_sample(struct bwap_signal *s, double *value, char *err, size_t errlen)
{
	uint64_t dc = 0, ds = 0;

	if (perf_scan_threads(s, err, errlen))
		return -1;
	for (int i = 0; i < s->nr_threads; i++) {
		uint64_t c = read_counter(s->thr[i].fd_cycles), st = read_counter(s->thr[i].fd_stall);

		if (c >= s->thr[i].cycles && st >= s->thr[i].stall) {
			dc += c - s->thr[i].cycles;
			ds += st - s->thr[i].stall;
		}
		s->thr[i].cycles = c;
		s->thr[i].stall = st;
	}
	if (!s->have_last) {
		s->have_last = 1;
		return 1;
	}
	if (!dc)
		return 1;	/* the target did not run */
	*value = (double)ds / dc;
	return 0;
}

int bwap_threads_per_node(pid_t pid, bwap_nodeset workers, int *threads)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int n = 0, k = bwap_nodeset_count(workers), i = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += atoi(de->d_name) > 0;
	closedir(d);
	/* the model cannot tell which thread is where: spread them evenly */
	for (int node = 0; node < BWAP_MAX_NODES; node++) {
		threads[node] = 0;
		if (!bwap_nodeset_has(workers, node))
			continue;
		threads[node] = n / k + (i < n % k);
		i++;
	}
	return n;
}

void bwap_signal_invalidate(struct bwap_signal *s)
{
	s->have_cache = 0;
}

static int model_sample(struct bwap_signal *s, double now, double *value, char *err, size_t errlen)
{
	struct bwap_pagedist d;
	struct bwap_workload wl;
	struct bwap_prediction p;
	double dist[BWAP_MAX_NODES] = { 0 };
	int nthreads, same;

	/*
	 * Pages only move when bwapd pushes (which invalidates the cache) or
	 * when the target faults or frees memory; reading numa_maps walks
	 * every page table entry of the target, so a read is reused for
	 * model_refresh seconds.
	 */
	if (s->have_cache && now - s->cache_time < s->o.model_refresh) {
		*value = s->cached_value;
		return 0;
	}
	if (bwap_pagedist_read(s->pid, s->o.mc->nr_nodes, &d, err, errlen)) {
		errno = ESRCH;
		return -1;
	}
	memset(&wl, 0, sizeof(wl));
	nthreads = bwap_threads_per_node(s->pid, s->workers, wl.threads);
	if (nthreads < 0) {
		bwap_pagedist_free(&d);
		snprintf(err, errlen, "process %d has exited", (int)s->pid);
		errno = ESRCH;
		return -1;
	}
	if (s->o.model_threads > 0)
		for (int i = 0; i < BWAP_MAX_NODES; i++)
			wl.threads[i] = bwap_nodeset_has(s->workers, i) ? s->o.model_threads : 0;
	/*
	 * A target still faulting its memory in (or freeing it) is not in a
	 * steady state: its samples would steer the search by a transient.
	 * Samples start once two reads one interval apart see the same page
	 * total (rebalance only moves pages, so pushes keep it).
	 */
	if (!d.total || d.total != s->last_total) {
		s->last_total = d.total;
		bwap_pagedist_free(&d);
		return 1;
	}
	/* The model is pure arithmetic: the same pages and threads give the same value. */
	same = s->have_cache && s->cached_threads == nthreads;
	for (int i = 0; i < s->o.mc->nr_nodes; i++) {
		same &= s->cached_pages[i] == d.pages[i];
		s->cached_pages[i] = d.pages[i];
		dist[i] = (double)d.pages[i] / d.total;
	}
	bwap_pagedist_free(&d);
	s->cached_threads = nthreads;
	s->cache_time = now;
	if (!same) {
		wl.mlp = s->o.model_mlp;
		wl.shared = s->o.model_shared;
		wl.first_node = __builtin_ctzll(s->workers);
		bwap_model_predict(s->o.mc, &wl, dist, 0, &p);
		s->cached_value = p.stall;
		s->have_cache = 1;
	}
	*value = s->cached_value;
	return 0;
}

static int progress_sample(struct bwap_signal *s, double now, double *value, char *err, size_t errlen)
{
	uint64_t count;

	if (pread(s->progress_fd, &count, sizeof(count), 0) != sizeof(count)) {
		snprintf(err, errlen, "cannot read 8 bytes from the progress file: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	if (kill(s->pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "process %d has exited", (int)s->pid);
		return -1;
	}
	if (!s->have_last || count < s->last_count) {
		s->have_last = 1;
		s->last_count = count;
		s->last_time = now;
		return 1;
	}
	/* seconds per unit of work; no progress at all counts as very slow */
	*value = (now - s->last_time) / (count > s->last_count ? (double)(count - s->last_count) : 0.01);
	s->last_count = count;
	s->last_time = now;
	return 0;
}

int bwap_signal_open(struct bwap_signal *s, pid_t pid, bwap_nodeset workers, int nr_nodes,
		     const struct bwap_signal_opts *o, char *note, size_t notelen,
		     char *err, size_t errlen)
{
	enum bwap_signal_kind kind = o->kind;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->workers = workers;
	s->o = *o;
	s->progress_fd = -1;
	s->ev = o->ev;
	s->last_total = -1;
	note[0] = '\0';
	if (kind == BWAP_SIGNAL_AUTO || kind == BWAP_SIGNAL_PERF) {
		if (!bwap_perf_probe(pid, o->ev, err, errlen)) {
			kind = BWAP_SIGNAL_PERF;
		} else if (kind == BWAP_SIGNAL_PERF) {
			return -1;
		} else {
			snprintf(note, notelen, "FALLBACK TO MODELLED: hardware stall counters unavailable (%s)", err);
			kind = BWAP_SIGNAL_MODEL;
		}
	}
	s->kind = kind;
	switch (kind) {
	case BWAP_SIGNAL_PERF:
		snprintf(s->label, sizeof(s->label), "%.60s / cycles (measured)", o->ev->name);
		return perf_scan_threads(s, err, errlen);
	case BWAP_SIGNAL_MODEL:
		if (!o->mc) {
			snprintf(err, errlen, "the modelled signal needs a bandwidth matrix (matrix = FILE in bwapd.conf)");
			return -1;
		}
		snprintf(s->label, sizeof(s->label), "model stall, mlp %g (MODELLED from real page counts)",
			 o->model_mlp);
		return 0;
	case BWAP_SIGNAL_PROGRESS:
		if (o->progress_fd < 0) {
			snprintf(err, errlen, "signal progress needs a progress file (--progress FILE)");
			return -1;
		}
		/* the client opened it and passed it (control.c checked it): bwapd opens no path it names */
		s->progress_fd = fcntl(o->progress_fd, F_DUPFD_CLOEXEC, 0);
		if (s->progress_fd < 0) {
			snprintf(err, errlen, "cannot keep the progress file: %s", strerror(errno));
			return -1;
		}
		snprintf(s->label, sizeof(s->label), "seconds per unit of progress (measured by the target)");
		return 0;
	default:
		snprintf(err, errlen, "unknown signal");
		return -1;
	}
}

int bwap_signal_sample(struct bwap_signal *s, double now, double *value, char *err, size_t errlen)
{
	errno = 0;
	switch (s->kind) {
	case BWAP_SIGNAL_PERF:
		return perf_sample(s, value, err, errlen);
	case BWAP_SIGNAL_MODEL:
		return model_sample(s, now, value, err, errlen);
	case BWAP_SIGNAL_PROGRESS:
		return progress_sample(s, now, value, err, errlen);
	default:
		return -1;
	}
}

void bwap_signal_close(struct bwap_signal *s)
{
	for (int i = 0; i < s->nr_threads; i++) {
		if (s->thr[i].fd_cycles >= 0)
			close(s->thr[i].fd_cycles);
		if (s->thr[i].fd_stall >= 0)
			close(s->thr[i].fd_stall);
		bwap_perf_fds -= 2;
	}
	s->nr_threads = 0;
	if (s->progress_fd >= 0)
		close(s->progress_fd);
	s->progress_fd = -1;
}
