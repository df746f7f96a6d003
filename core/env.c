/* SPDX-License-Identifier: MIT */
/*
 * core/env.c - rank, world size and rendezvous from the launcher's
 * environment, the host's identity, and option views (core/env.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"

#include "core/comm.h"
#include "core/log.h"

/* ---- option views (core/env.h) ---- */

cb_status_t cb_optset_put(struct cb_optset *s, const char *key,
                          const char *value)
{
	int i;

	if (strlen(key) >= sizeof(s->kv[0].key) ||
	    strlen(value) >= sizeof(s->kv[0].value))
		return cb_fail(CB_ERR_USAGE,
		               "option %.40s: the value is too long (at most "
		               "%zu bytes)",
		               key, sizeof(s->kv[0].value) - 1);
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->kv[i].key, key))
			break;
	if (i == CB_OPTSET_MAX)
		return cb_fail(CB_ERR_USAGE, "option %.40s: too many options",
		               key);
	if (i == s->n)
		s->n++;
	snprintf(s->kv[i].key, sizeof(s->kv[i].key), "%s", key);
	snprintf(s->kv[i].value, sizeof(s->kv[i].value), "%s", value);
	return CB_OK;
}

const char *cb_optset_get(const struct cb_optset *s, const char *key)
{
	for (int i = 0; s && i < s->n; i++)
		if (!strcmp(s->kv[i].key, key))
			return s->kv[i].value;
	return NULL;
}

const char *cb_optset_lookup(void *set, const char *key)
{
	return cb_optset_get(set, key);
}

/*
 * The options a variable may also set when no flag did: each one is in
 * docs/options.md and the man page's ENVIRONMENT, and no other key reads
 * the environment (tests/integration/options_doc.sh checks both ways).
 */
static const struct {
	const char *key, *env;
} env_opts[] = {
	{ "tcp-if", "COLLBENCH_TCP_IF" },
	{ "tcp-streams", "COLLBENCH_TCP_STREAMS" },
	{ "tcp-split-bytes", "COLLBENCH_TCP_SPLIT_BYTES" },
	{ "gid-index", "COLLBENCH_GID_INDEX" },
	{ "ib-sl", "COLLBENCH_IB_SL" },
	{ "verbs-cm", "COLLBENCH_VERBS_CM" },
	{ "verbs-eager-bytes", "COLLBENCH_VERBS_EAGER_BYTES" },
	{ "shm-cma", "COLLBENCH_SHM_CMA" },
	{ "shm-map", "COLLBENCH_SHM_MAP" },
	{ "shm-rndv-bytes", "COLLBENCH_SHM_RNDV_BYTES" },
	{ "gpu-copy", "COLLBENCH_GPU_COPY" },
	{ "ring-put", "COLLBENCH_RING_PUT" },
	{ "bind", "COLLBENCH_BIND" },
	{ "topo-xml", "COLLBENCH_TOPO_XML" },
};

cb_status_t cb_optset_env(struct cb_optset *s)
{
	for (size_t i = 0; i < sizeof(env_opts) / sizeof(env_opts[0]); i++) {
		const char *v = getenv(env_opts[i].env);

		if (!v || !*v || cb_optset_get(s, env_opts[i].key))
			continue;
		if (strlen(v) >= sizeof(s->kv[0].value))
			return cb_fail(CB_ERR_USAGE,
			               "%s: the value is too long (%zu bytes; "
			               "at most %zu)",
			               env_opts[i].env, strlen(v),
			               sizeof(s->kv[0].value) - 1);
		if (cb_optset_put(s, env_opts[i].key, v))
			return CB_ERR_USAGE;
	}
	return CB_OK;
}

/* ---- launcher environment ---- */

static const struct {
	const char *rank, *world, *local, *source;
} launchers[] = {
	{ "COLLBENCH_RANK", "COLLBENCH_WORLD", "COLLBENCH_LOCAL_RANK",
	  "COLLBENCH_RANK/WORLD" },
	{ "RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK/WORLD_SIZE (torchrun)" },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	  "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI" },
	{ "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI (MPICH/Hydra)" },
	{ "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "Slurm" },
};

static int parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* HOST:PORT into @e; its own line is replaced by the caller's, which names
 * the variable. */
