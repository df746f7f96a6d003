/* SPDX-License-Identifier: MIT */
/*
 * core/log.h - logging, the first-failure record, the clock.
 *
 * Logs go to stderr, results to stdout.  A failure is recorded once, where it
 * is detected (cb_fail), and printed once by the top level (cb_fail_msg).
 */
#ifndef CB_CORE_LOG_H
#define CB_CORE_LOG_H

#include <stdint.h>
#include <time.h>

#include "core/types.h"

enum { CB_LOG_ERROR = 0, CB_LOG_WARN = 1, CB_LOG_INFO = 2, CB_LOG_DEBUG = 3 };

extern int cb_log_level;
/* Prefix of every line: "collbench" or "collbench: rank 3". */
void cb_log_set_rank(int rank);
void cb_log(int level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Record the first failure's line and return @st (later ones are dropped). */
cb_status_t cb_fail(cb_status_t st, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The recorded line, or NULL when nothing failed. */
const char *cb_fail_msg(void);
/* The status recorded with it (CB_OK when nothing failed).  For a rank that
 * another rank's failure stopped, the other rank's status. */
cb_status_t cb_fail_status(void);
/* Forget the recorded failure: for unit tests, and for callers that replace
 * a helper's line with a more specific one. */
void cb_fail_clear(void);
/* Another rank reports this failure: this one keeps quiet about it. */
void cb_fail_set_quiet(int quiet);
int cb_fail_quiet(void);

/*
 * SIGINT and SIGTERM.  cb_signals_catch() installs handlers that only note
 * the signal; every wait (the communicator's progress, the rendezvous's
 * sockets) looks at cb_interrupted() and ends with its status, so the run
 * stops the way a failure does: the job is told, rank 0 writes the results
 * so far, and the process exits 130 or 143.  The handlers do not restart
 * system calls, so a wait in poll() returns at once.
 */
void cb_signals_catch(void);
/* CB_ERR_INTERRUPTED (SIGINT), CB_ERR_TERMINATED (SIGTERM), or CB_OK. */
cb_status_t cb_interrupted(void);
/* How many SIGINT and SIGTERM came so far. */
int cb_signals_count(void);
/* The signal behind a status (SIGINT, SIGTERM), or 0. */
int cb_status_signal(cb_status_t st);

static inline uint64_t cb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
