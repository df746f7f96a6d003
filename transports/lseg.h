/* SPDX-License-Identifier: MIT */
/*
 * transports/lseg.h - the shared memory of shm and gpu: a memfd of this
 * process, mapped here and by the local peers through /proc/PID/fd, so no
 * name is ever left in /dev/shm (a rank killed leaves nothing behind).  The
 * segment that holds the slot rings (transports/lring.h) is one; shm's
 * buffers from mem_alloc are others.
 *
 * Header only, as lring.h: each transport links apart, and these run at
 * set-up, not on the message path.  Failures are recorded through the
 * transport's host table, with its name.
 */
#ifndef CB_TRANSPORTS_LSEG_H
#define CB_TRANSPORTS_LSEG_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <collbench/transport.h>

#include "transports/tputil.h"

/* @bytes of new shared memory (@what names the memfd), mapped at *@base;
 * *@fd -1 on failure. */
static inline cb_status_t lseg_create(const struct cb_tp_host *h,
                                      const char *tp, const char *what,
                                      size_t bytes, int *fd, void **base)
{
	int e;

	*fd = memfd_create(what, MFD_CLOEXEC);
	if (*fd < 0)
		return h->fail(h, CB_ERR_SYS, "%s: memfd_create: %s", tp,
		               strerror(errno));
	if ((e = posix_fallocate(*fd, 0, (off_t)bytes))) {
		close(*fd);
		*fd = -1;
		return h->fail(h, CB_ERR_NOMEM,
		               "%s: cannot reserve %zu bytes of shared "
		               "memory: %s",
		               tp, bytes, strerror(e));
	}
	*base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	             MAP_SHARED | MAP_POPULATE, *fd, 0);
	if (*base == MAP_FAILED) {
		e = errno;
		close(*fd);
		*fd = -1;
		return h->fail(h, CB_ERR_NOMEM, "%s: cannot map %zu bytes: %s",
		               tp, bytes, strerror(e));
	}
	return CB_OK;
}

/* Map @bytes of process @pid's descriptor @fd here, read-only or not;
 * MAP_FAILED (errno set) when it cannot. */
static inline void *lseg_map_peer(pid_t pid, int fd, size_t bytes, int writable)
{
	char path[64];
	void *p;
	int lfd, e;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	lfd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (lfd < 0)
		return MAP_FAILED;
	p = mmap(NULL, bytes, PROT_READ | (writable ? PROT_WRITE : 0),
	         MAP_SHARED, lfd, 0);
	e = errno;
	close(lfd);
	errno = e;
	return p;
}

/* Each rank's index among the ranks of this host (-1: another host's) into
 * @index[world]; returns how many share this host. */
static inline int lseg_local_index(const struct cb_tp_host *h, int *index)
{
	int n = 0;

	for (int r = 0; r < h->world; r++)
		index[r] = h->host_of_rank[r] == h->host_of_rank[h->rank] ? n++
		                                                          : -1;
	return n;
}

/* The head of a segment of slot rings (transports/lpeer.h's struct
 * lp_seg: its channels follow). */
struct lseg_head {
	uint64_t magic, job_id;
	int32_t owner, nchan; /* its rank; the channels: one per local rank */
};

/* The context's segment: @bytes (a struct lseg_head first) made as
 * lseg_create does, its head filled in (@magic, @nchan channels), and this
 * process opened to the local peers (they open our memfds through /proc,
 * shm's also read our buffers with CMA, under Yama ptrace scope 1). */
static inline cb_status_t lseg_segment(const struct cb_tp_host *h,
                                       const char *tp, const char *what,
                                       uint64_t magic, size_t bytes, int nchan,
                                       int *fd, void **base)
{
	cb_status_t st = lseg_create(h, tp, what, bytes, fd, base);

	if (st)
		return st;
	*(struct lseg_head *)*base = (struct lseg_head){ .magic = magic,
		                                         .job_id = h->job_id,
		                                         .owner = h->rank,
		                                         .nchan = nchan };
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	return CB_OK;
}

/* Map rank @peer's segment (@bytes of its process @pid's descriptor @fd;
 * @seg_name for the message) into *@seg, then check it is this job's and
 * @magic.  *@seg stays NULL when it cannot be mapped; set, for the caller
 * to unmap, when the check fails. */
static inline cb_status_t lseg_attach(const struct cb_tp_host *h,
                                      const char *tp, const char *seg_name,
                                      uint64_t magic, int peer, pid_t pid,
                                      int fd, size_t bytes, void **seg)
{
	void *p = lseg_map_peer(pid, fd, bytes, 1);
	const struct lseg_head *s = p;

	*seg = NULL;
	if (p == MAP_FAILED)
		return h->fail(h, CB_ERR_SYS,
		               "%s: cannot map rank %d's %s through "
		               "/proc/%d/fd/%d: %s (are the ranks on one host, "
		               "run by one user?)",
		               tp, peer, seg_name, (int)pid, fd,
		               strerror(errno));
	*seg = p;
	if (s->magic != magic || s->job_id != h->job_id)
		return h->fail(h, CB_ERR_PROTO,
		               "%s: rank %d's segment is not this job's", tp,
		               peer);
	return CB_OK;
}

/* ep_create(): whether @peer is on this host (@index: lseg_local_index's),
 * else one line, @why at its end. */
static inline cb_status_t lseg_local_peer(const struct cb_tp_host *h,
                                          const char *tp, const int *index,
                                          int peer, const char *why)
{
	if (index[peer] >= 0)
		return CB_OK;
	return h->fail(h, CB_ERR_UNSUPPORTED,
	               "%s: rank %d is on host %s, not on this host %s%s", tp,
	               peer, tpu_host(h, peer), tpu_host(h, h->rank), why);
}

/* address(): the context's address blob @addr (@n bytes) into @blob. */
static inline cb_status_t lseg_address(const void *addr, size_t n, void *blob,
                                       size_t *bytes)
{
	if (*bytes < n)
		return CB_ERR_INVALID;
	memcpy(blob, addr, n);
	*bytes = n;
	return CB_OK;
}

#endif
