/* SPDX-License-Identifier: MIT */
/*
 * benchmarks/boot_sim.c - collbench-boot-sim: a job of N ranks through the
 * real bootstrap (core/bootstrap.c, the store in rank 0, real sockets on
 * loopback), each rank a thread of this process, doing what a run's
 * start-up does with the store, in the same sizes:
 *
 *   join      allgather of 72 bytes   (host key hash, name: core/comm.c)
 *   machine   allgather of 32 bytes   (boot id, host, CPUs: topo/share.c)
 *   address   one key per rank        (a transport's address)
 *   model     rank 0's 152 bytes to every rank, by a key (calibrate.c)
 *   topology  gather to rank 0 (topo/job.c): 1312 bytes from each host's
 *             first rank and from ranks 0-15, a 40-byte head from the rest
 *   barrier
 *
 * and prints, from rank 0's clock, when each step ended, with the peak
 * memory of rank 0 (which keeps the store: it runs in a process of its
 * own) and of the process that holds every other rank, and rank 0's CPU
 * time (the store's work, and one rank's).  All ranks share this
 * machine's cores, so the wall time is mostly the other ranks' own work
 * (each takes in every allgather's answer); rank 0's CPU time is the
 * store's cost.  With -H K, the
 * ranks sit K to a simulated host (rank r on host sim<r/K>): each host's
 * first rank relays the others to the store (core/boot_relay.c), so the
 * store holds N/K connections; -H 1 (the default) is every rank on a
 * connection of its own.  A benchmark, not a test:
 *
 *   collbench-boot-sim [-n RANKS] [-H RANKS_PER_HOST] [-t TIMEOUT_S]
 *                                              (default 4096, 1, 120)
 *
 * Exit 0 when every rank got every value right, 1 otherwise.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bootstrap.h"
#include "core/log.h"
#include "core/sock.h"

enum {
	JOIN = 72,
	MACHINE = 32,
	MODEL = 152,
	TOPO = 1312, /* topo/job.c's struct entry */
	HEAD = 40,   /* its struct head */
	SHOWN = 16,  /* ranks whose binding the header shows: in full */
	STEPS = 6
};
static const char *const step_name[STEPS] = { "open",  "join",     "machine",
	                                      "model", "topology", "barrier" };

struct rank {
	int rank, world, listen_fd, per_host;
	const char *port;
	double timeout_s;
	uint64_t t0, done[STEPS];
	int errors, bad;
	char why[240]; /* its first failure */
};

/* Rank @r failed at @what: counted, the first one's line kept. */
static void failed(struct rank *r, const char *what)
{
	if (!r->errors++)
		snprintf(r->why, sizeof(r->why), "rank %d, %s: %s", r->rank,
		         what, cb_fail_msg() ? cb_fail_msg() : "(no message)");
}

/* Rank @r's part of a gather: bytes that say whose it is. */
static void fill(unsigned char *p, size_t bytes, int r, int step)
{
	for (size_t i = 0; i < bytes; i++)
		p[i] = (unsigned char)(r * 31 + step * 7 + (int)i);
}

static int check(const unsigned char *all, size_t bytes, int world, int step)
{
	unsigned char want[TOPO];
	int bad = 0;

	for (int q = 0; q < world; q++) {
		fill(want, bytes, q, step);
		bad += memcmp(all + (size_t)q * bytes, want, bytes) != 0;
	}
	return bad;
}

/* The size of rank @q's topology part. */
static size_t topo_part(int q, int per_host)
{
	return q < SHOWN || q % per_host == 0 ? TOPO : HEAD;
}

/* Rank 0: the topology parts, packed, each of its rank's size. */
static int check_topo(const unsigned char *all, const uint32_t *lens, int world,
                      int per_host)
{
	unsigned char want[TOPO];
	int bad = 0;

	for (int q = 0; q < world; q++) {
		size_t n = topo_part(q, per_host);
		fill(want, n, q, 3);
		if (lens[q] != n) {
			bad++;
			continue;
		}
		bad += memcmp(all, want, n) != 0;
		all += n;
	}
	return bad;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct cb_boot *b;
	char host[32];
	snprintf(host, sizeof(host), "sim%d", r->rank / r->per_host);
	struct cb_boot_cfg cfg = { .rank = r->rank,
		                   .world = r->world,
		                   .host = "127.0.0.1",
		                   .port = r->port,
		                   .listen_fd = r->rank ? -1 : r->listen_fd,
		                   .timeout_s = r->timeout_s,
		                   .hostname = host,
		                   .token = "",
		                   .relay = r->per_host == 1 ? CB_BOOT_DIRECT
		                            : r->rank % r->per_host
		                                    ? CB_BOOT_RELAYED
		                                    : CB_BOOT_LEADER };
	static const size_t size[] = { JOIN, MACHINE };
	unsigned char mine[TOPO], *all = NULL;
	void *parts = NULL;
	uint32_t *lens = NULL;
	char key[32];
	size_t got = 0;

	if (cb_boot_open(&cfg, &b)) {
		failed(r, "open");
		return NULL;
	}
	r->done[0] = cb_now_ns();
	all = malloc((size_t)r->world * JOIN > MODEL ? (size_t)r->world * JOIN
	                                             : MODEL);
	if (r->rank == 0 && !(lens = calloc((size_t)r->world, sizeof(*lens)))) {
		failed(r, "out of memory");
		goto out;
	}
	for (int s = 0; all && s < 2; s++) {
		fill(mine, size[s], r->rank, s);
		if (cb_boot_allgather(b, step_name[s + 1], mine, size[s],
		                      all)) {
			failed(r, step_name[s + 1]);
			goto out;
		}
		r->bad += check(all, size[s], r->world, s);
		if (s == 1) { /* the transports' addresses */
			snprintf(key, sizeof(key), "tp/sim/%d", r->rank);
			if (cb_boot_set(b, key, mine, 64)) {
				failed(r, "set");
				goto out;
			}
		}
		r->done[s + 1] = cb_now_ns();
	}
	if (!all) {
		failed(r, "out of memory");
		goto out;
	}
	fill(mine, MODEL, 0, 2);
	if (r->rank == 0 ? cb_boot_set(b, "the cost model rank 0 measures #0",
	                               mine, MODEL)
	                 : cb_boot_get(b, "the cost model rank 0 measures #0",
	                               all, MODEL, &got)) {
		failed(r, "the cost model");
		goto out;
	}
	if (r->rank)
		r->bad += got != MODEL || memcmp(all, mine, MODEL);
	r->done[3] = cb_now_ns();
	size_t part = topo_part(r->rank, r->per_host);
	fill(mine, part, r->rank, 3);
	if (cb_boot_gather_root_var(b, "topology", mine, part, TOPO, &parts,
	                            lens)) {
		failed(r, "topology");
		goto out;
	}
	if (r->rank == 0)
		r->bad += check_topo(parts, lens, r->world, r->per_host);
	free(parts);
	parts = NULL;
	r->done[4] = cb_now_ns();
	if (cb_boot_barrier(b))
		failed(r, "barrier");
	r->done[5] = cb_now_ns();
out:
	free(all);
	free(lens);
	cb_boot_close(b);
	return NULL;
}

