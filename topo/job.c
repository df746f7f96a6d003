/* SPDX-License-Identifier: MIT */
/*
 * topo/job.c - topology in a run: each rank loads its host's topology, binds
 * itself as --bind says (knowing its local rank and how many ranks share the
 * host), and sends rank 0 its binding and its host's summary in one gather
 * to rank 0 at start-up.  Rank 0 turns them into the header's binding line
 * and inventory lines.  A host's summary comes in full from its first
 * local rank, from ranks that loaded a topology of their own, and from the
 * first SHOW_RANKS ranks (their bindings are shown); every other rank sends
 * a head of 40 bytes (hashes of its host, note and summary; rank 0 checks
 * the summary's against its host's), so rank 0 holds about a summary a
 * host, not a rank (1.3 KiB a rank before: 5 MiB at 4096 ranks).
 *
 * Which topology: cfg->topo_xml (bench/place.c: a test's
 * COLLBENCH_TOPO_XML_<rank>, else --topo-xml / COLLBENCH_TOPO_XML), else the
 * live machine, discovered once per host by its local rank 0 (topo/share.c).
 * A recorded topology plans a binding but applies none.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "topo/share.h"
#include "topo/topo.h"

#define SHOW_RANKS 16 /* in the binding line */

/* What every rank sends (same build on every host). */
struct head {
	int32_t rank;
	int32_t has_topo;
	int32_t bound; /* to a core or a NUMA node */
	int32_t full;  /* the rest of struct entry follows */
	uint64_t key_hash, note_hash, inv_hash;
};

/* A full part: the head, then what the header shows. */
struct entry {
	struct head h;
	char key[128];  /* host identity */
	char bind[160]; /* "core 0 (NUMA 0, cpus 0)" */
	char note[96];  /* "--bind none", "planned on X, not applied" */
	char gpus[320]; /* a host's first local rank: its GPU paths */
	struct cb_topo_inv inv;
};
/* Parts packed one after another stay aligned. */
_Static_assert(sizeof(struct head) % 8 == 0 && sizeof(struct entry) % 8 == 0,
               "topology parts are not multiples of 8 bytes");

/* What rank 0 got: each rank's head, and its entry where it sent one. */
struct parts {
	const struct head **h;  /* [world] */
	const struct entry **e; /* [world], NULL: a head only */
	int world, nhosts;
};

struct cb_topo_job {
	char nic[32];
	int gpu;
	int share_fd; /* a host leader's discovery, for its host's ranks */
	/* rank 0 */
	char *binding, *inventory, *gpu_paths;
	struct cb_topo_inv *hosts;
	struct cb_topo_inv_diff *diff;
	int nhosts, differing;
};

static cb_status_t read_options(const struct cb_topo_job_cfg *cfg,
                                enum cb_topo_bind *mode, const char **nic,
                                int *gpu)
{
	const char *v;
	char *end;

	*mode = CB_TOPO_BIND_AUTO;
	*gpu = -1;
	*nic = cfg->nic;
	if ((v = cfg->bind) &&
	    cb_topo_bind_parse(v, "--bind (or COLLBENCH_BIND)", mode))
		return CB_ERR_USAGE;
	if ((v = cfg->gpu)) {
		errno = 0;
		long g = strtol(v, &end, 10);
		if (errno || end == v || *end || g < 0 || g > 1023)
			return cb_fail(
			        CB_ERR_USAGE,
			        "--gpu '%s' is not a GPU index (0, 1, ...)", v);
		*gpu = (int)g;
	}
	return CB_OK;
}

/*
 * --nic takes a list ("mlx5_0,mlx5_1": a transport stripes over them); the
 * binding follows the first one the topology knows.  A name it does not
 * know is fine when a transport of the run lists it among its devices (the
 * caller lists those in nic_known as "verbs:cbemu0,cbemu1;tcp:lo": an
 * emulated RDMA device has no PCI address); any other is a usage error
 * naming what there is.
 */
