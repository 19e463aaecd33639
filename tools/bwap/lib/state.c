// SPDX-License-Identifier: GPL-2.0
/* Files: whole-file reads and the state directory (default /var/lib/bwap). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

char *bwap_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	char *buf;

	if (!f)
		return NULL;
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
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}
