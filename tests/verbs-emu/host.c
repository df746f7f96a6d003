/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/host.c - what a host of the emulated fabric is.
 *
 * A network namespace is a host: its identity is the inode of
 * /proc/self/ns/net, its addresses are its interfaces' IPv4 addresses.  Each
 * host has COLLBENCH_EMU_DEVICES (default 1) devices "cbemu0".. with one
 * port each, bound to the host's interfaces in ifindex order (or to those
 * COLLBENCH_EMU_NETDEV names).  The port's link layer is COLLBENCH_EMU_LINK
 * (ib, roce or iwarp); its state follows the interface (up and running) and
 * an admin file the fault injection and tools/emulated-rdma.sh write.
 *
 * Shared state lives in COLLBENCH_EMU_STATE (tools/emulated-rdma.sh picks
 * one); every process of every host of one fabric must use the same one:
 *   fabric             - the "subnet manager": one line per (host, device)
 *                        with its LID, address and GIDs, so a LID or a
 *                        link-local GID resolves to the host's address;
 *   hosts/ID/shared    - counters and last-seen port state (mmap);
 *   hosts/ID/admin/    - DEV.PORT exists = port forced down;
 *   hosts/ID/sys/      - the fake sysfs tree (class/infiniband/DEV/...),
 *                        ibv_get_sysfs_path() and each device's ibdev_path.
 */
#include "emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct emu_host emu_host;
int emu_debug;
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static int ioctl_fd = -1;

const struct emu_counter_def emu_counter_defs[EMU_C_COUNT] = {
	[EMU_C_XMIT_DATA] = { "counters", "port_xmit_data" },
	[EMU_C_RCV_DATA] = { "counters", "port_rcv_data" },
	[EMU_C_XMIT_PKTS] = { "counters", "port_xmit_packets" },
	[EMU_C_RCV_PKTS] = { "counters", "port_rcv_packets" },
	[EMU_C_SYMBOL_ERR] = { "counters", "symbol_error" },
	[EMU_C_LINK_DOWNED] = { "counters", "link_downed" },
	[EMU_C_RCV_ERR] = { "counters", "port_rcv_errors" },
	[EMU_C_XMIT_DISCARDS] = { "counters", "port_xmit_discards" },
	[EMU_C_OUT_OF_BUFFER] = { "hw_counters", "out_of_buffer" },
	[EMU_C_OUT_OF_SEQUENCE] = { "hw_counters", "out_of_sequence" },
	[EMU_C_LOCAL_ACK_TIMEOUT] = { "hw_counters", "local_ack_timeout_err" },
	[EMU_C_RNR_RETRY_ERR] = { "hw_counters", "rnr_nak_retry_err" },
	[EMU_C_REQ_REMOTE_ACCESS] = { "hw_counters",
	                              "req_remote_access_errors" },
	[EMU_C_RESP_REMOTE_ACCESS] = { "hw_counters",
	                               "resp_remote_access_errors" },
	[EMU_C_RESP_LOCAL_LENGTH] = { "hw_counters",
	                              "resp_local_length_error" },
};

int64_t emu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void emu_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "verbs emulation: %s\n", buf);
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi) {
		emu_log("%s=%s is not a number in [%ld, %ld]; using %ld", name,
		        s, lo, hi, def);
		return def;
	}
	return v;
}

int emu_ibv_mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 256;
}

/* RoCE and iWARP: the largest IB MTU that fits the interface's MTU after
 * the headers, as the kernel computes a RoCE port's active MTU. */
enum ibv_mtu emu_port_active_mtu(struct emu_dev *d)
{
	int room = d->port.netdev_mtu - 70;
	enum ibv_mtu m = IBV_MTU_4096;
	if (emu_host.link == EMU_LINK_IB)
		return IBV_MTU_4096;
	while (m > IBV_MTU_256 && emu_ibv_mtu_bytes(m) > room)
		m--;
	return m;
}

static int mkdirs(const char *path)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0777) && errno != EEXIST ? -1 : 0;
}

