/* SPDX-License-Identifier: MIT */
/*
 * topo/gpupath.c - the GPUs a host's ranks use and the paths between them,
 * for the run header and the JSON: from the binding plan (which GPU and NIC
 * each local rank got) and the topology's path matrix, as
 * `nvidia-smi topo -m` names the paths:
 *
 *   GPU0 (local ranks 0,2), GPU1 (local rank 1); GPU0-GPU1 NVL;
 *   GPU0-NIC mlx5_0 PIX, GPU1-NIC mlx5_1 PIX
 *
 * A GPU that several ranks share says "shared" (their path is X: the
 * device itself).  Pure: tested on recorded machines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"
#include "topo/topo.h"

#define MAX_USED 64

__attribute__((format(printf, 4, 5))) static void
app(char *buf, size_t bytes, size_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cb_buf_vappendf(buf, bytes, n, fmt, ap);
	va_end(ap);
}

void cb_topo_gpu_paths(const struct cb_topo *t, const struct cb_topo_slot *s,
                       int nranks, char *buf, size_t bytes)
{
	int used[MAX_USED], nused = 0;
	size_t n = 0;

	buf[0] = '\0';
	for (int r = 0; r < nranks; r++) {
		int g = s[r].gpu, k = 0;
		if (g < 0 || g >= t->ngpus)
			continue;
		while (k < nused && used[k] != g)
			k++;
		if (k == nused && nused < MAX_USED)
			used[nused++] = g;
	}
	/* sorted, so the line reads GPU0, GPU1, ... */
	for (int i = 1; i < nused; i++)
		for (int j = i; j > 0 && used[j - 1] > used[j]; j--) {
			int x = used[j];
			used[j] = used[j - 1];
			used[j - 1] = x;
		}
	for (int i = 0; i < nused; i++) {
		char ranks[128] = "";
		size_t l = 0;
		int k = 0;
		for (int r = 0; r < nranks; r++) {
			if (s[r].gpu != used[i] || l > sizeof(ranks) - 8)
				continue;
			cb_buf_appendf(ranks, sizeof(ranks), &l, "%s%d",
			               k++ ? "," : "", r);
		}
		app(buf, bytes, &n, "%sGPU%d (local rank%s %s%s)",
		    i ? ", " : "", used[i], k > 1 ? "s" : "", ranks,
		    k > 1 ? ": shared" : "");
	}
	for (int i = 0; i < nused; i++)
		for (int j = i + 1; j < nused; j++)
			app(buf, bytes, &n, "%sGPU%d-GPU%d %s",
			    i || j > 1 ? ", " : "; ", used[i], used[j],
			    cb_topo_path_name(
			            cb_topo_path(t, used[i], used[j])));
	/* each GPU to the NIC of the first rank on it */
	for (int i = 0, first = 1; i < nused; i++)
		for (int r = 0; r < nranks; r++) {
			if (s[r].gpu != used[i])
				continue;
			if (s[r].nic >= 0 && s[r].nic < t->nnics) {
				app(buf, bytes, &n, "%sGPU%d-NIC %s %s",
				    first ? "; " : ", ", used[i],
				    cb_topo_nic(t, s[r].nic)->name,
				    cb_topo_path_name(cb_topo_path(
				            t, used[i], t->ngpus + s[r].nic)));
				first = 0;
			}
			break;
		}
}
