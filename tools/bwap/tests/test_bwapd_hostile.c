// SPDX-License-Identifier: GPL-2.0
/*
 * A root bwapd against clients that mean harm, as a shared node has them:
 * the real daemon (../bwapd, or $BWAPD_BIN) run as root, and requests from
 * the unprivileged user nobody (uid 65534) over the real socket.
 *  - every field that takes a file (progress, phases, phase-weights),
 *    named by path: a root-only file, a symlink to it, a FIFO, /dev/zero
 *    and a 2 MiB file; none is opened, nothing of the root-only file's
 *    text comes back, and ping is answered at once after each;
 *  - the same passed as descriptors (the way bwapctl passes files): a
 *    FIFO, /dev/zero and a file over the bound are refused, and a file
 *    whose lines do not parse is refused by line number, not echoed;
 *  - a descriptor storm (200 fds with one request): refused, and bwapd
 *    holds no more descriptors after than before;
 *  - another user's pids: attach refused; wait and detach of root's
 *    target answer exactly as for a pid that is no target, and root's
 *    target stays; a user's "how run" must be the asking process;
 *  - a flood of silent connections from nobody past max_clients_per_user:
 *    those past it are closed at once and root's ping is answered;
 *  - waits past wait_timeout are answered with an error;
 *  - a bwapd out of descriptors (RLIMIT_NOFILE 64) with clients queued:
 *    it does not spin (CPU over a measured second) and answers once they
 *    are gone;
 *  - a target's search log is 0600 and removed when the target ends.
 * Needs root (a second uid); without it every check is skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>

#include "bwap.h"
#include "tap.h"
#include "fake_bwapd.h"
#include "real_bwapd.h"

#define NOBODY 65534
#define SECRET "TOPSECRET-7f3a"

static char dir[64], udir[96], logpath[128];
static pid_t daemon_pid;

/* bwapd as root with extra --set options, its descriptor limit nofile (0: as is); 0 once ready. */
static int start_bwapd(const char *const *sets, rlim_t nofile)
{
	return real_bwapd_start(dir, logpath, NULL, sets, nofile, &daemon_pid);
}

static void stop_bwapd(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	daemon_pid = 0;
}

/* The reply (malloc()ed, or NULL with err), with fds passed; timeout in ms. */
static char *ask(const char *req, const int *fds, int nfds, int ms, char *err, size_t errlen)
{
	return bwap_ctl_request_fds(dir, req, fds, nfds, ms, err, errlen);
}

/* Is ping answered within ms? */
static int pings(int ms)
{
	char err[256], *r = ask("ping", NULL, 0, ms, err, sizeof(err));
	int ok = r && !strcmp(r, "ok\npong\n");

	free(r);
	return ok;
}

/* Descriptors bwapd holds now. */
static int daemon_fds(void)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)daemon_pid);
	d = opendir(path);
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

/*
 * A child that runs fn as nobody; its TAP lines go to our stdout,
 * numbered on from ours, and its count and failures come back through a
 * pipe when nobody_end() waits for it.
 */
struct nobody {
	pid_t pid;
	int fd;			/* the pipe the counts come back on */
	int failed0;		/* tap_failed at the start, which the child's count includes */
};

