// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for bwapd's request parser (daemon/request.c), the
 * code that reads every byte a local user sends to a root daemon.  The
 * input is cut as bwapd cuts a request: at most 1023 bytes, up to the
 * first newline.  Besides the sanitizers' findings, each parsed request
 * is checked against what the rest of bwapd relies on: a known verb, a pid
 * in range or "fd", descriptor slots in order and below 4 per file, ids in
 * Slurm's range, and an error message that is a bounded, terminated line.
 * Built and run by 'make -C tools/bwap fuzz' (clang, Debian's
 * libfuzzer-14-dev); the seeds are in corpus/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bwapd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bwapd_request r;
	char line[1024], err[256];
	size_t n = size < sizeof(line) - 1 ? size : sizeof(line) - 1;

	memcpy(line, data, n);
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	for (int from_client = 0; from_client < 2; from_client++) {
		memset(err, 'x', sizeof(err));
		if (bwapd_request_parse(line, from_client, &r, err, sizeof(err))) {
			if (!memchr(err, '\0', sizeof(err)))
				abort();	/* an unterminated error would be sent as is */
			continue;
		}
		if (r.verb > REQ_WAIT)
			abort();
		if (r.verb >= REQ_ATTACH && !r.target_fd && (r.pid < 1 || r.pid > 4194304))
			abort();
		if (r.nr_fds < 0 || r.nr_fds > 4)
			abort();
		if (r.verb == REQ_ATTACH) {
			const struct attach_args *a = &r.a;

			if ((a->phases < 0) != (a->phase_weights < 0))
				abort();
			if (a->progress >= r.nr_fds || a->phases >= r.nr_fds || a->phase_weights >= r.nr_fds)
				abort();
			if (a->job > 4294967295LL || a->step > 4294967295LL || a->task > 4294967295LL)
				abort();
			if (from_client && (a->parent || (strcmp(a->how, "attach") && strcmp(a->how, "run") &&
							  strcmp(a->how, "slurm"))))
				abort();
			if (!memchr(a->how, '\0', sizeof(a->how)))
				abort();
		}
	}
	return 0;
}
