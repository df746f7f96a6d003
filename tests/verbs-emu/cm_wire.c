/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/cm_wire.c - the librdmacm stand-in's connection
 * protocol: REQ, REP, RTU, REJ, DREQ, DREP over a TCP connection between
 * the two hosts (the listener's rdma_cm port is a TCP port on its host's
 * address), carrying QP numbers, PSNs, LIDs, MTUs and private data, and
 * the thread that turns what arrives into events on the ids' channels.
 *
 * What the events say follows librdmacm over a kernel rdma_cm:
 * CONNECT_REQUEST (private data padded to 56 bytes on IB/RoCE, exact on
 * iWARP), ESTABLISHED (the active side once the REP is in and its QP is at
 * RTS; the passive side on the RTU), REJECTED (status 28, consumer reject,
 * or 8, nobody listens, on IB/RoCE; -ECONNREFUSED on iWARP), UNREACHABLE
 * (no answer within COLLBENCH_EMU_RETRY_CAP_MS), DISCONNECTED (the peer
 * disconnected, its DREP came, or its process went away).  The QP
 * transitions are those of librdmacm: rdma_accept takes the passive QP to
 * RTR and RTS, the REP the active one; a rejection puts it in ERR.
 */
#include "cm.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void cbemu_cm_qp_attach(struct ibv_qp *qp);

pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
struct cm_dev cm_devs[CM_MAX_DEV];
int cm_ndev;
static int epfd = -1;
static pthread_t thread;
static bool ready;
extern struct cm_id *cm_ids;

int64_t cm_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int cm_err(int e)
{
	errno = e;
	return -1;
}

static int64_t cap_ns(void)
{
	const char *s = getenv("COLLBENCH_EMU_RETRY_CAP_MS");
	long ms = s ? atol(s) : 4000;
	return (ms > 0 ? ms : 4000) * 1000000LL;
}

/* The interface a device is bound to: its fake sysfs says, as
 * /sys/class/infiniband/DEV/device/net/ does. */
static void dev_netdev(struct cm_dev *d)
{
	char path[512];
	DIR *dir;
	struct dirent *e;
	snprintf(path, sizeof(path), "%s/device/net",
	         d->verbs->device->ibdev_path);
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.' && strlen(e->d_name) < IF_NAMESIZE)
			memcpy(d->netdev, e->d_name, strlen(e->d_name) + 1);
	closedir(dir);
}

/* The device behind a local address.  Loopback resolves to the first
 * device, as the kernel's rdma_cm binds loopback to a device. */
struct cm_dev *cm_dev_for_ip(uint32_t ip)
{
	struct ifaddrs *ifa, *p;
	struct cm_dev *hit = NULL;
	if ((ntohl(ip) >> 24) == 127)
		return cm_ndev ? &cm_devs[0] : NULL;
	if (getifaddrs(&ifa))
		return NULL;
	for (p = ifa; p && !hit; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)p->ifa_addr)->sin_addr.s_addr != ip)
			continue;
		for (int i = 0; i < cm_ndev && !hit; i++)
			if (!strcmp(cm_devs[i].netdev, p->ifa_name))
				hit = &cm_devs[i];
	}
	freeifaddrs(ifa);
	return hit;
}

/* The device's own address (its interface's first IPv4 address): what
 * peers reach it on, also when the connection came over loopback. */
uint32_t cm_dev_ip(struct cm_dev *d)
{
	struct ifaddrs *ifa, *p;
	uint32_t ip = htonl(INADDR_LOOPBACK);
	if (getifaddrs(&ifa))
		return ip;
	for (p = ifa; p; p = p->ifa_next)
		if (p->ifa_addr && p->ifa_addr->sa_family == AF_INET &&
		    !strcmp(p->ifa_name, d->netdev)) {
			ip = ((struct sockaddr_in *)p->ifa_addr)
			             ->sin_addr.s_addr;
			break;
		}
	freeifaddrs(ifa);
	return ip;
}

static void *cm_thread(void *arg);

