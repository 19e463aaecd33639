/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The real bwapd for the tests that talk to it over its socket
 * (test_bwapd_serve.c, test_bwapd_hostile.c): started in a state
 * directory of the test's with the matrix it gives, the MODELLED signal,
 * no sample due while the test runs, and --ready-fd, so that nothing
 * waits on a clock for it.  $BWAPD_BIN runs another bwapd (an older one,
 * to show what a case catches); $BWAPD_MATRIX another matrix (the
 * guest's topology).
 */
#ifndef BWAP_REAL_BWAPD_H
#define BWAP_REAL_BWAPD_H

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>

/*
 * bwapd in dir with matrix_text as its matrix (NULL: one node), its
 * output appended to logpath, with "--set" sets (NULL
 * ended, or NULL), under RLIMIT_NOFILE nofile (0: as it is); its pid in
 * *pid.  0 once it said "ready", -1 if it exited (or could not start)
 * first.
 */
static inline int real_bwapd_start(const char *dir, const char *logpath, const char *matrix_text,
				   const char *const *sets, rlim_t nofile, pid_t *pid)
{
	char exe[PATH_MAX], bwapd[PATH_MAX + 16], matrix[128], conf[128], fdarg[16], buf[16];
	const char *argv[40], *bin = getenv("BWAPD_BIN"), *mx = getenv("BWAPD_MATRIX");
	int ready[2], argc = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	*pid = 0;
	exe[n > 0 ? n : 0] = '\0';
	snprintf(bwapd, sizeof(bwapd), "%s/../bwapd", dirname(exe));
	snprintf(matrix, sizeof(matrix), "%s/matrix", dir);
	f = fopen(matrix, "w");
	if (!f)
		return -1;
	fputs(matrix_text ? matrix_text : "bwap-matrix 1\nnodes 1\nbw 0: 10000\n", f);
	fclose(f);
	snprintf(conf, sizeof(conf), "%s/bwapd.conf", dir);
	f = fopen(conf, "w");
	if (!f)
		return -1;
	fclose(f);
	if (pipe(ready))
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", ready[1]);
	argv[argc++] = bin ? bin : bwapd;
	argv[argc++] = "--config";
	argv[argc++] = conf;
	argv[argc++] = "--state-dir";
	argv[argc++] = dir;
	argv[argc++] = "--matrix";
	argv[argc++] = mx ? mx : matrix;
	argv[argc++] = "--signal";
	argv[argc++] = "model";
	/* no sample falls due while the test runs: only its requests move bwapd */
	argv[argc++] = "--set";
	argv[argc++] = "interval=600";
	argv[argc++] = "--ready-fd";
	argv[argc++] = fdarg;
	for (int i = 0; sets && sets[i] && argc < 38; i++) {
		argv[argc++] = "--set";
		argv[argc++] = sets[i];
	}
	argv[argc] = NULL;
	*pid = fork();
	if (!*pid) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
		struct rlimit rl = { nofile, nofile };

		close(ready[0]);
		dup2(fd, 2);
		dup2(fd, 1);
		if (nofile && setrlimit(RLIMIT_NOFILE, &rl))
			_exit(126);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(ready[1]);
	n = read(ready[0], buf, sizeof(buf));
	close(ready[0]);
	return n > 0 ? 0 : -1;
}

#endif /* BWAP_REAL_BWAPD_H */
