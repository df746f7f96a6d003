/* SPDX-License-Identifier: MIT */
/*
 * core/pmix.c - the PMIx client: rank, world size and one shared value
 * (rank 0's rendezvous and the job token) from the launcher's PMIx server.
 *
 * PMIx keeps the value inside the job's namespace, so only ranks of this job
 * read it: that is what makes the token a secret shared by the job.
 */
#include "core/pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "core/log.h"

const int cb_pmix_built = 1;

static pmix_proc_t me;
static int opened;

int cb_pmix_launched(void)
{
	const char *ns = getenv("PMIX_NAMESPACE"), *r = getenv("PMIX_RANK");

	return ns && *ns && r && *r;
}

cb_status_t cb_pmix_open(int *rank, int *world)
{
	pmix_proc_t wild;
	pmix_value_t *val = NULL;
	pmix_status_t rc;

	if (!opened) {
		rc = PMIx_Init(&me, NULL, 0);
		if (rc != PMIX_SUCCESS)
			return cb_fail(
			        CB_ERR_UNAVAILABLE,
			        "cannot reach the launcher's PMIx server "
			        "(PMIx_Init: %s)",
			        PMIx_Error_string(rc));
		opened = 1;
	}
	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val || val->type != PMIX_UINT32) {
		if (val)
			PMIX_VALUE_RELEASE(val);
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "the launcher's PMIx server does not give the "
		               "job size (%s)",
		               PMIx_Error_string(rc));
	}
	*world = (int)val->data.uint32;
	*rank = (int)me.rank;
	PMIX_VALUE_RELEASE(val);
	if (*world < 1 || *rank < 0 || *rank >= *world)
		return cb_fail(CB_ERR_UNAVAILABLE, "PMIx says rank %d of %d",
		               *rank, *world);
	return CB_OK;
}

cb_status_t cb_pmix_share(int rank, const char *key, const char *value,
                          char *out, size_t out_bytes, double timeout_s)
{
	pmix_proc_t wild, root;
	pmix_value_t v, *got = NULL;
	pmix_info_t info[2];
	pmix_status_t rc;
	bool collect = true;
	int secs = (int)(timeout_s + 0.999);

	if (!opened)
		return cb_fail(CB_ERR_INVALID, "PMIx is not open");
	if (secs < 1)
		secs = 1;
	if (rank == 0) {
		PMIX_VALUE_LOAD(&v, value, PMIX_STRING);
		rc = PMIx_Put(PMIX_GLOBAL, key, &v);
		PMIX_VALUE_DESTRUCT(&v);
		if (rc == PMIX_SUCCESS)
			rc = PMIx_Commit();
		if (rc != PMIX_SUCCESS)
			return cb_fail(CB_ERR_PEER,
			               "cannot publish the rendezvous through "
			               "PMIx: %s",
			               PMIx_Error_string(rc));
	}
	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
	rc = PMIx_Fence(&wild, 1, info, 2);
	PMIX_INFO_DESTRUCT(&info[0]);
	PMIX_INFO_DESTRUCT(&info[1]);
	if (rc == PMIX_ERR_TIMEOUT)
		return cb_fail(CB_ERR_TIMEOUT,
		               "timed out after %d s waiting for every rank at "
		               "the PMIx fence",
		               secs);
	if (rc != PMIX_SUCCESS)
		return cb_fail(CB_ERR_PEER, "PMIx fence failed: %s",
		               PMIx_Error_string(rc));
	PMIX_LOAD_PROCID(&root, me.nspace, 0);
	PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &secs, PMIX_INT);
	rc = PMIx_Get(&root, key, info, 1, &got);
	PMIX_INFO_DESTRUCT(&info[0]);
	if (rc != PMIX_SUCCESS || !got || got->type != PMIX_STRING ||
	    !got->data.string) {
		if (got)
			PMIX_VALUE_RELEASE(got);
		return cb_fail(CB_ERR_PEER,
		               "rank 0's rendezvous is not in PMIx (%s)",
		               PMIx_Error_string(rc));
	}
	if (strlen(got->data.string) >= out_bytes) {
		PMIX_VALUE_RELEASE(got);
		return cb_fail(CB_ERR_PROTO,
		               "rank 0's rendezvous in PMIx is too long");
	}
	snprintf(out, out_bytes, "%s", got->data.string);
	PMIX_VALUE_RELEASE(got);
	return CB_OK;
}

void cb_pmix_close(void)
{
	if (opened)
		PMIx_Finalize(NULL, 0);
	opened = 0;
}
