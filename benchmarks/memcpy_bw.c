/* benchmarks/memcpy_bw.c - the memory-copy ceiling of this machine, which
 * bounds what any shared-memory transport can move.
 *
 *   cc -O2 -pthread -o memcpy_bw benchmarks/memcpy_bw.c
 *   ./memcpy_bw [THREADS] [MIN_KIB] [MAX_KIB]     (defaults 1, 64, 65536)
 *
 * Each of THREADS threads copies its own source buffer into its own
 * destination with memcpy, sizes MIN_KIB to MAX_KIB by factors of 4, for
 * about 0.2 s per size after one untimed copy; the best of 3 such runs.
 * GB/s = bytes copied by all threads / time / 1e9 (each byte counted once,
 * though it is read once and written once).  CSV on stdout:
 *   threads,bytes,gbps
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t g_bytes;
static pthread_barrier_t g_bar;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct job {
	char *src, *dst;
	long reps;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	pthread_barrier_wait(&g_bar);
	for (long r = 0; r < j->reps; r++) {
		memcpy(j->dst, j->src, g_bytes);
		__asm__ __volatile__("" ::: "memory"); /* keep every copy */
	}
	pthread_barrier_wait(&g_bar);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long lo = argc > 2 ? atol(argv[2]) : 64,
	     hi = argc > 3 ? atol(argv[3]) : 65536;
	if (threads < 1 || threads > 256 || lo < 1 || hi < lo ||
	    hi > (4L << 20)) {
		fprintf(stderr, "memcpy_bw: usage: memcpy_bw [THREADS 1-256] "
		                "[MIN_KIB] [MAX_KIB <= 4G]\n");
		return 2;
	}
	struct job *jobs = calloc((size_t)threads, sizeof(*jobs));
	pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
	if (!jobs || !tid)
		return 1;
	for (int t = 0; t < threads; t++) {
		jobs[t].src = malloc((size_t)hi << 10);
		jobs[t].dst = malloc((size_t)hi << 10);
		if (!jobs[t].src || !jobs[t].dst) {
			fprintf(stderr,
			        "memcpy_bw: out of memory for %d x 2 x %ld "
			        "KiB\n",
			        threads, hi);
			return 1;
		}
		memset(jobs[t].src, 1,
		       (size_t)hi << 10); /* touch every page first */
		memset(jobs[t].dst, 2, (size_t)hi << 10);
	}
	printf("threads,bytes,gbps\n");
	for (long kib = lo; kib <= hi; kib *= 4) {
		g_bytes = (size_t)kib << 10;
		double t0 = now();
		long reps = 1;
		for (int t = 0; t < threads; t++)
			memcpy(jobs[t].dst, jobs[t].src, g_bytes);
		double one = now() - t0;
		reps = one > 0 ? (long)(0.2 / one) + 1 : 1000;
		double best = 0;
		for (int run = 0; run < 3; run++) {
			pthread_barrier_init(&g_bar, NULL,
			                     (unsigned)threads + 1);
			for (int t = 0; t < threads; t++) {
				jobs[t].reps = reps;
				pthread_create(&tid[t], NULL, worker, &jobs[t]);
			}
			pthread_barrier_wait(&g_bar);
			t0 = now();
			pthread_barrier_wait(&g_bar);
			double dt = now() - t0;
			for (int t = 0; t < threads; t++)
				pthread_join(tid[t], NULL);
			pthread_barrier_destroy(&g_bar);
			double gbps = (double)g_bytes * (double)reps * threads /
			              dt / 1e9;
			if (gbps > best)
				best = gbps;
		}
		printf("%d,%zu,%.2f\n", threads, g_bytes, best);
		fflush(stdout);
	}
	return 0;
}
