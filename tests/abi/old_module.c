/* SPDX-License-Identifier: MIT */
/*
 * tests/abi/old_module.c - a transport module this collbench must refuse,
 * with one line, before it calls anything in it: built with -DOLD_ABI, one
 * of transport ABI 2 (its table exported as cb_tp_ops_v2, its host callbacks
 * without `self`); without it, a table under this ABI's symbol that says it
 * is of another version.  Every member is NULL: calling one would crash.
 */
#include <stdint.h>

struct old_ops {
	uint32_t abi, size;
	const char *name;
	void *members[40];
};

#ifdef OLD_ABI
__attribute__((visibility("default"))) const struct old_ops cb_tp_ops_v2 = {
	.abi = 2,
	.size = sizeof(struct old_ops),
	.name = "verbs",
};
#else
__attribute__((visibility("default"))) const struct old_ops cb_tp_ops_v3 = {
	.abi = 2,
	.size = sizeof(struct old_ops),
	.name = "verbs",
};
#endif