static cb_status_t parse_quietly(const char *hostport, struct cb_launch_env *e)
{
	struct cb_fail_rec why;
	cb_status_t st;

	cb_fail_open(&why);
	st = cb_boot_parse_hostport(hostport, e->host, sizeof(e->host), e->port,
	                            sizeof(e->port));
	cb_fail_close(&why, 0);
	return st;
}

cb_status_t cb_env_detect(const char *cli_rdv, struct cb_launch_env *e)
{
	memset(e, 0, sizeof(*e));
	e->local_rank = -1;
	/* the job's secret: NULL when unset or empty */
	e->job_token = getenv("COLLBENCH_JOB_TOKEN");
	e->ompi_token = getenv("OMPI_MCA_orte_precondition_transports");
	if (e->job_token && !*e->job_token)
		e->job_token = NULL;
	if (e->ompi_token && !*e->ompi_token)
		e->ompi_token = NULL;
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		const char *r = getenv(launchers[i].rank);
		const char *w = getenv(launchers[i].world);

		if (!r || !w)
			continue;
		if (parse_int(w, 1, 1 << 20, &e->world))
			return cb_fail(CB_ERR_USAGE,
			               "%s='%s' is not a world size (1..%d)",
			               launchers[i].world, w, 1 << 20);
		if (parse_int(r, 0, e->world - 1, &e->rank))
			return cb_fail(CB_ERR_USAGE,
			               "%s='%s' is not a rank in 0..%d",
			               launchers[i].rank, r, e->world - 1);
		e->found = 1;
		e->source = launchers[i].source;
		const char *l = getenv(launchers[i].local);
		const char *off = getenv("COLLBENCH_HOST_RELAY");
		if (off && strcmp(off, "0") && strcmp(off, "1"))
			return cb_fail(
			        CB_ERR_USAGE,
			        "COLLBENCH_HOST_RELAY='%s' is not 0 or 1", off);
		if (l && parse_int(l, 0, e->world - 1, &e->local_rank))
			return cb_fail(CB_ERR_USAGE,
			               "%s='%s' is not a local rank in 0..%d",
			               launchers[i].local, l, e->world - 1);
		if (off && !strcmp(off, "0"))
			e->local_rank = -1;
		break;
	}

	const char *root = getenv("COLLBENCH_ROOT");
	const char *maddr = getenv("MASTER_ADDR"),
	           *mport = getenv("MASTER_PORT");
	char tmp[300];

	if (cli_rdv) {
		e->rdv_source = "--rendezvous";
		return cb_boot_parse_hostport(cli_rdv, e->host, sizeof(e->host),
		                              e->port, sizeof(e->port));
	}
	if (root && *root) {
		e->rdv_source = "COLLBENCH_ROOT";
		if (parse_quietly(root, e))
			return cb_fail(CB_ERR_USAGE,
			               "COLLBENCH_ROOT='%s' is not HOST:PORT",
			               root);
		return CB_OK;
	}
	if (maddr && *maddr && mport && *mport) {
		e->rdv_source = "MASTER_ADDR/MASTER_PORT";
		snprintf(tmp, sizeof(tmp), "%s:%s", maddr, mport);
		if (parse_quietly(tmp, e))
			return cb_fail(CB_ERR_USAGE,
			               "MASTER_ADDR/MASTER_PORT ('%s') is not "
			               "HOST:PORT",
			               tmp);
	}
	return CB_OK;
}

static void read_line(const char *path, char *out, size_t bytes)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)bytes, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

void cb_host_identity(char *name, size_t name_bytes, char *key,
                      size_t key_bytes)
{
	char boot[64], netns[64] = "";
	ssize_t n;

	if (gethostname(name, name_bytes) != 0)
		snprintf(name, name_bytes, "unknown");
	name[name_bytes - 1] = '\0';
	read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	/* Ranks in different network namespaces are different hosts to us:
	 * that is how the project's test hosts are made. */
	n = readlink("/proc/self/ns/net", netns, sizeof(netns) - 1);
	netns[n > 0 ? n : 0] = '\0';
	snprintf(key, key_bytes, "%.40s/%.40s/%.30s", name, boot, netns);
	/* COLLBENCH_HOSTNAME names the host in messages (test hosts). */
	const char *alias = getenv("COLLBENCH_HOSTNAME");
	if (alias && *alias)
		snprintf(name, name_bytes, "%s", alias);
}