/* Write a small file atomically, via a hidden (dot) temporary file. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[640], tmp[660];
	int fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.%lx", dir, name, (int)getpid(),
	         (unsigned long)pthread_self());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0) {
		/* best effort: the rename below publishes what we have */
	}
	close(fd);
	if (rename(tmp, path))
		unlink(tmp);
}

static int lock_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0666);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

static void unlock_file(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

static void gid_hex(const union ibv_gid *g, char *out)
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

/* ---- interfaces ---- */

struct nic {
	char name[IF_NAMESIZE];
	unsigned idx;
	struct in_addr ip[4];
	int nip;
};

static int nic_cmp(const void *a, const void *b)
{
	const struct nic *x = a, *y = b;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int list_nics(struct nic *out, int max, bool loopback)
{
	struct ifaddrs *ifa, *p;
	int n = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (p = ifa; p; p = p->ifa_next) {
		struct in_addr a;
		int i;
		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET)
			continue;
		if (((p->ifa_flags & IFF_LOOPBACK) != 0) != loopback)
			continue;
		a = ((struct sockaddr_in *)p->ifa_addr)->sin_addr;
		for (i = 0; i < n && strcmp(out[i].name, p->ifa_name); i++)
			;
		if (i == n) {
			if (n == max)
				continue;
			memset(&out[n], 0, sizeof(out[n]));
			snprintf(out[n].name, IF_NAMESIZE, "%s", p->ifa_name);
			out[n].idx = if_nametoindex(p->ifa_name);
			n++;
		}
		if (out[i].nip < 4)
			out[i].ip[out[i].nip++] = a;
	}
	freeifaddrs(ifa);
	qsort(out, (size_t)n, sizeof(*out), nic_cmp);
	return n;
}

static void nic_details(struct emu_port *p)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IF_NAMESIZE, "%s", p->netdev);
	p->netdev_mtu = 1500;
	if (ioctl_fd >= 0 && ioctl(ioctl_fd, SIOCGIFMTU, &ifr) == 0)
		p->netdev_mtu = ifr.ifr_mtu;
	if (ioctl_fd >= 0 && ioctl(ioctl_fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
}

bool emu_port_up(struct emu_dev *d)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IF_NAMESIZE, "%s", d->port.netdev);
	if (access(d->port.admin_path, F_OK) == 0)
		return false;
	if (ioctl_fd < 0 || ioctl(ioctl_fd, SIOCGIFFLAGS, &ifr))
		return false;
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

int emu_port_set_admin(struct emu_dev *d, bool up)
{
	if (up)
		return unlink(d->port.admin_path) && errno != ENOENT ? -1 : 0;
	int fd = open(d->port.admin_path, O_WRONLY | O_CREAT, 0666);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* ---- GIDs ---- */

static void gid_v4(union ibv_gid *g, struct in_addr a)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	memcpy(&g->raw[12], &a, 4);
}

static void gid_ll_mac(union ibv_gid *g, const uint8_t mac[6])
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xfe;
	g->raw[1] = 0x80;
	g->raw[8] = mac[0] ^ 2;
	g->raw[9] = mac[1];
	g->raw[10] = mac[2];
	g->raw[11] = 0xff;
	g->raw[12] = 0xfe;
	g->raw[13] = mac[3];
	g->raw[14] = mac[4];
	g->raw[15] = mac[5];
}

