/* SPDX-License-Identifier: MIT */
/*
 * topo/discover.c - one host's topology from hwloc: the live machine, a
 * recorded hwloc XML file or a synthetic description, copied into struct
 * cb_topo.  This file loads it and reads its PCI devices; the CPU side
 * (machine, NUMA nodes, cores, caches) is topo/discover_cpu.c's.
 *
 * GPUs: a PCI device with a CUDA, NVML, OpenCL, ROCm SMI or Level Zero OS
 * device, or else of PCI class 3D controller (0302) or other display (0380),
 * or an NVIDIA VGA device (0300).  Other VGA devices are left out: on
 * servers they are the BMC's display chip (Matrox, ASPEED, ATI ES1000).
 * NICs: a device with network (netdev) or OpenFabrics (verbs) OS devices;
 * all OS devices of one PCI function are one NIC, named after its verbs
 * device when it has one.
 *
 * Paths between devices follow the PCI tree (see cb_topo_path_name); link
 * speed and state come from sysfs for the live machine only, and from the
 * file's LinkSpeedMbps/LinkState infos (written by cb_topo_export_xml) or
 * hwloc's InfiniBand port state for a recording: the machine running
 * collbench never leaks into a recorded one.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/strbuf.h"
#include "topo/hw.h"
#include "topo/topo.h"

#define LINK_SPEED_INFO "LinkSpeedMbps"
#define LINK_STATE_INFO "LinkState"

static void hw_destroy(void *hw)
{
	hwloc_topology_destroy(hw);
}

/* ---- devices ---- */

struct found {
	struct cb_topo_dev d;
	hwloc_obj_t obj; /* the PCI device, or the OS device off PCI */
	hwloc_obj_t osdevs[8];
	int nosdevs;
	int is_gpu;
};

static int is_gpu_osdev(hwloc_obj_t o)
{
	const char *st = o->subtype ? o->subtype : "";

	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
		return 1;
	return o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU &&
	       (!strcmp(st, "NVML") || !strcmp(st, "RSMI") ||
	        !strcmp(st, "LevelZero"));
}

static int is_net_osdev(hwloc_obj_t o)
{
	return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
	       o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

static void add_alias(struct cb_topo_dev *d, const char *name)
{
	size_t n = strlen(d->aliases);

	if (!strcmp(name, d->name))
		return;
	cb_buf_appendf(d->aliases, sizeof(d->aliases), &n, "%s%s", n ? "," : "",
	               name);
}

static void name_gpu(struct found *f)
{
	struct cb_topo_dev *d = &f->d;
	hwloc_obj_t best = NULL;
	const char *v;

	for (int i = 0; i < f->nosdevs; i++) {
		hwloc_obj_t o = f->osdevs[i];
		if (!is_gpu_osdev(o))
			continue;
		/* CUDA's name first: it is the one programs use. */
		if (!best || (o->subtype && !strcmp(o->subtype, "CUDA")))
			best = o;
	}
	if (best) {
		snprintf(d->name, sizeof(d->name), "%s", best->name);
		snprintf(d->kind, sizeof(d->kind), "%s",
		         best->subtype ? best->subtype : "GPU");
		if ((v = info(best, "GPUModel")))
			snprintf(d->model, sizeof(d->model), "%s", v);
	} else {
		snprintf(d->name, sizeof(d->name), "%s", d->pci);
		snprintf(d->kind, sizeof(d->kind), "PCI");
	}
	for (int i = 0; i < f->nosdevs; i++)
		if (is_gpu_osdev(f->osdevs[i]))
			add_alias(d, f->osdevs[i]->name);
}

static void name_nic(struct found *f)
{
	struct cb_topo_dev *d = &f->d;
	int ib = 0;

	for (int i = 0; i < f->nosdevs; i++) {
		hwloc_obj_t o = f->osdevs[i];
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS &&
		    !d->rdma) {
			d->rdma = 1;
			snprintf(d->name, sizeof(d->name), "%s", o->name);
		}
		if (!strncmp(o->name, "ib", 2))
			ib = 1;
	}
	if (!d->rdma)
		for (int i = 0; i < f->nosdevs && !d->name[0]; i++)
			if (is_net_osdev(f->osdevs[i]))
				snprintf(d->name, sizeof(d->name), "%s",
				         f->osdevs[i]->name);
	for (int i = 0; i < f->nosdevs; i++)
		if (is_net_osdev(f->osdevs[i]))
			add_alias(d, f->osdevs[i]->name);
	/* A recording cannot say more; sysfs refines it for the live
	 * machine (RoCE, iWARP). */
	snprintf(d->kind, sizeof(d->kind), "%s",
	         ib        ? "InfiniBand"
	         : d->rdma ? "RDMA"
	                   : "Ethernet");
}

