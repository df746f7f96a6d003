/* SPDX-License-Identifier: MIT */
/*
 * coll/colls.c - the table of collectives: names, what each reduces or roots,
 * its bus-bandwidth factor and its buffer sizes.  A leaf the algorithms and
 * the schedule executor name collectives through.
 */
#include <string.h>

#include "coll/coll.h"

static const struct {
	const char *name;
	int reduces, rooted, blocks;
} colls[] = {
#define CB_COLL_ROW(id, name, red, root, blocks) { name, red, root, blocks },
	CB_COLL_MAP(CB_COLL_ROW)
#undef CB_COLL_ROW
};

const char *cb_coll_name(enum cb_coll coll)
{
	return (unsigned)coll < CB_COLL_COUNT ? colls[coll].name : "?";
}

int cb_coll_parse(const char *s)
{
	for (int i = 0; i < CB_COLL_COUNT; i++)
		if (!strcmp(s, colls[i].name))
			return i;
	return -1;
}

int cb_coll_reduces(enum cb_coll coll)
{
	return colls[coll].reduces;
}

int cb_coll_rooted(enum cb_coll coll)
{
	return colls[coll].rooted;
}

int cb_coll_blocks(enum cb_coll coll)
{
	return colls[coll].blocks;
}

double cb_coll_busbw_factor(enum cb_coll coll, int n)
{
	switch (coll) {
	case CB_COLL_ALLREDUCE:
		return n > 1 ? 2.0 * (n - 1) / n : 0.0;
	case CB_COLL_REDUCE_SCATTER:
	case CB_COLL_ALLGATHER:
	case CB_COLL_ALLTOALL:
		return n > 1 ? (double)(n - 1) / n : 0.0;
	case CB_COLL_BARRIER:
		return 0.0;
	default: /* broadcast, reduce, sendrecv, pingpong */
		return 1.0;
	}
}

const char *cb_coll_busbw_formula(enum cb_coll coll)
{
	switch (coll) {
	case CB_COLL_ALLREDUCE:
		return "2(n-1)/n";
	case CB_COLL_REDUCE_SCATTER:
	case CB_COLL_ALLGATHER:
	case CB_COLL_ALLTOALL:
		return "(n-1)/n";
	case CB_COLL_BARRIER:
		return "0 (no data)";
	default:
		return "1";
	}
}

/* Nothing for a barrier, else @count, or @count per rank (@per_rank). */
static size_t elems(enum cb_coll coll, size_t count, int n, int per_rank)
{
	if (coll == CB_COLL_BARRIER)
		return 0;
	return per_rank ? count * (size_t)n : count;
}

size_t cb_coll_send_elems(enum cb_coll coll, size_t count, int n)
{
	return elems(coll, count, n,
	             coll == CB_COLL_REDUCE_SCATTER ||
	                     coll == CB_COLL_ALLTOALL);
}

size_t cb_coll_recv_elems(enum cb_coll coll, size_t count, int n)
{
	return elems(coll, count, n,
	             coll == CB_COLL_ALLGATHER || coll == CB_COLL_ALLTOALL);
}

size_t cb_coll_size_elems(enum cb_coll coll, size_t count, int n)
{
	size_t s = cb_coll_send_elems(coll, count, n);
	size_t r = cb_coll_recv_elems(coll, count, n);

	return s > r ? s : r;
}