int cm_init(void)
{
	struct ibv_device **l;
	int n = 0;
	if (ready)
		return 0;
	l = ibv_get_device_list(&n);
	if (!l)
		return cm_err(ENODEV);
	for (int i = 0; i < n && cm_ndev < CM_MAX_DEV; i++) {
		struct cm_dev *d = &cm_devs[cm_ndev];
		struct ibv_port_attr pa;
		d->verbs = ibv_open_device(l[i]);
		if (!d->verbs)
			continue;
		if (ibv_query_port(d->verbs, 1, &pa)) {
			ibv_close_device(d->verbs);
			continue;
		}
		d->iwarp = l[i]->transport_type == IBV_TRANSPORT_IWARP;
		d->roce = !d->iwarp && pa.link_layer == IBV_LINK_LAYER_ETHERNET;
		d->active_mtu = pa.active_mtu;
		d->lid = pa.lid;
		dev_netdev(d);
		cm_ndev++;
	}
	ibv_free_device_list(l);
	if (cm_ndev == 0)
		return cm_err(ENODEV);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || pthread_create(&thread, NULL, cm_thread, NULL))
		return cm_err(ENOMEM);
	pthread_detach(thread);
	ready = true;
	return 0;
}

int cm_watch(struct cm_id *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
		                  .data.ptr = c };
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		return 0;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Ids destroyed since the event thread's last round (cm_lock). */
static struct cm_id *graves;

static void free_id(struct cm_id *c)
{
	free(c->id.route.path_rec);
	free(c);
}

void cm_id_release(struct cm_id *c)
{
	if (!ready) { /* no event thread: nothing holds it */
		free_id(c);
		return;
	}
	c->next = graves;
	graves = c;
}

