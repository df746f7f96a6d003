/* SPDX-License-Identifier: MIT */
/*
 * benchmarks/shm_p2.c - allreduce at p = 2 on shared memory, stripped of
 * collbench: three hand-written kernels, two processes pinned to CPUs 0
 * and 1, one shared mapping, spinning on a flag.  It isolates what the
 * memory system charges for each data path, which explains why rd beats
 * ring at np 2 on shm out of place (README, Benchmarks).
 *
 *   rd    each rank reads its own and the peer's send buffer and writes its
 *         whole result: one hand-shake.  The send buffers are never
 *         written, so after the first call every line of them is cached
 *         (shared) by both readers: no data crosses between the cores.
 *   pull  ring: each rank reduces its half into its receive buffer,
 *         hand-shake, then copies the peer's half out of the peer's receive
 *         buffer: lines the other core has just written.  Hand-shake.
 *   push  ring writing forwards: each rank reduces its half into its own
 *         receive buffer and the peer's at once (a mapped peer buffer, as
 *         a one-sided put would).  One hand-shake.
 *
 *   cc -O3 -march=native -o shm_p2 benchmarks/shm_p2.c
 *   ./shm_p2 [ROUNDS [app]] (medians over interleaved rounds, us per call)
 *
 * A benchmark loop (collbench's, nccl-tests', OSU's) calls the collective
 * on the same buffers over and over, so which lines stay cached where is
 * the loop's, not an application's.  With "app" each call's input is
 * written before it (a new gradient) and its result read after it, inside
 * the timed loop, as a training step would: then rd reads lines the peer
 * has just written too, and push's writes must reach the core that reads
 * them.
 *
 * A benchmark, not a test.  Linux only (sched_setaffinity).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RD, PULL, PUSH, NMODES };
static const char *names[NMODES] = { "rd", "pull", "push" };
static int app; /* each call's input written before it, its result read */

struct flags {
	_Atomic long at[2][16]; /* one cache line each */
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void line_up(struct flags *f, int r, long *phase)
{
	++*phase;
	atomic_store(&f->at[r][0], *phase);
	while (atomic_load(&f->at[!r][0]) < *phase)
		;
}

/* us per call of @mode on @n floats, measured by rank 0 */
static double run(int mode, size_t n, int iters)
{
	struct flags *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
	                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	float *buf = mmap(NULL, 4 * n * sizeof(float), PROT_READ | PROT_WRITE,
	                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double *out = mmap(NULL, sizeof(double), PROT_READ | PROT_WRITE,
	                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (f == MAP_FAILED || buf == MAP_FAILED || out == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(f, 0, sizeof(*f));
	memset(buf, 0, 4 * n * sizeof(float));
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	int r = pid == 0;
	cpu_set_t c;
	CPU_ZERO(&c);
	CPU_SET(r, &c);
	sched_setaffinity(0, sizeof(c), &c);
	float *send[2] = { buf, buf + n },
	      *recv[2] = { buf + 2 * n, buf + 3 * n };
	float *restrict me_s = send[r], *restrict peer_s = send[!r];
	float *restrict me_r = recv[r], *restrict peer_r = recv[!r];
	float *init = malloc(n * sizeof(float));
	if (!init) {
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		init[i] = (float)(r + i % 7);
	memcpy(me_s, init, n * sizeof(float));
	size_t h = n / 2, lo = r ? h : 0, len = r ? n - h : h;
	size_t plo = r ? 0 : h, plen = r ? h : n - h;
	long phase = 0;
	double t0 = 0;
	int warm = iters / 10 + 1;
	line_up(f, r, &phase);
	float sink = 0;
	for (int it = 0; it < warm + iters; it++) {
		if (it == warm)
			t0 = now_us();
		if (app) /* the next gradient: the send buffer rewritten */
			memcpy(me_s, init, n * sizeof(float));
		switch (mode) {
		case RD:
			for (size_t i = 0; i < n; i++)
				me_r[i] = me_s[i] + peer_s[i];
			break;
		case PULL:
			for (size_t i = lo; i < lo + len; i++)
				me_r[i] = me_s[i] + peer_s[i];
			line_up(f, r, &phase);
			memcpy(me_r + plo, peer_r + plo, plen * sizeof(float));
			break;
		case PUSH:
			for (size_t i = lo; i < lo + len; i++) {
				float v = me_s[i] + peer_s[i];
				me_r[i] = v;
				peer_r[i] = v;
			}
			break;
		}
		line_up(f, r, &phase);
		if (app) /* the result used */
			for (size_t i = 0; i < n; i += 16)
				sink += me_r[i];
	}
	double us = (now_us() - t0) / iters;
	if (sink < 0)
		us = -1;
	/* both halves right: every element is the sum of both inputs */
	for (size_t i = 0; i < n; i++)
		if (me_r[i] != (float)(i % 7) + (float)(1 + i % 7)) {
			fprintf(stderr, "%s: wrong value at %zu\n", names[mode],
			        i);
			us = -1;
			break;
		}
	free(init);
	if (r) {
		*out = us; /* rank 1's verdict, through the mapping */
		_exit(us < 0);
	}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || *out < 0)
		us = -1;
	munmap(f, sizeof(*f));
	munmap(buf, 4 * n * sizeof(float));
	munmap(out, sizeof(double));
	return us;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	app = argc > 2 && !strcmp(argv[2], "app");
	static const size_t sizes[] = { 32 << 10, 256 << 10, 1 << 20, 4 << 20 };
	enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
	double t[NS][NMODES][64];

	if (rounds < 1 || rounds > 64) {
		fprintf(stderr, "shm_p2: ROUNDS must be 1..64\n");
		return 2;
	}
	for (int k = 0; k < rounds; k++)
		for (int s = 0; s < NS; s++)
			for (int m = 0; m < NMODES; m++) {
				size_t n = sizes[s] / sizeof(float);
				int iters = sizes[s] >= (1u << 20) ? 200 : 2000;
				if ((t[s][m][k] = run(m, n, iters)) < 0)
					return 1;
			}
	printf("# allreduce float32 sum, p = 2, shared memory, CPUs 0 and 1: "
	       "median us per call over %d interleaved rounds%s\n",
	       rounds,
	       app ? "; each call's input written before it and its result "
	             "read after it (inside the time)"
	           : "");
	printf("%10s %10s %10s %10s %10s %10s\n", "bytes", "rd", "pull", "push",
	       "pull/rd", "push/pull");
	for (int s = 0; s < NS; s++) {
		double med[NMODES];
		for (int m = 0; m < NMODES; m++) {
			qsort(t[s][m], (size_t)rounds, sizeof(double), cmp);
			med[m] = t[s][m][rounds / 2];
		}
		printf("%10zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", sizes[s],
		       med[RD], med[PULL], med[PUSH], med[PULL] / med[RD],
		       med[PUSH] / med[PULL]);
	}
	return 0;
}