static void fill_gids(struct emu_dev *d, const struct nic *nic)
{
	struct emu_port *p = &d->port;
	p->ngid = 0;
	if (emu_host.link == EMU_LINK_IB) {
		union ibv_gid *g = &p->gid[p->ngid];
		uint64_t be = htobe64(d->guid);
		memset(g, 0, sizeof(*g));
		g->raw[0] = 0xfe;
		g->raw[1] = 0x80;
		memcpy(&g->raw[8], &be, 8);
		p->gid_type[p->ngid++] = IBV_GID_TYPE_IB;
	} else if (emu_host.link == EMU_LINK_IWARP) {
		union ibv_gid *g = &p->gid[p->ngid];
		memset(g, 0, sizeof(*g));
		memcpy(g->raw, p->mac, 6);
		p->gid_type[p->ngid++] = IBV_GID_TYPE_IB;
	} else {
		/* As mlx5 fills a RoCE port: the link-local GID as v1 and v2,
		 * then every IPv4 address of the interface as v1 and v2. */
		for (int v = 0; v < 2; v++) {
			gid_ll_mac(&p->gid[p->ngid], p->mac);
			p->gid_type[p->ngid++] =
			        v ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
		}
		for (int i = 0; i < nic->nip && p->ngid + 2 <= EMU_MAX_GID; i++)
			for (int v = 0; v < 2; v++) {
				gid_v4(&p->gid[p->ngid], nic->ip[i]);
				p->gid_type[p->ngid++] =
				        v ? IBV_GID_TYPE_ROCE_V2
				          : IBV_GID_TYPE_ROCE_V1;
			}
	}
}

/* ---- the fabric registry (LIDs and link-local GIDs -> addresses) ---- */

struct reg_line {
	uint64_t host;
	int dev;
	unsigned lid;
	char ip[INET_ADDRSTRLEN];
	char gids[EMU_MAX_GID * 33];
};

static int reg_read(FILE *f, struct reg_line *l, int max)
{
	char line[1024];
	int n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		l[n].gids[0] = 0;
		if (sscanf(line, "%" SCNu64 " %d %u %15s %[0-9a-f ]",
		           &l[n].host, &l[n].dev, &l[n].lid, l[n].ip,
		           l[n].gids) >= 4)
			n++;
	}
	return n;
}

#define REG_MAX 4096

static int register_host(void)
{
	char path[400], lpath[420];
	struct reg_line *l = calloc(REG_MAX, sizeof(*l));
	int n = 0, fd;
	FILE *f;
	if (!l)
		return -1;
	snprintf(path, sizeof(path), "%s/fabric", emu_host.state_dir);
	snprintf(lpath, sizeof(lpath), "%s/fabric.lock", emu_host.state_dir);
	fd = lock_file(lpath);
	f = fopen(path, "r");
	if (f) {
		n = reg_read(f, l, REG_MAX);
		fclose(f);
	}
	for (int d = 0; d < emu_host.ndev; d++) {
		struct emu_dev *dev = &emu_host.dev[d];
		unsigned maxlid = 0;
		int i;
		for (i = 0; i < n; i++) {
			if (l[i].lid > maxlid)
				maxlid = l[i].lid;
		}
		for (i = 0; i < n; i++)
			if (l[i].host == emu_host.host_id && l[i].dev == d)
				break;
		if (i == n) {
			if (n == REG_MAX)
				continue;
			l[n].host = emu_host.host_id;
			l[n].dev = d;
			l[n].lid = maxlid + 1;
			n++;
		}
		dev->port.lid = (uint16_t)l[i].lid;
		inet_ntop(AF_INET, &dev->port.ip, l[i].ip, sizeof(l[i].ip));
		l[i].gids[0] = 0;
		for (int g = 0; g < dev->port.ngid; g++) {
			char hex[34];
			gid_hex(&dev->port.gid[g], hex);
			strcat(hex, " ");
			strcat(l[i].gids, hex);
		}
	}
	snprintf(lpath, sizeof(lpath), "%s/fabric.%d", emu_host.state_dir,
	         (int)getpid());
	f = fopen(lpath, "w");
	if (f) {
		for (int i = 0; i < n; i++)
			fprintf(f, "%" PRIu64 " %d %u %s %s\n", l[i].host,
			        l[i].dev, l[i].lid, l[i].ip, l[i].gids);
		fclose(f);
		rename(lpath, path);
	}
	unlock_file(fd);
	free(l);
	return 0;
}

