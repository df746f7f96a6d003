/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/cm.c - librdmacm.so.1 stand-in: the rdma_cm API over
 * the verbs emulation (librdmacm cannot work without a kernel rdma_cm).
 *
 * An event channel is a pipe of event pointers; address and route
 * resolution complete at once (the source address is the route's, the
 * device is the one bound to that address's interface); connecting is
 * cm_wire.c's protocol over TCP.  rdma_create_qp takes the QP to INIT as
 * librdmacm does, and marks it connected by rdma_cm (on iWARP the only way
 * to RTR).  What is not emulated (multicast, UD, sync ids' rdma_get_request,
 * ECE, migration) prints its name and aborts, or fails with one line.
 */
#include "cm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void cbemu_cm_qp_attach(struct ibv_qp *qp);
void cbemu_cm_qp_responder(struct ibv_qp *qp);
int cm_start_connect(struct cm_id *c);

struct cm_id *cm_ids;

static struct cm_id *CI(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

CM_VISIBLE struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *ch;
	int p[2];
	pthread_mutex_lock(&cm_lock);
	if (cm_init()) {
		pthread_mutex_unlock(&cm_lock);
		return NULL;
	}
	pthread_mutex_unlock(&cm_lock);
	ch = calloc(1, sizeof(*ch));
	if (!ch || pipe2(p, O_CLOEXEC)) {
		free(ch);
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = p[0];
	ch->wr = p[1];
	return &ch->ch;
}

CM_VISIBLE void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	struct cm_event *e;

	/* Events nobody fetched go with the channel, as the kernel drops
	 * those of a closed rdma_cm file (they leaked here: LeakSanitizer,
	 * a DISCONNECTED queued as the transport closed). */
	fcntl(channel->fd, F_SETFL, O_NONBLOCK);
	while (read(channel->fd, &e, sizeof(e)) == sizeof(e))
		rdma_ack_cm_event(&e->ev);
	close(ch->wr);
	close(channel->fd);
	free(ch);
}

CM_VISIBLE int rdma_create_id(struct rdma_event_channel *channel,
                              struct rdma_cm_id **id, void *context,
                              enum rdma_port_space ps)
{
	struct cm_id *c;
	if (!channel) {
		fprintf(stderr, "verbs emulation: rdma_create_id without an "
		                "event channel (synchronous mode) is not "
		                "emulated\n");
		return cm_err(EOPNOTSUPP);
	}
	if (ps != RDMA_PS_TCP)
		return cm_err(EOPNOTSUPP); /* RC only: UD is not emulated */
	c = calloc(1, sizeof(*c));
	if (!c)
		return cm_err(ENOMEM);
	c->fd = -1;
	c->ack_timeout = 14;
	c->id.channel = channel;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = IBV_QPT_RC;
	pthread_mutex_lock(&cm_lock);
	if (cm_init()) {
		pthread_mutex_unlock(&cm_lock);
		free(c);
		return -1;
	}
	c->next = cm_ids;
	cm_ids = c;
	pthread_mutex_unlock(&cm_lock);
	*id = &c->id;
	return 0;
}

static void id_free(struct cm_id *c)
{
	for (struct cm_id **pp = &cm_ids; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	cm_id_release(c);
}

CM_VISIBLE int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *c = CI(id);
	pthread_mutex_lock(&cm_lock);
	if (c->state == CM_CONNECTED || c->state == CM_ACCEPTED) {
		struct cm_msg m;
		cm_fill_msg(c, &m, CMM_DREQ); /* the peer sees DISCONNECTED */
		cm_send(c, &m);
	}
	cm_unwatch(c);
	/* children of a listener that nobody accepted go with it */
	for (struct cm_id *k = cm_ids; k; k = k->next)
		if (k->listener == c && k->state == CM_WAIT_REQ) {
			cm_unwatch(k);
			k->destroyed = true;
		}
	c->destroyed = true;
	if (c->events_out == 0)
		id_free(c);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

static int bind_dev(struct cm_id *c, uint32_t ip)
{
	if (ip == htonl(INADDR_ANY))
		return 0;
	c->dev = cm_dev_for_ip(ip);
	if (!c->dev)
		return cm_err(EADDRNOTAVAIL);
	c->id.verbs = c->dev->verbs;
	c->id.port_num = 1;
	return 0;
}

CM_VISIBLE int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *c = CI(id);
	int rc;
	if (!addr || addr->sa_family != AF_INET)
		return cm_err(EAFNOSUPPORT); /* IPv4 only */
	pthread_mutex_lock(&cm_lock);
	rc = bind_dev(c, ((struct sockaddr_in *)addr)->sin_addr.s_addr);
	if (!rc) {
		memcpy(&id->route.addr.src_sin, addr,
		       sizeof(struct sockaddr_in));
		c->state = CM_BOUND;
	}
	pthread_mutex_unlock(&cm_lock);
	return rc;
}

CM_VISIBLE int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *c = CI(id);
	struct sockaddr_in sa = id->route.addr.src_sin;
	socklen_t l = sizeof(sa);
	int one = 1, fd;
	if (c->state != CM_BOUND)
		return cm_err(EINVAL);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, backlog > 0 ? backlog : 16)) {
		int e = errno;
		close(fd);
		return cm_err(e);
	}
	getsockname(fd, (struct sockaddr *)&sa, &l);
	pthread_mutex_lock(&cm_lock);
	id->route.addr.src_sin.sin_port = sa.sin_port;
	c->fd = fd;
	c->state = CM_LISTEN;
	cm_watch(c, false);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_VISIBLE int rdma_resolve_addr(struct rdma_cm_id *id,
                                 struct sockaddr *src_addr,
                                 struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *c = CI(id);
	struct sockaddr_in src = { .sin_family = AF_INET };
	(void)timeout_ms; /* resolution is immediate */
	if (!dst_addr || dst_addr->sa_family != AF_INET)
		return cm_err(EAFNOSUPPORT);
	if (src_addr && src_addr->sa_family == AF_INET &&
	    ((struct sockaddr_in *)src_addr)->sin_addr.s_addr) {
		src = *(struct sockaddr_in *)src_addr;
	} else {
		/* the route's source address, as the kernel picks it */
		socklen_t l = sizeof(src);
		struct sockaddr_in probe = *(struct sockaddr_in *)dst_addr;
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (probe.sin_port == 0)
			probe.sin_port = htons(9);
		if (fd < 0 ||
		    connect(fd, (struct sockaddr *)&probe, sizeof(probe)) ||
		    getsockname(fd, (struct sockaddr *)&src, &l)) {
			if (fd >= 0)
				close(fd);
			pthread_mutex_lock(&cm_lock);
			cm_event(c, RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH,
			         NULL);
			pthread_mutex_unlock(&cm_lock);
			return 0;
		}
		close(fd);
		src.sin_port = 0;
	}
	pthread_mutex_lock(&cm_lock);
	memcpy(&id->route.addr.dst_sin, dst_addr, sizeof(struct sockaddr_in));
	id->route.addr.src_sin = src;
	if (bind_dev(c, src.sin_addr.s_addr) || !c->dev) {
		cm_event(c, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, NULL);
	} else {
		id->route.addr.src_sin.sin_addr.s_addr = cm_dev_ip(c->dev);
		c->state = CM_ADDR_RESOLVED;
		cm_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	}
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_VISIBLE int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *c = CI(id);
	(void)timeout_ms;
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_ADDR_RESOLVED) {
		pthread_mutex_unlock(&cm_lock);
		return cm_err(EINVAL);
	}
	if (!id->route.path_rec)
		id->route.path_rec = calloc(1, sizeof(*id->route.path_rec));
	if (id->route.path_rec) {
		id->route.path_rec->mtu = (uint8_t)c->dev->active_mtu;
		id->route.path_rec->slid = htobe16(c->dev->lid);
		id->route.path_rec->pkey = htobe16(0xffff);
		id->route.num_paths = 1;
	}
	c->state = CM_ROUTE_RESOLVED;
	cm_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

