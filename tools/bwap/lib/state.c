// SPDX-License-Identifier: GPL-2.0
/* Files: whole-file reads and the state directory (default /var/lib/bwap). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bwap.h"

int bwap_state_mkdir(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	char *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot create state directory %s: %s (use --state-dir DIR for one you can write)",
		 path, strerror(errno));
	return -1;
}

char *bwap_state_path(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

int bwap_state_writable(const char *dir, char *err, size_t errlen)
{
	char probe[4200];
	int fd;

	if (bwap_state_mkdir(dir, err, errlen))
		return -1;
	snprintf(probe, sizeof(probe), "%s/.bwap-probe.XXXXXX", dir);
	fd = mkstemp(probe);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write to state directory %s: %s (use --state-dir DIR for one "
			 "you can write)", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

int bwap_atomic_open(struct bwap_atomic_file *a, const char *path, char *err, size_t errlen)
{
	int fd;

	snprintf(a->path, sizeof(a->path), "%s", path);
	snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.XXXXXX", path);
	a->f = NULL;
	fd = mkstemp(a->tmp);
	if (fd < 0 || fchmod(fd, 0644) || !(a->f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(a->tmp);
		}
		return -1;
	}
	return 0;
}

void bwap_atomic_abort(struct bwap_atomic_file *a)
{
	if (a->f) {
		fclose(a->f);
		unlink(a->tmp);
		a->f = NULL;
	}
}

int bwap_atomic_commit(struct bwap_atomic_file *a, char *err, size_t errlen)
{
	char dir[4096];
	int e = 0, dfd;

	if (fflush(a->f) || ferror(a->f) || fsync(fileno(a->f)))
		e = errno ? errno : EIO;
	if (fclose(a->f) && !e)
		e = errno;
	a->f = NULL;
	if (!e && rename(a->tmp, a->path))
		e = errno;
	if (e) {
		unlink(a->tmp);
		snprintf(err, errlen, "cannot write %s: %s (the old file, if any, is unchanged)", a->path,
			 strerror(e));
		errno = e;
		return -1;
	}
	/* the rename itself reaches the disk with the directory */
	snprintf(dir, sizeof(dir), "%s", a->path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

char *bwap_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	struct stat st;
	char *buf;

	if (!f)
		return NULL;
	/* fopen() opens a directory for reading; its read fails with EISDIR, say so */
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		errno = EISDIR;
		return NULL;
	}
	buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		char *bigger;

		n += got;
		if (n + 1 < cap)
			break;
		cap *= 2;
		bigger = realloc(buf, cap);
		if (!bigger)
			free(buf);
		buf = bigger;
	}
	if (buf && ferror(f)) {
		int e = errno;

		free(buf);
		buf = NULL;
		errno = e ? e : EIO;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

long bwap_vmstat_moved(void)
{
	char *text = bwap_read_file("/proc/vmstat", NULL), *p;
	long v = -1;

	if (text && (p = strstr(text, "\nmpol_rebalance_moved ")))
		v = atol(p + strlen("\nmpol_rebalance_moved "));
	free(text);
	return v;
}

int bwap_proc_stat(pid_t pid, struct bwap_proc_stat *st)
{
	char path[64], *text, *p;
	unsigned long long ut, stime, start;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = bwap_read_file(path, NULL);
	/* the fields after the command, which may hold spaces and parentheses */
	p = text ? strrchr(text, ')') : NULL;
	ok = p && sscanf(p + 1, " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
			 &st->ppid, &ut, &stime, &start) == 4;
	free(text);
	if (!ok)
		return -1;
	st->cpu_seconds = (double)(ut + stime) / sysconf(_SC_CLK_TCK);
	st->start_time = start;
	return 0;
}