static int known_by_transport(const char *known, const char *name)
{
	char kb[1024];

	snprintf(kb, sizeof(kb), "%s", known ? known : "");
	for (char *s1, *grp = strtok_r(kb, ";", &s1); grp;
	     grp = strtok_r(NULL, ";", &s1)) {
		char *names = strchr(grp, ':');
		for (char *s2,
		     *k = names ? strtok_r(names + 1, ",", &s2) : NULL;
		     k; k = strtok_r(NULL, ",", &s2))
			if (!strcmp(k, name))
				return 1;
	}
	return 0;
}

static cb_status_t nic_for_binding(const struct cb_topo *t, const char *list,
                                   const char *known, const char **out)
{
	static char first[64];
	char buf[256];

	*out = NULL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save, *n = strtok_r(buf, ",", &save); n;
	     n = strtok_r(NULL, ",", &save)) {
		if (cb_topo_nic_find(t, n) >= 0) {
			if (!*out) {
				snprintf(first, sizeof(first), "%s", n);
				*out = first;
			}
			continue;
		}
		if (known_by_transport(known, n))
			continue;
		char topo[256] = "", tps[512] = "";
		size_t l = 0;
		for (int i = 0; i < t->nnics; i++)
			cb_buf_appendf(topo, sizeof(topo), &l, "%s%s",
			               i ? ", " : "", cb_topo_nic(t, i)->name);
		/* "verbs:a,b;tcp:lo" -> "verbs: a, b; tcp: lo" */
		l = 0;
		for (const char *p = known ? known : ""; *p; p++) {
			if (l + 3 >= sizeof(tps))
				break;
			if (*p == ':' || *p == ',' || *p == ';')
				cb_buf_appendf(tps, sizeof(tps), &l, "%c ", *p);
			else
				cb_buf_appendf(tps, sizeof(tps), &l, "%c", *p);
		}
		return cb_fail(CB_ERR_USAGE,
		               "--nic %s: no such NIC here (topology: %s%s%s)",
		               n, t->nnics ? topo : "none", tps[0] ? "; " : "",
		               tps);
	}
	return CB_OK;
}

/* Plan and apply this rank's binding; fills bind and note. */
static cb_status_t bind_me(const struct cb_topo_job_cfg *cfg, struct cb_topo *t,
                           int local_rank, int local_size, struct entry *me,
                           struct cb_topo_job *j)
{
	struct cb_topo_slot *slots;
	enum cb_topo_bind mode;
	const char *nic;
	char cpus[CB_TOPO_LIST];
	int gpu;
	cb_status_t st;

