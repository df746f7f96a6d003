/* SPDX-License-Identifier: MIT */
/*
 * topo/nic.c - NIC identity and error counters from sysfs, one reader per
 * kind of port (see topo/nic.h), and the comparison that finds the host
 * whose NIC is unlike its peers' (a link at a lower rate, an MTU left at
 * 1500, older firmware).
 *
 * Which netdevs count: those on a bus (a device link in sysfs) and those
 * that carry an IPv4 address (a bond, a VLAN, the veth of a test host made
 * of a network namespace); not loopback, bridges, or the address-less
 * veths of containers, whose names differ from host to host.
 */
#include "core/strbuf.h"
#include "topo/nic.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int cb_sysfs_line(const char *path, char *buf, size_t bytes)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, (int)bytes, f);

	if (f)
		fclose(f);
	if (!ok) {
		buf[0] = '\0';
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;

	if (cb_sysfs_line(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	*v = strtoull(buf, &end, 0);
	return *end ? -1 : 0;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cb_nic_info *)a)->name,
	              ((const struct cb_nic_info *)b)->name);
}

/* ---- netdev ---- */

static const char *const netdev_counters[] = {
	"rx_errors",        "tx_errors",         "rx_dropped",
	"tx_dropped",       "rx_crc_errors",     "rx_frame_errors",
	"rx_missed_errors", "tx_carrier_errors", NULL,
};
/* Linux counts frames of protocols nobody listens for as rx_dropped, and a
 * peer that went away as tx_dropped: reported, not failed on. */
static const unsigned char netdev_is_error[] = { 1, 1, 0, 0, 1, 1, 1, 1 };

/* The first IPv4 address of every interface, from the kernel. */
static void addr_of(const char *name, char *out, size_t bytes)
{
	struct ifaddrs *ifa;

	out[0] = '\0';
	if (getifaddrs(&ifa))
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !strcmp(i->ifa_name, name)) {
			inet_ntop(AF_INET,
			          &((struct sockaddr_in *)(void *)i->ifa_addr)
			                   ->sin_addr,
			          out, (socklen_t)bytes);
			break;
		}
	freeifaddrs(ifa);
}

void cb_nic_of_addr(const char *ip, char *name, size_t bytes)
{
	struct ifaddrs *ifa;
	char a[INET_ADDRSTRLEN];

	name[0] = '\0';
	if (!ip || getifaddrs(&ifa))
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    inet_ntop(AF_INET,
		              &((struct sockaddr_in *)(void *)i->ifa_addr)
		                       ->sin_addr,
		              a, sizeof(a)) &&
		    !strcmp(a, ip)) {
			snprintf(name, bytes, "%s", i->ifa_name);
			break;
		}
	freeifaddrs(ifa);
}

/* What `ethtool -i` prints, from the same ioctl. */
static void ethtool_drvinfo(struct cb_nic_info *n)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.15s", n->name);
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
		if (!n->driver[0])
			snprintf(n->driver, sizeof(n->driver), "%.31s",
			         di.driver);
		if (!n->driver_version[0])
			snprintf(n->driver_version, sizeof(n->driver_version),
			         "%.31s", di.version);
		if (!n->firmware[0] && strcmp(di.fw_version, "N/A"))
			snprintf(n->firmware, sizeof(n->firmware), "%.47s",
			         di.fw_version);
	}
	close(fd);
}

/* @n's counters @names, each a file of @dir (0 where one is missing);
 * -1 when none could be read. */
static int counters_in(const char *dir, const char *const *names,
                       struct cb_nic_info *n)
{
	char path[1024];
	int got = 0;

	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		n->counters[i] = 0;
		got += read_u64(path, &n->counters[i]) == 0;
	}
	n->ncounters = got ? CB_NIC_COUNTERS : 0;
	return got ? 0 : -1;
}

/* The driver a sysfs device's @dev_dir/driver links to, and the version
 * its module says. */
static void driver_of(const char *sysroot, const char *dev_dir,
                      struct cb_nic_info *n)
{
	char path[600], v[256];

	snprintf(path, sizeof(path), "%s/driver", dev_dir);
	ssize_t k = readlink(path, v, sizeof(v) - 1);
	if (k <= 0)
		return;
	v[k] = '\0';
	snprintf(n->driver, sizeof(n->driver), "%.31s",
	         strrchr(v, '/') ? strrchr(v, '/') + 1 : v);
	snprintf(path, sizeof(path), "%s/module/%s/version", sysroot,
	         n->driver);
	cb_sysfs_line(path, n->driver_version, sizeof(n->driver_version));
}

