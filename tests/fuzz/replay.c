/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/replay.c - a fuzz target without libFuzzer: run it once on
 * each file named, or on each file in each folder named (the checked-in
 * corpus, crashes found and fixed included), so every build and every
 * test run checks the target's inputs, with or without clang.
 *
 * Exit status: 0 when every input ran, 1 when none was found (a corpus
 * that went missing must not pass as an empty success).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(1);
	}
	/* A copy of exactly the input's size, as libFuzzer passes it, so
	 * ASan sees a read past its end. */
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	int ran = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **ents;
		int n;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: no such file: %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			ran += run_file(argv[i]);
			continue;
		}
		if ((n = scandir(argv[i], &ents, NULL, by_name)) < 0) {
			fprintf(stderr, "replay: cannot list %s\n", argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			         ents[k]->d_name);
			if (ents[k]->d_name[0] != '.' && !stat(path, &st) &&
			    S_ISREG(st.st_mode))
				ran += run_file(path);
			free(ents[k]);
		}
		free(ents);
	}
	printf("replay: %d inputs ran\n", ran);
	return ran ? 0 : 1;
}
