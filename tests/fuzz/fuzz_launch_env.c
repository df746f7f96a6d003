/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_launch_env.c - the launcher's environment: rank and
 * world size (COLLBENCH_*, torchrun, Open MPI, PMI, Slurm) and the
 * rendezvous (--rendezvous, COLLBENCH_ROOT, MASTER_ADDR/MASTER_PORT).  The
 * input, split at NUL bytes, gives each variable in turn its value (an
 * empty one unsets it); the piece after the last is --rendezvous.
 *
 * Beyond not crashing: a refusal is CB_ERR_USAGE with a recorded line; an
 * accepted rank is within its world; an accepted rendezvous has a host and
 * a port in 1..65535.
 */
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/log.h"
#include "fuzz.h"

static const char *const vars[] = {
	"COLLBENCH_RANK",
	"COLLBENCH_WORLD",
	"RANK",
	"WORLD_SIZE",
	"OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_SIZE",
	"PMI_RANK",
	"PMI_SIZE",
	"SLURM_PROCID",
	"SLURM_NTASKS",
	"COLLBENCH_ROOT",
	"MASTER_ADDR",
	"MASTER_PORT",
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *p, *rdv = NULL;
	struct cb_launch_env e;
	cb_status_t st;
	size_t i = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	p = copy;
	for (; i < NVARS; i++) {
		if (p > copy + size || !*p)
			unsetenv(vars[i]);
		else
			setenv(vars[i], p, 1);
		if (p <= copy + size)
			p += strlen(p) + 1;
	}
	if (p <= copy + size && *p)
		rdv = p;

	cb_fail_clear();
	st = cb_env_detect(rdv, &e);
	if (st) {
		FUZZ_CHECK(st == CB_ERR_USAGE);
		FUZZ_CHECK(cb_fail_msg() != NULL);
	} else {
		if (e.found)
			FUZZ_CHECK(e.world >= 1 && e.rank >= 0 &&
			           e.rank < e.world);
		if (e.rdv_source) {
			long port = strtol(e.port, NULL, 10);
			FUZZ_CHECK(e.host[0] != '\0');
			FUZZ_CHECK(port >= 1 && port <= 65535);
		}
	}
	free(copy);
	return 0;
}
