/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_dev.c - which devices and ports a rank uses, how
 * they are addressed, and what they count.
 *
 * Rails: --nic DEV[:PORT][,DEV[:PORT]...] names them (a rank stripes large
 * messages over several); else the NIC topology chose for the rank when it
 * is an RDMA device (or the RDMA device behind the chosen network
 * interface); else the first device with an ACTIVE port.  The port is the
 * one named, else the first ACTIVE one.
 *
 * Link layer, per port: InfiniBand (addressed by LID, --ib-sl sets the
 * service level), RoCE (Ethernet: addressed by a GID, with a GRH), iWARP
 * (the device's transport type; connected through rdma_cm only).  RoCE's GID
 * is chosen as perftest users would by hand: RoCE v2, holding the IPv4
 * address of the interface this rank reached the rendezvous through (its
 * route), else the first RoCE v2 IPv4 one; --gid-index overrides.  The
 * choice is logged as "GID index 3 (::ffff:10.0.0.1, RoCE v2): perftest -x 3".
 *
 * Counters: the ports' counters/ and hw_counters/ files under each device's
 * own sysfs path (ibdev_path: the emulation keeps its tree elsewhere), read
 * before and after a run by the core.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netpacket/packet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/verbs/verbs.h"

/* A failure while choosing a rail: recorded, or, while probing for the
 * first usable device, only logged (the next device may do). */
static cb_status_t dev_fail(struct cb_tp_ctx *ctx, int quiet, cb_status_t st,
                            const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static cb_status_t dev_fail(struct cb_tp_ctx *ctx, int quiet, cb_status_t st,
                            const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (quiet) {
		ctx->host->log(ctx->host, CB_TP_LOG_DEBUG, "%s", line);
		return st;
	}
	return ctx->host->fail(ctx->host, st, "%s", line);
}

const char *vb_link_name(enum vb_link l)
{
	return l == VB_LINK_IB     ? "InfiniBand"
	       : l == VB_LINK_ROCE ? "RoCE"
	                           : "iWARP";
}

static enum vb_link port_link(struct ibv_context *c,
                              const struct ibv_port_attr *pa)
{
	if (c->device->transport_type == IBV_TRANSPORT_IWARP)
		return VB_LINK_IWARP;
	return pa->link_layer == IBV_LINK_LAYER_ETHERNET ? VB_LINK_ROCE
	                                                 : VB_LINK_IB;
}

static double port_gbps(const struct ibv_port_attr *pa)
{
	/* per lane, Gb/s, by active_speed bit */
	static const struct {
		int bit;
		double gbps;
	} sp[] = { { 1, 2.5 },     { 2, 5.0 },      { 4, 10.0 },
		   { 8, 10.3125 }, { 16, 14.0625 }, { 32, 25.78125 },
		   { 64, 53.125 }, { 128, 106.25 } };
	int lanes = pa->active_width == 1    ? 1
	            : pa->active_width == 2  ? 4
	            : pa->active_width == 4  ? 8
	            : pa->active_width == 8  ? 12
	            : pa->active_width == 16 ? 2
	                                     : 0;
	for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]); i++)
		if (pa->active_speed == sp[i].bit)
			return sp[i].gbps * lanes;
	return 0;
}

/* The GID's type at @idx as the port reports it: ibv_query_gid_ex where
 * the library has it, else sysfs's gid_attrs/types ("IB/RoCE v1", "RoCE
 * v2").  "RoCE v1", "RoCE v2", or NULL where neither says. */
static const char *gid_type(struct ibv_context *c, int port, int idx)
{
	struct ibv_gid_entry e;
	char path[512], buf[64] = "";
	FILE *f;

	if (ibv_query_gid_ex(c, (uint32_t)port, (uint32_t)idx, &e, 0) == 0)
		return e.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
		       : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
		                                            : NULL;
	snprintf(path, sizeof(path), "%s/ports/%d/gid_attrs/types/%d",
	         c->device->ibdev_path, port, idx);
	if (!(f = fopen(path, "r")))
		return NULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "v2")   ? "RoCE v2"
	       : strstr(buf, "v1") ? "RoCE v1"
	                           : NULL;
}

static int gid_is_v2(struct ibv_context *c, int port, int idx)
{
	const char *t = gid_type(c, port, idx);
	return t && !strcmp(t, "RoCE v2");
}

static int gid_ipv4(const union ibv_gid *g, uint32_t *ip)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0,    0,
		                         0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(g->raw, pre, 12))
		return 0;
	memcpy(ip, g->raw + 12, 4);
	return 1;
}