void cm_unwatch(struct cm_id *c)
{
	if (c->fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

size_t cm_priv_max(struct cm_id *c, uint8_t type)
{
	if (c->dev && c->dev->iwarp)
		return CM_PRIV_MAX; /* MPA's limit */
	switch (type) {
	case CMM_REQ:
		return 56; /* 92 bytes of REQ less rdma_cm's header */
	case CMM_REP:
		return 196;
	case CMM_REJ:
		return 148;
	default:
		return 0;
	}
}

/* Queue an event on the id's channel (cm_lock held). */
void cm_event(struct cm_id *c, enum rdma_cm_event_type type, int status,
              const struct cm_msg *m)
{
	struct cm_channel *ch = (struct cm_channel *)c->id.channel;
	struct cm_event *e;
	if (c->destroyed || !ch)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->ev.id = &c->id;
	e->ev.listen_id = c->listener ? &c->listener->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (m) {
		bool iw = c->dev && c->dev->iwarp;
		size_t len = m->priv_len;
		if (!iw && m->type == CMM_REQ)
			len = 56;
		else if (!iw && m->type == CMM_REP)
			len = 196;
		else if (!iw && m->type == CMM_REJ)
			len = 148;
		memcpy(e->priv, m->priv, m->priv_len);
		e->ev.param.conn.private_data = e->priv;
		e->ev.param.conn.private_data_len =
		        (uint8_t)(len > 255 ? 255 : len);
		e->ev.param.conn.responder_resources = m->init_depth;
		e->ev.param.conn.initiator_depth = m->resp_res;
		e->ev.param.conn.retry_count = m->retry;
		e->ev.param.conn.rnr_retry_count = m->rnr_retry;
		e->ev.param.conn.qp_num = m->qpn;
	}
	c->events_out++;
	if (write(ch->wr, &e, sizeof(e)) != sizeof(e)) {
		free(e);
		c->events_out--;
	}
}

/* The fabric is the state directory, hashed as the verbs stand-in does
 * (host.c): a request from another fabric, landing on a port this one
 * reuses, finds nobody, as it would on separate hardware. */
static uint32_t fabric_id(void)
{
	static uint32_t id;
	if (!id) {
		const char *s = getenv("COLLBENCH_EMU_STATE");
		char def[64];
		uint32_t h = 2166136261u;
		if (!s || !*s) {
			snprintf(def, sizeof(def), "/tmp/collbench-emu-%u",
			         (unsigned)getuid());
			s = def;
		}
		while (*s)
			h = (h ^ (uint8_t)*s++) * 16777619u;
		id = h;
	}
	return id;
}

void cm_fill_msg(struct cm_id *c, struct cm_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = CM_MAGIC;
	m->fabric = fabric_id();
	m->type = type;
	m->qpn = c->id.qp ? c->id.qp->qp_num : c->conn.qp_num;
	m->psn = c->psn;
	m->resp_res = c->resp_res;
	m->init_depth = c->init_depth;
	m->retry = c->conn.retry_count;
	m->rnr_retry = c->conn.rnr_retry_count;
	m->mtu = c->dev ? (uint8_t)c->dev->active_mtu : IBV_MTU_1024;
	m->lid = c->dev ? c->dev->lid : 0;
	m->ip = c->id.route.addr.src_sin.sin_addr.s_addr;
}

/* Messages are small; the socket is non-blocking but a whole message
 * fits its buffer, so a short write means the connection is broken. */
int cm_send(struct cm_id *c, struct cm_msg *m)
{
	size_t len = offsetof(struct cm_msg, priv) + m->priv_len;
	if (c->fd < 0)
		return -1;
	return send(c->fd, m, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int roce_gid_index(struct cm_dev *d, uint32_t ip)
{
	for (int i = 0; i < 16; i++) {
		union ibv_gid g;
		if (ibv_query_gid(d->verbs, 1, i, &g) == 0 &&
		    g.raw[10] == 0xff && g.raw[11] == 0xff &&
		    !memcmp(&g.raw[12], &ip, 4) && (i & 1))
			return i; /* the v2 entry of the pair */
	}
	return 0;
}

/* The QP to RTR and RTS with what the peer said (cm_lock held). */
int cm_qp_rtr_rts(struct cm_id *c)
{
	struct ibv_qp_attr a;
	struct cm_dev *d = c->dev;
	int mask;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = d->active_mtu < (enum ibv_mtu)c->peer.mtu
	                     ? d->active_mtu
	                     : (enum ibv_mtu)c->peer.mtu;
	a.dest_qp_num = c->peer.qpn;
	a.rq_psn = c->peer.psn;
	a.max_dest_rd_atomic = c->resp_res;
	a.min_rnr_timer = 12;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
	                    (c->resp_res ? IBV_ACCESS_REMOTE_READ : 0);
	a.ah_attr.port_num = 1;
	if (d->iwarp || d->roce) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(&a.ah_attr.grh.dgid.raw[12], &c->peer.ip, 4);
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.sgid_index =
		        d->roce ? (uint8_t)roce_gid_index(
		                          d, c->id.route.addr.src_sin.sin_addr
		                                     .s_addr)
		                : 0;
	} else {
		a.ah_attr.dlid = c->peer.lid;
	}
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	       IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(c->id.qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->ack_timeout;
	a.retry_cnt = c->conn.retry_count > 7 ? 7 : c->conn.retry_count;
	a.rnr_retry = c->peer.rnr_retry > 7 ? 7 : c->peer.rnr_retry;
	a.sq_psn = c->psn;
	a.max_rd_atomic = c->init_depth;
	mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(c->id.qp, &a, mask) ? -1 : 0;
}

void cm_qp_error(struct cm_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	if (c->id.qp)
		ibv_modify_qp(c->id.qp, &a, IBV_QP_STATE);
}

/* ---- the thread ---- */

static void on_accept(struct cm_id *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct cm_id *c;
		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CM_WAIT_REQ;
		c->listener = l;
		c->ack_timeout = 14;
		c->id.channel = l->id.channel;
		c->id.context = l->id.context;
		c->id.ps = l->id.ps;
		c->id.qp_type = IBV_QPT_RC;
		c->id.port_num = 1;
		c->next = cm_ids;
		cm_ids = c;
		cm_watch(c, false);
	}
}

static void lost(struct cm_id *c, int err)
{
	switch (c->state) {
	case CM_CONNECTING:
		cm_qp_error(c);
		if (err == ECONNREFUSED)
			cm_event(c, RDMA_CM_EVENT_REJECTED,
			         c->dev && c->dev->iwarp ? -ECONNREFUSED : 8,
			         NULL);
		else
			cm_event(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
			         NULL);
		c->state = CM_DISCONNECTED;
		break;
	case CM_ACCEPTED:
	case CM_CONNECTED:
	case CM_DISCONNECTING:
		cm_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		c->state = CM_DISCONNECTED;
		break;
	case CM_WAIT_REQ:
		c->state = CM_DISCONNECTED;
		c->destroyed = true; /* nobody ever saw it */
		break;
	default:
		break;
	}
	cm_unwatch(c);
}

static void on_msg(struct cm_id *c, struct cm_msg *m)
{
	struct cm_msg r;
	switch (m->type) {
	case CMM_REQ:
		if (c->state != CM_WAIT_REQ)
			break;
		{
			struct sockaddr_in sa;
			socklen_t l = sizeof(sa);
			getsockname(c->fd, (struct sockaddr *)&sa, &l);
			c->id.route.addr.src_sin = sa;
			l = sizeof(sa);
			getpeername(c->fd, (struct sockaddr *)&sa, &l);
			c->id.route.addr.dst_sin = sa;
			c->dev = cm_dev_for_ip(
			        c->id.route.addr.src_sin.sin_addr.s_addr);
			if (c->dev)
				c->id.route.addr.src_sin.sin_addr.s_addr =
				        cm_dev_ip(c->dev);
		}
		if (!c->dev || m->fabric != fabric_id()) {
			/* no device behind that address, or another fabric's
			 * process: nobody listens here */
			cm_fill_msg(c, &r, CMM_REJ);
			r.nobody = 1;
			cm_send(c, &r);
			lost(c, 0);
			break;
		}
		if (getenv("COLLBENCH_EMU_DEBUG")) {
			char hex[100] = "";
			for (int i = 0; i < m->priv_len && i < 24; i++)
				sprintf(hex + 3 * i, "%02x ", m->priv[i]);
			fprintf(stderr,
			        "verbs emulation: pid %d REQ on port %u from "
			        "port %u qpn %06x priv %u: %s\n",
			        (int)getpid(),
			        ntohs(c->id.route.addr.src_sin.sin_port),
			        ntohs(c->id.route.addr.dst_sin.sin_port),
			        m->qpn, m->priv_len, hex);
		}
		c->id.verbs = c->dev->verbs;
		c->peer = *m;
		c->state = CM_REQ_RCVD;
		c->conn.retry_count = m->retry;
		cm_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m);
		break;
	case CMM_REP:
		if (c->state != CM_CONNECTING)
			break;
		c->peer = *m;
		c->resp_res = c->resp_res < m->init_depth ? c->resp_res
		                                          : m->init_depth;
		c->init_depth = c->init_depth < m->resp_res ? c->init_depth
		                                            : m->resp_res;
		if (!c->id.qp) {
			c->state = CM_CONNECTED;
			cm_event(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m);
			break;
		}
		if (cm_qp_rtr_rts(c)) {
			cm_fill_msg(c, &r, CMM_REJ);
			cm_send(c, &r);
			cm_qp_error(c);
			c->state = CM_DISCONNECTED;
			cm_event(c, RDMA_CM_EVENT_CONNECT_ERROR, -errno, NULL);
			cm_unwatch(c);
			break;
		}
		cm_fill_msg(c, &r, CMM_RTU);
		cm_send(c, &r);
		c->state = CM_CONNECTED;
		cm_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, m);
		break;
	case CMM_RTU:
		if (c->state != CM_ACCEPTED)
			break;
		c->state = CM_CONNECTED;
		cm_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL);
		break;
	case CMM_REJ:
		if (c->state != CM_CONNECTING)
			break;
		cm_qp_error(c);
		c->state = CM_DISCONNECTED;
		cm_event(c, RDMA_CM_EVENT_REJECTED,
		         c->dev && c->dev->iwarp ? -ECONNREFUSED
		         : m->nobody             ? 8
		                                 : 28,
		         m);
		cm_unwatch(c);
		break;
	case CMM_DREQ:
		cm_fill_msg(c, &r, CMM_DREP);
		cm_send(c, &r);
		if (c->state == CM_CONNECTED || c->state == CM_ACCEPTED) {
			c->state = CM_DISCONNECTED;
			cm_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		}
		break;
	case CMM_DREP:
		if (c->state == CM_DISCONNECTING) {
			c->state = CM_DISCONNECTED;
			cm_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
			cm_unwatch(c);
		}
		break;
	}
}

