/* SPDX-License-Identifier: MIT */
/*
 * core/types.h - the names of the ABI's statuses, datatypes and operators.
 * They are the core's functions (core/log.c, core/types.c), so they are
 * declared here and not in include/collbench/, whose headers hold only what
 * a transport module can use: a module links nothing of the core (it has
 * the X-macro lists there to make its own names).
 */
#ifndef CB_CORE_TYPES_H
#define CB_CORE_TYPES_H

#include <stddef.h>

#include <collbench/status.h>
#include <collbench/types.h>

/* A short fixed English text for @st; never NULL. */
const char *cb_status_str(cb_status_t st);

/* Names as the CLI spells them ("float32", "sum"); sizes in bytes. */
const char *cb_dtype_name(enum cb_dtype dt);
size_t cb_dtype_bytes(enum cb_dtype dt);
const char *cb_op_name(enum cb_op op);

/* Look up a name or its alias ("float", "half"); -1 when unknown. */
int cb_dtype_parse(const char *s);
int cb_op_parse(const char *s);

#endif