static int gid_zero(const union ibv_gid *g)
{
	static const uint8_t z[16];
	return !memcmp(g->raw, z, 16);
}

/* The IPv4 address of the network interface under rail @r, for rdma_cm
 * where the GID holds none: the interface sysfs names for the GID, else the
 * one whose MAC address leads the GID (iWARP: siw's GID is its interface's
 * MAC, and its gid_attrs name no interface).  0 when none is found. */
static int netdev_ipv4(struct vb_rail *r)
{
	static const uint8_t zero[6];
	char name[sizeof(r->netdev)];
	struct ifaddrs *ifs, *i;
	int ok = 0;

	if (getifaddrs(&ifs))
		return 0;
	snprintf(name, sizeof(name), "%s", r->netdev);
	for (i = ifs; i && !name[0]; i = i->ifa_next) {
		const struct sockaddr_ll *l = (const void *)i->ifa_addr;
		if (l && l->sll_family == AF_PACKET && l->sll_halen == 6 &&
		    memcmp(l->sll_addr, zero, 6) &&
		    !memcmp(l->sll_addr, r->gid.raw, 6))
			snprintf(name, sizeof(name), "%s", i->ifa_name);
	}
	for (i = ifs; i && name[0] && !ok; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !strcmp(i->ifa_name, name)) {
			const struct sockaddr_in *a = (const void *)i->ifa_addr;
			r->ipv4 = a->sin_addr.s_addr;
			snprintf(r->netdev, sizeof(r->netdev), "%s", name);
			ok = 1;
		}
	freeifaddrs(ifs);
	return ok;
}

/* Choose the GID of a RoCE port into *@idx (and r->gid). */
static cb_status_t pick_gid(struct cb_tp_ctx *ctx, struct vb_rail *r,
                            const struct ibv_port_attr *pa, int *idx, int quiet)
{
	const struct cb_tp_host *h = ctx->host;
	const char *want = h->option(h, "gid-index");
	struct in_addr route = { 0 };
	int first = -1, match = -1;

	if (want) {
		char *end;
		long v = strtol(want, &end, 10);
		union ibv_gid g;
		if (*end || end == want || v < 0 || v >= pa->gid_tbl_len ||
		    ibv_query_gid(r->ctx, (uint8_t)r->port, (int)v, &g) ||
		    gid_zero(&g))
			/* a bad option is the user's, never probing's */
			return dev_fail(
			        ctx, 0, CB_ERR_USAGE,
			        "verbs: --gid-index %s: port %s:%d has no "
			        "such GID (its table has %d entries; see "
			        "ibv_devinfo -v)",
			        want, r->name, r->port, pa->gid_tbl_len);
		r->gid = g;
		*idx = (int)v;
		return CB_OK;
	}
	if (h->local_ip)
		inet_pton(AF_INET, h->local_ip, &route);
	for (int i = 0; i < pa->gid_tbl_len && i < 256; i++) {
		union ibv_gid g;
		uint32_t ip;
		if (ibv_query_gid(r->ctx, (uint8_t)r->port, i, &g) ||
		    gid_zero(&g) || !gid_ipv4(&g, &ip) ||
		    !gid_is_v2(r->ctx, r->port, i))
			continue;
		if (first < 0)
			first = i;
		if (match < 0 && ip == route.s_addr)
			match = i;
	}
	*idx = match >= 0 ? match : first;
	if (*idx < 0)
		return dev_fail(ctx, quiet, CB_ERR_UNAVAILABLE,
		                "verbs: port %s:%d (RoCE) has no RoCE v2 GID "
		                "with an IPv4 address: give one with "
		                "--gid-index",
		                r->name, r->port);
	ibv_query_gid(r->ctx, (uint8_t)r->port, *idx, &r->gid);
	return CB_OK;
}

/* The first line of one of device @d's sysfs files, or "".  The device's
 * own path, never a fixed /sys: the emulation keeps its tree elsewhere. */
