/* SPDX-License-Identifier: MIT */
/*
 * topo/topo.h - where ranks sit: one host's topology (hwloc), the NICs and
 * GPUs on it and the PCI paths between them, the binding plan for the local
 * ranks, and the cluster inventory that compares hosts.
 *
 * A topology is discovered once with hwloc (the live machine, a recorded
 * hwloc XML file, or an hwloc synthetic description) and copied into the
 * plain structures below, so that planning, comparing and printing are pure
 * functions, tested on recorded machines, and so that a build without hwloc
 * (-Dhwloc=disabled) still compiles everything but the loader.
 *
 * Indices: cores, NUMA nodes, GPUs and NICs are numbered from 0 in the order
 * of this file's arrays.  Cores follow hwloc's logical order; GPUs and NICs
 * are sorted by PCI bus id (as nvidia-smi numbers them), devices off PCI
 * last.  A NUMA node is named by its OS index (the number numactl uses).
 */
#ifndef CB_TOPO_TOPO_H
#define CB_TOPO_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <collbench/status.h>

/* Path between two devices, nearest first, as `nvidia-smi topo -m` names
 * them.  X: the device itself; NVL: an NVLink (hwloc's NVLinkBandwidth
 * distances); PIX: at most one PCIe bridge; PXB: several PCIe bridges, no
 * host bridge; PHB: through a PCIe host bridge (the CPU); NODE: between
 * host bridges of one NUMA node; SYS: across the interconnect between NUMA
 * nodes (QPI/UPI, or locality unknown). */
enum cb_topo_path {
	CB_TOPO_PATH_X,
	CB_TOPO_PATH_NVL,
	CB_TOPO_PATH_PIX,
	CB_TOPO_PATH_PXB,
	CB_TOPO_PATH_PHB,
	CB_TOPO_PATH_NODE,
	CB_TOPO_PATH_SYS,
};
const char *cb_topo_path_name(enum cb_topo_path p);

/* What hwloc (or sysfs) could not tell about a host. */
enum {
	CB_TOPO_UNK_NUMA = 1u << 0, /* no NUMA information: one node assumed */
	CB_TOPO_UNK_MEMORY = 1u << 1, /* memory size not reported */
	CB_TOPO_UNK_PCI = 1u << 2,    /* no PCI devices seen (container, VM) */
	CB_TOPO_UNK_LINK = 1u << 3,   /* a NIC's link speed or state */
	CB_TOPO_UNK_LOCALITY = 1u << 4, /* a device's NUMA node */
};

#define CB_TOPO_LIST 256 /* a cpu or node list, "0-5,12-17" */

struct cb_topo_numa {
	int os_index;
	int64_t mem_bytes; /* -1 unknown */
	int ncores, npus;
	char cpus[CB_TOPO_LIST];
};

struct cb_topo_core {
	int numa; /* index into numa[], -1 unknown */
	int package;
	char cpus[64]; /* its PUs, "0,12" */
};

struct cb_topo_dev {
	char name[32];    /* NIC: mlx5_0 or eth0; GPU: cuda0, or a bus id */
	char aliases[96]; /* other names of the same device: "ib0,eth2" */
	char kind[24];    /* InfiniBand, RoCE, iWARP, Ethernet; CUDA, PCI... */
	char model[64];
	char pci[16];            /* "0000:05:00.0"; "" off PCI */
	int numa;                /* OS index of its one NUMA node; -1 unknown */
	char cpus[CB_TOPO_LIST]; /* CPU affinity, "" unknown */
	char numas[64];          /* NUMA affinity, "" unknown */
	int rdma;                /* an OpenFabrics (verbs) device */
	int speed_mbps;          /* -1 unknown */
	char state[16];          /* "up", "down", "active", ...; "unknown" */
	char link_note[48];      /* where speed/state came from, or why not */
};

#define CB_TOPO_MAX_CACHES 8

