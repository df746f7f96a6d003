/* SPDX-License-Identifier: MIT */
/* core/mem.c - freeing a list of blocks (core/mem.h). */
#include <stdlib.h>

#include "core/mem.h"

void cb_free_n(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}