static int nobody_start(void (*fn)(void), struct nobody *nb)
{
	int pfd[2];

	fflush(stdout);
	if (pipe(pfd))
		return -1;
	nb->failed0 = tap_failed;
	nb->pid = fork();
	if (!nb->pid) {
		int counts[2];

		close(pfd[0]);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(99);
		fn();
		fflush(stdout);
		counts[0] = tap_n;
		counts[1] = tap_failed;
		if (write(pfd[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(98);
		_exit(0);
	}
	close(pfd[1]);
	nb->fd = pfd[0];
	return 0;
}

/* The child's checks counted in ours (the parent may have made its own meanwhile). */
static void nobody_end(struct nobody *nb)
{
	int counts[2];

	if (read(nb->fd, counts, sizeof(counts)) == sizeof(counts)) {
		tap_failed += counts[1] - nb->failed0;
		if (counts[0] > tap_n)
			tap_n = counts[0];
	} else {
		CHECK(0, "the nobody child ran to its end");
	}
	close(nb->fd);
	waitpid(nb->pid, NULL, 0);
}

static void as_nobody(void (*fn)(void))
{
	struct nobody nb;

	if (!nobody_start(fn, &nb))
		nobody_end(&nb);
}

#define CCHECK CHECK

static void paths_by_name(void)
{
	static const char *const keys[] = { "progress", "phases", "phase-weights" };
	const char *names[] = { "secret", "link", "fifo", "/dev/zero", "big" };
	char req[512], err[512], path[160], *r;

	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 5; i++) {
			int leak, refused;

			if (names[i][0] == '/')
				snprintf(path, sizeof(path), "%s", names[i]);
			else
				snprintf(path, sizeof(path), "%s/%s", !strcmp(names[i], "secret") ? dir : udir,
					 names[i]);
			/* a fresh process of nobody's each time, so that no case hides behind "already a target" */
			pid_t victim = fork();

			if (!victim) {
				pause();
				_exit(0);
			}
			snprintf(req, sizeof(req), "attach %d workers 0 %s %s", (int)victim, keys[k], path);
			r = ask(req, NULL, 0, 3000, err, sizeof(err));
			kill(victim, SIGKILL);
			waitpid(victim, NULL, 0);
			leak = r && strstr(r, SECRET);
			refused = r && !strncmp(r, "error: ", 7) && strstr(r, "takes no path");
			if (r)
				r[strcspn(r, "\n")] = '\0';
			CCHECK(refused && !leak && pings(1000),
			       "nobody names %s as %s: refused without opening it (%s), nothing of it echoed, "
			       "ping answered within 1 s", path, keys[k], r ? r : err);
			free(r);
		}
	}
}

static void passed_files(void)
{
	char req[512], err[512], path[160], *r;
	int fd;

	struct {
		const char *key, *name, *want;
		int flags;
	} cases[] = {
		{ "progress", "fifo", "not a regular file", O_RDONLY | O_NONBLOCK },
		{ "progress", "/dev/zero", "not a regular file", O_RDONLY },
		{ "phase-weights", "big", "more than the 65536 bwapd takes", O_RDONLY },
		{ "phase-weights", "mine", "phase-weights: line 1", O_RDONLY },
	};
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].name[0] == '/')
			snprintf(path, sizeof(path), "%s", cases[i].name);
		else
			snprintf(path, sizeof(path), "%s/%s", udir, cases[i].name);
		fd = open(path, cases[i].flags | O_CLOEXEC);
		snprintf(req, sizeof(req), "attach %d how run workers 0 %s fd%s", (int)getpid(), cases[i].key,
			 !strcmp(cases[i].key, "phase-weights") ? " phases fd" : "");
		{
			/* the phase file beside phase weights: a small regular file of the user's */
			char small[160];
			int fds[2] = { fd, -1 };

			snprintf(small, sizeof(small), "%s/mine", udir);
			fds[1] = open(small, O_RDONLY | O_CLOEXEC);
			r = ask(req, fds, !strcmp(cases[i].key, "phase-weights") ? 2 : 1, 3000, err, sizeof(err));
			if (fds[1] >= 0)
				close(fds[1]);
		}
		if (fd >= 0)
			close(fd);
		CCHECK(fd >= 0 && r && !strncmp(r, "error: ", 7) && strstr(r, cases[i].want) && !strstr(r, "hunter2") &&
		       pings(1000), "nobody passes %s as %s: refused, '%s' (%.*s), no line echoed, ping answered",
		       path, cases[i].key, cases[i].want, r ? (int)strcspn(r, "\n") : 0, r ? r : err);
		free(r);
	}
}

static pid_t root_target;

static void other_users(void)
{
	char req[128], err[512], *r, *r2;

	snprintf(req, sizeof(req), "attach 1 workers 0");
	r = ask(req, NULL, 0, 3000, err, sizeof(err));
	CCHECK(r && strstr(r, "error: pid 1 belongs to uid 0"), "nobody may not attach pid 1 (%.*s)",
	       r ? (int)strcspn(r, "\n") : 0, r ? r : err);
	free(r);
	snprintf(req, sizeof(req), "wait %d", (int)root_target);
	r = ask(req, NULL, 0, 3000, err, sizeof(err));
	r2 = ask("wait 4194303", NULL, 0, 3000, err, sizeof(err));
	{
		char want[64];

		snprintf(want, sizeof(want), "error: pid %d is not a target\n", (int)root_target);
		CCHECK(r && r2 && !strcmp(r, want) && !strcmp(r2, "error: pid 4194303 is not a target\n"),
		       "wait on root's target answers as for no target (%.*s | %.*s)", r ? (int)strcspn(r, "\n") : 0,
		       r ? r : err, r2 ? (int)strcspn(r2, "\n") : 0, r2 ? r2 : "");
	}
	free(r);
	free(r2);
	snprintf(req, sizeof(req), "detach %d", (int)root_target);
	r = ask(req, NULL, 0, 3000, err, sizeof(err));
	{
		char want[64];

		snprintf(want, sizeof(want), "error: pid %d is not a target\n", (int)root_target);
		CCHECK(r && !strcmp(r, want), "detach of root's target answers as for no target (%.*s)",
		       r ? (int)strcspn(r, "\n") : 0, r ? r : err);
	}
	free(r);
	snprintf(req, sizeof(req), "attach %d how run workers 0", (int)getppid() == 1 ? 2 : (int)getppid());
	r = ask(req, NULL, 0, 3000, err, sizeof(err));
	CCHECK(r && !strncmp(r, "error: ", 7), "nobody may not register another process as itself (how run): %.*s",
	       r ? (int)strcspn(r, "\n") : 0, r ? r : err);
	free(r);
}

