/* SPDX-License-Identifier: MIT */
/*
 * core/env.h - an option view: the run's settings a communicator and its
 * transports read by name (h->option(h, "tcp-streams")), as strings.
 *
 * The CLI parses every option once into its own typed struct
 * (bench/options.h, acceptance/accept.h), which holds one of these; the
 * communicator reads it through cb_comm_cfg.option.  There is no process
 * global: a communicator given no view sees no options.
 */
#ifndef CB_CORE_ENV_H
#define CB_CORE_ENV_H

#include <string.h>

#include <collbench/status.h>

#define CB_OPTSET_MAX 32

struct cb_optset {
	int n;
	struct {
		char key[32];
		char value[1024]; /* a path, an interface name, a number */
	} kv[CB_OPTSET_MAX];
};

/* @key = @value in @s, replacing an earlier value; CB_ERR_USAGE
 * (recorded) when @s is full or either is too long. */
cb_status_t cb_optset_put(struct cb_optset *s, const char *key,
                          const char *value);
/* @key's value, or NULL when unset. */
const char *cb_optset_get(const struct cb_optset *s, const char *key);
/* For cb_comm_cfg.option, with option_arg a struct cb_optset. */
const char *cb_optset_lookup(void *set, const char *key);
/* @v (a value from a view, maybe NULL) is @want. */
static inline int cb_opt_is(const char *v, const char *want)
{
	return v && !strcmp(v, want);
}

/*
 * Once, after the command line: every key @s lacks that has a documented
 * variable (tcp-if: COLLBENCH_TCP_IF, ...; the man page's ENVIRONMENT, and
 * no other key) from that variable.  A flag wins over its variable.
 * CB_ERR_USAGE (recorded, naming the variable) for a value too long.
 */
cb_status_t cb_optset_env(struct cb_optset *s);

#endif
