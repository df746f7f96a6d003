/* SPDX-License-Identifier: MIT */
/*
 * core/comm_auto.c - --transport auto: which transport connects each pair
 * of ranks, chosen by capability.
 *
 * Ranks of one host: the transport with CB_TP_CAP_SAME_HOST (shm; gpu with
 * --mem gpu).  Ranks of two hosts: verbs when both ends opened it (its
 * module loads and finds a device with an ACTIVE port), else tcp.  Each rank
 * tells every other at bootstrap which it opened (one allgather), so both ends
 * of a pair choose alike; a transport none of this rank's pairs uses is closed
 * again (comm.c's cb_comm_pick reads those masks).  The run's header says
 * what the pairs got (cb_comm_describe).  A leaf below comm.c: transports
 * are opened through the function comm.c hands it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"

struct auto_info {
	uint32_t tps;  /* cb_auto_bit()s of what this rank opened */
	char why[124]; /* why not verbs, if not */
};

/* Open verbs if it can connect this rank to other hosts; why not in @why.
 * A mistake in a verbs option (not --nic, which tcp shares) stays fatal. */
static cb_status_t try_verbs(struct cb_comm *c, cb_comm_open_fn open_tp,
                             int nic_given, char *why, size_t bytes)
{
	struct cb_fail_rec rec;
	cb_status_t st;

	cb_fail_open(&rec);
	st = open_tp(c, "verbs", 0);
	cb_fail_close(&rec, st == CB_ERR_USAGE && !nic_given);
	if (st == CB_OK)
		return CB_OK;
	snprintf(why, bytes, "%s",
	         cb_fail_rec_msg(&rec) ? cb_fail_rec_msg(&rec)
	                               : cb_status_str(st));
	if (st == CB_ERR_USAGE && !nic_given)
		return st;
	return CB_ERR_UNAVAILABLE;
}

/* What the pairs got, for the header (every rank knows every rank's). */
static void auto_line(struct cb_comm *c, const struct auto_info *all)
{
	uint32_t vb = cb_auto_bit("verbs");
	long local = 0, verbs = 0, tcp = 0;
	int first = -1, others = 0;
	size_t n;

	for (int r = 0; r < c->world; r++) {
		if (!(all[r].tps & vb)) {
			if (first < 0)
				first = r;
			else if (c->host_of_rank[r] != c->host_of_rank[first])
				others++;
		}
		for (int s = r + 1; s < c->world; s++)
			if (c->host_of_rank[r] == c->host_of_rank[s])
				local++;
			else if (all[r].tps & all[s].tps & vb)
				verbs++;
			else
				tcp++;
	}
	n = (size_t)snprintf(c->auto_line, sizeof(c->auto_line),
	                     "pairs on one host over %s (%ld); between hosts "
	                     "over verbs (%ld), over tcp (%ld)",
	                     c->mem_kind == CB_MEM_GPU ? "gpu" : "shm", local,
	                     verbs, tcp);
	if (first >= 0 && tcp && n < sizeof(c->auto_line))
		snprintf(c->auto_line + n, sizeof(c->auto_line) - n,
		         "; no verbs on host %s%s (rank %d: %s)",
		         cb_comm_host_name(c, first),
		         others ? " and others" : "", first, all[first].why);
}

cb_status_t cb_comm_open_auto(struct cb_comm *c, cb_comm_open_fn open_tp,
                              int nic_given)
{
	const char *local = c->mem_kind == CB_MEM_GPU ? "gpu" : "shm";
	struct auto_info me = { 0 }, *all;
	int verbs = -1, use_verbs = 0, use_tcp = 0;
	cb_status_t st;

	if (c->nhosts < c->world && (st = open_tp(c, local, 0)))
		return st;
	if (c->nhosts == 1)
		return c->world == 1 ? open_tp(c, "tcp", 0) : CB_OK;
	st = try_verbs(c, open_tp, nic_given, me.why, sizeof(me.why));
	if (st == CB_OK) {
		verbs = c->ntp - 1;
		me.tps |= cb_auto_bit("verbs");
	} else if (st != CB_ERR_UNAVAILABLE) {
		return st;
	}
	me.tps |= cb_auto_bit("tcp");
	all = calloc((size_t)c->world, sizeof(*all));
	c->remote_tps = calloc((size_t)c->world, sizeof(*c->remote_tps));
	if (!all || !c->remote_tps) {
		free(all);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	if ((st = cb_boot_allgather(c->boot,
	                            "every rank to say which transports it has",
	                            &me, sizeof(me), all))) {
		free(all);
		return st;
	}
	for (int r = 0; r < c->world; r++) {
		c->remote_tps[r] = all[r].tps;
		if (c->host_of_rank[r] == c->host)
			continue;
		if (all[r].tps & me.tps & cb_auto_bit("verbs"))
			use_verbs = 1;
		else
			use_tcp = 1;
	}
	auto_line(c, all);
	free(all);
	if (c->rank == 0)
		cb_log(CB_LOG_INFO, "auto: %s", c->auto_line);
	if (verbs >= 0 && !use_verbs) {
		/* no pair of ours has verbs at both ends: it was last opened */
		c->tp[verbs].ops->close(c->tp[verbs].ctx);
		memset(&c->tp[verbs], 0, sizeof(c->tp[verbs]));
		c->ntp--;
	}
	return use_tcp ? open_tp(c, "tcp", 0) : CB_OK;
}