static int reg_find(uint16_t lid, const union ibv_gid *gid, struct in_addr *ip)
{
	char path[400], hex[34];
	struct reg_line *l = calloc(REG_MAX, sizeof(*l));
	int n = 0, rc = -1;
	FILE *f;
	if (!l)
		return -1;
	snprintf(path, sizeof(path), "%s/fabric", emu_host.state_dir);
	f = fopen(path, "r");
	if (f) {
		n = reg_read(f, l, REG_MAX);
		fclose(f);
	}
	if (gid)
		gid_hex(gid, hex);
	for (int i = 0; i < n && rc; i++) {
		bool hit =
		        gid ? strstr(l[i].gids, hex) != NULL : l[i].lid == lid;
		if (hit && inet_pton(AF_INET, l[i].ip, ip) == 1)
			rc = 0;
	}
	free(l);
	return rc;
}

int emu_resolve_lid(uint16_t lid, struct in_addr *ip)
{
	return lid ? reg_find(lid, NULL, ip) : -1;
}

int emu_resolve_gid(const union ibv_gid *gid, struct in_addr *ip)
{
	static const uint8_t v4[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	if (!memcmp(gid->raw, v4, 12)) {
		memcpy(ip, &gid->raw[12], 4);
		return 0;
	}
	return reg_find(0, gid, ip);
}

struct emu_dev *emu_dev_by_name(const char *name)
{
	for (int i = 0; i < emu_host.ndev; i++)
		if (!strcmp(emu_host.dev[i].ibdev.name, name))
			return &emu_host.dev[i];
	return NULL;
}

/* ---- the fake sysfs tree ---- */

static const char *rate_str(void)
{
	return "100 Gb/sec (4X EDR)";
}

static void port_dir(struct emu_dev *d, char *out, size_t n)
{
	snprintf(out, n, "%s/ports/1", d->ibdev.ibdev_path);
}

static void write_state_files(struct emu_dev *d, bool up)
{
	char dir[600];
	port_dir(d, dir, sizeof(dir));
	put_file(dir, "state", up ? "4: ACTIVE\n" : "1: DOWN\n");
	put_file(dir, "phys_state", up ? "5: LinkUp\n" : "3: Disabled\n");
}

static void guid_str(uint64_t g, char *out)
{
	sprintf(out, "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48) & 0xffff,
	        (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
	        (unsigned)g & 0xffff);
}

static void build_sysfs(struct emu_dev *d)
{
	static const char *lls[] = { "InfiniBand", "Ethernet", "Ethernet" };
	static const char *tn[] = { "IB/RoCE v1", "IB/RoCE v1", "RoCE v2" };
	char dir[600], sub[700], buf[128];
	struct emu_port *p = &d->port;
	mkdirs(d->ibdev.ibdev_path);
	mkdirs(d->ibdev.dev_path);
	/* the interface the port is bound to, where sysfs says it */
	snprintf(sub, sizeof(sub), "%s/device/net/%s", d->ibdev.ibdev_path,
	         p->netdev);
	mkdirs(sub);
	put_file(d->ibdev.dev_path, "ibdev", d->ibdev.name);
	put_file(d->ibdev.ibdev_path, "node_type",
	         emu_iwarp() ? "4: RNIC\n" : "1: CA\n");
	guid_str(d->guid, buf);
	put_file(d->ibdev.ibdev_path, "node_guid", buf);
	put_file(d->ibdev.ibdev_path, "sys_image_guid", buf);
	put_file(d->ibdev.ibdev_path, "fw_ver", EMU_FW_VER "\n");
	put_file(d->ibdev.ibdev_path, "hca_type", "cbemu\n");
	snprintf(buf, sizeof(buf), "CBEMU-%s\n",
	         (const char *[]){ "IB", "ROCE", "IWARP" }[emu_host.link]);
	put_file(d->ibdev.ibdev_path, "board_id", buf);
	port_dir(d, dir, sizeof(dir));
	for (const char *s = "counters\0hw_counters\0gids\0gid_attrs/types\0"
	                     "gid_attrs/ndevs\0";
	     *s; s += strlen(s) + 1) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, s);
		mkdirs(sub);
	}
	put_file(dir, "link_layer", lls[emu_host.link]);
	put_file(dir, "rate", rate_str());
	snprintf(buf, sizeof(buf), "0x%x\n", p->lid);
	put_file(dir, "lid", emu_host.link == EMU_LINK_IB ? buf : "0x0\n");
	put_file(dir, "sm_lid",
	         emu_host.link == EMU_LINK_IB ? "0x1\n" : "0x0\n");
	put_file(dir, "lid_mask_count", "0\n");
	put_file(dir, "cap_mask", "0x00010000\n");
	for (int g = 0; g < EMU_MAX_GID; g++) {
		char name[16], text[64];
		union ibv_gid z = { 0 };
		const union ibv_gid *gid = g < p->ngid ? &p->gid[g] : &z;
		snprintf(name, sizeof(name), "%d", g);
		for (int i = 0; i < 8; i++)
			sprintf(text + 5 * i, "%02x%02x%c", gid->raw[2 * i],
			        gid->raw[2 * i + 1], i == 7 ? '\n' : ':');
		snprintf(sub, sizeof(sub), "%s/gids", dir);
		put_file(sub, name, text);
		if (g >= p->ngid || emu_host.link == EMU_LINK_IB)
			continue;
		snprintf(sub, sizeof(sub), "%s/gid_attrs/types", dir);
		snprintf(text, sizeof(text), "%s\n", tn[p->gid_type[g]]);
		put_file(sub, name, text);
		snprintf(sub, sizeof(sub), "%s/gid_attrs/ndevs", dir);
		snprintf(text, sizeof(text), "%s\n", p->netdev);
		put_file(sub, name, text);
	}
}