static int pci_gpu_class(hwloc_obj_t pci)
{
	unsigned cls = pci->attr->pcidev.class_id;

	return cls == 0x0302 || cls == 0x0380 ||
	       (cls == 0x0300 && pci->attr->pcidev.vendor_id == 0x10de);
}

static void locality(struct cb_topo *t, struct found *f)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->hw, f->obj);
	hwloc_obj_t root = hwloc_get_root_obj(t->hw);
	struct cb_topo_dev *d = &f->d;

	d->numa = -1;
	/* Hanging from the root of a multi-node machine means the OS did
	 * not say where the device is. */
	if (!anc || (anc == root && t->nnuma > 1)) {
		t->unknown |= CB_TOPO_UNK_LOCALITY;
		return;
	}
	list_str(anc->cpuset, d->cpus, sizeof(d->cpus));
	list_str(anc->nodeset, d->numas, sizeof(d->numas));
	if (hwloc_bitmap_weight(anc->nodeset) == 1)
		d->numa = hwloc_bitmap_first(anc->nodeset);
}

static void link_from_recording(struct found *f)
{
	struct cb_topo_dev *d = &f->d;
	const char *v;

	snprintf(d->link_note, sizeof(d->link_note), "not in the recording");
	for (int i = 0; i < f->nosdevs; i++) {
		hwloc_obj_t o = f->osdevs[i];
		if ((v = info(o, LINK_SPEED_INFO)) && d->speed_mbps < 0)
			d->speed_mbps = atoi(v);
		if ((v = info(o, LINK_STATE_INFO)) &&
		    !strcmp(d->state, "unknown"))
			snprintf(d->state, sizeof(d->state), "%s", v);
	}
	/* hwloc records an InfiniBand port's state as a number. */
	static const char *const ib_states[] = { "nop",    "down",
		                                 "init",   "armed",
		                                 "active", "active_defer" };
	for (int i = 0; i < f->nosdevs && !strcmp(d->state, "unknown"); i++) {
		if (f->osdevs[i]->attr->osdev.type !=
		            HWLOC_OBJ_OSDEV_OPENFABRICS ||
		    !(v = info(f->osdevs[i], "Port1State")))
			continue;
		int s = atoi(v);
		if (s >= 0 && s <= 5)
			snprintf(d->state, sizeof(d->state), "%s",
			         ib_states[s]);
	}
	if (d->speed_mbps >= 0 || strcmp(d->state, "unknown"))
		snprintf(d->link_note, sizeof(d->link_note), "recorded");
}

/* A new, zeroed entry for @obj at the end of *@fs; its index, or -1 when
 * out of memory. */
static int found_add(struct found **fs, int *nf, int *cap, hwloc_obj_t obj)
{
	if (*nf == *cap) {
		int c = *cap ? 2 * *cap : 16;
		struct found *nfs = realloc(*fs, (size_t)c * sizeof(**fs));
		if (!nfs)
			return -1;
		*fs = nfs;
		*cap = c;
	}
	memset(&(*fs)[*nf], 0, sizeof(**fs));
	(*fs)[*nf].obj = obj;
	return (*nf)++;
}

