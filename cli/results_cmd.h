/* SPDX-License-Identifier: MIT */
/*
 * cli/results_cmd.h - `collbench plot|compare|report`.
 */
#ifndef CB_CLI_RESULTS_CMD_H
#define CB_CLI_RESULTS_CMD_H

/* @argv[0] is "plot", "compare" or "report"; returns the exit status. */
int cb_results_cmd(int argc, char **argv);

#endif