static void sysfs_read(const struct ibv_device *d, const char *rel, char *buf,
                       size_t bytes)
{
	char path[512];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", d->ibdev_path, rel);
	if (!(f = fopen(path, "r")))
		return;
	if (!fgets(buf, (int)bytes, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Open rail @r on device @c, port @port (0: the first ACTIVE one). */
static cb_status_t open_rail(struct cb_tp_ctx *ctx, struct vb_rail *r,
                             struct ibv_context *c, int port, int quiet)
{
	const struct cb_tp_host *h = ctx->host;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	cb_status_t st;

	snprintf(r->name, sizeof(r->name), "%s",
	         ibv_get_device_name(c->device));
	r->ctx = c;
	if (ibv_query_device(c, &da))
		return dev_fail(ctx, quiet, CB_ERR_SYS,
		                "verbs: cannot query %s: %s", r->name,
		                strerror(errno));
	if (port > da.phys_port_cnt || port < 0)
		return dev_fail(ctx, quiet, CB_ERR_USAGE,
		                "verbs: --nic %s:%d: the device has ports 1-%d",
		                r->name, port, da.phys_port_cnt);
	int lo = port ? port : 1, hi = port ? port : da.phys_port_cnt;
	for (int p = lo; p <= hi && !r->port; p++)
		if (!ibv_query_port(c, (uint8_t)p, &pa) &&
		    (pa.state == IBV_PORT_ACTIVE || port))
			r->port = p;
	if (!r->port)
		return dev_fail(ctx, quiet, CB_ERR_UNAVAILABLE,
		                "verbs: %s has no ACTIVE port (ibv_devinfo "
		                "shows their state)",
		                r->name);
	if (pa.state != IBV_PORT_ACTIVE)
		return dev_fail(ctx, quiet, CB_ERR_UNAVAILABLE,
		                "verbs: port %s:%d is %s, not ACTIVE", r->name,
		                r->port, ibv_port_state_str(pa.state));
	r->link = port_link(c, &pa);
	r->lid = pa.lid;
	r->mtu = pa.active_mtu;
	r->max_msg = pa.max_msg_sz ? pa.max_msg_sz : (1u << 30);
	r->gid_index = -1;
	if (r->link == VB_LINK_ROCE || h->option(h, "gid-index")) {
		if ((st = pick_gid(ctx, r, &pa, &r->gid_index, quiet)))
			return st;
	} else if (r->link == VB_LINK_IWARP) {
		ibv_query_gid(c, (uint8_t)r->port, 0, &r->gid);
		r->gid_index = 0;
	}
	char rel[96];
	snprintf(rel, sizeof(rel), "ports/%d/gid_attrs/ndevs/%d", r->port,
	         r->gid_index > 0 ? r->gid_index : 0);
	sysfs_read(c->device, rel, r->netdev, sizeof(r->netdev));
	if (!gid_ipv4(&r->gid, &r->ipv4) && !netdev_ipv4(r) && h->local_ip)
		inet_pton(AF_INET, h->local_ip, &r->ipv4);
	if (r->link == VB_LINK_IWARP && r->netdev[0]) {
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &r->ipv4, a, sizeof(a));
		h->log(h, CB_TP_LOG_INFO, "%s:%d iWARP on %s (%s)", r->name,
		       r->port, r->netdev, a);
	}
	if (r->link == VB_LINK_ROCE) {
		char a[INET6_ADDRSTRLEN];
		const char *t = gid_type(c, r->port, r->gid_index);
		inet_ntop(AF_INET6, r->gid.raw, a, sizeof(a));
		/* the type as the port reports it: --gid-index may name v1 */
		h->log(h, CB_TP_LOG_INFO,
		       "%s:%d %s, GID index %d (%s): as perftest -d %s -x %d",
		       r->name, r->port, t ? t : "RoCE (GID type unknown)",
		       r->gid_index, a, r->name, r->gid_index);
	}
	return CB_OK;
}

/* Split "DEV[:PORT]". */
static void parse_nic(const char *s, char *dev, size_t n, int *port)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);

	snprintf(dev, n, "%.*s", (int)(len < n ? len : n - 1), s);
	*port = colon ? atoi(colon + 1) : 0;
}

/* The RDMA device whose port carries network interface @netdev. */
static int by_netdev(struct ibv_context **devs, int n, const char *netdev)
{
	for (int i = 0; i < n; i++) {
		char nd[64];
		for (int p = 1; p <= 2; p++) {
			char rel[64];
			snprintf(rel, sizeof(rel), "ports/%d/gid_attrs/ndevs/0",
			         p);
			sysfs_read(devs[i]->device, rel, nd, sizeof(nd));
			if (nd[0] && !strcmp(nd, netdev))
				return i;
		}
	}
	return -1;
}

static struct ibv_context **open_all(struct cb_tp_ctx *ctx, int *n)
{
	struct ibv_context **out;