static int qp_init(struct cm_id *c, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
		                 .port_num = 1,
		                 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	cbemu_cm_qp_attach(qp);
	if (ibv_modify_qp(qp, &a,
	                  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                          IBV_QP_ACCESS_FLAGS))
		return -1;
	c->id.qp = qp;
	return 0;
}

CM_VISIBLE int rdma_create_qp_ex(struct rdma_cm_id *id,
                                 struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *c = CI(id);
	struct ibv_qp *qp;
	if (!id->verbs || id->qp)
		return cm_err(EINVAL);
	if (!attr->pd) {
		if (!c->own_pd)
			c->own_pd = ibv_alloc_pd(id->verbs);
		attr->pd = c->own_pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (!attr->send_cq) {
		c->own_scq =
		        ibv_create_cq(id->verbs, (int)attr->cap.max_send_wr + 1,
		                      NULL, NULL, 0);
		attr->send_cq = id->send_cq = c->own_scq;
	}
	if (!attr->recv_cq) {
		c->own_rcq =
		        ibv_create_cq(id->verbs, (int)attr->cap.max_recv_wr + 1,
		                      NULL, NULL, 0);
		attr->recv_cq = id->recv_cq = c->own_rcq;
	}
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		return -1;
	if (qp_init(c, qp)) {
		int e = errno;
		ibv_destroy_qp(qp);
		return cm_err(e);
	}
	id->pd = attr->pd;
	return 0;
}

CM_VISIBLE int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
                              struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int rc;
	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	rc = rdma_create_qp_ex(id, &a);
	if (!rc) {
		qp_init_attr->cap = a.cap;
		qp_init_attr->send_cq = a.send_cq;
		qp_init_attr->recv_cq = a.recv_cq;
	}
	return rc;
}