/* Rank 0 in a child process, so that its peak memory is its own: its
 * record comes back through @fd. */
static pid_t start_rank0(struct rank *r0, int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		rank_main(r0);
		ssize_t n = write(p[1], r0, sizeof(*r0));
		_exit(n == (ssize_t)sizeof(*r0) ? 0 : 1);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

int main(int argc, char **argv)
{
	int world = 4096, per_host = 1, c;
	double timeout_s = 120;
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	char port[16];
	int fd, rfd = -1;

	while ((c = getopt(argc, argv, "n:H:t:")) != -1) {
		if (c == 'n')
			world = atoi(optarg);
		else if (c == 'H')
			per_host = atoi(optarg);
		else if (c == 't')
			timeout_s = atof(optarg);
		else
			return 2;
	}
	if (world < 2 || world > 65536 || per_host < 1 || per_host > world ||
	    timeout_s <= 0) {
		fprintf(stderr, "collbench-boot-sim: -n 2..65536, -H 1..N, "
		                "-t > 0\n");
		return 2;
	}
	if (cb_sock_listen((struct sockaddr *)&sa, sl, &fd) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "collbench-boot-sim: %s\n",
		        cb_fail_msg() ? cb_fail_msg() : "cannot listen");
		return 1;
	}
	snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));
	struct rank *r = calloc((size_t)world, sizeof(*r));
	pthread_t *th = calloc((size_t)world, sizeof(*th));
	if (!r || !th) {
		fprintf(stderr, "collbench-boot-sim: out of memory\n");
		return 1;
	}
	for (int i = 0; i < world; i++)
		r[i] = (struct rank){ .rank = i,
			              .world = world,
			              .per_host = per_host,
			              .listen_fd = fd,
			              .port = port,
			              .timeout_s = timeout_s };
	uint64_t t0 = cb_now_ns();
	r[0].t0 = t0;
	pid_t pid = start_rank0(&r[0], &rfd);
	if (pid < 0) {
		perror("collbench-boot-sim: fork");
		return 1;
	}
	close(fd);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256u << 10);
	int started = 1;
	for (int i = 1; i < world; i++, started++)
		if (pthread_create(&th[i], &at, rank_main, &r[i]))
			break;
	for (int i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	int status = 0;
	struct rank r0;
	ssize_t got = read(rfd, &r0, sizeof(r0));
	waitpid(pid, &status, 0);
	if (got == (ssize_t)sizeof(r0) && WIFEXITED(status) &&
	    !WEXITSTATUS(status))
		r[0] = r0;
	else
		failed(&r[0], "rank 0's process ended without its record");
	int errors = started < world, bad = 0, first = -1;
	for (int i = 0; i < started; i++) {
		errors += r[i].errors;
		bad += r[i].bad;
		if (r[i].errors && first < 0)
			first = i;
	}
	if (first >= 0) /* the lowest rank's: rank 0 is the store's side */
		fprintf(stderr,
		        "collbench-boot-sim: %d errors among %d ranks; the "
		        "first: %s\n",
		        errors, world, r[first].why);
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	int hosts = (world + per_host - 1) / per_host;
	printf("# collbench-boot-sim: %d ranks (threads) through the store, "
	       "%d a host (%d hosts: %d connections at the store), %ld "
	       "cores\n",
	       world, per_host, hosts, per_host == 1 ? world : hosts,
	       sysconf(_SC_NPROCESSORS_ONLN));
	for (int s = 0; started == world && s < STEPS; s++)
		printf("%-9s %8.2f s\n", step_name[s],
		       r[0].done[s] ? (double)(r[0].done[s] - t0) / 1e9 : -1.0);
	printf("total     %8.2f s; peak memory of rank 0 (the store) %.1f MiB "
	       "(%.1f KiB a rank), of the other ranks' process %.1f MiB; "
	       "rank 0's CPU time %.2f s; %d errors, %d wrong values\n",
	       (double)(cb_now_ns() - t0) / 1e9, (double)kids.ru_maxrss / 1024,
	       (double)kids.ru_maxrss / world, (double)self.ru_maxrss / 1024,
	       (double)(kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
	               (double)(kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) /
	                       1e6,
	       errors, bad);
	free(r);
	free(th);
	return errors || bad ? 1 : 0;
}
