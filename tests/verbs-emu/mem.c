/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/mem.c - protection domains and memory regions.
 *
 * A key (lkey == rkey, as mlx5 hands them out) is index << 8 | generation:
 * the index finds the region in a table, the generation byte makes a key of
 * a deregistered region fail even after its slot is reused.  Registration
 * checks what the kernel checks: the range is mapped (EFAULT otherwise) and
 * remote write or atomic access comes with local write (EINVAL otherwise).
 * Locked-memory limits are not emulated.
 */
#include "emu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

EMU_VISIBLE struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	static _Atomic uint32_t handles;
	struct emu_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = context;
	pd->pd.handle = atomic_fetch_add(&handles, 1) + 1;
	return &pd->pd;
}

EMU_VISIBLE int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct emu_pd *pd = (struct emu_pd *)ibpd;
	if (atomic_load(&pd->users))
		return EBUSY;
	free(pd);
	return 0;
}

struct emu_mr *emu_mr_lookup(uint32_t key)
{
	uint32_t idx = key >> 8;
	struct emu_mr *mr;
	if (idx == 0 || idx >= emu_eng.mr_cap)
		return NULL;
	mr = emu_eng.mr[idx];
	return mr && mr->mr.lkey == key ? mr : NULL;
}

/* The whole range must be mapped, as pinning it would require. */
static bool range_mapped(void *addr, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(pg - 1);
	uintptr_t end = (uintptr_t)addr + len;
	unsigned char vec[256];
	while (a < end) {
		size_t n = (end - a + (size_t)pg - 1) / (size_t)pg;
		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore((void *)a, n * (size_t)pg, vec))
			return false;
		a += n * (size_t)pg;
	}
	return true;
}

static struct ibv_mr *reg(struct ibv_pd *ibpd, void *addr, size_t len,
                          uint64_t iova, int access)
{
	struct emu_pd *pd = (struct emu_pd *)ibpd;
	const int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
	                  IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
	                  IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB;
	struct emu_mr *mr;
	uint32_t idx;
	/* optional flags are dropped where unsupported, as libibverbs does */
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	if ((access & ~known) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)) ||
	    len == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (access & IBV_ACCESS_ON_DEMAND) {
		errno = EOPNOTSUPP; /* ODP is not emulated */
		return NULL;
	}
	if (!addr || !range_mapped(addr, len)) {
		errno = EFAULT;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_rwlock_wrlock(&emu_eng.keys);
	for (idx = 1; idx < emu_eng.mr_cap && emu_eng.mr[idx]; idx++)
		;
	if (idx >= emu_eng.mr_cap) {
		uint32_t cap = emu_eng.mr_cap ? emu_eng.mr_cap * 2 : 256;
		struct emu_mr **t;
		if (cap > (1u << 24) ||
		    !(t = realloc(emu_eng.mr, cap * sizeof(*t)))) {
			pthread_rwlock_unlock(&emu_eng.keys);
			free(mr);
			errno = ENOMEM;
			return NULL;
		}
		memset(t + emu_eng.mr_cap, 0,
		       (cap - emu_eng.mr_cap) * sizeof(*t));
		emu_eng.mr = t;
		idx = emu_eng.mr_cap ? emu_eng.mr_cap : 1;
		emu_eng.mr_cap = cap;
	}
	emu_eng.key_gen++;
	mr->index = idx;
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = len;
	mr->mr.handle = idx;
	mr->mr.lkey = mr->mr.rkey = idx << 8 | (emu_eng.key_gen & 0xff);
	mr->iova = iova;
	mr->pd = pd;
	mr->access = access;
	emu_eng.mr[idx] = mr;
	pthread_rwlock_unlock(&emu_eng.keys);
	atomic_fetch_add(&pd->users, 1);
	return &mr->mr;
}

#undef ibv_reg_mr
#undef ibv_reg_mr_iova
EMU_VISIBLE struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
                                      size_t length, int access)
{
	return reg(pd, addr, length, (uint64_t)(uintptr_t)addr, access);
}

/* <infiniband/verbs.h> turns ibv_reg_mr() with a non-constant access into
 * a call of this one. */
EMU_VISIBLE struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
                                            size_t length, uint64_t iova,
                                            unsigned int access)
{
	return reg(pd, addr, length, iova, (int)access);
}

EMU_VISIBLE struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
                                           size_t length, uint64_t iova,
                                           int access)
{
	return reg(pd, addr, length, iova, access);
}

EMU_VISIBLE int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct emu_mr *mr = (struct emu_mr *)ibmr;
	/* Under the big lock: the receive path copies into regions only
	 * while it holds it, so once we have it no copy into this region is
	 * under way, and forget_mr stops any that was about to continue. */
	pthread_mutex_lock(&emu_eng.lock);
	pthread_rwlock_wrlock(&emu_eng.keys);
	emu_eng.mr[mr->index] = NULL;
	pthread_rwlock_unlock(&emu_eng.keys);
	emu_engine_forget_mr(mr);
	pthread_mutex_unlock(&emu_eng.lock);
	atomic_fetch_sub(&mr->pd->users, 1);
	free(mr);
	return 0;
}

/* dma-buf memory (GPUDirect RDMA): the emulation cannot reach a device's
 * memory, so it refuses as a NIC or kernel without support does, and the
 * program can fall back (the verbs transport stages through host memory). */
EMU_VISIBLE struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                             size_t length, uint64_t iova,
                                             int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}
