/* SPDX-License-Identifier: MIT */
/*
 * cli/sweep_tuning.c - the tuning table a sweep decides by: read (auto)
 * or made (tune), the same bytes on every rank, and the header's
 * "# auto:" line that says where auto's choices come from.
 */
#include "cli/sweep_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/log.h"

/* FNV-1a of a file's bytes (0: no file), to see that every rank reads
 * the same table. */
static uint64_t file_hash(const char *path)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		h = (h ^ (uint64_t)(unsigned char)ch) * 0x100000001b3ull;
	fclose(f);
	return h | 1;
}

cb_status_t cb_sweep_tuning(struct cb_comm *c, const struct cb_opts *o,
                            struct cb_sweep_tuning *t)
{
	int named, tune = o->cmd == CB_CMD_TUNE;
	const char *path = cb_tuning_path(o->tuning, &named);
	cb_status_t st = CB_OK;

	t->path = path;
	if (!tune && o->algo_mode != CB_ALGO_AUTO)
		return CB_OK;
	if (!path) {
		if (tune)
			return cb_fail(
			        CB_ERR_USAGE,
			        "tune: where to write? --tuning FILE (not "
			        "none; no HOME or XDG_CONFIG_HOME for the "
			        "default)");
		snprintf(t->source, sizeof(t->source), "the cost model (%s)",
		         named ? "--tuning none" : "no tuning table");
		return CB_OK;
	}
	int there = access(path, F_OK) == 0;
	if (there || (named && !tune))
		st = cb_tuning_load(path, &t->tab);
	else
		st = cb_tuning_new(&t->tab);
	if (st)
		return st;
	uint64_t h = file_hash(path), *all = calloc((size_t)c->world, 8);
	if (!all)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_boot_allgather(c->boot, "every rank's tuning table", &h,
	                       sizeof(h), all);
	for (int r = 1; r < c->world && !st; r++)
		if (all[r] != all[0])
			st = cb_fail(CB_ERR_USAGE,
			             "tuning table %s: rank %d (host %s) reads "
			             "other bytes than rank 0 (host %s); give "
			             "every host the same file",
			             path, r, cb_comm_host_name(c, r),
			             cb_comm_host_name(c, 0));
	free(all);
	if (st || tune)
		return st;
	if (!there)
		snprintf(t->source, sizeof(t->source),
		         "the cost model (no tuning table at %s; collbench "
		         "tune makes one)",
		         path);
	else
		snprintf(t->source, sizeof(t->source),
		         "the tuning table %s (%d job shape%s; the cost model "
		         "for shapes it lacks)",
		         path, cb_tuning_shapes(t->tab),
		         cb_tuning_shapes(t->tab) == 1 ? "" : "s");
	return CB_OK;
}
