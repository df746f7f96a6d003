/* SPDX-License-Identifier: MIT */
/*
 * collbench/status.h - the one status type shared by every layer and plugin.
 *
 * The codes and their strings come from one X-macro list so they cannot drift
 * apart.  CB_OK is zero, CB_AGAIN is the only positive code ("nothing yet; call
 * again"), and every error is negative.
 */
#ifndef COLLBENCH_STATUS_H
#define COLLBENCH_STATUS_H

#define CB_STATUS_MAP(X)                                                       \
	X(OK, 0, "success")                                                    \
	X(AGAIN, 1, "not yet complete")                                        \
	X(ERR_SYS, -1, "system call failed")                                   \
	X(ERR_INVALID, -2, "invalid argument")                                 \
	X(ERR_UNSUPPORTED, -3, "not supported")                                \
	X(ERR_UNAVAILABLE, -4, "not available on this machine")                \
	X(ERR_PEER, -5, "a peer failed or closed its connection")              \
	X(ERR_TIMEOUT, -6, "deadline passed")                                  \
	X(ERR_PROTO, -7, "a message did not parse")                            \
	X(ERR_TRUNCATE, -8, "message larger than the receive buffer")          \
	X(ERR_NOMEM, -9, "out of memory")                                      \
	X(ERR_ABORTED, -10, "the job was aborted by another rank")             \
	X(ERR_USAGE, -11, "usage error")                                       \
	X(ERR_INTERRUPTED, -12, "interrupted (SIGINT)")                        \
	X(ERR_TERMINATED, -13, "terminated (SIGTERM)")

typedef enum cb_status {
#define CB_STATUS_ENUM(name, value, text) CB_##name = value,
	CB_STATUS_MAP(CB_STATUS_ENUM)
#undef CB_STATUS_ENUM
} cb_status_t;

#endif