/* max_clients_per_user=20: 40 silent connections; those past 20 closed at once, root's ping answered. */
static void flood(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fds[40], closed = 0;

	bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
	for (int i = 0; i < 40; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] >= 0 && connect(fds[i], (struct sockaddr *)&sa, sizeof(sa))) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	/* a closed connection reads EOF; one still held has nothing to read (poll times out) */
	for (int i = 20; i < 40; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };
		char c;

		closed += fds[i] < 0 || (poll(&p, 1, 1000) == 1 && read(fds[i], &c, 1) == 0);
	}
	CCHECK(closed == 20, "nobody's 20 connections past max_clients_per_user=20 are closed at once (%d were)",
	       closed);
	/* root's request while nobody still holds 20: the parent checks it (this child is nobody) */
	if (write(3, "f", 1) != 1)
		CCHECK(0, "telling the parent");
	{
		char c;

		if (read(4, &c, 1) != 1)
			c = 0;
	}
	for (int i = 0; i < 40; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void waits(void)
{
	char req[64], err[256], *r;
	double t0 = test_mono();

	snprintf(req, sizeof(req), "wait %d", (int)getpid());
	/* nobody's own target, never converging: answered at wait_timeout (1 s) */
	r = ask(req, NULL, 0, 10000, err, sizeof(err));
	CCHECK(r && strstr(r, "error: the wait timed out"), "a wait past wait_timeout=1 is answered with an error "
	       "after %.1f s (%.*s)", test_mono() - t0, r ? (int)strcspn(r, "\n") : 0, r ? r : err);
	free(r);
}

static void self_target(void)
{
	char req[128], err[256], *r;

	snprintf(req, sizeof(req), "attach %d how run workers 0", (int)getpid());
	r = ask(req, NULL, 0, 3000, err, sizeof(err));
	CCHECK(r && !strncmp(r, "ok\n", 3), "nobody registers itself (%.*s)", r ? (int)strcspn(r, "\n") : 0,
	       r ? r : err);
	free(r);
	waits();
}

/* Pipes between the parent and a nobody child, on fds 3 (child to parent) and 4 (parent to child). */
static int c2p[2], p2c[2];

static void flood_child(void)
{
	dup2(c2p[1], 3);
	dup2(p2c[0], 4);
	flood();
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		fchmod(fd, mode);
		close(fd);
	}
}