	if (ctx->use_cm) {
		/* rdma_cm ids bind to librdmacm's own contexts: use them, so
		 * PDs, CQs and QPs share one. */
		ctx->cm_devs = rdma_get_devices(n);
		return ctx->cm_devs;
	}
	struct ibv_device **list = ibv_get_device_list(n);
	if (!list || !*n) {
		if (list)
			ibv_free_device_list(list);
		return NULL;
	}
	out = calloc((size_t)*n + 1, sizeof(*out));
	for (int i = 0; out && i < *n; i++)
		out[i] = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return out;
}

cb_status_t vb_open_rails(struct cb_tp_ctx *ctx)
{
	const struct cb_tp_host *h = ctx->host;
	const char *explicit = h->option(h, "nic");
	const char *want = explicit ? explicit : h->nic;
	struct ibv_context **devs;
	int n = 0, used[64] = { 0 };
	char names[512] = "";
	cb_status_t st = CB_OK;

	if (!(devs = open_all(ctx, &n)) || n == 0)
		return h->fail(h, CB_ERR_UNAVAILABLE,
		               "verbs: no RDMA device found (ibv_devices "
		               "lists none)");
	for (int i = 0; i < n && devs[i]; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
		         "%s%s", i ? ", " : "",
		         ibv_get_device_name(devs[i]->device));
	char list[256];
	snprintf(list, sizeof(list), "%s", want ? want : "");
	for (char *save, *tok = strtok_r(list, ",", &save);
	     tok && ctx->nrails < VB_MAX_RAILS && !st;
	     tok = strtok_r(NULL, ",", &save)) {
		char dev[64];
		int port, k = -1;
		parse_nic(tok, dev, sizeof(dev), &port);
		for (int i = 0; i < n && k < 0; i++)
			if (devs[i] &&
			    !strcmp(ibv_get_device_name(devs[i]->device), dev))
				k = i;
		if (k < 0)
			k = by_netdev(devs, n, dev);
		if (k < 0 && explicit) {
			st = h->fail(h, CB_ERR_USAGE,
			             "verbs: --nic %s: no such RDMA device "
			             "(devices: %s)",
			             tok, names);
			break;
		}
		if (k < 0 || used[k & 63]++)
			continue;
		st = open_rail(ctx, &ctx->rail[ctx->nrails], devs[k], port,
		               !explicit);
		if (st && !explicit) {
			/* topology's choice does not work: try the others */
			memset(&ctx->rail[ctx->nrails], 0,
			       sizeof(ctx->rail[0]));
			used[k & 63] = 0;
			st = CB_OK;
			continue;
		}
		if (!st)
			ctx->nrails++;
	}
	/* Nothing asked for (or topology's choice is no RDMA device): the
	 * first device with an ACTIVE port. */
	for (int i = 0; !st && ctx->nrails == 0 && i < n; i++) {
		struct vb_rail *r = &ctx->rail[0];
		if (!devs[i])
			continue;
		cb_status_t rs = open_rail(ctx, r, devs[i], 0, 1);
		if (rs == CB_OK) {
			ctx->nrails = 1;
			used[i & 63] = 1;
		} else if (rs == CB_ERR_USAGE) {
			st = rs; /* the user's option, not this device */
		} else {
			memset(r, 0, sizeof(*r));
			if (i < n - 1)
				h->log(h, CB_TP_LOG_DEBUG, "skipping %s",
				       ibv_get_device_name(devs[i]->device));
		}
	}
	if (!st && ctx->nrails == 0)
		st = h->fail(h, CB_ERR_UNAVAILABLE,
		             "verbs: no RDMA device with an ACTIVE port "
		             "(devices: %s; ibv_devinfo shows their ports)",
		             names);
	/* Close the devices not in use (rdma_cm owns its own). */
	for (int i = 0; !ctx->use_cm && i < n; i++)
		if (devs[i] && !used[i & 63])
			ibv_close_device(devs[i]);
	if (!ctx->use_cm)
		free(devs);
	return st;
}

void vb_close_rails(struct cb_tp_ctx *ctx)
{
	for (int i = 0; i < ctx->nrails; i++) {
		struct vb_rail *r = &ctx->rail[i];
		if (r->listen_id)
			rdma_destroy_id(r->listen_id);
		for (int c = 0; c < r->ncq; c++)
			ibv_destroy_cq(r->cqs[c].cq);
		free(r->cqs);
		r->cqs = NULL;
		r->ncq = 0;
		if (r->pd)
			ibv_dealloc_pd(r->pd);
		if (r->ctx && !ctx->use_cm)
			ibv_close_device(r->ctx);
	}
	if (ctx->cm_devs)
		rdma_free_devices(ctx->cm_devs);
	ctx->cm_devs = NULL;
	ctx->nrails = 0;
}

