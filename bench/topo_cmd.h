/* SPDX-License-Identifier: MIT */
/* bench/topo_cmd.h - `collbench topo` (bench/topo_cmd.c). */
#ifndef CB_BENCH_TOPO_CMD_H
#define CB_BENCH_TOPO_CMD_H

/* @argv[0] is "topo"; returns the exit status. */
int cb_topo_cmd(int argc, char **argv);

#endif
