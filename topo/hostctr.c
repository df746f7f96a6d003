/* SPDX-License-Identifier: MIT */
/*
 * topo/hostctr.c - a host's retransmission and link counters (see
 * topo/hostctr.h).  Each read is a handful of small files, cheap enough
 * for every pairwise round.
 */
#include "topo/hostctr.h"
#include "topo/nic.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[CB_HC_N] = {
	"tcp_retrans_segs",   "tcp_out_segs", "carrier_changes",
	"carrier_down_count", "link_downed",  "link_error_recovery",
	"port_rcv_errors",    "symbol_error", "port_xmit_discards",
};

const char *cb_hostctr_name(int i)
{
	return i >= 0 && i < CB_HC_N ? names[i] : "?";
}

int cb_hostctr_is_link(int i)
{
	return i == CB_HC_CARRIER || i == CB_HC_CARRIER_DOWN ||
	       i == CB_HC_LINK_DOWNED || i == CB_HC_LINK_RECOVERY;
}

/* The @k-th space-separated word of @line (after "Tcp:"), into @w. */
static int word(const char *line, int k, char *w, size_t bytes)
{
	const char *p = line;

	for (int i = 0;; i++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -1;
		size_t n = strcspn(p, " \n");
		if (i == k) {
			snprintf(w, bytes, "%.*s", (int)n, p);
			return 0;
		}
		p += n;
	}
}

int cb_snmp_field(const char *text, const char *proto, const char *field,
                  uint64_t *v)
{
	char tag[32], w[64];
	size_t tl;
	const char *p = text;

	snprintf(tag, sizeof(tag), "%s:", proto);
	tl = strlen(tag);
	while (p && *p) {
		const char *next = strchr(p, '\n');
		const char *vals = next ? next + 1 : NULL;
		if (!strncmp(p, tag, tl) && vals && !strncmp(vals, tag, tl)) {
			/* p: the names, vals: the values */
			for (int k = 0; !word(p + tl, k, w, sizeof(w)); k++) {
				if (strcmp(w, field))
					continue;
				char *end;
				if (word(vals + tl, k, w, sizeof(w)))
					return -1;
				*v = strtoull(w, &end, 10);
				return *end || !w[0] ? -1 : 0;
			}
			return -1;
		}
		p = next ? next + 1 : NULL;
	}
	return -1;
}

static void put(struct cb_hostctr *c, int i, const char *path)
{
	char buf[64], *end;
	uint64_t v;

	if (cb_sysfs_line(path, buf, sizeof(buf)) || !buf[0])
		return;
	v = strtoull(buf, &end, 0);
	if (*end)
		return;
	c->v[i] += v;
	c->have |= 1u << i;
}

static void snmp(const char *procroot, struct cb_hostctr *c)
{
	char path[512], text[4096];
	size_t n;
	uint64_t v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/net/snmp", procroot);
	if (!(f = fopen(path, "r")))
		return;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!cb_snmp_field(text, "Tcp", "RetransSegs", &v)) {
		c->v[CB_HC_RETRANS] = v;
		c->have |= 1u << CB_HC_RETRANS;
	}
	if (!cb_snmp_field(text, "Tcp", "OutSegs", &v)) {
		c->v[CB_HC_OUTSEGS] = v;
		c->have |= 1u << CB_HC_OUTSEGS;
	}
	/* Retransmissions the receiver reported it already had (D-SACK):
	 * spurious, nothing was lost.  On a busy machine's veth most are
	 * (reordering, late ACKs: 80-100% measured here); a lossy cable's
	 * are not. */
	char big[16384];
	snprintf(path, sizeof(path), "%s/net/netstat", procroot);
	if (!(c->have & 1u << CB_HC_RETRANS) || !(f = fopen(path, "r")))
		return;
	n = fread(big, 1, sizeof(big) - 1, f);
	fclose(f);
	big[n] = '\0';
	if (!cb_snmp_field(big, "TcpExt", "TCPDSACKRecvSegs", &v))
		c->v[CB_HC_RETRANS] -=
		        v < c->v[CB_HC_RETRANS] ? v : c->v[CB_HC_RETRANS];
}

static void ib_port(const char *sysroot, const char *dev, const char *port,
                    struct cb_hostctr *c)
{
	static const int which[] = { CB_HC_LINK_DOWNED, CB_HC_LINK_RECOVERY,
		                     CB_HC_RCV_ERRORS, CB_HC_SYMBOL,
		                     CB_HC_XMIT_DISCARDS };
	char path[600];

	for (size_t k = 0; k < sizeof(which) / sizeof(which[0]); k++) {
		snprintf(path, sizeof(path),
		         "%s/class/infiniband/%s/ports/%s/counters/%s", sysroot,
		         dev, port, names[which[k]]);
		put(c, which[k], path);
	}
}

void cb_hostctr_read(const char *procroot, const char *sysroot,
                     const char *netdev, const char *ibdev,
                     struct cb_hostctr *out)
{
	char path[512], dev[64];

	memset(out, 0, sizeof(*out));
	snmp(procroot && *procroot ? procroot : "/proc", out);
	if (!sysroot || !*sysroot)
		sysroot = "/sys";
	if (netdev && *netdev && !strchr(netdev, '/')) {
		snprintf(path, sizeof(path), "%s/class/net/%s/carrier_changes",
		         sysroot, netdev);
		put(out, CB_HC_CARRIER, path);
		snprintf(path, sizeof(path),
		         "%s/class/net/%s/carrier_down_count", sysroot, netdev);
		put(out, CB_HC_CARRIER_DOWN, path);
	}
	if (!ibdev || !*ibdev)
		return;
	const char *slash = strchr(ibdev, '/');
	if (slash) {
		snprintf(dev, sizeof(dev), "%.*s", (int)(slash - ibdev), ibdev);
		ib_port(sysroot, dev, slash + 1, out);
		return;
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports", sysroot,
	         ibdev);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			ib_port(sysroot, ibdev, e->d_name, out);
	if (d)
		closedir(d);
}

void cb_hostctr_delta(const struct cb_hostctr *from,
                      const struct cb_hostctr *to, struct cb_hostctr *d)
{
	memset(d, 0, sizeof(*d));
	d->have = from->have & to->have;
	for (int i = 0; i < CB_HC_N; i++)
		if (d->have & 1u << i)
			d->v[i] = to->v[i] >= from->v[i] ? to->v[i] - from->v[i]
			          /* less D-SACKed ones: those can come later */
			          : i == CB_HC_RETRANS ? 0
			                               : to->v[i];
}

void cb_hostctr_add(struct cb_hostctr *sum, const struct cb_hostctr *d)
{
	for (int i = 0; i < CB_HC_N; i++)
		if (d->have & 1u << i) {
			sum->v[i] += d->v[i];
			sum->have |= 1u << i;
		}
}