static void on_readable(struct cm_id *c)
{
	for (;;) {
		size_t hdr = offsetof(struct cm_msg, priv);
		struct cm_msg *m = (struct cm_msg *)c->rbuf;
		size_t want = c->rlen < hdr ? hdr : hdr + m->priv_len;
		ssize_t n;
		if (c->rlen >= hdr &&
		    (m->magic != CM_MAGIC || m->priv_len > CM_PRIV_MAX)) {
			lost(c, EPROTO);
			return;
		}
		if (c->rlen == want && c->rlen >= hdr) {
			struct cm_msg copy;
			memcpy(&copy, c->rbuf, c->rlen);
			c->rlen = 0;
			on_msg(c, &copy);
			if (c->fd < 0)
				return;
			continue;
		}
		n = read(c->fd, c->rbuf + c->rlen, want - c->rlen);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			lost(c, n == 0 ? 0 : errno);
			return;
		}
		if (n < 0)
			return;
		c->rlen += (size_t)n;
	}
}

static int try_connect(struct cm_id *c);

/* Nobody listens (yet).  The emulation resolves addresses and routes at
 * once, where a kernel takes milliseconds (ARP, a path query), and
 * programs rely on that time (perftest -R connects right after telling
 * the server, over TCP, to listen): a refused connect is tried again for
 * 200 ms before it is reported as REJECTED. */