CM_VISIBLE void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct cm_id *c = CI(id);
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	if (c->own_scq)
		ibv_destroy_cq(c->own_scq);
	if (c->own_rcq)
		ibv_destroy_cq(c->own_rcq);
	c->own_scq = c->own_rcq = NULL;
	id->send_cq = id->recv_cq = NULL;
}

static int take_param(struct cm_id *c, struct rdma_conn_param *p, uint8_t type)
{
	memset(&c->conn, 0, sizeof(c->conn));
	if (p) {
		if (p->private_data_len > cm_priv_max(c, type))
			return cm_err(EINVAL);
		c->conn = *p;
		/* the caller's buffer may be gone when the message leaves
		 * (the TCP connection completes later) */
		if (p->private_data_len && p->private_data)
			memcpy(c->conn_priv, p->private_data,
			       p->private_data_len);
		c->conn.private_data = c->conn_priv;
	}
	c->psn = (uint32_t)random() & 0xffffff;
	c->resp_res = p ? p->responder_resources : 0;
	c->init_depth = p ? p->initiator_depth : 0;
	if (c->resp_res > 16)
		c->resp_res = 16; /* RDMA_MAX_RESP_RES: the device's */
	if (c->init_depth > 16)
		c->init_depth = 16;
	return 0;
}

CM_VISIBLE int rdma_connect(struct rdma_cm_id *id,
                            struct rdma_conn_param *conn_param)
{
	struct cm_id *c = CI(id);
	int rc;
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_ROUTE_RESOLVED) {
		pthread_mutex_unlock(&cm_lock);
		return cm_err(EINVAL);
	}
	rc = take_param(c, conn_param, CMM_REQ);
	if (!rc)
		rc = cm_start_connect(c);
	pthread_mutex_unlock(&cm_lock);
	return rc;
}

CM_VISIBLE int rdma_accept(struct rdma_cm_id *id,
                           struct rdma_conn_param *conn_param)
{
	struct cm_id *c = CI(id);
	struct cm_msg m;
	int rc;
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_REQ_RCVD) {
		pthread_mutex_unlock(&cm_lock);
		return cm_err(EINVAL);
	}
	rc = take_param(c, conn_param, CMM_REP);
	if (!rc) {
		/* ours is at most what the peer offered */
		if (c->resp_res > c->peer.init_depth)
			c->resp_res = c->peer.init_depth;
		if (c->init_depth > c->peer.resp_res)
			c->init_depth = c->peer.resp_res;
		c->conn.retry_count = c->peer.retry;
	}
	if (!rc && id->qp)
		cbemu_cm_qp_responder(id->qp);
	if (!rc && id->qp && cm_qp_rtr_rts(c))
		rc = -1;
	if (!rc) {
		cm_fill_msg(c, &m, CMM_REP);
		m.priv_len = c->conn.private_data_len;
		if (m.priv_len)
			memcpy(m.priv, c->conn.private_data, m.priv_len);
		if (cm_send(c, &m)) {
			cm_qp_error(c);
			rc = cm_err(ENODATA);
		} else {
			c->state = CM_ACCEPTED;
		}
	}
	pthread_mutex_unlock(&cm_lock);
	return rc;
}

CM_VISIBLE int rdma_reject(struct rdma_cm_id *id, const void *private_data,
                           uint8_t private_data_len)
{
	struct cm_id *c = CI(id);
	struct cm_msg m;
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_REQ_RCVD ||
	    private_data_len > cm_priv_max(c, CMM_REJ)) {
		pthread_mutex_unlock(&cm_lock);
		return cm_err(EINVAL);
	}
	cm_fill_msg(c, &m, CMM_REJ);
	m.priv_len = private_data_len;
	if (private_data_len)
		memcpy(m.priv, private_data, private_data_len);
	cm_send(c, &m);
	c->state = CM_DISCONNECTED;
	cm_unwatch(c);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_VISIBLE int rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *c = CI(id);
	struct cm_msg m;
	pthread_mutex_lock(&cm_lock);
	cm_fill_msg(c, &m, CMM_RTU);
	cm_send(c, &m);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