int main(void)
{
	char path[160], err[512], *r;
	int before, after;
	pid_t holder;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		SKIP("the hostile-client suite needs root: bwapd as root, clients as uid %d", NOBODY);
		return tap_done();
	}
	snprintf(dir, sizeof(dir), "/tmp/bwapd-hostile-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	chmod(dir, 0755);
	snprintf(logpath, sizeof(logpath), "%s/bwapd.log", dir);
	snprintf(udir, sizeof(udir), "%s/nobody", dir);
	mkdir(udir, 0755);
	snprintf(path, sizeof(path), "%s/secret", dir);
	write_file(path, SECRET " first line\nsecond\n", 0600);
	snprintf(path, sizeof(path), "%s/link", udir);
	{
		char target[160];

		snprintf(target, sizeof(target), "%s/secret", dir);
		if (symlink(target, path))
			perror(path);
	}
	snprintf(path, sizeof(path), "%s/fifo", udir);
	mkfifo(path, 0666);
	snprintf(path, sizeof(path), "%s/mine", udir);
	write_file(path, "hunter2 is not a phase line\n", 0644);
	snprintf(path, sizeof(path), "%s/big", udir);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || ftruncate(fd, 2 << 20))
			perror(path);
		if (fd >= 0)
			close(fd);
	}
	if (chown(udir, NOBODY, NOBODY))
		perror(udir);

	/* a bwapd from before these knobs ($BWAPD_BIN, to show what it let through) starts without them */
	CHECK(!start_bwapd((const char *const[]){ "max_clients_per_user=20", "wait_timeout=1", NULL }, 0) ||
	      !start_bwapd(NULL, 0), "root's bwapd starts (log: %s)", logpath);
	if (!daemon_pid)
		return tap_done();

	/* a root process as a target of root's */
	holder = fork();
	if (!holder) {
		pause();
		_exit(0);
	}
	root_target = holder;
	snprintf(path, sizeof(path), "attach %d workers 0", (int)holder);
	r = ask(path, NULL, 0, 5000, err, sizeof(err));
	CHECK(r && !strncmp(r, "ok\n", 3), "root attaches its own process %d", (int)holder);
	free(r);
	{
		struct stat st;

		int r_ = (snprintf(path, sizeof(path), "%s/search-%d.log", dir, (int)holder), stat(path, &st));

		CHECK(!r_ && (st.st_mode & 0777) == 0600, "its search log is mode 0600 (%o)",
		      r_ ? 0 : (unsigned int)(st.st_mode & 0777));
	}

	as_nobody(paths_by_name);
	as_nobody(passed_files);
	as_nobody(other_users);

	/* the storm: 200 descriptors with one request, as root (no per-user bound to hit first) */
	before = daemon_fds();
	{
		int fds[200], nfds = 0;

		for (int i = 0; i < 200; i++)
			if ((fds[nfds] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
				nfds++;
		r = bwap_ctl_request_fds(dir, "ping", fds, 4, 3000, err, sizeof(err));
		free(r);
		/* the lib passes at most 4; send 200 by hand */
		{
			struct sockaddr_un sa = { .sun_family = AF_UNIX };
			union {
				char buf[CMSG_SPACE(200 * sizeof(int))];
				struct cmsghdr align;
			} ctl;
			struct iovec iov = { "ping\n", 5 };
			struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
					     .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			char reply[256] = "";
			ssize_t got = 0;

			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
			bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
			if (s >= 0 && !connect(s, (struct sockaddr *)&sa, sizeof(sa)) && sendmsg(s, &mh, 0) == 5) {
				struct pollfd p = { .fd = s, .events = POLLIN };

				shutdown(s, SHUT_WR);
				if (poll(&p, 1, 3000) == 1)
					got = read(s, reply, sizeof(reply) - 1);
			}
			reply[got > 0 ? got : 0] = '\0';
			CHECK(strstr(reply, "error: more descriptors than a request takes"),
			      "a request with %d descriptors is refused (%.*s)", nfds, (int)strcspn(reply, "\n"), reply);
			if (s >= 0)
				close(s);
		}
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	}
	CHECK(pings(1000), "ping answered after the storm");
	after = daemon_fds();
	CHECK(before > 0 && after == before, "bwapd holds %d descriptors after the storm, as before (%d)", after,
	      before);

	/* the flood: nobody holds 20, root still gets through */
	if (pipe(c2p) || pipe(p2c))
		return 1;
	{
		struct nobody nb;
		char c;

		if (nobody_start(flood_child, &nb))
			return 1;
		if (read(c2p[0], &c, 1) != 1)
			c = 0;
		/* the child's one check comes first in its numbering: count it, then ours */
		tap_n++;
		CHECK(c == 'f' && pings(1000), "root's ping is answered while nobody holds its 20 connections");
		if (write(p2c[1], "g", 1) != 1)
			perror("pipe");
		nobody_end(&nb);
	}
	as_nobody(self_target);

	r = ask("status json", NULL, 0, 3000, err, sizeof(err));
	snprintf(path, sizeof(path), "\"pid\": %d,", (int)holder);
	CHECK(r && strstr(r, path), "root's target is still there after nobody's requests");
	free(r);
	snprintf(path, sizeof(path), "detach %d", (int)holder);
	r = ask(path, NULL, 0, 3000, err, sizeof(err));
	free(r);
	snprintf(path, sizeof(path), "%s/search-%d.log", dir, (int)holder);
	CHECK(access(path, F_OK) && errno == ENOENT, "the search log is removed with its target");
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	stop_bwapd();

	/* out of descriptors: 64, and 80 connections queued */
	CHECK(!start_bwapd(NULL, 64), "bwapd starts with RLIMIT_NOFILE 64");
	if (daemon_pid) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fds[80], n = 0;
		struct bwap_proc_stat cpu0 = { 0 }, cpu1 = { 0 };
		double t0, t1;
		struct timespec second = { 1, 0 };

		bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
		for (int i = 0; i < 80; i++) {
			fds[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (fds[n] >= 0 && !connect(fds[n], (struct sockaddr *)&sa, sizeof(sa)))
				n++;
			else if (fds[n] >= 0)
				close(fds[n]);
		}
		bwap_proc_stat(daemon_pid, &cpu0);
		t0 = test_mono();
		/* a measurement window, not synchronisation */
		nanosleep(&second, NULL);
		t1 = test_mono();
		bwap_proc_stat(daemon_pid, &cpu1);
		{
			double cpu = (cpu1.cpu_seconds - cpu0.cpu_seconds) / (t1 - t0);

			CHECK(n > 40 && cpu < 0.3, "with %d connections and 64 descriptors bwapd does not spin: %.0f%% "
			      "of a core over %.2f s", n, 100 * cpu, t1 - t0);
		}
		for (int i = 0; i < n; i++)
			close(fds[i]);
		CHECK(pings(5000), "once they are gone, ping is answered");
		stop_bwapd();
	}
	return tap_done();
}
