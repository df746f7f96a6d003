/* SPDX-License-Identifier: MIT */
/*
 * topo/out_json.c - `collbench topo --format json`, built with json-c so the
 * quoting is right whatever a device or host is called.  Schema 1: the
 * members below are only ever added to; unknown numbers are null.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cb_config.h"
#include "topo/topo.h"

static json_object *num_or_null(int64_t v)
{
	return v < 0 ? NULL : json_object_new_int64(v);
}

static json_object *str_or_null(const char *s)
{
	return s && s[0] ? json_object_new_string(s) : NULL;
}

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

static json_object *dev_json(const struct cb_topo *t, int i)
{
	const struct cb_topo_dev *d = &t->dev[i];
	json_object *o = json_object_new_object();
	json_object *names = json_object_new_array();
	char list[sizeof(d->aliases)];

	add(o, "index", json_object_new_int(i < t->ngpus ? i : i - t->ngpus));
	add(o, "name", json_object_new_string(d->name));
	snprintf(list, sizeof(list), "%s", d->aliases);
	for (char *save, *a = strtok_r(list, ",", &save); a;
	     a = strtok_r(NULL, ",", &save))
		json_object_array_add(names, json_object_new_string(a));
	add(o, "aliases", names);
	add(o, "kind", json_object_new_string(d->kind));
	add(o, "model", str_or_null(d->model));
	add(o, "pci", str_or_null(d->pci));
	add(o, "numa", d->numa < 0 ? NULL : json_object_new_int(d->numa));
	add(o, "cpu_affinity", str_or_null(d->cpus));
	add(o, "numa_affinity", str_or_null(d->numas));
	if (i >= t->ngpus) {
		add(o, "rdma", json_object_new_boolean(d->rdma));
		add(o, "speed_mbps", num_or_null(d->speed_mbps));
		add(o, "state", json_object_new_string(d->state));
		add(o, "link_source", json_object_new_string(d->link_note));
	} else {
		int nic = cb_topo_nearest_nic(t, i);
		add(o, "nearest_nic",
		    nic < 0 ? NULL
		            : json_object_new_string(
		                      cb_topo_nic(t, nic)->name));
	}
	return o;
}

static json_object *slot_json(const struct cb_topo *t,
                              const struct cb_topo_slot *s, int r)
{
	json_object *o = json_object_new_object();

	add(o, "rank", json_object_new_int(r));
	add(o, "core", s->core < 0 ? NULL : json_object_new_int(s->core));
	add(o, "numa",
	    s->numa < 0 ? NULL
	                : json_object_new_int(t->numa[s->numa].os_index));
	add(o, "cpus",
	    str_or_null(s->core >= 0   ? t->cores[s->core].cpus
	                : s->numa >= 0 ? t->numa[s->numa].cpus
	                               : NULL));
	add(o, "gpu", s->gpu < 0 ? NULL : json_object_new_int(s->gpu));
	add(o, "nic",
	    s->nic < 0 ? NULL
	               : json_object_new_string(cb_topo_nic(t, s->nic)->name));
	return o;
}

static cb_status_t emit(FILE *f, json_object *root)
{
	fprintf(f, "%s\n",
	        json_object_to_json_string_ext(
	                root, JSON_C_TO_STRING_PRETTY |
	                              JSON_C_TO_STRING_SPACED |
	                              JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	fflush(f);
	return CB_OK;
}

cb_status_t cb_topo_write_json(FILE *f, const struct cb_topo_show *s)
{
	const struct cb_topo *t = s->t;
	json_object *root = json_object_new_object();
	json_object *m = json_object_new_object(), *a;
	int ndev = t->ngpus + t->nnics;

	add(root, "schema", json_object_new_int(1));
	add(root, "collbench", json_object_new_string(CB_VERSION));
	add(root, "source", json_object_new_string(t->source));
	add(root, "host", json_object_new_string(t->host));
	add(root, "arch", json_object_new_string(t->arch));
	add(root, "model", str_or_null(t->model));
	add(m, "packages", json_object_new_int(t->npackages));
	add(m, "numa_nodes", json_object_new_int(t->nnuma));
	add(m, "cores", json_object_new_int(t->ncores));
	add(m, "pus", json_object_new_int(t->npus));
	add(m, "memory_bytes", num_or_null(t->mem_bytes));
	add(root, "machine", m);

	a = json_object_new_array();
	for (int i = 0; i < t->ncaches; i++) {
		json_object *c = json_object_new_object();
		char type[2] = { t->cache[i].type, 0 };
		add(c, "level", json_object_new_int(t->cache[i].level));
		add(c, "type", json_object_new_string(type));
		add(c, "bytes", json_object_new_int64(t->cache[i].bytes));
		add(c, "count", json_object_new_int(t->cache[i].count));
		json_object_array_add(a, c);
	}
	add(root, "caches", a);

	a = json_object_new_array();
	for (int i = 0; i < t->nnuma; i++) {
		json_object *n = json_object_new_object();
		add(n, "os_index", json_object_new_int(t->numa[i].os_index));
		add(n, "memory_bytes", num_or_null(t->numa[i].mem_bytes));
		add(n, "cores", json_object_new_int(t->numa[i].ncores));
		add(n, "pus", json_object_new_int(t->numa[i].npus));
		add(n, "cpus", json_object_new_string(t->numa[i].cpus));
		json_object_array_add(a, n);
	}
	add(root, "numa", a);

	a = json_object_new_array();
	for (int i = 0; i < t->ngpus; i++)
		json_object_array_add(a, dev_json(t, i));
	add(root, "gpus", a);
	a = json_object_new_array();
	for (int i = t->ngpus; i < ndev; i++)
		json_object_array_add(a, dev_json(t, i));
	add(root, "nics", a);

	/* The matrix: rows and columns GPU0.., NIC0.. */
	json_object *mx = json_object_new_object(),
	            *labels = json_object_new_array();
	json_object *rows = json_object_new_array();
	for (int i = 0; i < ndev; i++) {
		char l[16];
		snprintf(l, sizeof(l), "%s%d", i < t->ngpus ? "GPU" : "NIC",
		         i < t->ngpus ? i : i - t->ngpus);
		json_object_array_add(labels, json_object_new_string(l));
		json_object *row = json_object_new_array();
		for (int k = 0; k < ndev; k++)
			json_object_array_add(
			        row, json_object_new_string(cb_topo_path_name(
			                     cb_topo_path(t, i, k))));
		json_object_array_add(rows, row);
	}
	add(mx, "devices", labels);
	add(mx, "paths", rows);
	add(root, "matrix", mx);

	a = json_object_new_array();
	static const struct {
		unsigned bit;
		const char *name;
	} unk[] = {
		{ CB_TOPO_UNK_NUMA, "numa" },
		{ CB_TOPO_UNK_MEMORY, "memory" },
		{ CB_TOPO_UNK_PCI, "pci" },
		{ CB_TOPO_UNK_LINK, "link" },
		{ CB_TOPO_UNK_LOCALITY, "locality" },
	};
	for (size_t i = 0; i < sizeof(unk) / sizeof(unk[0]); i++)
		if (t->unknown & unk[i].bit)
			json_object_array_add(
			        a, json_object_new_string(unk[i].name));
	add(root, "unknown", a);

	if (s->nranks > 0) {
		json_object *p = json_object_new_object();
		add(p, "bind",
		    json_object_new_string(cb_topo_bind_name(s->mode)));
		add(p, "note", str_or_null(s->plan_note));
		a = json_object_new_array();
		for (int r = 0; r < s->nranks; r++)
			json_object_array_add(a, slot_json(t, &s->slots[r], r));
		add(p, "ranks", a);
		add(root, "plan", p);
	}
	return emit(f, root);
}