struct cb_topo {
	void *hw;                  /* hwloc_topology_t; NULL without hwloc */
	void (*hw_free)(void *hw); /* how @hw is released (topo/discover.c) */
	char source[300];          /* "live", "xml FILE", "synthetic DESC" */
	int this_system;           /* binding can be applied to this process */
	char host[64], arch[32], model[96];
	int npackages, nnuma, ncores, npus;
	int64_t mem_bytes; /* -1 unknown */
	struct cb_topo_numa *numa;
	struct cb_topo_core *cores;
	struct {
		int level;
		char type; /* 'd', 'i', 'u' */
		int64_t bytes;
		int count;
	} cache[CB_TOPO_MAX_CACHES];
	int ncaches;
	/* GPUs first, then NICs: the rows of the matrix. */
	struct cb_topo_dev *dev;
	int ngpus, nnics;
	unsigned char *path; /* [ndev][ndev] enum cb_topo_path */
	unsigned unknown;    /* CB_TOPO_UNK_* */
};

static inline struct cb_topo_dev *cb_topo_gpu(const struct cb_topo *t, int i)
{
	return &t->dev[i];
}

static inline struct cb_topo_dev *cb_topo_nic(const struct cb_topo *t, int i)
{
	return &t->dev[t->ngpus + i];
}

/* Path between devices @a and @b (indices into dev[]). */
static inline enum cb_topo_path cb_topo_path(const struct cb_topo *t, int a,
                                             int b)
{
	return (enum cb_topo_path)t->path[a * (t->ngpus + t->nnics) + b];
}

/* ---- discovery (topo/discover.c; needs hwloc) ---- */

/* 1 when this build has hwloc (else topo/none.c stands in). */
extern const int cb_topo_have_hwloc;

/* Load the live machine (@xml and @synthetic NULL), a recorded hwloc XML
 * file, or an hwloc synthetic description ("pack:2 numa:2 core:4 pu:2").
 * CB_ERR_USAGE with a recorded line for a file that cannot be read or does
 * not parse; CB_ERR_UNAVAILABLE in a build without hwloc. */
cb_status_t cb_topo_load(const char *xml, const char *synthetic,
                         struct cb_topo **out);
/* This host's live topology from @xml, which another rank of the host wrote
 * with cb_topo_export_xml from its live discovery (hwloc's discovery, PCI
 * included, done once per host instead of once per rank): binding applies
 * and link state comes from sysfs, as for "live". */
cb_status_t cb_topo_load_host(const char *xml, struct cb_topo **out);
void cb_topo_free(struct cb_topo *t);
/* Write hwloc XML; link speed and state go along as the infos LinkSpeedMbps
 * and LinkState of each network OS device, so a recording keeps them. */
cb_status_t cb_topo_export_xml(struct cb_topo *t, const char *path);

/* Link speed and state of @d from sysfs under @sysroot ("/sys"): the
 * InfiniBand port rate and state of a verbs device, else the netdev's speed
 * and operstate.  Leaves "unknown" where sysfs has nothing. */
void cb_topo_link_read(const char *sysroot, struct cb_topo_dev *d);

/* The NIC nearest GPU @gpu (index among NICs), RDMA NICs first on a tie;
 * -1 when there is none. */
int cb_topo_nearest_nic(const struct cb_topo *t, int gpu);
/* The index of the NIC named @name (or one of its aliases), or -1. */
int cb_topo_nic_find(const struct cb_topo *t, const char *name);

/* A bandwidth in Mb/s for people: "40 Gb/s", "100 Mb/s", "unknown". */
void cb_topo_speed_str(int speed_mbps, char *buf, size_t bytes);

/* Check a run's topology option (bind, nic, gpu, topo-xml) for
 * cb_topo_job_setup; CB_ERR_USAGE, recorded, for a bad value. */
cb_status_t cb_topo_opt_check(const char *key, const char *value);

/* ---- binding (topo/plan.c; applying it: topo/bind.c) ---- */

enum cb_topo_bind {
	CB_TOPO_BIND_NONE,
	CB_TOPO_BIND_CORE, /* rank i on core i, in order (mpirun's core) */
	CB_TOPO_BIND_NUMA, /* rank on a whole NUMA node, round-robin */
	CB_TOPO_BIND_AUTO, /* own core each, spread over NUMA, near NIC/GPU */
};
/* "none", "core", "numa", "auto"; CB_ERR_USAGE naming @what otherwise. */
cb_status_t cb_topo_bind_parse(const char *s, const char *what,
                               enum cb_topo_bind *b);
