/* SPDX-License-Identifier: MIT */
/* coll/algos.c - the table of algorithms and of collectives. */
#include <string.h>

#include "coll/coll.h"

extern const struct cb_algo cb_algo_ring;

const struct cb_algo *const cb_algos[] = {
	&cb_algo_ring,
	NULL,
};

const struct cb_algo *cb_algo_find(const char *name)
{
	for (int i = 0; cb_algos[i]; i++)
		if (!strcmp(cb_algos[i]->name, name))
			return cb_algos[i];
	return NULL;
}

static const char *const coll_names[] = {
#define CB_COLL_ROW(id, name) name,
	CB_COLL_MAP(CB_COLL_ROW)
#undef CB_COLL_ROW
};

const char *cb_coll_name(enum cb_coll coll)
{
	return (unsigned)coll < CB_COLL_COUNT ? coll_names[coll] : "?";
}

int cb_coll_parse(const char *s)
{
	for (int i = 0; i < CB_COLL_COUNT; i++)
		if (!strcmp(s, coll_names[i]))
			return i;
	return -1;
}

double cb_coll_busbw_factor(enum cb_coll coll, int n)
{
	switch (coll) {
	case CB_COLL_ALLREDUCE:
		return n > 1 ? 2.0 * (n - 1) / n : 0.0;
	default:
		return 1.0;
	}
}