static void collect(struct cb_topo *t, struct found **out, int *n)
{
	hwloc_topology_t hw = t->hw;
	struct found *fs = NULL;
	int nf = 0, cap = 0;

	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(hw, o));) {
		int gpu = is_gpu_osdev(o), net = is_net_osdev(o);
		hwloc_obj_t pci =
		        o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE
		                ? o->parent
		                : NULL;
		hwloc_obj_t key = pci ? pci : o;
		int i;
		for (i = 0; i < nf && fs[i].obj != key; i++)
			;
		if (i == nf) {
			if (!gpu && !net && !(pci && pci_gpu_class(pci)))
				continue;
			if (found_add(&fs, &nf, &cap, key) < 0)
				break;
		}
		if (fs[i].nosdevs < 8)
			fs[i].osdevs[fs[i].nosdevs++] = o;
		if (gpu)
			fs[i].is_gpu = 1;
	}
	/* GPUs that no driver published an OS device for. */
	for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(hw, p));) {
		int i;
		if (!pci_gpu_class(p))
			continue;
		for (i = 0; i < nf && fs[i].obj != p; i++)
			;
		if (i < nf) {
			fs[i].is_gpu = 1;
			continue;
		}
		if ((i = found_add(&fs, &nf, &cap, p)) < 0)
			break;
		fs[i].is_gpu = 1;
	}
	*out = fs;
	*n = nf;
}

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->is_gpu != y->is_gpu)
		return y->is_gpu - x->is_gpu;
	/* Off PCI last; then bus id order; then name. */
	if (!x->d.pci[0] != !y->d.pci[0])
		return !x->d.pci[0] - !y->d.pci[0];
	int c = strcmp(x->d.pci, y->d.pci);
	return c ? c : strcmp(x->d.name, y->d.name);
}

/* Bridges on the way from @o up to (not including) @anc. */
static int bridges_below(hwloc_obj_t o, hwloc_obj_t anc)
{
	int n = 0;

	for (o = o->parent; o && o != anc; o = o->parent)
		n += o->type == HWLOC_OBJ_BRIDGE;
	return n;
}