static int netdev_counters_read(const char *sysroot, struct cb_nic_info *n)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/class/net/%s/statistics", sysroot,
	         n->name);
	return counters_in(dir, netdev_counters, n);
}

static void netdev_fill(const char *sysroot, struct cb_nic_info *n)
{
	char path[512];
	uint64_t x;
	int live = !strcmp(sysroot, "/sys");

	snprintf(n->kind, sizeof(n->kind), "netdev");
	snprintf(path, sizeof(path), "%s/class/net/%s/operstate", sysroot,
	         n->name);
	cb_sysfs_line(path, n->state, sizeof(n->state));
	if (!n->state[0])
		snprintf(n->state, sizeof(n->state), "unknown");
	snprintf(path, sizeof(path), "%s/class/net/%s/speed", sysroot, n->name);
	n->speed_mbps = -1;
	/* Reading speed fails (EINVAL) on a link that is down. */
	if (!read_u64(path, &x) && x > 0 && x < (1u << 30))
		n->speed_mbps = (int32_t)x;
	snprintf(path, sizeof(path), "%s/class/net/%s/mtu", sysroot, n->name);
	n->mtu = read_u64(path, &x) ? -1 : (int32_t)x;
	snprintf(path, sizeof(path), "%s/class/net/%s/device", sysroot,
	         n->name);
	driver_of(sysroot, path, n);
	/* An RDMA-capable NIC's firmware is in its infiniband directory. */
	snprintf(path, sizeof(path), "%s/class/net/%s/device/infiniband",
	         sysroot, n->name);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path),
			         "%s/class/net/%s/device/infiniband/%s/fw_ver",
			         sysroot, n->name, e->d_name);
			cb_sysfs_line(path, n->firmware, sizeof(n->firmware));
			break;
		}
	if (d)
		closedir(d);
	if (live) {
		ethtool_drvinfo(n);
		addr_of(n->name, n->addr, sizeof(n->addr));
	}
	netdev_counters_read(sysroot, n);
}

/* How a directory's entry becomes NICs: fills out[0..room) from entry
 * @name of @dir and says how many it filled. */
typedef int (*nic_add_fn)(const void *ctx, const char *dir, const char *name,
                          struct cb_nic_info *out, int room);

/* Each entry of @dir but the dot ones, given to @add; how many NICs. */
static int each_entry(const char *dir, nic_add_fn add, const void *ctx,
                      struct cb_nic_info *out, int max)
{
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			n += add(ctx, dir, e->d_name, out + n, max - n);
	closedir(d);
	return n;
}

/* The NICs of @sysroot/class/@cls, sorted by name (@add gets @sysroot). */
static int list_class(const char *sysroot, const char *cls, nic_add_fn add,
                      struct cb_nic_info *out, int max)
{
	char dir[512];
	int n;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysroot, cls);
	n = each_entry(dir, add, sysroot, out, max);
	qsort(out, (size_t)n, sizeof(*out), by_name);
	return n;
}

static int netdev_add(const void *sysroot, const char *dir, const char *name,
                      struct cb_nic_info *x, int room)
{
	char path[1024];

	(void)room;
	if (!strcmp(name, "lo"))
		return 0;
	snprintf(path, sizeof(path), "%s/%s/bridge", dir, name);
	if (exists(path))
		return 0;
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%.31s", name);
	netdev_fill(sysroot, x);
	snprintf(path, sizeof(path), "%s/%s/device", dir, name);
	/* off a bus and without an address: a container's veth */
	return exists(path) || x->addr[0];
}

static int netdev_list(const char *sysroot, struct cb_nic_info *out, int max)
{
	return list_class(sysroot, "net", netdev_add, out, max);
}

const struct cb_nic_reader cb_nic_netdev = {
	.kind = "netdev",
	.counter_names = netdev_counters,
	.counter_is_error = netdev_is_error,
	.list = netdev_list,
	.counters = netdev_counters_read,
};

/* ---- infiniband (verbs devices: IB, RoCE, iWARP) ---- */

