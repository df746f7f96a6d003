/* benchmarks/mpi_anchor.c - the MPI library's own collectives, timed the way
 * collbench times its own, so that the two can be printed side by side.
 *
 *   mpicc -O2 -o mpi_anchor benchmarks/mpi_anchor.c
 *   mpirun -np 2 ./mpi_anchor [-c
 * allreduce|allgather|reduce_scatter|bcast|reduce]
 *                             [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w
 * WARMUP]
 *
 * float32 (sum where the collective reduces), out of place, root 0.  For
 * each size: one untimed call whose result is checked, WARMUP calls, then
 * ITERS calls timed back to back; each rank's time per call, then the mean
 * and the max over ranks.  Without -n the count depends on the size, as
 * benchmarks/anchors.py runs collbench: 1000 up to 64 KiB, 100 up to
 * 4 MiB, 20 above.  size is nccl-tests' (the larger buffer), busbw its
 * factor: allreduce 2(n-1)/n, allgather and reduce_scatter (n-1)/n, bcast
 * and reduce 1.  Output: CSV on rank 0's stdout,
 *   coll,np,bytes,count,iters,avg_us,max_us,algbw_gbps,busbw_gbps,wrong
 * Exit 0, 1 when a result was wrong, 2 on a usage error.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum coll { ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE };
static const char *names[] = { "allreduce", "allgather", "reduce_scatter",
	                       "bcast", "reduce" };

static long parse_bytes(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	return *end ? -1 : v;
}

static void usage(int rank, const char *why)
{
	if (rank == 0)
		fprintf(stderr,
		        "mpi_anchor: %s (usage: -c COLL -b MIN -e MAX -f F -n "
		        "ITERS -w WARMUP)\n",
		        why);
	MPI_Finalize();
	exit(2);
}

/* One call of the collective on buffers sized for `count` float32 of the
 * larger side; `n` ranks. */
static void call(enum coll c, float *in, float *out, long count, int n)
{
	switch (c) {
	case ALLREDUCE:
		MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM,
		              MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		MPI_Allgather(in, (int)(count / n), MPI_FLOAT, out,
		              (int)(count / n), MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case REDUCE_SCATTER:
		MPI_Reduce_scatter_block(in, out, (int)(count / n), MPI_FLOAT,
		                         MPI_SUM, MPI_COMM_WORLD);
		break;
	case BCAST:
		MPI_Bcast(in, (int)count, MPI_FLOAT, 0, MPI_COMM_WORLD);
		break;
	case REDUCE:
		MPI_Reduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, 0,
		           MPI_COMM_WORLD);
		break;
	}
}

/* Fill with small integers (exact in float32 whatever the order of the
 * sums), then count what differs from the expected result. */
static long check(enum coll c, float *in, float *out, long count, int n,
                  int rank)
{
	long blk = count / n, wrong = 0, i;
	for (i = 0; i < count; i++) {
		in[i] = (float)((rank + 1) * ((i % 7) + 1));
		out[i] = -1.0f;
	}
	call(c, in, out, count, n);
	float sum_r = (float)(n * (n + 1) / 2);
	for (i = 0; i < count; i++) {
		float want;
		switch (c) {
		case ALLREDUCE:
			want = sum_r * (float)((i % 7) + 1);
			break;
		case REDUCE:
			if (rank != 0)
				return 0;
			want = sum_r * (float)((i % 7) + 1);
			break;
		case BCAST:
			want = (float)((i % 7) + 1);
			break; /* root 0's input */
		case ALLGATHER:
			if (i >= blk * n)
				return wrong;
			want = (float)((i / blk + 1) * ((i % blk) % 7 + 1));
			break;
		case REDUCE_SCATTER:
			if (i >= blk)
				return wrong;
			want = sum_r * (float)(((rank * blk + i) % 7) + 1);
			break;
		default:
			want = 0;
		}
		float got = c == BCAST ? in[i] : out[i];
		wrong += got != want;
	}
	return wrong;
}

int main(int argc, char **argv)
{
	int rank, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	enum coll c = ALLREDUCE;
	long lo = 8, hi = 64L << 20, fixed_iters = 0, warm = -1;
	double factor = 2;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage(rank, "an option lacks its value");
		i++;
		if (!strcmp(o, "-c")) {
			int k;
			for (k = 0; k < 5 && strcmp(v, names[k]); k++)
				;
			if (k == 5)
				usage(rank, "unknown collective");
			c = (enum coll)k;
		} else if (!strcmp(o, "-b") && (lo = parse_bytes(v)) >= 0) {
		} else if (!strcmp(o, "-e") && (hi = parse_bytes(v)) >= 0) {
		} else if (!strcmp(o, "-f") && (factor = atof(v)) > 1) {
		} else if (!strcmp(o, "-n") && (fixed_iters = atol(v)) > 0) {
		} else if (!strcmp(o, "-w") && (warm = atol(v)) >= 0) {
		} else
			usage(rank, "bad option or value");
	}
	if (lo > hi || hi > (1L << 30))
		usage(rank, "need MIN <= MAX <= 1G");
	float *in = malloc(hi + 64), *out = malloc(hi + 64);
	if (!in || !out)
		usage(rank, "out of memory");
	long bad = 0;
	if (rank == 0)
		printf("coll,np,bytes,count,iters,avg_us,max_us,algbw_gbps,"
		       "busbw_gbps,wrong\n");
	for (double sz = lo ? (double)lo : 4; (long)sz <= hi; sz *= factor) {
		long count = (long)sz / 4;
		if (c == ALLGATHER || c == REDUCE_SCATTER)
			count -= count % n;
		if (count == 0)
			continue;
		long bytes = count * 4;
		long iters = fixed_iters            ? fixed_iters
		             : bytes <= (64L << 10) ? 1000
		             : bytes <= (4L << 20)  ? 100
		                                    : 20;
		long w = warm >= 0 ? warm : iters / 10 + 1;
		long wrong = check(c, in, out, count, n, rank), all_wrong;
		for (long k = 0; k < w; k++)
			call(c, in, out, count, n);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (long k = 0; k < iters; k++)
			call(c, in, out, count, n);
		double us = (MPI_Wtime() - t0) * 1e6 / (double)iters, sum, max;
		MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0,
		           MPI_COMM_WORLD);
		MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0,
		           MPI_COMM_WORLD);
		MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0,
		           MPI_COMM_WORLD);
		if (rank == 0) {
			double avg = sum / n,
			       algbw = (double)bytes / (avg * 1e3);
			double f = c == ALLREDUCE ? 2.0 * (n - 1) / n
			           : (c == ALLGATHER || c == REDUCE_SCATTER)
			                   ? (double)(n - 1) / n
			                   : 1.0;
			printf("%s,%d,%ld,%ld,%ld,%.3f,%.3f,%.6f,%.6f,%ld\n",
			       names[c], n, bytes, count, iters, avg, max,
			       algbw, algbw * f, all_wrong);
			fflush(stdout);
			bad += all_wrong;
		}
		if ((long)(sz * factor) == (long)sz)
			break;
	}
	free(in);
	free(out);
	MPI_Finalize();
	return bad ? 1 : 0;
}