static enum cb_topo_path path_between(hwloc_topology_t hw, hwloc_obj_t a,
                                      hwloc_obj_t b)
{
	hwloc_obj_t lca = NULL;

	if (a == b)
		return CB_TOPO_PATH_X;
	/* hwloc_get_common_ancestor_obj() compares depths, and I/O objects
	 * have none: walk the parents instead. */
	for (hwloc_obj_t x = a; x && !lca; x = x->parent)
		for (hwloc_obj_t y = b; y; y = y->parent)
			if (x == y) {
				lca = x;
				break;
			}
	if (lca && lca->type == HWLOC_OBJ_BRIDGE) {
		if (lca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			return CB_TOPO_PATH_PHB;
		return bridges_below(a, lca) + bridges_below(b, lca) == 0
		               ? CB_TOPO_PATH_PIX
		               : CB_TOPO_PATH_PXB;
	}
	hwloc_obj_t na = hwloc_get_non_io_ancestor_obj(hw, a);
	hwloc_obj_t nb = hwloc_get_non_io_ancestor_obj(hw, b);
	if (na && nb && hwloc_bitmap_isequal(na->nodeset, nb->nodeset) &&
	    hwloc_bitmap_weight(na->nodeset) == 1)
		return CB_TOPO_PATH_NODE;
	return CB_TOPO_PATH_SYS;
}

static void nvlinks(struct cb_topo *t, struct found *fs, int ndev)
{
	struct hwloc_distances_s *dist[4];
	unsigned nr = 4;

	if (hwloc_distances_get_by_name(t->hw, "NVLinkBandwidth", &nr, dist,
	                                0) != 0)
		return;
	for (unsigned k = 0; k < nr && k < 4; k++) {
		struct hwloc_distances_s *ds = dist[k];
		for (unsigned i = 0; i < ds->nbobjs; i++)
			for (unsigned j = 0; j < ds->nbobjs; j++) {
				if (i == j || !ds->values[i * ds->nbobjs + j])
					continue;
				int a = -1, b = -1;
				for (int d = 0; d < t->ngpus; d++) {
					hwloc_obj_t p = fs[d].obj;
					if (ds->objs[i] == p ||
					    ds->objs[i]->parent == p)
						a = d;
					if (ds->objs[j] == p ||
					    ds->objs[j]->parent == p)
						b = d;
				}
				if (a >= 0 && b >= 0 && a != b)
					t->path[a * ndev + b] =
					        CB_TOPO_PATH_NVL;
			}
		hwloc_distances_release(t->hw, ds);
	}
}

static cb_status_t extract_devices(struct cb_topo *t, int live, int synthetic)
{
	struct found *fs;
	int nf;

	collect(t, &fs, &nf);
	/* A synthetic topology has no I/O by design. */
	if (!synthetic && hwloc_get_next_pcidev(t->hw, NULL) == NULL)
		t->unknown |= CB_TOPO_UNK_PCI;
	for (int i = 0; i < nf; i++) {
		struct found *f = &fs[i];
		struct cb_topo_dev *d = &f->d;
		const char *v;
		if (f->obj->type == HWLOC_OBJ_PCI_DEVICE) {
			struct hwloc_pcidev_attr_s *pa = &f->obj->attr->pcidev;
			snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%01x",
			         pa->domain, pa->bus, pa->dev, pa->func);
			if ((v = info(f->obj, "PCIDevice")) ||
			    (v = info(f->obj, "PCIVendor")))
				snprintf(d->model, sizeof(d->model), "%s", v);
		}
		d->speed_mbps = -1;
		snprintf(d->state, sizeof(d->state), "unknown");
		if (f->is_gpu) {
			name_gpu(f);
		} else {
			name_nic(f);
			if (live)
				cb_topo_link_read("/sys", d);
			else
				link_from_recording(f);
			if (d->speed_mbps < 0 || !strcmp(d->state, "unknown"))
				t->unknown |= CB_TOPO_UNK_LINK;
		}
		locality(t, f);
	}
	if (nf) /* qsort(NULL, 0) is undefined (a machine without devices) */
		qsort(fs, (size_t)nf, sizeof(*fs), cmp_found);
	t->dev = calloc((size_t)(nf ? nf : 1), sizeof(*t->dev));
	t->path = calloc((size_t)(nf ? nf * nf : 1), 1);
	if (!t->dev || !t->path) {
		free(fs);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < nf; i++) {
		t->dev[i] = fs[i].d;
		if (fs[i].is_gpu)
			t->ngpus++;
		else
			t->nnics++;
	}
	for (int i = 0; i < nf; i++)
		for (int j = 0; j < nf; j++)
			t->path[i * nf + j] = (unsigned char)path_between(
			        t->hw, fs[i].obj, fs[j].obj);
	nvlinks(t, fs, nf);
	free(fs);
	return CB_OK;
}

/* @host_copy: @xml is this host's live topology as another rank of the host
 * discovered it (cb_topo_load_host). */
static cb_status_t load(const char *xml, const char *synthetic, int host_copy,
                        struct cb_topo **out)
{
	struct cb_topo *t = calloc(1, sizeof(*t));
	hwloc_topology_t hw;
	cb_status_t st;

