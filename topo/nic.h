/* SPDX-License-Identifier: MIT */
/*
 * topo/nic.h - what acceptance reads about a host's NICs: identity (link
 * state and speed, MTU, driver and its version, firmware) and error
 * counters, through one small reader per kind of port, so a transport's
 * ports are read the same way whatever the transport:
 *
 *   netdev      /sys/class/net/IF/...           (tcp)
 *   infiniband  /sys/class/infiniband/DEV/...   (verbs: IB, RoCE, iWARP)
 *
 * `ethtool -i` has no sysfs file for the driver version and firmware of an
 * Ethernet NIC, so the netdev reader asks the kernel the way ethtool does
 * (the ETHTOOL_GDRVINFO ioctl) for what sysfs lacks; with a sysroot other
 * than "/sys" (the tests' made-up trees) it reads files only.
 */
#ifndef CB_TOPO_NIC_H
#define CB_TOPO_NIC_H

#include <stddef.h>
#include <stdint.h>

/* The first line of file @path (a sysfs attribute) into @buf, without its
 * newline; -1 (and "") when it cannot be read. */
int cb_sysfs_line(const char *path, char *buf, size_t bytes);

#define CB_NIC_MAX      16 /* NICs per host */
#define CB_NIC_COUNTERS 8  /* error counters per NIC */

struct cb_nic_info {
	char name[32];      /* "eth0"; "mlx5_0/1" (device/port) */
	char kind[16];      /* "netdev", "infiniband" */
	char state[16];     /* "up", "down", "active", ...; "unknown" */
	int32_t speed_mbps; /* -1 unknown */
	int32_t mtu;        /* -1 unknown */
	char driver[32];    /* "" unknown */
	char driver_version[32];
	char firmware[48];
	char addr[48]; /* first IPv4 address (netdev), "" none */
	uint64_t counters[CB_NIC_COUNTERS]; /* as of the last read */
	int32_t ncounters;                  /* 0: none read */
};

struct cb_nic_reader {
	const char *kind;
	/* The error counters it reads, in order, NULL-terminated; and which
	 * of them are errors to fail a run on (the others - drops, discards
	 * - also count what a busy or reconfigured network does, and are
	 * only reported). */
	const char *const *counter_names;
	const unsigned char *counter_is_error;
	/* Up to @max NICs under @sysroot ("/sys"), sorted by name; returns
	 * how many. */
	int (*list)(const char *sysroot, struct cb_nic_info *out, int max);
	/* Re-read @nic's counters; 0 ok, -1 none readable. */
	int (*counters)(const char *sysroot, struct cb_nic_info *nic);
};

extern const struct cb_nic_reader cb_nic_netdev;
extern const struct cb_nic_reader cb_nic_infiniband;

/* The reader for the ports a transport uses: tcp -> netdev, verbs ->
 * infiniband; NULL for one that uses none (shm). */
const struct cb_nic_reader *cb_nic_reader_for(const char *transport);

/* The RDMA device under @sysroot whose port is bound to netdev @netdev
 * (device/net/NETDEV), "" when none. */
void cb_nic_rdma_of_netdev(const char *sysroot, const char *netdev, char *dev,
                           size_t bytes);

/* The netdev that holds IPv4 address @ip ("" when none does). */
void cb_nic_of_addr(const char *ip, char *name, size_t bytes);

/*
 * Compare hosts' NICs: for every NIC name some host has, its presence,
 * state, speed, MTU, driver, driver version and firmware against the value
 * most hosts share (a tie: the earliest host's).  @why[h] gets one line per
 * host that differs ("eth0 MTU 1400 (others: 1500); ib0 missing"), "" for a
 * host alike.  Returns the number of hosts that differ.
 */
int cb_nic_compare(const struct cb_nic_info *const *nics, const int *counts,
                   int nhosts, char (*why)[256]);

#endif