/* Counters are atomics in the host's shared memory; the files are their
 * snapshot, refreshed by the progress thread at most every 20 ms while
 * they change, and by ibv_read_sysfs_file() before it reads one. */
void emu_counter_add(int dev, enum emu_counter c, uint64_t v)
{
	if (!emu_host.sh || !v)
		return;
	atomic_fetch_add_explicit(&emu_host.sh->port[dev].counter[c], v,
	                          memory_order_relaxed);
	atomic_store_explicit(&emu_eng.counters_dirty, true,
	                      memory_order_relaxed);
}

/* Periodic flushes write only what changed since this process last wrote
 * it (a file costs four system calls and a rename); a forced one (before
 * ibv_read_sysfs_file reads) writes every counter, since another process
 * may have written an older value after ours. */
void emu_counters_flush(bool force)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t written[EMU_MAX_DEV][EMU_C_COUNT];
	static int written_up[EMU_MAX_DEV];
	static bool first = true;
	if (!emu_host.ready || !emu_host.sh)
		return;
	if (!force && !atomic_exchange(&emu_eng.counters_dirty, false))
		return;
	pthread_mutex_lock(&lock);
	for (int d = 0; d < emu_host.ndev; d++) {
		char dir[600], sub[700], buf[32];
		int up = emu_port_up(&emu_host.dev[d]);
		port_dir(&emu_host.dev[d], dir, sizeof(dir));
		for (int c = 0; c < EMU_C_COUNT; c++) {
			uint64_t v =
			        atomic_load(&emu_host.sh->port[d].counter[c]);
			if (!force && !first && v == written[d][c])
				continue;
			written[d][c] = v;
			snprintf(sub, sizeof(sub), "%s/%s", dir,
			         emu_counter_defs[c].dir);
			snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
			put_file(sub, emu_counter_defs[c].name, buf);
		}
		if (force || first || up != written_up[d])
			write_state_files(&emu_host.dev[d], up);
		written_up[d] = up;
	}
	first = false;
	pthread_mutex_unlock(&lock);
}

static int map_shared(void)
{
	char path[400];
	int fd;
	snprintf(path, sizeof(path), "%s/shared", emu_host.host_dir);
	fd = open(path, O_RDWR | O_CREAT, 0666);
	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX);
	if (ftruncate(fd, sizeof(struct emu_shared)) == 0) {
		emu_host.sh = mmap(NULL, sizeof(struct emu_shared),
		                   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (emu_host.sh == MAP_FAILED)
			emu_host.sh = NULL;
	}
	if (emu_host.sh && emu_host.sh->magic != 0xcbe0cbe0cbe00001ull) {
		memset(emu_host.sh, 0, sizeof(*emu_host.sh));
		emu_host.sh->magic = 0xcbe0cbe0cbe00001ull;
	}
	flock(fd, LOCK_UN);
	close(fd);
	return emu_host.sh ? 0 : -1;
}

