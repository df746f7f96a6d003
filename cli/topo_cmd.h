/* SPDX-License-Identifier: MIT */
/* cli/topo_cmd.h - `collbench topo` (cli/topo_cmd.c). */
#ifndef CB_CLI_TOPO_CMD_H
#define CB_CLI_TOPO_CMD_H

/* @argv[0] is "topo"; returns the exit status. */
int cb_topo_cmd(int argc, char **argv);

#endif