	if ((st = read_options(cfg, &mode, &nic, &gpu)))
		return st;
	if (nic && (st = nic_for_binding(t, nic, cfg->nic_known, &nic)))
		return st;
	if (!(slots = calloc((size_t)local_size, sizeof(*slots))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	if ((st = cb_topo_plan(t, mode, local_size, nic, gpu, slots, me->note,
	                       sizeof(me->note)))) {
		free(slots);
		return st;
	}
	struct cb_topo_slot s = slots[local_rank];
	if (local_rank == 0)
		cb_topo_gpu_paths(t, slots, local_size, me->gpus,
		                  sizeof(me->gpus));
	free(slots);
	if (s.nic >= 0)
		snprintf(j->nic, sizeof(j->nic), "%s",
		         cb_topo_nic(t, s.nic)->name);
	j->gpu = s.gpu;
	if (mode == CB_TOPO_BIND_NONE && !me->note[0])
		snprintf(me->note, sizeof(me->note), "--bind none");
	int kept = mode == CB_TOPO_BIND_AUTO &&
	           cb_topo_bound_already(t, cpus, sizeof(cpus));
	if (kept) {
		/* A launcher (or taskset) chose: auto does not undo it. */
		s.core = s.numa = -1;
	} else if (!t->this_system && (s.core >= 0 || s.numa >= 0)) {
		snprintf(me->note, sizeof(me->note),
		         "planned on %.60s, not applied", me->inv.source);
	} else {
		/* Not fatal: the run goes on unbound, and says so. */
		struct cb_fail_rec why;
		cb_fail_open(&why);
		st = cb_topo_bind_apply(t, &s);
		cb_fail_close(&why, 0);
		if (st) {
			cb_log(CB_LOG_WARN, "%s", cb_fail_rec_msg(&why));
			snprintf(me->note, sizeof(me->note),
			         "not applied: %.80s", cb_fail_rec_msg(&why));
			s.core = s.numa = -1;
		}
	}
	cb_topo_slot_str(t, &s, me->bind, sizeof(me->bind));
	me->h.bound = kept || s.core >= 0 || s.numa >= 0;
	if (kept) {
		/* "unbound (NIC eth0)" -> "cpus 0 as launched (NIC eth0)" */
		char dev[sizeof(me->bind)];
		snprintf(dev, sizeof(dev), "%s", me->bind + strlen("unbound"));
		snprintf(me->bind, sizeof(me->bind),
		         "cpus %.60s as launched%.80s", cpus, dev);
	}
	return CB_OK;
}

static char *binding_line(const struct parts *a)
{
	size_t cap = 256 + (size_t)SHOW_RANKS * 300, n = 0;
	char *s = malloc(cap);
	int same_note = 1, unbound = 1, world = a->world;
	const struct entry *first = a->e[0];

	if (!s)
		return NULL;
	for (int r = 0; r < world; r++) {
		same_note &= a->h[r]->note_hash == a->h[0]->note_hash;
		unbound &= !a->h[r]->bound;
	}
	s[0] = '\0';
	if (unbound && same_note) {
		snprintf(s, cap, "none%s%s%s", first->note[0] ? " (" : "",
		         first->note, first->note[0] ? ")" : "");
		return s;
	}
	for (int r = 0; r < world && r < SHOW_RANKS; r++) {
		const struct entry *e = a->e[r];
		cb_buf_appendf(s, cap, &n, "%srank %d%s%s -> %s%s%s%s",
		               r ? ", " : "", r, a->nhosts > 1 ? " on " : "",
		               a->nhosts > 1 ? e->inv.host : "", e->bind,
		               !same_note && e->note[0] ? " [" : "",
		               same_note ? "" : e->note,
		               !same_note && e->note[0] ? "]" : "");
	}
	if (world > SHOW_RANKS)
		cb_buf_appendf(s, cap, &n, ", ... (%d more)",
		               world - SHOW_RANKS);
	if (same_note && first->note[0])
		cb_buf_appendf(s, cap, &n, "; %s", first->note);
	return s;
}

static void inventory_lines(struct cb_topo_job *j, size_t cap);

/* Rank 0: one summary per host, or per rank of a host whose ranks loaded
 * different topologies. */
static cb_status_t inventory(struct cb_topo_job *j, const struct parts *a)
{
	int world = a->world, nfull = 0, notopo = 0, unsent = 0;
	size_t cap, n = 0, wn = 0;
	char which[64] = ""; /* the first ranks unsent */

	for (int r = 0; r < world; r++)
		nfull += a->e[r] && a->h[r]->has_topo;
	cap = 1024 + (size_t)(nfull + 1) * 600;
	j->hosts = calloc((size_t)nfull + 1, sizeof(*j->hosts));
	j->diff = calloc((size_t)nfull + 1, sizeof(*j->diff));
	j->inventory = malloc(cap);
	/* a rank of each */
	const struct entry **rep = calloc((size_t)nfull + 1, sizeof(*rep));
	if (!j->hosts || !j->diff || !j->inventory || !rep) {
		free(rep);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	j->inventory[0] = '\0';
	/* The full parts first: a host's first local rank need not be the
	 * lowest rank of the host. */
	for (int r = 0; r < world; r++) {
		const struct entry *e = a->e[r];
		int h, same_host = 0;
		/* A build without hwloc has nothing to compare. */
		if (!a->h[r]->has_topo) {
			notopo++;
			continue;
		}
		if (!e)
			continue;
		for (h = 0; h < j->nhosts; h++) {
			if (strcmp(rep[h]->key, e->key))
				continue;
			same_host = 1;
			if (!memcmp(&rep[h]->inv, &e->inv, sizeof(e->inv)))
				break;
		}
		if (h < j->nhosts)
			continue;
		rep[j->nhosts] = e;
		j->hosts[j->nhosts] = e->inv;
		if (same_host)
			snprintf(j->hosts[j->nhosts].host,
			         sizeof(j->hosts[0].host), "%.40s (rank %d)",
			         e->inv.host, r);
		j->nhosts++;
	}
	/* A head alone stands for a summary its host sent in full. */
	for (int r = 0; r < world; r++) {
		const struct head *hd = a->h[r];
		int h;
		if (a->e[r] || !hd->has_topo)
			continue;
		for (h = 0; h < j->nhosts; h++)
			if (rep[h]->h.key_hash == hd->key_hash &&
			    rep[h]->h.inv_hash == hd->inv_hash)
				break;
		if (h == j->nhosts && unsent++ < 4)
			cb_buf_appendf(which, sizeof(which), &wn, "%s%d",
			               unsent > 1 ? ", " : "", r);
	}
	if (unsent > 4)
		cb_buf_appendf(which, sizeof(which), &wn, ", ...");
	free(rep);
	if (notopo == world) {
		snprintf(j->inventory, cap, "unknown (built without hwloc)");
		return CB_OK;
	}
	j->differing = cb_topo_inv_compare(j->hosts, j->nhosts, j->diff);
	inventory_lines(j, cap);
	n = strlen(j->inventory);
	if (notopo)
		cb_buf_appendf(j->inventory, cap, &n,
		               "\n%d rank%s sent no topology (built without "
		               "hwloc): not compared",
		               notopo, notopo == 1 ? "" : "s");
	if (unsent) {
		cb_buf_appendf(
		        j->inventory, cap, &n,
		        "\nWARNING: %d rank%s (%s) loaded a topology unlike "
		        "their host's first rank's (sent as a hash only: "
		        "not compared)",
		        unsent, unsent == 1 ? "" : "s", which);
		cb_log(CB_LOG_WARN,
		       "inventory: %d rank%s (%s) loaded a topology unlike "
		       "their host's first rank's",
		       unsent, unsent == 1 ? "" : "s", which);
	}
	return CB_OK;
}

/* The lines of the inventory (hosts compared already). */
static void inventory_lines(struct cb_topo_job *j, size_t cap)
{
	char line[1024];
	size_t n = 0;

	if (j->nhosts == 1) {
		cb_topo_inv_str(&j->hosts[0], line, sizeof(line));
		snprintf(j->inventory, cap, "1 host: %s: %s", j->hosts[0].host,
		         line);
		return;
	}
	if (!j->differing) {
		cb_topo_inv_str(&j->hosts[0], line, sizeof(line));
		snprintf(j->inventory, cap, "%d hosts alike: %s", j->nhosts,
		         line);
		return;
	}
	cb_buf_appendf(j->inventory, cap, &n,
	               "%d hosts, %d unlike the others (see below)", j->nhosts,
	               j->differing);
	for (int h = 0; h < j->nhosts; h++) {
		if (!j->diff[h].differs)
			continue;
		cb_buf_appendf(j->inventory, cap, &n,
		               "\nWARNING: host %s differs: %s",
		               j->hosts[h].host, j->diff[h].why);
		cb_log(CB_LOG_WARN, "inventory: host %s differs: %s",
		       j->hosts[h].host, j->diff[h].why);
	}
	for (int h = 0; h < j->nhosts; h++) {
		cb_topo_inv_str(&j->hosts[h], line, sizeof(line));
		cb_buf_appendf(j->inventory, cap, &n, "\n%s: %s",
		               j->hosts[h].host, line);
	}
}

/* Rank 0: the hosts' GPU lines, from the first local rank of each. */
static cb_status_t gpu_paths(struct cb_topo_job *j, const struct parts *a)
{
	size_t cap = 0, n = 0;

	for (int r = 0; r < a->world; r++)
		if (a->e[r] && a->e[r]->gpus[0])
			cap += sizeof(a->e[r]->gpus) + 80;
	for (int r = 0; r < a->world; r++) {
		const struct entry *e = a->e[r];
		if (!e || !e->gpus[0])
			continue;
		if (!j->gpu_paths && !(j->gpu_paths = malloc(cap)))
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		cb_buf_appendf(j->gpu_paths, cap, &n, "%s%s: %s", n ? "\n" : "",
		               e->inv.host, e->gpus);
	}
	return CB_OK;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* Rank 0: the packed parts of @world ranks (@lens each) read into @a. */
static cb_status_t parts_read(const void *all, const uint32_t *lens, int world,
                              struct parts *a)
{
	const char *p = all;
	uint64_t *keys = malloc((size_t)world * sizeof(*keys));

	a->world = world;
	a->h = calloc((size_t)world, sizeof(*a->h));
	a->e = calloc((size_t)world, sizeof(*a->e));
	if (!keys || !a->h || !a->e) {
		free(keys);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	int nfull = 0;
	for (int r = 0; r < world; r++) {
		const struct head *h = (const struct head *)p;
		int full = lens[r] == sizeof(struct entry);
		const char *bad = lens[r] != sizeof(*h) && !full
		                          ? "has a size unlike this build's"
		                  : h->rank != r ? "names another rank"
		                  : h->full != full
		                          ? "has a head and size that disagree"
		                  : r < SHOW_RANKS && !full
		                          ? "is a head where the binding shown "
		                            "needs it whole"
		                          : NULL;
		if (bad) {
			free(keys);
			return cb_fail(
			        CB_ERR_PROTO,
			        "rank %d's topology part (%u bytes; this "
			        "build's: %zu or %zu) %s",
			        r, lens[r], sizeof(struct head),
			        sizeof(struct entry), bad);
		}
		a->h[r] = h;
		a->e[r] = full ? (const struct entry *)p : NULL;
		nfull += full;
		keys[r] = h->key_hash;
		p += lens[r];
	}
	qsort(keys, (size_t)world, sizeof(*keys), cmp_u64);
	a->nhosts = 0;
	for (int r = 0; r < world; r++)
		a->nhosts += !r || keys[r] != keys[r - 1];
	free(keys);
	cb_log(CB_LOG_DEBUG,
	       "topology: %d rank%s sent a summary in full, %d a head alone "
	       "(%zu bytes in all), %d host%s",
	       nfull, nfull == 1 ? "" : "s", world - nfull,
	       (size_t)(p - (const char *)all), a->nhosts,
	       a->nhosts == 1 ? "" : "s");
	return CB_OK;
}

cb_status_t cb_topo_job_setup(const struct cb_topo_job_cfg *cfg,
                              struct cb_topo_job **out)
{
	int rank = cfg->rank, world = cfg->world;
	int local_rank = cfg->local_rank, local_size = cfg->local_size;
	struct cb_topo_job *j = calloc(1, sizeof(*j));
	struct entry *me = calloc(1, sizeof(*me));
	void *all = NULL;
	uint32_t *lens = NULL;
	struct cb_topo *t = NULL;
	struct cb_fail_rec why; /* no hwloc: a note, not a failure */
	struct cb_topo_place place = { 0 };
	char leader[64] = "";
	const char *xml;
	cb_status_t st = CB_OK, st2;

	if (j)
		j->share_fd = -1;
	if (!j || !me) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	j->gpu = -1;
	snprintf(me->key, sizeof(me->key), "%s", cfg->host_key);
	me->h.rank = rank;
	xml = cfg->topo_xml;
	cb_fail_open(&why);
	place.fd = -1;
	place.pid = (int32_t)getpid();
	/* A host's local rank 0 discovers first and shares it. */
	if (local_rank == 0 && !xml) {
		st = cb_topo_load(NULL, NULL, &t);
		if (!st && cb_topo_share_discovery(t, &j->share_fd) == 0)
			place.fd = j->share_fd;
	}
	/* Every rank takes part, hwloc or not, so the gathers line up. */
	if (local_rank >= 0 &&
	    (st2 = cb_topo_machine_place(cfg, &place, &local_rank, &local_size,
	                                 leader, sizeof(leader)))) {
		cb_fail_close(&why, 1);
		st = st2;
		goto out;
	}
	if (!t && st == CB_OK)
		st = cb_topo_load_mine(xml, leader, &t);
	cb_fail_close(&why, st != CB_ERR_UNAVAILABLE);
	if (st == CB_ERR_UNAVAILABLE) {
		snprintf(me->bind, sizeof(me->bind), "unbound");
		snprintf(me->note, sizeof(me->note), "built without hwloc");
	} else if (st) {
		goto out;
	} else {
		me->h.has_topo = 1;
		cb_topo_inv_fill(t, cfg->host_name, &me->inv);
		if (local_rank < 0)
			snprintf(me->bind, sizeof(me->bind), "unbound");
		else if ((st = bind_me(cfg, t, local_rank, local_size, me, j)))
			goto out;
	}
	/* Only rank 0 reads them: gathered to it alone, not to everyone
	 * (a world of summaries to each of a world of ranks).  A rank whose
	 * topology is its host leader's, shared, sends its head alone. */
	me->h.full = rank < SHOW_RANKS || local_rank <= 0 || xml != NULL;
	me->h.key_hash = cb_str_hash(CB_STR_HASH0, me->key);
	me->h.note_hash = cb_str_hash(CB_STR_HASH0, me->note);
	me->h.inv_hash = cb_mem_hash(CB_STR_HASH0, &me->inv, sizeof(me->inv));
	if (rank == 0 && !(lens = calloc((size_t)world, sizeof(*lens)))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((st = cfg->gather_root(cfg->ctx, "every rank's topology", me,
	                           me->h.full ? sizeof(*me) : sizeof(me->h),
	                           sizeof(*me), &all, lens)))
		goto out;
	if (rank == 0) {
		struct parts a = { 0 };
		if (!(st = parts_read(all, lens, world, &a)) &&
		    !(j->binding = binding_line(&a)))
			st = cb_fail(CB_ERR_NOMEM, "out of memory");
		if (!st && !(st = inventory(j, &a)))
			st = gpu_paths(j, &a);
		free(a.h);
		free(a.e);
		if (st)
			goto out;
	}
out:
	cb_topo_free(t);
	free(all);
	free(lens);
	free(me);
	if (st) {
		cb_topo_job_free(j);
		return st;
	}
	*out = j;
	return CB_OK;
}

void cb_topo_job_free(struct cb_topo_job *j)
{
	if (!j)
		return;
	if (j->share_fd >= 0)
		close(j->share_fd);
	cb_free_all(j->binding, j->inventory, j->gpu_paths, j->hosts, j->diff,
	            j);
}

const char *cb_topo_job_binding(const struct cb_topo_job *j)
{
	return j ? j->binding : NULL;
}

const char *cb_topo_job_inventory(const struct cb_topo_job *j)
{
	return j ? j->inventory : NULL;
}

const char *cb_topo_job_gpu_paths(const struct cb_topo_job *j)
{
	return j ? j->gpu_paths : NULL;
}

int cb_topo_job_differing(const struct cb_topo_job *j)
{
	return j ? j->differing : 0;
}

const char *cb_topo_job_nic(const struct cb_topo_job *j)
{
	return j && j->nic[0] ? j->nic : NULL;
}

int cb_topo_job_gpu(const struct cb_topo_job *j)
{
	return j ? j->gpu : -1;
}

int cb_topo_job_hosts(const struct cb_topo_job *j,
                      const struct cb_topo_inv **inv,
                      const struct cb_topo_inv_diff **diff)
{
	*inv = j ? j->hosts : NULL;
	*diff = j ? j->diff : NULL;
	return j ? j->nhosts : 0;
}