const char *cb_topo_bind_name(enum cb_topo_bind b);

/* Where one local rank goes. */
struct cb_topo_slot {
	int core; /* index into cores[], -1: not bound to one core */
	int numa; /* index into numa[], -1: not bound */
	int gpu;  /* index among GPUs, -1 none */
	int nic;  /* index among NICs, -1 none */
};

/*
 * Plan @nranks local ranks.  @nic (NULL: by locality) and @gpu (-1: by local
 * rank) override the assignment for every rank.  @note gets a reason when
 * the plan binds nothing ("5 ranks on 2 cores").  CB_ERR_USAGE, recorded,
 * for a NIC name this host lacks or a GPU index out of range.
 */
cb_status_t cb_topo_plan(const struct cb_topo *t, enum cb_topo_bind mode,
                         int nranks, const char *nic, int gpu,
                         struct cb_topo_slot *slots, char *note,
                         size_t note_bytes);
/* The GPUs the @nranks planned ranks use and the paths between them and to
 * their NICs (topo/gpupath.c): "GPU0 (local ranks 0,2: shared), GPU1
 * (local rank 1); GPU0-GPU1 NVL; GPU0-NIC mlx5_0 PIX, GPU1-NIC mlx5_1
 * PIX"; "" when no rank has a GPU. */
void cb_topo_gpu_paths(const struct cb_topo *t, const struct cb_topo_slot *s,
                       int nranks, char *buf, size_t bytes);
/* "core 3 (NUMA 1, cpus 3,15; GPU 1, NIC mlx4_0)", or "unbound". */
void cb_topo_slot_str(const struct cb_topo *t, const struct cb_topo_slot *s,
                      char *buf, size_t bytes);
/* Bind this process as @s says.  CB_ERR_SYS (recorded) when refused. */
cb_status_t cb_topo_bind_apply(const struct cb_topo *t,
                               const struct cb_topo_slot *s);
/* 1 when this process is already bound to fewer CPUs than it may use (a
 * launcher or taskset did it); @cpus gets the list. */
int cb_topo_bound_already(const struct cb_topo *t, char *cpus, size_t bytes);

/* ---- cluster inventory (topo/inventory.c) ---- */

#define CB_TOPO_INV_NICS 8

/* One host's summary: fixed size, so every rank can send it through the
 * bootstrap's allgather. */
struct cb_topo_inv {
	char host[64];   /* the name shown */
	char source[48]; /* "live", or the recorded file's name */
	int32_t packages, numa, cores, pus, nics, gpus;
	int64_t mem_bytes; /* -1 unknown */
	uint32_t unknown;  /* CB_TOPO_UNK_* */
	struct {
		char name[32];
		int32_t speed_mbps;
		char state[16];
	} nic[CB_TOPO_INV_NICS]; /* the first ones, by name */
};

void cb_topo_inv_fill(const struct cb_topo *t, const char *host,
                      struct cb_topo_inv *inv);
/* "12 cores (24 PUs), 2 packages, 2 NUMA nodes, 36.0 GiB, 3 GPUs, NICs:
 * mlx4_0 40 Gb/s active, eth0 1 Gb/s up" */
void cb_topo_inv_str(const struct cb_topo_inv *inv, char *buf, size_t bytes);

struct cb_topo_inv_diff {
	int differs;
	char why[256]; /* "NIC ib0 speed 10 Gb/s (others: 40 Gb/s)" */
};

/*
 * Compare @n hosts' summaries: each field's majority value is the one most
 * hosts share (memory within 2%); on a tie, the value of the earliest host
 * (rank 0's) wins.  Marks every host that differs in cores, PUs, NUMA
 * nodes, memory, GPU count, NIC count or names, or a NIC's link speed or
 * state.  Returns how many hosts differ.
 */
int cb_topo_inv_compare(const struct cb_topo_inv *inv, int n,
                        struct cb_topo_inv_diff *d);