static void refused(struct cm_id *c, int err)
{
	if (err == ECONNREFUSED && cm_now_ns() < c->refused_until) {
		cm_unwatch(c);
		c->retry_at = cm_now_ns() + 10000000;
		return;
	}
	lost(c, err);
}

static void on_connected(struct cm_id *c)
{
	int err = 0;
	socklen_t l = sizeof(err);
	struct cm_msg m;
	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err) {
		refused(c, err);
		return;
	}
	cm_watch(c, false);
	cm_fill_msg(c, &m, CMM_REQ);
	m.priv_len = c->conn.private_data_len;
	if (c->conn.private_data_len)
		memcpy(m.priv, c->conn.private_data, m.priv_len);
	if (cm_send(c, &m))
		lost(c, ECONNRESET);
}

static void *cm_thread(void *arg)
{
	struct epoll_event ev[32];
	(void)arg;
	for (;;) {
		int n = epoll_wait(epfd, ev, 32, 10);
		int64_t now = cm_now_ns();
		pthread_mutex_lock(&cm_lock);
		for (int i = 0; i < n; i++) {
			struct cm_id *c = ev[i].data.ptr;
			if (c->fd < 0)
				continue;
			if (c->state == CM_LISTEN)
				on_accept(c);
			else if (c->state == CM_CONNECTING && c->rlen == 0 &&
			         (ev[i].events & EPOLLOUT))
				on_connected(c);
			else
				on_readable(c);
		}
		for (struct cm_id *c = cm_ids; c; c = c->next) {
			if (c->state != CM_CONNECTING)
				continue;
			if (c->retry_at && now >= c->retry_at) {
				c->retry_at = 0;
				if (try_connect(c))
					lost(c, errno);
			} else if (c->deadline_ns && now > c->deadline_ns) {
				lost(c, ETIMEDOUT);
			}
		}
		/* The events of this round are handled: ids destroyed before
		 * it began can be in no later one (they left the epoll set). */
		while (graves) {
			struct cm_id *g = graves;
			graves = g->next;
			free_id(g);
		}
		pthread_mutex_unlock(&cm_lock);
	}
	return NULL;
}

static int try_connect(struct cm_id *c)
{
	struct sockaddr_in dst = c->id.route.addr.dst_sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if ((ntohl(dst.sin_addr.s_addr) >> 24) != 127 &&
	    bind(fd,
	         (struct sockaddr *)&(struct sockaddr_in){
	                 .sin_family = AF_INET,
	                 .sin_addr = c->id.route.addr.src_sin.sin_addr },
	         sizeof(struct sockaddr_in))) {
		close(fd);
		return -1;
	}
	c->fd = fd;
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) == 0) {
		on_connected(c);
		return 0;
	}
	if (errno != EINPROGRESS) {
		refused(c, errno);
		return 0; /* reported as an event, as the kernel would */
	}
	return cm_watch(c, true);
}

/* Connect the active side: a TCP connection to the listener, then REQ. */
int cm_start_connect(struct cm_id *c);
int cm_start_connect(struct cm_id *c)
{
	c->state = CM_CONNECTING;
	c->deadline_ns = cm_now_ns() + cap_ns();
	c->refused_until = cm_now_ns() + 200000000;
	c->retry_at = 0;
	return try_connect(c);
}
