/* SPDX-License-Identifier: GPL-2.0 */
/* bwapd's control socket, client side (ctl.c); bwapd.c is the server. */
#ifndef BWAP_CTL_H
#define BWAP_CTL_H

#include <stddef.h>

char *bwap_ctl_socket_path(const char *state_dir, char *buf, size_t len);
/* Connected fd, or -1 with a message saying what failed and how to start bwapd. */
int bwap_ctl_connect(const char *state_dir, char *err, size_t errlen);
/*
 * Send one request line, return the whole reply (malloc()ed; first line
 * "ok" or "error: ..."), or NULL with err set.
 */
char *bwap_ctl_request(const char *state_dir, const char *request, char *err, size_t errlen);
/* Same, giving up after timeout_ms without an answer (the default is 30 s). */
char *bwap_ctl_request_timeout(const char *state_dir, const char *request, int timeout_ms,
			       char *err, size_t errlen);

#endif