/* ---- a run's view (topo/job.c): wired into the communicator by the
 * caller (bench/place.c), so topo needs no core but its log ---- */

struct cb_topo_job;

/* What a run's placement is given: who this rank is, the run's options, and
 * the job's collectives (the bootstrap's, through @ctx). */
struct cb_topo_job_cfg {
	int rank, world;
	int local_rank, local_size;
	const char *host_name, *host_key; /* this host (cb_host_identity) */
	const char *bind, *nic, *gpu;     /* --bind, --nic, --gpu, or NULL */
	const char *topo_xml; /* this rank's: --topo-xml (or a test's
	                       * COLLBENCH_TOPO_XML_<rank>), or NULL */
	/* Device names the run's transports know ("verbs:cbemu0;tcp:lo"), so
	 * --nic may name one hwloc does not; NULL: none. */
	const char *nic_known;
	void *ctx;
	/* Every rank's @bytes from @mine into @all ([world]), on every rank. */
	cb_status_t (*allgather)(void *ctx, const char *what, const void *mine,
	                         size_t bytes, void *all);
	/* Every rank's @bytes (at most @max, a size of its own) to rank 0
	 * only: *@all (rank 0's to free) gets them one after another in rank
	 * order, @lens[world] their sizes (both unused elsewhere). */
	cb_status_t (*gather_root)(void *ctx, const char *what,
	                           const void *mine, size_t bytes, size_t max,
	                           void **all, uint32_t *lens);
};

/*
 * Once per run, after the bootstrap: load this rank's topology (live, or
 * --topo-xml, or COLLBENCH_TOPO_XML_<rank> for one rank), plan and apply
 * --bind for local rank @local_rank of @local_size
 * (-1: inventory only, no binding; ranks of other hosts on the same machine,
 * such as network-namespace test hosts, count as local for binding), and
 * gather every rank's binding and host summary (all ranks take part).  Usage
 * errors (--gpu out of range, a file that does not load) come back as
 * CB_ERR_USAGE, recorded.
 */
cb_status_t cb_topo_job_setup(const struct cb_topo_job_cfg *cfg,
                              struct cb_topo_job **out);
void cb_topo_job_free(struct cb_topo_job *j);
/* Rank 0: the header lines.  "rank 0 -> core 0 (NUMA 0, cpu 0), ..." */
const char *cb_topo_job_binding(const struct cb_topo_job *j);
/* Rank 0: one line per finding, '\n' between them. */
const char *cb_topo_job_inventory(const struct cb_topo_job *j);
/* Rank 0: each host's GPUs in use and their paths (cb_topo_gpu_paths),
 * "host: ..." lines, '\n' between; NULL when no rank has a GPU. */
const char *cb_topo_job_gpu_paths(const struct cb_topo_job *j);
/* Rank 0: how many hosts differ from the majority. */
int cb_topo_job_differing(const struct cb_topo_job *j);
/* This rank's NIC name and GPU index (for transports), or NULL / -1. */
const char *cb_topo_job_nic(const struct cb_topo_job *j);
int cb_topo_job_gpu(const struct cb_topo_job *j);
/* Rank 0: the hosts compared (one per host, or per rank of a host whose
 * ranks loaded different topologies) and what differs. */
int cb_topo_job_hosts(const struct cb_topo_job *j,
                      const struct cb_topo_inv **inv,
                      const struct cb_topo_inv_diff **diff);

/* ---- output (topo/out_table.c, topo/out_json.c) ---- */

/* What `collbench topo` prints. */
struct cb_topo_show {
	const struct cb_topo *t;
	int nranks; /* > 0: also the binding plan for this many local ranks */
	enum cb_topo_bind mode;
	const struct cb_topo_slot *slots; /* [nranks] */
	const char *plan_note;
};

cb_status_t cb_topo_write_table(FILE *f, const struct cb_topo_show *s);
/* CB_ERR_UNAVAILABLE in a build without json-c. */
cb_status_t cb_topo_write_json(FILE *f, const struct cb_topo_show *s);
/* The inventory of a job (`collbench topo --all`), on rank 0. */
cb_status_t cb_topo_write_inv_json(FILE *f, const struct cb_topo_job *j);

#endif
