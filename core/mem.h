/* SPDX-License-Identifier: MIT */
/*
 * core/mem.h - free a list of heap blocks in one call.
 *
 * A destructor of an object that owns many separately allocated arrays
 * names each one: `free(p->a); free(p->b); ...; free(p);`.  Keeping them
 * separate allocations (not one arena) is deliberate: AddressSanitizer
 * then sees an overrun from one array into the next.  cb_free_all lists
 * them in one call instead of a line each (systemd's free_many).  Every
 * member is still named, so a missed one is a leak the leak-checked build
 * reports.  A base helper like core/log.h: every layer may use it.
 */
#ifndef CB_CORE_MEM_H
#define CB_CORE_MEM_H

#include <stddef.h>

/* free() each of the @n pointers in @ptrs, in order; NULL ones are skipped. */
void cb_free_n(void *const *ptrs, size_t n);

/* cb_free_all(p->a, p->b, p): free() each argument, left to right.  The
 * arguments are evaluated once, all before the first free (sizeof does not
 * evaluate them), so the object itself may come last after its members. */
#define cb_free_all(...)                                                       \
	cb_free_n((void *const[]){ __VA_ARGS__ },                              \
	          sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

#endif