static const char *const ib_counters[] = {
	"symbol_error",
	"link_error_recovery",
	"link_downed",
	"port_rcv_errors",
	"port_rcv_remote_physical_errors",
	"port_xmit_discards",
	"local_link_integrity_errors",
	"excessive_buffer_overrun_errors",
	NULL,
};
/* Discards are congestion, not a bad cable. */
static const unsigned char ib_is_error[] = { 1, 1, 1, 1, 1, 0, 1, 1 };

static int ib_counters_read(const char *sysroot, struct cb_nic_info *n)
{
	char dev[32], dir[600];
	const char *slash = strchr(n->name, '/');

	if (!slash)
		return -1;
	snprintf(dev, sizeof(dev), "%.*s", (int)(slash - n->name), n->name);
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%s/counters",
	         sysroot, dev, slash + 1);
	return counters_in(dir, ib_counters, n);
}

/* "4: ACTIVE" -> "active"; "100 Gb/sec (4X EDR)" -> 100000 */
static void ib_port(const char *sysroot, const char *dev, const char *port,
                    struct cb_nic_info *n)
{
	char path[600], v[128];

	snprintf(n->name, sizeof(n->name), "%.20s/%.8s", dev, port);
	snprintf(n->kind, sizeof(n->kind), "infiniband");
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%s/state",
	         sysroot, dev, port);
	cb_sysfs_line(path, v, sizeof(v));
	const char *s = strchr(v, ':') ? strchr(v, ':') + 1 : v;
	while (*s == ' ')
		s++;
	snprintf(n->state, sizeof(n->state), "%.15s", *s ? s : "unknown");
	for (char *p = n->state; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%s/rate",
	         sysroot, dev, port);
	n->speed_mbps = -1;
	if (!cb_sysfs_line(path, v, sizeof(v)) && strstr(v, "Gb/sec"))
		n->speed_mbps = (int32_t)(atof(v) * 1000.0 + 0.5);
	n->mtu = -1;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/fw_ver", sysroot,
	         dev);
	cb_sysfs_line(path, n->firmware, sizeof(n->firmware));
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", sysroot,
	         dev);
	driver_of(sysroot, path, n);
	ib_counters_read(sysroot, n);
}

struct ib_dev {
	const char *sysroot, *name;
};

static int ib_port_add(const void *ctx, const char *dir, const char *port,
                       struct cb_nic_info *out, int room)
{
	const struct ib_dev *dev = ctx;

	(void)dir;
	(void)room;
	memset(out, 0, sizeof(*out));
	ib_port(dev->sysroot, dev->name, port, out);
	return 1;
}

/* One verbs device: a NIC per port. */
static int ib_add(const void *sysroot, const char *dir, const char *name,
                  struct cb_nic_info *out, int room)
{
	struct ib_dev dev = { sysroot, name };
	char ports[800];

	snprintf(ports, sizeof(ports), "%s/%s/ports", dir, name);
	return each_entry(ports, ib_port_add, &dev, out, room);
}

static int ib_list(const char *sysroot, struct cb_nic_info *out, int max)
{
	return list_class(sysroot, "infiniband", ib_add, out, max);
}

const struct cb_nic_reader cb_nic_infiniband = {
	.kind = "infiniband",
	.counter_names = ib_counters,
	.counter_is_error = ib_is_error,
	.list = ib_list,
	.counters = ib_counters_read,
};

/* An explicit table: a transport's ports and who reads them. */
static const struct {
	const char *transport;
	const struct cb_nic_reader *reader;
} readers[] = {
	{ "tcp", &cb_nic_netdev },
	{ "verbs", &cb_nic_infiniband },
};

const struct cb_nic_reader *cb_nic_reader_for(const char *transport)
{
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		if (!strcmp(readers[i].transport, transport))
			return readers[i].reader;
	return NULL;
}

/* ---- comparison ---- */

enum { F_STATE, F_SPEED, F_MTU, F_DRIVER, F_DRVVER, F_FW, F_COUNT };

static const char *const field_name[F_COUNT] = {
	[F_STATE] = "state",
	[F_SPEED] = "speed",
	[F_MTU] = "MTU",
	[F_DRIVER] = "driver",
	[F_DRVVER] = "driver version",
	[F_FW] = "firmware",
};

