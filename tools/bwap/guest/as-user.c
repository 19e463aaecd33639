// SPDX-License-Identifier: GPL-2.0
/*
 * as-user UID COMMAND [ARG...]: run COMMAND as user and group UID, for the
 * guest tests of what bwapd lets a non-root client do.  The busybox guest
 * has no su with a user database; this needs none.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;

	if (argc < 3) {
		fprintf(stderr, "usage: as-user UID COMMAND [ARG...]\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("as-user");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
