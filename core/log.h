/* SPDX-License-Identifier: MIT */
/*
 * core/log.h - logging, the first-failure record, the clock.
 *
 * Logs go to stderr, results to stdout.  A failure is recorded once, where it
 * is detected (cb_fail), and printed once by the top level (cb_fail_msg).
 */
#ifndef CB_CORE_LOG_H
#define CB_CORE_LOG_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "core/types.h"

enum { CB_LOG_ERROR = 0, CB_LOG_WARN = 1, CB_LOG_INFO = 2, CB_LOG_DEBUG = 3 };

extern int cb_log_level;
/* Prefix of every line: "collbench" or "collbench: rank 3". */
void cb_log_set_rank(int rank);
void cb_log(int level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * The first-failure record: the one line that describes a failure (the first
 * one recorded wins, later ones are dropped) and its status.  It belongs to
 * a context: the communicator owns one (struct cb_comm.fail), into which its
 * transports' host->fail() records, whatever thread they call from; a helper
 * whose failure a caller may forgive runs under a record of its own.  A
 * record is opened on a thread (cb_fail_open) and from then on is where that
 * thread's cb_fail() lands, until it is closed; with none open, the
 * process's.  A fresh record starts clean, so nobody has to clear one.
 */
struct cb_fail_rec {
	atomic_int state; /* 0: nothing recorded, 1: being written, 2: set */
	int quiet;
	cb_status_t st;
	char line[512];
	struct cb_fail_rec *outer; /* open on the thread before this one */
};

/* Start @r clean and make it this thread's record (innermost first). */
void cb_fail_open(struct cb_fail_rec *r);
/* The record open before @r is this thread's again.  @keep: it gets @r's
 * failure (and quiet flag) when it has none of its own (an earlier failure
 * stays the first); 0: @r's is forgiven.  @r stays readable. */
void cb_fail_close(struct cb_fail_rec *r, int keep);
/* Record into @r (first wins) and return @st. */
cb_status_t cb_fail_to(struct cb_fail_rec *r, cb_status_t st, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));
/* @r's line (NULL when nothing failed), its status (CB_OK then). */
const char *cb_fail_rec_msg(const struct cb_fail_rec *r);
cb_status_t cb_fail_rec_status(const struct cb_fail_rec *r);
/* The owner of @r puts a more specific line in the place of its first one
 * (the store's report of the job's failure). */
void cb_fail_rec_replace(struct cb_fail_rec *r, cb_status_t st,
                         const char *line);

/* Record in this thread's record (see above) and return @st. */
cb_status_t cb_fail(cb_status_t st, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* This thread's record's line, or NULL when nothing failed. */
const char *cb_fail_msg(void);
/* The status recorded with it (CB_OK when nothing failed).  For a rank that
 * another rank's failure stopped, the other rank's status. */
cb_status_t cb_fail_status(void);
/* Forget what this thread's record holds: for unit tests, and for the
 * callers that have not moved to a record of their own yet. */
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