static void field(const struct cb_nic_info *n, int f, char *buf, size_t bytes)
{
	switch (f) {
	case F_STATE:
		snprintf(buf, bytes, "%s", n->state);
		break;
	case F_SPEED:
		if (n->speed_mbps < 0)
			snprintf(buf, bytes, "unknown");
		else if (n->speed_mbps % 1000 == 0)
			snprintf(buf, bytes, "%d Gb/s", n->speed_mbps / 1000);
		else
			snprintf(buf, bytes, "%d Mb/s", n->speed_mbps);
		break;
	case F_MTU:
		snprintf(buf, bytes, "%d", n->mtu);
		break;
	case F_DRIVER:
		snprintf(buf, bytes, "%s", n->driver[0] ? n->driver : "none");
		break;
	case F_DRVVER:
		snprintf(buf, bytes, "%s",
		         n->driver_version[0] ? n->driver_version : "none");
		break;
	default:
		snprintf(buf, bytes, "%s",
		         n->firmware[0] ? n->firmware : "none");
		break;
	}
}

static const struct cb_nic_info *find(const struct cb_nic_info *nics, int n,
                                      const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(nics[i].name, name))
			return &nics[i];
	return NULL;
}

static void append(char *why, const char *fmt, const char *a, const char *b,
                   const char *c, const char *d)
{
	size_t k = strlen(why);

	if (k + 4 >= 256)
		return;
	if (k)
		cb_buf_appendf(why, 256, &k, "; ");
	cb_buf_appendf(why, 256, &k, fmt, a, b, c, d);
}

int cb_nic_compare(const struct cb_nic_info *const *nics, const int *counts,
                   int nhosts, char (*why)[256])
{
	int differ = 0;

	for (int h = 0; h < nhosts; h++)
		why[h][0] = '\0';
	for (int h = 0; h < nhosts; h++)
		for (int k = 0; k < counts[h]; k++) {
			const char *name = nics[h][k].name;
			int seen = 0, have = 0;
			for (int p = 0; p < h && !seen; p++)
				seen = find(nics[p], counts[p], name) != NULL;
			if (seen)
				continue;
			for (int p = 0; p < nhosts; p++)
				have += find(nics[p], counts[p], name) != NULL;
			/* Most hosts lack it: those that have it differ. */
			for (int p = 0; p < nhosts; p++) {
				int has =
				        find(nics[p], counts[p], name) != NULL;
				if (2 * have > nhosts && !has)
					append(why[p], "%s%s%s%s missing", name,
					       "", "", "");
				else if (2 * have <= nhosts && has &&
				         have < nhosts)
					append(why[p], "%s%s%s%s only here",
					       name, "", "", "");
			}
			for (int f = 0; f < F_COUNT; f++) {
				char v[64], w[64], best[64] = "";
				int best_n = 0;
				for (int p = 0; p < nhosts; p++) {
					const struct cb_nic_info *x =
					        find(nics[p], counts[p], name);
					int c = 0;
					if (!x)
						continue;
					field(x, f, v, sizeof(v));
					for (int q = 0; q < nhosts; q++) {
						const struct cb_nic_info *y =
						        find(nics[q], counts[q],
						             name);
						if (!y)
							continue;
						field(y, f, w, sizeof(w));
						c += !strcmp(v, w);
					}
					if (c > best_n) {
						best_n = c;
						snprintf(best, sizeof(best),
						         "%s", v);
					}
				}
				for (int p = 0; p < nhosts; p++) {
					const struct cb_nic_info *x =
					        find(nics[p], counts[p], name);
					if (!x)
						continue;
					field(x, f, v, sizeof(v));
					if (strcmp(v, best))
						append(why[p],
						       "%s %s %s (others: %s)",
						       name, field_name[f], v,
						       best);
				}
			}
		}
	for (int h = 0; h < nhosts; h++)
		differ += why[h][0] != '\0';
	return differ;
}

void cb_nic_rdma_of_netdev(const char *sysroot, const char *netdev, char *dev,
                           size_t bytes)
{
	char dir[512], path[1024];
	DIR *d;
	struct dirent *e;

	dev[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/class/infiniband", sysroot);
	if (!netdev[0] || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s/device/net/%s", dir,
			         e->d_name, netdev);
			if (exists(path)) {
				snprintf(dev, bytes, "%s", e->d_name);
				break;
			}
		}
	closedir(d);
}
