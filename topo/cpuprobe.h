/* SPDX-License-Identifier: MIT */
/*
 * topo/cpuprobe.h - how much work this host's CPU does for one thread
 * right now: a copy loop in the core's own cache, run for a fixed wall
 * time.  Acceptance runs it on every host at once at inventory, so that a
 * host that is slow because of its CPU (a cgroup's cap, thermal or power
 * throttling, other work on its cores) can be told from one whose NIC,
 * port or cable is slow: the first copies less per wall second than the
 * other hosts, the second as much.
 *
 *   gbps   bytes copied per wall second / 1e9 (the work done)
 *   share  the thread's CPU time over the wall time (CLOCK_THREAD_CPUTIME_ID):
 *          below 1 where the thread waited for a core (a cap, other work);
 *          gbps low at a share near 1 is a slow core (throttled, a slower
 *          part)
 */
#ifndef CB_TOPO_CPUPROBE_H
#define CB_TOPO_CPUPROBE_H

struct cb_cpu_rate {
	double gbps;
	double share;
	double seconds; /* the wall time it ran */
};

/* Copies for @seconds of wall time (at least 10 ms).  Returns 0, or -1
 * (out of memory or no clock: @out zeroed). */
int cb_cpu_probe(double seconds, struct cb_cpu_rate *out);

#endif
