/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/device.c - device list, contexts, queries, async events,
 * the sysfs helpers and the enum strings of the libibverbs stand-in.
 *
 * A context is a struct verbs_context (so the inline ibv_query_port,
 * ibv_create_qp_ex and ibv_query_device_ex of <infiniband/verbs.h> find
 * their ops) whose async_fd is a pipe: events are written to it as they
 * happen and ibv_get_async_event() reads them, blocking or not as the
 * caller set the descriptor.
 */
#include "emu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct async_rec {
	enum ibv_event_type type;
	void *elem;
};

EMU_VISIBLE struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l;
	if (emu_host_init()) {
		errno = ENOSYS;
		return NULL;
	}
	l = calloc((size_t)emu_host.ndev + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(l, emu_host.list, sizeof(*l) * (size_t)emu_host.ndev);
	if (num)
		*num = emu_host.ndev;
	return l;
}

EMU_VISIBLE void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EMU_VISIBLE const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

EMU_VISIBLE __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(((struct emu_dev *)device)->guid);
}

EMU_VISIBLE int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct emu_dev *)device)->index;
}

static int emu_query_port(struct ibv_context *c, uint8_t port,
                          struct ibv_port_attr *a, size_t len);
static int emu_query_device_ex(struct ibv_context *c,
                               const struct ibv_query_device_ex_input *in,
                               struct ibv_device_attr_ex *a, size_t len);
struct ibv_qp *emu_create_qp_ex(struct ibv_context *c,
                                struct ibv_qp_init_attr_ex *a);
int emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only);

static int emu_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
                             struct ibv_recv_wr **bad)
{
	(void)srq;
	*bad = wr;
	return EOPNOTSUPP; /* no SRQ can exist: ibv_create_srq is a stub */
}

EMU_VISIBLE struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct emu_ctx *c = calloc(1, sizeof(*c));
	int p[2];
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		free(c);
		return NULL;
	}
	c->dev = (struct emu_dev *)device;
	c->async_wr = p[1];
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = emu_query_port;
	c->vctx.query_device_ex = emu_query_device_ex;
	c->vctx.create_qp_ex = emu_create_qp_ex;
	c->vctx.context.device = device;
	c->vctx.context.cmd_fd = -1;
	c->vctx.context.async_fd = p[0];
	c->vctx.context.num_comp_vectors = 4;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.context.ops.post_send = emu_post_send;
	c->vctx.context.ops.post_recv = emu_post_recv;
	c->vctx.context.ops.poll_cq = emu_poll_cq;
	c->vctx.context.ops.req_notify_cq = emu_req_notify_cq;
	c->vctx.context.ops.post_srq_recv = emu_post_srq_recv;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	c->last_port_up = emu_port_up(c->dev);
	if (emu_engine_get()) {
		close(p[0]);
		close(p[1]);
		free(c);
		errno = ENODEV;
		return NULL;
	}
	pthread_mutex_lock(&emu_eng.lock);
	c->next = emu_eng.ctxs;
	emu_eng.ctxs = c;
	pthread_mutex_unlock(&emu_eng.lock);
	return &c->vctx.context;
}

EMU_VISIBLE int ibv_close_device(struct ibv_context *context)
{
	struct emu_ctx *c = emu_ctx(context);
	pthread_mutex_lock(&emu_eng.lock);
	for (struct emu_ctx **pp = &emu_eng.ctxs; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&emu_eng.lock);
	emu_counters_flush(true);
	emu_engine_put();
	close(c->async_wr);
	close(context->async_fd);
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}

static void fill_device_attr(struct emu_dev *d, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", EMU_FW_VER);
	a->node_guid = htobe64(d->guid);
	a->sys_image_guid = htobe64(d->guid);
	a->max_mr_size = ~0ull;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = EMU_VENDOR_ID;
	a->vendor_part_id = emu_host.part_id;
	a->hw_ver = 0;
	a->max_qp = EMU_MAX_QP - 1;
	a->max_qp_wr = EMU_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_PORT_ACTIVE_EVENT |
	                      IBV_DEVICE_RC_RNR_NAK_GEN |
	                      IBV_DEVICE_CHANGE_PHY_PORT;
	a->max_sge = EMU_MAX_SGE;
	a->max_sge_rd = EMU_MAX_SGE;
	a->max_cq = 1 << 16;
	a->max_cqe = emu_host.max_cqe;
	a->max_mr = 1 << 20;
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = EMU_MAX_RD_ATOM;
	a->max_res_rd_atom = EMU_MAX_RD_ATOM * (EMU_MAX_QP - 1);
	a->max_qp_init_rd_atom = EMU_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_NONE; /* atomics are not emulated */
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 16;
	a->phys_port_cnt = 1;
}

EMU_VISIBLE int ibv_query_device(struct ibv_context *context,
                                 struct ibv_device_attr *attr)
{
	fill_device_attr(emu_ctx(context)->dev, attr);
	return 0;
}

