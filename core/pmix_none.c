/* SPDX-License-Identifier: MIT */
/*
 * core/pmix_none.c - stands in for core/pmix.c in a build without PMIx
 * (-Dpmix=disabled, or libpmix-dev missing): a PMIx launcher is still
 * recognised, so the line that asks for --rendezvous can say why.
 */
#include <stdlib.h>

#include "core/log.h"
#include "core/pmix.h"

const int cb_pmix_built = 0;

int cb_pmix_launched(void)
{
	const char *ns = getenv("PMIX_NAMESPACE"), *r = getenv("PMIX_RANK");

	return ns && *ns && r && *r;
}

cb_status_t cb_pmix_open(int *rank, int *world)
{
	(void)rank;
	(void)world;
	return cb_fail(CB_ERR_UNAVAILABLE, "built without PMIx");
}

cb_status_t cb_pmix_share(int rank, const char *key, const char *value,
                          char *out, size_t out_bytes, double timeout_s)
{
	(void)rank;
	(void)key;
	(void)value;
	(void)out;
	(void)out_bytes;
	(void)timeout_s;
	return cb_fail(CB_ERR_UNAVAILABLE, "built without PMIx");
}

void cb_pmix_close(void)
{
}