cb_status_t cb_topo_write_inv_json(FILE *f, const struct cb_topo_job *j)
{
	const struct cb_topo_inv *inv;
	const struct cb_topo_inv_diff *d;
	int n = cb_topo_job_hosts(j, &inv, &d);
	json_object *root = json_object_new_object(),
	            *a = json_object_new_array();

	add(root, "schema", json_object_new_int(1));
	add(root, "collbench", json_object_new_string(CB_VERSION));
	add(root, "differing", json_object_new_int(cb_topo_job_differing(j)));
	for (int h = 0; h < n; h++) {
		json_object *o = json_object_new_object(),
		            *nics = json_object_new_array();
		add(o, "host", json_object_new_string(inv[h].host));
		add(o, "source", json_object_new_string(inv[h].source));
		add(o, "packages", json_object_new_int(inv[h].packages));
		add(o, "numa_nodes", json_object_new_int(inv[h].numa));
		add(o, "cores", json_object_new_int(inv[h].cores));
		add(o, "pus", json_object_new_int(inv[h].pus));
		add(o, "memory_bytes", num_or_null(inv[h].mem_bytes));
		add(o, "gpus", json_object_new_int(inv[h].gpus));
		add(o, "nic_count", json_object_new_int(inv[h].nics));
		for (int k = 0; k < inv[h].nics && k < CB_TOPO_INV_NICS; k++) {
			json_object *x = json_object_new_object();
			add(x, "name",
			    json_object_new_string(inv[h].nic[k].name));
			add(x, "speed_mbps",
			    num_or_null(inv[h].nic[k].speed_mbps));
			add(x, "state",
			    json_object_new_string(inv[h].nic[k].state));
			json_object_array_add(nics, x);
		}
		add(o, "nics", nics);
		add(o, "differs", json_object_new_boolean(d[h].differs));
		add(o, "why", str_or_null(d[h].why));
		json_object_array_add(a, o);
	}
	add(root, "hosts", a);
	return emit(f, root);
}