cb_status_t vb_devices(struct cb_tp_dev *devs, int max, int *n)
{
	struct ibv_device **list;
	int nd = 0;

	*n = 0;
	if (!(list = ibv_get_device_list(&nd)))
		return CB_OK;
	for (int i = 0; i < nd; i++) {
		struct ibv_context *c = ibv_open_device(list[i]);
		struct ibv_device_attr da;
		if (!c)
			continue;
		if (ibv_query_device(c, &da)) {
			ibv_close_device(c);
			continue;
		}
		for (int p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(c, (uint8_t)p, &pa))
				continue;
			if (*n < max) {
				struct cb_tp_dev *d = &devs[*n];
				enum vb_link l = port_link(c, &pa);
				*d = (struct cb_tp_dev){ .port = p };
				snprintf(d->name, sizeof(d->name), "%s",
				         ibv_get_device_name(list[i]));
				snprintf(d->link_layer, sizeof(d->link_layer),
				         "%s", vb_link_name(l));
				snprintf(d->state, sizeof(d->state), "%s",
				         ibv_port_state_str(pa.state));
				d->speed_gbps = port_gbps(&pa);
				d->mtu = 128u << pa.active_mtu;
				d->max_msg = pa.max_msg_sz;
				if (l == VB_LINK_IB)
					snprintf(d->detail, sizeof(d->detail),
					         "LID %u, fw %s", pa.lid,
					         da.fw_ver);
				else
					snprintf(d->detail, sizeof(d->detail),
					         "%d GIDs, fw %s",
					         pa.gid_tbl_len, da.fw_ver);
			}
			(*n)++;
		}
		ibv_close_device(c);
	}
	ibv_free_device_list(list);
	return CB_OK;
}

/* Counters that mean trouble when they move (IB's counters/ and the
 * common hw_counters/). */
static int is_error_counter(const char *name)
{
	static const char *const bad[] = {
		"symbol_error",
		"link_downed",
		"link_error_recovery",
		"port_rcv_errors",
		"port_rcv_remote_physical_errors",
		"port_rcv_switch_relay_errors",
		"port_xmit_discards",
		"port_xmit_constraint_errors",
		"port_rcv_constraint_errors",
		"local_link_integrity_errors",
		"excessive_buffer_overrun_errors",
		"VL15_dropped",
		"out_of_buffer",
		"out_of_sequence",
		"local_ack_timeout_err",
		"rnr_nak_retry_err",
		"req_remote_access_errors",
		"resp_remote_access_errors",
		"resp_local_length_error",
		"packet_seq_err",
		"implied_nak_seq_err",
		NULL,
	};
	for (int i = 0; bad[i]; i++)
		if (!strcmp(bad[i], name))
			return 1;
	return 0;
}

cb_status_t vb_counters(struct cb_tp_ctx *ctx, struct cb_tp_counter *out,
                        int max, int *n)
{
	static const char *const dirs[] = { "counters", "hw_counters" };

	*n = 0;
	for (int i = 0; i < ctx->nrails; i++) {
		const struct vb_rail *r = &ctx->rail[i];
		for (int d = 0; d < 2; d++) {
			char path[512];
			snprintf(path, sizeof(path), "%s/ports/%d/%s",
			         r->ctx->device->ibdev_path, r->port, dirs[d]);
			DIR *dir = opendir(path);
			struct dirent *e;
			while (dir && (e = readdir(dir))) {
				char rel[128], v[64];
				if (e->d_name[0] == '.')
					continue;
				snprintf(rel, sizeof(rel), "ports/%d/%s/%.40s",
				         r->port, dirs[d], e->d_name);
				sysfs_read(r->ctx->device, rel, v, sizeof(v));
				if (!v[0])
					continue;
				if (*n < max) {
					struct cb_tp_counter *c = &out[*n];
					snprintf(c->dev, sizeof(c->dev),
					         "%.40s:%d", r->name, r->port);
					snprintf(c->name, sizeof(c->name),
					         "%.39s", e->d_name);
					c->value = strtoull(v, NULL, 10);
					c->is_error =
					        is_error_counter(e->d_name);
				}
				(*n)++;
			}
			if (dir)
				closedir(dir);
		}
	}
	return CB_OK;
}
