/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/faults.c - fault injection for failure tests.
 *
 * COLLBENCH_EMU_FAULTS="SPEC[;SPEC...]", SPEC = KIND[:KEY=VALUE[,...]],
 * read by each process when it opens its first device (set it only for
 * the process that should misbehave).  Messages are counted per process,
 * from 1, over the data messages it sends (SEND, WRITE, READ requests).
 *
 *   port_down:dev=cbemu0,at_ms=T[,for_ms=D]   the port goes down T ms after
 *   port_down:dev=cbemu0,at_msg=N[,for_ms=D]  the first open / before the
 *       Nth message (which is not sent), for every process of the host; up
 *       again after D ms if given.  Same as `tools/emulated-rdma.sh
 *       --port-down DEV` or `ip link set IF down` on the port's interface.
 *   rkey:at_msg=N          the Nth message, or the first RDMA operation
 *       from it on, carries a corrupted rkey: IBV_WC_REM_ACCESS_ERR.
 *   imm:at_msg=N           the Nth message, or the first write with
 *       immediate from it on, carries immediate data with bits 28-29
 *       flipped (a peer that says nonsense: the receiver must refuse it).
 *   qp_error:at_msg=N      the QP sending the Nth message goes to ERR with
 *       IBV_EVENT_QP_FATAL; its work requests are flushed.
 *   qp_error:at_ms=T[,qpn=Q]  the same at T ms, for QP Q or every QP in RTS.
 *   slow:mbps=R            this process sends at most R Mbit/s.
 *   counters:dev=cbemu0,symbol_error=N,port_rcv_errors=N,link_downed=N,
 *            port_xmit_discards=N   error counters raised at start.
 *   cq_overrun:cqe=N       every CQ this process creates holds N entries
 *       (fewer than it asked and reports): a completion beyond them is
 *       dropped with IBV_EVENT_CQ_ERR, as a CQ overrun on hardware.
 *
 * A malformed specification stops the program with one line (status 2):
 * a failure test must never run without the fault it asked for.
 */
#include "emu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fkind {
	F_PORT_DOWN,
	F_RKEY,
	F_QP_ERROR,
	F_SLOW,
	F_COUNTERS,
	F_IMM,
	F_CQ_OVERRUN
};

struct fault {
	enum fkind kind;
	int dev;
	long at_ms, at_msg, for_ms, qpn, mbps, cqe;
	long cnt[EMU_C_COUNT];
	bool fired, restored;
	int64_t fired_ns;
};

#define MAX_FAULTS 16
static struct fault faults[MAX_FAULTS];
static int nfaults;
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t rate_bps, rate_last_ns;
static double rate_tokens;

static void bad(const char *spec, const char *why)
{
	fprintf(stderr,
	        "verbs emulation: COLLBENCH_EMU_FAULTS: '%s': %s "
	        "(tests/verbs-emu/README.md)\n",
	        spec, why);
	exit(2);
}

static long num(const char *spec, const char *v)
{
	char *end;
	long x = strtol(v, &end, 0);
	if (!*v || *end || x < 0)
		bad(spec, "want a non-negative number");
	return x;
}

static void parse_one(char *spec)
{
	static const char *kinds[] = { "port_down", "rkey", "qp_error",  "slow",
		                       "counters",  "imm",  "cq_overrun" };
	char copy[256], *args, *save = NULL;
	struct fault *f;
	int k;
	snprintf(copy, sizeof(copy), "%s", spec);
	if (nfaults == MAX_FAULTS)
		bad(copy, "too many faults");
	f = &faults[nfaults];
	memset(f, 0, sizeof(*f));
	f->at_ms = f->at_msg = f->for_ms = f->qpn = -1;
	args = strchr(spec, ':');
	if (args)
		*args++ = 0;
	for (k = 0; k < 7 && strcmp(spec, kinds[k]); k++)
		;
	if (k == 7)
		bad(copy, "unknown kind (port_down, rkey, qp_error, slow, "
		          "counters, imm, cq_overrun)");
	f->kind = (enum fkind)k;
	for (char *kv = args ? strtok_r(args, ",", &save) : NULL; kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		int c;
		if (!v)
			bad(copy, "want KEY=VALUE");
		*v++ = 0;
		if (!strcmp(kv, "dev")) {
			struct emu_dev *d = emu_dev_by_name(v);
			if (!d)
				bad(copy, "no such device on this host");
			f->dev = d->index;
		} else if (!strcmp(kv, "at_ms")) {
			f->at_ms = num(copy, v);
		} else if (!strcmp(kv, "at_msg")) {
			f->at_msg = num(copy, v);
		} else if (!strcmp(kv, "for_ms")) {
			f->for_ms = num(copy, v);
		} else if (!strcmp(kv, "qpn")) {
			f->qpn = num(copy, v);
		} else if (!strcmp(kv, "mbps")) {
			f->mbps = num(copy, v);
		} else if (!strcmp(kv, "cqe")) {
			f->cqe = num(copy, v);
		} else {
			for (c = 0; c < EMU_C_COUNT; c++)
				if (!strcmp(kv, emu_counter_defs[c].name))
					break;
			if (c == EMU_C_COUNT || f->kind != F_COUNTERS)
				bad(copy, "unknown key");
			f->cnt[c] = num(copy, v);
		}
	}
	if ((f->kind == F_PORT_DOWN || f->kind == F_QP_ERROR) &&
	    (f->at_ms < 0) == (f->at_msg < 0))
		bad(copy, "give exactly one of at_ms and at_msg");
	if (f->kind == F_QP_ERROR && f->qpn >= 0 && f->at_ms < 0)
		bad(copy, "qpn goes with at_ms");
	if ((f->kind == F_RKEY || f->kind == F_IMM) && f->at_msg < 0)
		f->at_msg = 1;
	if (f->kind == F_SLOW && f->mbps <= 0)
		bad(copy, "want mbps=R, R > 0");
	if (f->kind == F_CQ_OVERRUN && f->cqe <= 0)
		bad(copy, "want cqe=N, N > 0");
	nfaults++;
}