/* As librdmacm: the QP goes to ERR (SQD on iWARP), the peer is told. */
CM_VISIBLE int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *c = CI(id);
	struct cm_msg m;
	pthread_mutex_lock(&cm_lock);
	if (id->qp) {
		struct ibv_qp_attr a = { .qp_state = c->dev && c->dev->iwarp
			                                     ? IBV_QPS_SQD
			                                     : IBV_QPS_ERR };
		ibv_modify_qp(id->qp, &a, IBV_QP_STATE);
	}
	if (c->state == CM_CONNECTED || c->state == CM_ACCEPTED) {
		cm_fill_msg(c, &m, CMM_DREQ);
		if (cm_send(c, &m)) {
			c->state = CM_DISCONNECTED;
			cm_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		} else {
			c->state = CM_DISCONNECTING;
		}
	} else if (c->state != CM_DISCONNECTED) {
		pthread_mutex_unlock(&cm_lock);
		return cm_err(EINVAL);
	}
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_VISIBLE int rdma_get_cm_event(struct rdma_event_channel *channel,
                                 struct rdma_cm_event **event)
{
	struct cm_event *e;
	ssize_t n = read(channel->fd, &e, sizeof(e));
	if (n != sizeof(e))
		return n < 0 ? -1 : cm_err(ENODATA);
	*event = &e->ev;
	return 0;
}

CM_VISIBLE int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_id *c = CI(event->id);
	pthread_mutex_lock(&cm_lock);
	if (--c->events_out == 0 && c->destroyed)
		id_free(c);
	pthread_mutex_unlock(&cm_lock);
	free(event);
	return 0;
}

CM_VISIBLE const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *n[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED",
		"RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED",
		"RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST",
		"RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR",
		"RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED",
		"RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED",
		"RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN",
		"RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE",
		"RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};
	return (unsigned)event < sizeof(n) / sizeof(n[0]) ? n[event]
	                                                  : "UNKNOWN EVENT";
}

CM_VISIBLE int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
                               void *optval, size_t optlen)
{
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT &&
	    optlen == 1) {
		CI(id)->ack_timeout = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID && (optname == RDMA_OPTION_ID_TOS ||
	                                optname == RDMA_OPTION_ID_REUSEADDR ||
	                                optname == RDMA_OPTION_ID_AFONLY))
		return 0; /* nothing on the emulated fabric depends on them */
	return cm_err(ENOSYS);
}

CM_VISIBLE __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_sin.sin_port;
}

CM_VISIBLE __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_sin.sin_port;
}

CM_VISIBLE struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l;
	pthread_mutex_lock(&cm_lock);
	if (cm_init()) {
		pthread_mutex_unlock(&cm_lock);
		return NULL;
	}
	l = calloc((size_t)cm_ndev + 1, sizeof(*l));
	for (int i = 0; l && i < cm_ndev; i++)
		l[i] = cm_devs[i].verbs;
	if (num_devices)
		*num_devices = l ? cm_ndev : 0;
	pthread_mutex_unlock(&cm_lock);
	return l;
}

CM_VISIBLE void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

CM_VISIBLE int rdma_getaddrinfo(const char *node, const char *service,
                                const struct rdma_addrinfo *hints,
                                struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_INET,
		              .ai_socktype = SOCK_STREAM },
	                *ai;
	struct rdma_addrinfo *r;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int rc;
	if (hints && hints->ai_family && hints->ai_family != AF_INET)
		return EAI_FAMILY; /* IPv4 only */
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	if (hints && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r) {
		freeaddrinfo(ai);
		return EAI_MEMORY;
	}
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	if (passive) {
		r->ai_src_len = ai->ai_addrlen;
		r->ai_src_addr = malloc(ai->ai_addrlen);
		if (r->ai_src_addr)
			memcpy(r->ai_src_addr, ai->ai_addr, ai->ai_addrlen);
	} else {
		r->ai_dst_len = ai->ai_addrlen;
		r->ai_dst_addr = malloc(ai->ai_addrlen);
		if (r->ai_dst_addr)
			memcpy(r->ai_dst_addr, ai->ai_addr, ai->ai_addrlen);
	}
	freeaddrinfo(ai);
	*res = r;
	return 0;
}

CM_VISIBLE void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = n;
	}
}

CM_VISIBLE int rdma_init_qp_attr(struct rdma_cm_id *id,
                                 struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	(void)id;
	if (qp_attr->qp_state != IBV_QPS_INIT)
		return cm_err(
		        EINVAL); /* RTR/RTS happen inside accept/connect */
	qp_attr->port_num = 1;
	qp_attr->pkey_index = 0;
	qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	*qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                IBV_QP_ACCESS_FLAGS;
	return 0;
}
