/* SPDX-License-Identifier: MIT */
/* core/types.c - datatype and operator names, from the X-macro lists. */
#include <string.h>

#include "core/types.h"

static const struct {
	const char *name, *alias;
	size_t bytes;
} dtypes[] = {
#define CB_DTYPE_ROW(id, name, alias, size) { name, alias, size },
	CB_DTYPE_MAP(CB_DTYPE_ROW)
#undef CB_DTYPE_ROW
};

static const char *const ops[] = {
#define CB_OP_ROW(id, name) name,
	CB_OP_MAP(CB_OP_ROW)
#undef CB_OP_ROW
};

const char *cb_dtype_name(enum cb_dtype dt)
{
	return (unsigned)dt < CB_DT_COUNT ? dtypes[dt].name : "?";
}

size_t cb_dtype_bytes(enum cb_dtype dt)
{
	return (unsigned)dt < CB_DT_COUNT ? dtypes[dt].bytes : 0;
}

const char *cb_op_name(enum cb_op op)
{
	return (unsigned)op < CB_OP_COUNT ? ops[op] : "?";
}

int cb_dtype_parse(const char *s)
{
	for (int i = 0; i < CB_DT_COUNT; i++)
		if (!strcmp(s, dtypes[i].name) || !strcmp(s, dtypes[i].alias))
			return i;
	return -1;
}

int cb_op_parse(const char *s)
{
	for (int i = 0; i < CB_OP_COUNT; i++)
		if (!strcmp(s, ops[i]))
			return i;
	return -1;
}