static int parse_link(void)
{
	const char *s = getenv("COLLBENCH_EMU_LINK");
	if (!s || !*s || !strcmp(s, "ib"))
		emu_host.link = EMU_LINK_IB;
	else if (!strcmp(s, "roce"))
		emu_host.link = EMU_LINK_ROCE;
	else if (!strcmp(s, "iwarp"))
		emu_host.link = EMU_LINK_IWARP;
	else {
		emu_log("COLLBENCH_EMU_LINK=%s: want ib, roce or iwarp; no "
		        "devices",
		        s);
		return -1;
	}
	return 0;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int host_init_locked(void)
{
	struct nic nics[16];
	struct stat st;
	const char *s;
	char names[8][IF_NAMESIZE];
	int nnic, nnames = 0, ndev;

	emu_debug = getenv("COLLBENCH_EMU_DEBUG") != NULL;
	if (parse_link())
		return -1;
	if (stat("/proc/self/ns/net", &st)) {
		emu_log("cannot stat /proc/self/ns/net: %s", strerror(errno));
		return -1;
	}
	emu_host.host_id = (uint64_t)st.st_ino;
	s = getenv("COLLBENCH_EMU_STATE");
	if (s && strlen(s) >= sizeof(emu_host.state_dir)) {
		emu_log("COLLBENCH_EMU_STATE is longer than %zu bytes; no "
		        "devices",
		        sizeof(emu_host.state_dir) - 1);
		return -1;
	}
	if (s && *s)
		snprintf(emu_host.state_dir, sizeof(emu_host.state_dir), "%s",
		         s);
	else
		snprintf(emu_host.state_dir, sizeof(emu_host.state_dir),
		         "/tmp/collbench-emu-%u", (unsigned)getuid());
	emu_host.fabric_id = fnv1a(emu_host.state_dir);
	snprintf(emu_host.host_dir, sizeof(emu_host.host_dir),
	         "%s/hosts/%" PRIu64, emu_host.state_dir, emu_host.host_id);
	snprintf(emu_host.sysfs_root, sizeof(emu_host.sysfs_root), "%s/sys",
	         emu_host.host_dir);
	if (mkdirs(emu_host.host_dir)) {
		emu_log("cannot create %s: %s", emu_host.host_dir,
		        strerror(errno));
		return -1;
	}
	{
		char admin[400];
		snprintf(admin, sizeof(admin), "%s/admin", emu_host.host_dir);
		mkdirs(admin);
	}
	ndev = (int)env_long("COLLBENCH_EMU_DEVICES", 1, 0, EMU_MAX_DEV);
	emu_host.part_id = (uint32_t)env_long("COLLBENCH_EMU_PART_ID",
	                                      EMU_PART_ID_DEFAULT, 0, 65535);
	emu_host.port_base = (uint16_t)env_long("COLLBENCH_EMU_PORT_BASE",
	                                        EMU_PORT_BASE_DEFAULT, 1024,
	                                        65535 - EMU_MAX_QP);
	emu_host.retry_floor_ns =
	        env_long("COLLBENCH_EMU_RETRY_FLOOR_MS", 1000, 1, 600000) *
	        1000000;
	emu_host.retry_cap_ns =
	        env_long("COLLBENCH_EMU_RETRY_CAP_MS", 4000, 1, 600000) *
	        1000000;
	emu_host.max_cqe = (int)env_long("COLLBENCH_EMU_MAX_CQE", EMU_MAX_CQE,
	                                 1, EMU_MAX_CQE);
	if (emu_host.retry_cap_ns < emu_host.retry_floor_ns)
		emu_host.retry_cap_ns = emu_host.retry_floor_ns;
	if (ioctl_fd < 0)
		ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	nnic = list_nics(nics, 16, false);
	if (nnic == 0)
		nnic = list_nics(nics, 16, true);
	s = getenv("COLLBENCH_EMU_NETDEV");
	if (s && *s) {
		char tmp[256], *save = NULL;
		snprintf(tmp, sizeof(tmp), "%s", s);
		for (char *t = strtok_r(tmp, ",", &save); t && nnames < 8;
		     t = strtok_r(NULL, ",", &save))
			snprintf(names[nnames++], IF_NAMESIZE, "%s", t);
	}
	if (nnic == 0 && ndev > 0) {
		emu_log("no interface with an IPv4 address in this network "
		        "namespace; no devices");
		ndev = 0;
	}
	for (int d = 0; d < ndev; d++) {
		struct emu_dev *dev = &emu_host.dev[emu_host.ndev];
		struct nic *nic = &nics[d % nnic];
		if (nnames) {
			const char *want = names[d % nnames];
			nic = NULL;
			for (int i = 0; i < nnic; i++)
				if (!strcmp(nics[i].name, want))
					nic = &nics[i];
			if (!nic) {
				emu_log("COLLBENCH_EMU_NETDEV: no interface %s "
				        "with an IPv4 address here",
				        want);
				continue;
			}
		}
		memset(dev, 0, sizeof(*dev));
		dev->index = emu_host.ndev;
		dev->guid = (0xcbull << 56) |
		            ((emu_host.host_id & 0xffffffffffull) << 8) |
		            (uint64_t)dev->index;
		snprintf(dev->port.netdev, IF_NAMESIZE, "%s", nic->name);
		dev->port.ip = nic->ip[0];
		nic_details(&dev->port);
		fill_gids(dev, nic);
		dev->ibdev.node_type =
		        emu_iwarp() ? IBV_NODE_RNIC : IBV_NODE_CA;
		dev->ibdev.transport_type =
		        emu_iwarp() ? IBV_TRANSPORT_IWARP : IBV_TRANSPORT_IB;
		snprintf(dev->ibdev.name, sizeof(dev->ibdev.name), "cbemu%d",
		         dev->index);
		snprintf(dev->ibdev.dev_name, sizeof(dev->ibdev.dev_name),
		         "uverbs%d", dev->index);
		snprintf(dev->ibdev.ibdev_path, sizeof(dev->ibdev.ibdev_path),
		         "%s/class/infiniband/cbemu%d", emu_host.sysfs_root,
		         dev->index);
		snprintf(dev->ibdev.dev_path, sizeof(dev->ibdev.dev_path),
		         "%s/class/infiniband_verbs/uverbs%d",
		         emu_host.sysfs_root, dev->index);
		snprintf(dev->port.admin_path, sizeof(dev->port.admin_path),
		         "%s/admin/cbemu%d.1", emu_host.host_dir, dev->index);
		emu_host.list[emu_host.ndev] = &dev->ibdev;
		emu_host.ndev++;
	}
	emu_host.list[emu_host.ndev] = NULL;
	if (map_shared()) {
		emu_log("cannot map %s/shared: %s", emu_host.host_dir,
		        strerror(errno));
		return -1;
	}
	if (register_host())
		return -1;
	{
		char lpath[400];
		int fd;
		snprintf(lpath, sizeof(lpath), "%s/sys.lock",
		         emu_host.host_dir);
		fd = lock_file(lpath);
		for (int d = 0; d < emu_host.ndev; d++) {
			struct emu_dev *dev = &emu_host.dev[d];
			build_sysfs(dev);
			dev->up = emu_port_up(dev);
			dev->reported = dev->up;
			if (dev->up)
				atomic_store(&emu_host.sh->port[d].seen_up, 1);
			atomic_store(&emu_host.sh->port[d].lid, dev->port.lid);
		}
		unlock_file(fd);
	}
	emu_host.ready = true;
	emu_counters_flush(true);
	return 0;
}

int emu_host_init(void)
{
	int rc = 0;
	pthread_mutex_lock(&host_lock);
	if (!emu_host.ready)
		rc = host_init_locked();
	pthread_mutex_unlock(&host_lock);
	return rc;
}