static int emu_query_device_ex(struct ibv_context *c,
                               const struct ibv_query_device_ex_input *in,
                               struct ibv_device_attr_ex *a, size_t len)
{
	struct ibv_device_attr_ex full;
	if (in && in->comp_mask)
		return EINVAL;
	if (len < sizeof(a->orig_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	fill_device_attr(emu_ctx(c)->dev, &full.orig_attr);
	full.max_dm_size = 0;
	full.phys_port_cnt_ex = 1;
	memcpy(a, &full, len < sizeof(full) ? len : sizeof(full));
	if (len > sizeof(full))
		memset((char *)a + sizeof(full), 0, len - sizeof(full));
	return 0;
}

static void fill_port_attr(struct emu_dev *d, struct ibv_port_attr *a)
{
	bool up = emu_port_up(d), ib = emu_host.link == EMU_LINK_IB;
	memset(a, 0, sizeof(*a));
	a->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = emu_port_active_mtu(d);
	a->gid_tbl_len = EMU_MAX_GID;
	a->port_cap_flags = ib ? IBV_PORT_CM_SUP | IBV_PORT_CLIENT_REG_SUP
	                       : IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = EMU_MAX_MSG;
	a->pkey_tbl_len = 1;
	a->lid = ib ? d->port.lid : 0;
	a->sm_lid = ib ? 1 : 0;
	a->max_vl_num = ib ? 4 : 0;
	a->subnet_timeout = ib ? 18 : 0;
	a->active_width = 2;        /* 4X */
	a->active_speed = 32;       /* EDR: 100 Gb/s at 4X */
	a->phys_state = up ? 5 : 3; /* LinkUp : Disabled */
	a->link_layer =
	        ib ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET;
}

static int emu_query_port(struct ibv_context *c, uint8_t port,
                          struct ibv_port_attr *a, size_t len)
{
	struct ibv_port_attr full;
	if (port != 1)
		return EINVAL;
	fill_port_attr(emu_ctx(c)->dev, &full);
	memcpy(a, &full, len < sizeof(full) ? len : sizeof(full));
	return 0;
}

/* The exported one (what the inline ibv_query_port() falls back to
 * without a verbs_context) fills the older, shorter struct. */
#undef ibv_query_port
EMU_VISIBLE int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                               struct _compat_ibv_port_attr *port_attr)
{
	int rc = emu_query_port(context, port_num,
	                        (struct ibv_port_attr *)port_attr,
	                        offsetof(struct ibv_port_attr, flags));
	if (rc) {
		errno = rc;
		return rc;
	}
	return 0;
}

static int gid_entry(struct ibv_context *c, uint32_t port, uint32_t index,
                     struct ibv_gid_entry *e)
{
	struct emu_dev *d = emu_ctx(c)->dev;
	if (port != 1 || index >= EMU_MAX_GID)
		return EINVAL;
	memset(e, 0, sizeof(*e));
	e->gid_index = index;
	e->port_num = port;
	if ((int)index >= d->port.ngid)
		return ENODATA;
	e->gid = d->port.gid[index];
	e->gid_type = d->port.gid_type[index];
	e->ndev_ifindex = emu_host.link == EMU_LINK_IB
	                          ? 0
	                          : if_nametoindex(d->port.netdev);
	return 0;
}

EMU_VISIBLE int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
                              int index, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int rc = index < 0 ? EINVAL
	                   : gid_entry(context, port_num, (uint32_t)index, &e);
	if (rc == ENODATA) {
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (rc)
		return -1;
	*gid = e.gid;
	return 0;
}

/* enum ibv_gid_type_sysfs of rdma-core's driver.h: 0 = IB/RoCE v1,
 * 1 = RoCE v2. */
EMU_VISIBLE int ibv_query_gid_type(struct ibv_context *context,
                                   uint8_t port_num, unsigned int index,
                                   int *type)
{
	struct ibv_gid_entry e;
	int rc = gid_entry(context, port_num, index, &e);
	if (rc == ENODATA) {
		*type = 0;
		return 0;
	}
	if (rc)
		return -1;
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

EMU_VISIBLE int _ibv_query_gid_ex(struct ibv_context *context,
                                  uint32_t port_num, uint32_t gid_index,
                                  struct ibv_gid_entry *entry, uint32_t flags,
                                  size_t entry_size)
{
	struct ibv_gid_entry e;
	int rc;
	if (flags)
		return EOPNOTSUPP;
	rc = gid_entry(context, port_num, gid_index, &e);
	if (rc)
		return rc;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

EMU_VISIBLE ssize_t _ibv_query_gid_table(struct ibv_context *context,
                                         struct ibv_gid_entry *entries,
                                         size_t max_entries, uint32_t flags,
                                         size_t entry_size)
{
	struct emu_dev *d = emu_ctx(context)->dev;
	size_t n = 0;
	if (flags)
		return -EOPNOTSUPP;
	for (int i = 0; i < d->port.ngid; i++) {
		struct ibv_gid_entry e;
		if (n == max_entries)
			return -EINVAL;
		gid_entry(context, 1, (uint32_t)i, &e);
		memcpy((char *)entries + n * entry_size, &e,
		       entry_size < sizeof(e) ? entry_size : sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

EMU_VISIBLE int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
                               int index, __be16 *pkey)
{
	(void)context;
	if (port_num != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

EMU_VISIBLE int ibv_get_pkey_index(struct ibv_context *context,
                                   uint8_t port_num, __be16 pkey)
{
	(void)context;
	return port_num == 1 && be16toh(pkey) == 0xffff ? 0 : -1;
}

/* ---- async events ---- */

void emu_async_event(struct emu_ctx *c, enum ibv_event_type type, void *elem)
{
	struct async_rec r;
	memset(&r, 0, sizeof(r)); /* no uninitialised padding on the pipe */
	r.type = type;
	r.elem = elem;
	if (write(c->async_wr, &r, sizeof(r)) != sizeof(r))
		emu_log("async event %d lost (pipe full)", (int)type);
}

void emu_port_event_all(struct emu_dev *d, bool up)
{
	/* caller holds eng.lock */
	for (struct emu_ctx *c = emu_eng.ctxs; c; c = c->next)
		if (c->dev == d && c->last_port_up != (int)up) {
			c->last_port_up = up;
			emu_async_event(c,
			                up ? IBV_EVENT_PORT_ACTIVE
			                   : IBV_EVENT_PORT_ERR,
			                (void *)(uintptr_t)1);
		}
}

EMU_VISIBLE int ibv_get_async_event(struct ibv_context *context,
                                    struct ibv_async_event *event)
{
	struct async_rec r;
	ssize_t n = read(context->async_fd, &r, sizeof(r));
	if (n != sizeof(r))
		return -1;
	event->event_type = r.type;
	switch (r.type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		event->element.port_num = (int)(uintptr_t)r.elem;
		break;
	case IBV_EVENT_CQ_ERR:
		event->element.cq = r.elem;
		break;
	default:
		event->element.qp = r.elem;
		break;
	}
	return 0;
}

EMU_VISIBLE void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}

/* ---- sysfs ---- */

EMU_VISIBLE const char *ibv_get_sysfs_path(void)
{
	if (emu_host_init())
		return "/sys";
	return emu_host.sysfs_root;
}

EMU_VISIBLE int ibv_read_sysfs_file(const char *dir, const char *file,
                                    char *buf, size_t size)
{
	char path[1024];
	ssize_t n;
	int fd;
	if (emu_host.ready &&
	    !strncmp(dir, emu_host.sysfs_root, strlen(emu_host.sysfs_root)))
		emu_counters_flush(true); /* exact values, not a snapshot */
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	else if ((size_t)n < size)
		buf[n] = 0;
	return (int)n;
}

/* ---- odds and ends every program may call ---- */

EMU_VISIBLE int ibv_fork_init(void)
{
	return 0;
}

EMU_VISIBLE enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_DISABLED;
}

EMU_VISIBLE int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

EMU_VISIBLE int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* Provider libraries a binary links (perftest needs libmlx5 and libefa)
 * register themselves from constructors; there is nothing to register
 * with here. */
EMU_VISIBLE void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

EMU_VISIBLE bool verbs_allow_disassociate_destroy;

EMU_VISIBLE const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};
	return t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) && s[t]
	               ? s[t]
	               : "unknown";
}

EMU_VISIBLE const char *ibv_port_state_str(enum ibv_port_state s)
{
	static const char *n[] = {
		"no state change (NOP)", "down", "init", "armed", "active",
		"active defer"
	};
	return (unsigned)s < 6 ? n[s] : "unknown";
}

EMU_VISIBLE const char *ibv_event_type_str(enum ibv_event_type e)
{
	static const char *n[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue "
		                         "error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work "
		                            "queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};
	return (unsigned)e < sizeof(n) / sizeof(n[0]) && n[e] ? n[e]
	                                                      : "unknown";
}

EMU_VISIBLE const char *ibv_wc_status_str(enum ibv_wc_status s)
{
	static const char *n[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) && n[s] ? n[s]
	                                                      : "unknown";
}

EMU_VISIBLE int ibv_rate_to_mult(enum ibv_rate rate)
{
	static const int m[] = {
		[IBV_RATE_2_5_GBPS] = 1,   [IBV_RATE_5_GBPS] = 2,
		[IBV_RATE_10_GBPS] = 4,    [IBV_RATE_20_GBPS] = 8,
		[IBV_RATE_30_GBPS] = 12,   [IBV_RATE_40_GBPS] = 16,
		[IBV_RATE_60_GBPS] = 24,   [IBV_RATE_80_GBPS] = 32,
		[IBV_RATE_120_GBPS] = 48,  [IBV_RATE_28_GBPS] = 11,
		[IBV_RATE_50_GBPS] = 20,   [IBV_RATE_400_GBPS] = 160,
		[IBV_RATE_600_GBPS] = 240,
	};
	return (unsigned)rate < sizeof(m) / sizeof(m[0]) && m[rate] ? m[rate]
	                                                            : -1;
}
