/* SPDX-License-Identifier: MIT */
/*
 * topo/hostctr.h - the counters of one host that tell an intermittent or
 * lossy link, read cheaply (a few small files) before and after every
 * acceptance stage and pairwise round:
 *
 *   /proc/net/snmp  Tcp: RetransSegs, OutSegs   (per network namespace:
 *                   the reading process's own), RetransSegs less
 *                   /proc/net/netstat's TcpExt: TCPDSACKRecvSegs (those
 *                   the receiver reported it already had: spurious)
 *   /sys/class/net/IF/carrier_changes, carrier_down_count
 *   /sys/class/infiniband/DEV/ports/P/counters/link_downed,
 *                   link_error_recovery, port_rcv_errors, symbol_error,
 *                   port_xmit_discards          (every port of DEV, summed)
 *
 * A file that is absent or unreadable is simply not reported: its bit in
 * `have` stays 0.
 */
#ifndef CB_TOPO_HOSTCTR_H
#define CB_TOPO_HOSTCTR_H

#include <stddef.h>
#include <stdint.h>

enum cb_hc {
	CB_HC_RETRANS,      /* TCP segments retransmitted, less D-SACKed */
	CB_HC_OUTSEGS,      /* TCP segments sent */
	CB_HC_CARRIER,      /* carrier_changes: up and down both count */
	CB_HC_CARRIER_DOWN, /* carrier_down_count */
	CB_HC_LINK_DOWNED,
	CB_HC_LINK_RECOVERY, /* link_error_recovery */
	CB_HC_RCV_ERRORS,    /* port_rcv_errors */
	CB_HC_SYMBOL,        /* symbol_error */
	CB_HC_XMIT_DISCARDS, /* port_xmit_discards */
	CB_HC_N
};

struct cb_hostctr {
	uint64_t v[CB_HC_N];
	uint32_t have; /* bit i: v[i] was read */
};

/* "tcp_retrans_segs", "tcp_out_segs", "carrier_changes", ... (the names
 * in the JSON) */
const char *cb_hostctr_name(int i);
/* 1 for the counters that move when a link goes down (carrier changes,
 * link_downed, link_error_recovery). */
int cb_hostctr_is_link(int i);

/* Read this process's counters: /proc/net/snmp under @procroot ("/proc"),
 * netdev @netdev's under @sysroot ("/sys"; NULL or "" @netdev: none), and
 * RDMA device @ibdev's ports (NULL or "": none; "mlx5_0/1": that port
 * only). */
void cb_hostctr_read(const char *procroot, const char *sysroot,
                     const char *netdev, const char *ibdev,
                     struct cb_hostctr *out);

/* Field @field of protocol @proto ("Tcp") in the text of /proc/net/snmp
 * (a line of names, then a line of values); 0 found, -1 not. */
int cb_snmp_field(const char *text, const char *proto, const char *field,
                  uint64_t *v);

/* @d = @to - @from for the counters both have (a counter that went
 * backwards - a device reset - counts from 0: @to). */
void cb_hostctr_delta(const struct cb_hostctr *from,
                      const struct cb_hostctr *to, struct cb_hostctr *d);
/* @sum += @d, for the counters @d has. */
void cb_hostctr_add(struct cb_hostctr *sum, const struct cb_hostctr *d);

#endif