	if (!t)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	if (xml && access(xml, R_OK) != 0) {
		st = cb_fail(CB_ERR_USAGE, "cannot read topology file '%s': %s",
		             xml, strerror(errno));
		free(t);
		return st;
	}
	/* hwloc's own multi-line reports about odd firmware data would break
	 * the one-line-per-problem rule; the user can still ask for them. */
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	if (hwloc_topology_init(&hw) != 0) {
		free(t);
		return cb_fail(CB_ERR_SYS, "hwloc: cannot initialize: %s",
		               strerror(errno));
	}
	t->hw = hw;
	t->hw_free = hw_destroy;
	/* PCI devices and bridges that lead to something worth showing,
	 * and OS devices. */
	hwloc_topology_set_io_types_filter(hw,
	                                   HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (host_copy) {
		/* The machine we run on: binding applies, sysfs refines. */
		snprintf(t->source, sizeof(t->source), "live");
		if (hwloc_topology_set_flags(
		            hw, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) != 0 ||
		    hwloc_topology_set_xml(hw, xml) != 0 ||
		    hwloc_topology_load(hw) != 0) {
			st = cb_fail(
			        CB_ERR_SYS,
			        "cannot load the host's topology from '%s'",
			        xml);
			goto fail;
		}
		t->this_system = hwloc_topology_is_thissystem(hw);
	} else if (xml) {
		snprintf(t->source, sizeof(t->source), "xml %s", xml);
		if (hwloc_topology_set_xml(hw, xml) != 0 ||
		    hwloc_topology_load(hw) != 0) {
			st = cb_fail(CB_ERR_USAGE,
			             "topology file '%s' is not an hwloc XML "
			             "topology that hwloc %s can load",
			             xml, HWLOC_VERSION);
			goto fail;
		}
	} else if (synthetic) {
		snprintf(t->source, sizeof(t->source), "synthetic %s",
		         synthetic);
		if (hwloc_topology_set_synthetic(hw, synthetic) != 0 ||
		    hwloc_topology_load(hw) != 0) {
			st = cb_fail(CB_ERR_USAGE,
			             "synthetic topology '%s' does not parse "
			             "(hwloc's syntax, e.g. \"pack:2 numa:2 "
			             "core:4 pu:2\")",
			             synthetic);
			goto fail;
		}
	} else {
		snprintf(t->source, sizeof(t->source), "live");
		if (hwloc_topology_load(hw) != 0) {
			st = cb_fail(CB_ERR_SYS,
			             "hwloc cannot discover this machine: %s",
			             strerror(errno));
			goto fail;
		}
		t->this_system = hwloc_topology_is_thissystem(hw);
	}
	if ((st = cb_topo_hw_host(t)))
		goto fail;
	if ((st = extract_devices(t, host_copy || (!xml && !synthetic),
	                          synthetic != NULL)))
		goto fail;
	*out = t;
	return CB_OK;
fail:
	cb_topo_free(t);
	return st;
}

cb_status_t cb_topo_load(const char *xml, const char *synthetic,
                         struct cb_topo **out)
{
	return load(xml, synthetic, 0, out);
}

cb_status_t cb_topo_load_host(const char *xml, struct cb_topo **out)
{
	return load(xml, NULL, 1, out);
}

cb_status_t cb_topo_export_xml(struct cb_topo *t, const char *path)
{
	/* Keep what sysfs said about the live links in the recording. */
	for (int i = 0; t->this_system && i < t->nnics; i++) {
		const struct cb_topo_dev *d = cb_topo_nic(t, i);
		hwloc_obj_t o = NULL;
		char v[16];
		while ((o = hwloc_get_next_osdev(t->hw, o)))
			if (!strcmp(o->name, d->name))
				break;
		if (!o || info(o, LINK_STATE_INFO))
			continue;
		if (d->speed_mbps >= 0) {
			snprintf(v, sizeof(v), "%d", d->speed_mbps);
			hwloc_obj_add_info(o, LINK_SPEED_INFO, v);
		}
		if (strcmp(d->state, "unknown"))
			hwloc_obj_add_info(o, LINK_STATE_INFO, d->state);
	}
	if (hwloc_topology_export_xml(t->hw, path, 0) != 0)
		return cb_fail(CB_ERR_USAGE, "cannot write '%s': %s", path,
		               strerror(errno));
	return CB_OK;
}
const int cb_topo_have_hwloc = 1;
