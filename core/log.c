/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cb_log_level = CB_LOG_WARN;
static char log_prefix[48] = "collbench";
static char fail_line[512];
static int fail_set, fail_quiet;
static cb_status_t fail_status;

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

cb_status_t cb_fail(cb_status_t st, const char *fmt, ...)
{
	va_list ap;

	if (fail_set)
		return st;
	fail_set = 1;
	fail_status = st;
	va_start(ap, fmt);
	vsnprintf(fail_line, sizeof(fail_line), fmt, ap);
	va_end(ap);
	return st;
}

cb_status_t cb_fail_status(void)
{
	return fail_set ? fail_status : CB_OK;
}

const char *cb_fail_msg(void)
{
	return fail_set ? fail_line : NULL;
}

void cb_fail_clear(void)
{
	fail_set = 0;
	fail_status = CB_OK;
	fail_line[0] = '\0';
}

void cb_fail_set_quiet(int quiet)
{
	fail_quiet = quiet;
}

int cb_fail_quiet(void)
{
	return fail_quiet;
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