void emu_faults_init(void)
{
	const char *s = getenv("COLLBENCH_EMU_FAULTS");
	char buf[1024], *save = NULL;
	nfaults = 0;
	rate_bps = 0;
	if (!s || !*s)
		return;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ";", &save); t;
	     t = strtok_r(NULL, ";", &save))
		if (*t)
			parse_one(t);
	for (int i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		if (f->kind == F_SLOW) {
			rate_bps = f->mbps * 1000000 / 8;
			rate_last_ns = emu_now_ns();
			rate_tokens = 0;
			f->fired = true;
		} else if (f->kind == F_CQ_OVERRUN) {
			f->fired = true;
		} else if (f->kind == F_COUNTERS) {
			for (int c = 0; c < EMU_C_COUNT; c++)
				if (f->cnt[c] > 0)
					emu_counter_add(f->dev, c,
					                (uint64_t)f->cnt[c]);
			f->fired = true;
		}
	}
}

static void port_down(struct fault *f)
{
	struct emu_dev *d = &emu_host.dev[f->dev];
	emu_port_set_admin(d, false);
	atomic_store(&d->up, 0); /* at once here; others within 50 ms */
	atomic_store(&emu_eng.need_port_poll, true); /* events, counters */
	f->fired = true;
	f->fired_ns = emu_now_ns();
}

static void qp_fatal(struct emu_qp *qp)
{
	emu_async_event(qp->ctx, IBV_EVENT_QP_FATAL, &qp->qpx);
	emu_qp_to_error(qp, IBV_WC_WR_FLUSH_ERR);
}

/* A message is about to go (qp->lock held).  Non-zero: a fault acted. */
uint32_t emu_fault_on_message(struct emu_qp *qp, struct emu_swqe *w)
{
	uint64_t n;
	uint32_t acted = 0;
	if (!nfaults)
		return 0;
	n = atomic_fetch_add(&emu_eng.msgs_sent, 1) + 1;
	for (int i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		if (f->fired || f->at_msg < 0 || (long)n < f->at_msg)
			continue;
		switch (f->kind) {
		case F_PORT_DOWN:
			port_down(f);
			acted = 1;
			break;
		case F_RKEY:
			if (w->opcode != IBV_WR_RDMA_WRITE &&
			    w->opcode != IBV_WR_RDMA_WRITE_WITH_IMM &&
			    w->opcode != IBV_WR_RDMA_READ)
				break;
			w->hdr.rkey ^= 0x5a5a5a00;
			f->fired = true;
			acted = 1;
			break;
		case F_IMM:
			if (w->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
				break;
			w->imm ^= htonl(0x30000000u);
			f->fired = true;
			acted = 1;
			break;
		case F_QP_ERROR:
			f->fired = true;
			qp_fatal(qp);
			acted = 1;
			break;
		default:
			break;
		}
	}
	return acted;
}

void emu_faults_tick(int64_t now)
{
	int64_t ms = (now - emu_eng.start_ns) / 1000000;
	for (int i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		if (f->fired && f->kind == F_PORT_DOWN && f->for_ms >= 0 &&
		    !f->restored &&
		    (now - f->fired_ns) / 1000000 >= f->for_ms) {
			emu_port_set_admin(&emu_host.dev[f->dev], true);
			f->restored = true;
		}
		if (f->fired || f->at_ms < 0 || ms < f->at_ms)
			continue;
		if (f->kind == F_PORT_DOWN) {
			port_down(f);
		} else if (f->kind == F_QP_ERROR) {
			f->fired = true;
			for (uint32_t q = 1; q <= emu_eng.qp_hi; q++) {
				struct emu_qp *qp = emu_eng.qp[q];
				if (!qp ||
				    (f->qpn >= 0 && qp->qpx.qp_base.qp_num !=
				                            (uint32_t)f->qpn))
					continue;
				pthread_mutex_lock(&qp->lock);
				if (qp->qpx.qp_base.state == IBV_QPS_RTS)
					qp_fatal(qp);
				pthread_mutex_unlock(&qp->lock);
			}
		}
	}
}

int emu_fault_cq_hold(int cqe)
{
	for (int i = 0; i < nfaults; i++)
		if (faults[i].kind == F_CQ_OVERRUN && faults[i].cqe < cqe)
			return (int)faults[i].cqe;
	return cqe;
}

/* The slow link: a token bucket the send stream draws from. */
size_t emu_rate_budget(void)
{
	int64_t now;
	double cap;
	size_t b;
	if (!rate_bps)
		return SIZE_MAX;
	pthread_mutex_lock(&rate_lock);
	now = emu_now_ns();
	cap = (double)rate_bps * 0.005 + 65536; /* 5 ms of burst */
	rate_tokens += (double)(now - rate_last_ns) * 1e-9 * (double)rate_bps;
	if (rate_tokens > cap)
		rate_tokens = cap;
	rate_last_ns = now;
	b = rate_tokens > 0 ? (size_t)rate_tokens : 0;
	pthread_mutex_unlock(&rate_lock);
	return b;
}

void emu_rate_used(size_t bytes)
{
	if (!rate_bps)
		return;
	pthread_mutex_lock(&rate_lock);
	rate_tokens -= (double)bytes;
	pthread_mutex_unlock(&rate_lock);
}
