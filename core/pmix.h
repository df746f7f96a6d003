/* SPDX-License-Identifier: MIT */
/*
 * core/pmix.h - meeting under a PMIx launcher (Open MPI's mpirun, `srun
 * --mpi=pmix`): the launcher's PMIx server tells every rank its rank and the
 * job's size, and carries rank 0's rendezvous address and the job token to
 * the others, so no --rendezvous is needed.  Only that one value travels
 * through PMIx; everything after it (the store, its gathers, the failure
 * detector) is collbench's own bootstrap.
 *
 * Built with Debian's libpmix-dev (meson feature `pmix`, on when found);
 * without it core/pmix_none.c stands in and cb_pmix_built is 0.
 */
#ifndef CB_CORE_PMIX_H
#define CB_CORE_PMIX_H

#include <stddef.h>

#include <collbench/status.h>

/* 1 when this build has PMIx. */
extern const int cb_pmix_built;

/* 1 when a PMIx server started this process (PMIX_NAMESPACE and PMIX_RANK
 * are set); it says nothing of whether this build can talk to it. */
int cb_pmix_launched(void);

/* Connect to the launcher's PMIx server; *@rank and *@world from it.
 * CB_ERR_UNAVAILABLE (recorded) without PMIx in the build or when the
 * server refuses. */
cb_status_t cb_pmix_open(int *rank, int *world);

/*
 * Rank 0 passes @value (a string); every rank, rank 0 included, gets rank
 * 0's value in @out after a fence of the whole job.  Waits at most
 * @timeout_s (a rank that never arrives).  CB_ERR_TIMEOUT or CB_ERR_PEER,
 * recorded, naming PMIx.
 */
cb_status_t cb_pmix_share(int rank, const char *key, const char *value,
                          char *out, size_t out_bytes, double timeout_s);

/* Disconnect (PMIx_Finalize); harmless when not open. */
void cb_pmix_close(void);

#endif
