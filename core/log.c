/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cb_log_level = CB_LOG_WARN;
static char log_prefix[48] = "collbench";
/* The process's record: where a thread's failures land with none open. */
static struct cb_fail_rec process_rec;
static _Thread_local struct cb_fail_rec *thread_rec;

const char *cb_status_str(cb_status_t st)
{
	switch (st) {
#define CB_STATUS_CASE(name, value, text)                                      \
	case CB_##name:                                                        \
		return text;
		CB_STATUS_MAP(CB_STATUS_CASE)
#undef CB_STATUS_CASE
	}
	return "unknown status";
}

void cb_log_set_rank(int rank)
{
	snprintf(log_prefix, sizeof(log_prefix), "collbench: rank %d", rank);
}

void cb_log(int level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > cb_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line so lines of several ranks do not interleave. */
	fprintf(stderr, "%s: %s%s\n", log_prefix,
	        level == CB_LOG_WARN ? "warning: " : "", line);
}

static struct cb_fail_rec *fail_here(void)
{
	return thread_rec ? thread_rec : &process_rec;
}

static int rec_set(const struct cb_fail_rec *r)
{
	return atomic_load_explicit(&r->state, memory_order_acquire) == 2;
}

static void rec_reset(struct cb_fail_rec *r)
{
	atomic_store_explicit(&r->state, 0, memory_order_relaxed);
	r->quiet = 0;
	r->st = CB_OK;
	r->line[0] = '\0';
}

/* The first writer claims @r (0 -> 1), writes, then publishes (2): a
 * transport's helper thread and the rank's own may fail at once. */
static cb_status_t rec_vadd(struct cb_fail_rec *r, cb_status_t st,
                            const char *fmt, va_list ap)
{
	int empty = 0;

	if (!atomic_compare_exchange_strong(&r->state, &empty, 1))
		return st;
	r->st = st;
	vsnprintf(r->line, sizeof(r->line), fmt, ap);
	atomic_store_explicit(&r->state, 2, memory_order_release);
	return st;
}

void cb_fail_open(struct cb_fail_rec *r)
{
	rec_reset(r);
	r->outer = thread_rec;
	thread_rec = r;
}

void cb_fail_close(struct cb_fail_rec *r, int keep)
{
	struct cb_fail_rec **at = &thread_rec, *outer;

	/* Innermost first, as a rule; a record closed out of turn is
	 * taken out of the chain where it is. */
	while (*at && *at != r)
		at = &(*at)->outer;
	if (*at)
		*at = r->outer;
	outer = r->outer ? r->outer : &process_rec;
	r->outer = NULL;
	if (!keep)
		return;
	if (rec_set(r))
		cb_fail_to(outer, r->st, "%s", r->line);
	if (r->quiet)
		outer->quiet = 1;
}

cb_status_t cb_fail_to(struct cb_fail_rec *r, cb_status_t st, const char *fmt,
                       ...)
{
	va_list ap;

	va_start(ap, fmt);
	rec_vadd(r, st, fmt, ap);
	va_end(ap);
	return st;
}

const char *cb_fail_rec_msg(const struct cb_fail_rec *r)
{
	return rec_set(r) ? r->line : NULL;
}

cb_status_t cb_fail_rec_status(const struct cb_fail_rec *r)
{
	return rec_set(r) ? r->st : CB_OK;
}

void cb_fail_rec_replace(struct cb_fail_rec *r, cb_status_t st,
                         const char *line)
{
	int quiet = r->quiet;

	rec_reset(r);
	r->quiet = quiet;
	cb_fail_to(r, st, "%s", line);
}

cb_status_t cb_fail(cb_status_t st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rec_vadd(fail_here(), st, fmt, ap);
	va_end(ap);
	return st;
}

cb_status_t cb_fail_status(void)
{
	return cb_fail_rec_status(fail_here());
}

const char *cb_fail_msg(void)
{
	return cb_fail_rec_msg(fail_here());
}

void cb_fail_clear(void)
{
	struct cb_fail_rec *r = fail_here();
	int quiet = r->quiet;

	rec_reset(r);
	r->quiet = quiet; /* as before: clearing the line kept the flag */
}

void cb_fail_set_quiet(int quiet)
{
	fail_here()->quiet = quiet;
}

int cb_fail_quiet(void)
{
	return fail_here()->quiet;
}

/* Written by the handler, read by the main thread (and, should a signal
 * land on another thread, across threads): lock-free atomics are both
 * async-signal-safe and race-free, where a volatile sig_atomic_t is only
 * the first. */
static atomic_int caught_signal, caught_count;

static void on_signal(int sig)
{
	atomic_store_explicit(&caught_signal, sig, memory_order_relaxed);
	atomic_fetch_add_explicit(&caught_count, 1, memory_order_relaxed);
}

void cb_signals_catch(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa = { .sa_handler = on_signal }, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* One ignored when we started stays ignored: a shell
		 * without job control starts background commands so, and
		 * means ^C for the foreground one only. */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

cb_status_t cb_interrupted(void)
{
	switch (atomic_load_explicit(&caught_signal, memory_order_relaxed)) {
	case 0:
		return CB_OK;
	case SIGINT:
		return CB_ERR_INTERRUPTED;
	default:
		return CB_ERR_TERMINATED;
	}
}

int cb_signals_count(void)
{
	return atomic_load_explicit(&caught_count, memory_order_relaxed);
}

int cb_status_signal(cb_status_t st)
{
	return st == CB_ERR_INTERRUPTED  ? SIGINT
	       : st == CB_ERR_TERMINATED ? SIGTERM
	                                 : 0;
}

#ifdef CB_SANITIZE_BUILD
#include <dlfcn.h>
/*
 * Sanitizer builds only: hwloc's PCI plugin loads libpciaccess, which keeps
 * its pci.ids cache in a global, and unloads it when the last topology is
 * freed.  With the library gone, LeakSanitizer no longer sees the global and
 * reports the cache - thousands of strings, from an unknown module - as
 * leaked, which would bury our own leaks.  Loading the library once more,
 * never to be unloaded, keeps its globals in view (and does nothing where
 * it is missing).  Here, because this file is in every executable.
 */
__attribute__((constructor)) static void cb_sanitize_keep_pciaccess(void)
{
	dlopen("libpciaccess.so.0", RTLD_NOW | RTLD_NODELETE);
}
#endif
