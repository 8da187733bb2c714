/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plain driver for the fuzz targets: feeds each file named on the command line (or every
 * file in each directory named) to LLVMFuzzerTestOneInput, so the corpora run as ordinary
 * regression tests in every build, with or without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (cap - size < 65536) {
			uint8_t *nb = realloc(buf, cap + 65536 + 1);
			if (!nb) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t *) "", size);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	int failed = 0;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d) {
			perror(path);
			return 1;
		}
		while ((de = readdir(d))) {
			char sub[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			failed |= run_path(sub, count);
		}
		closedir(d);
		return failed;
	}
	(*count)++;
	return run_file(path);
}

int main(int argc, char **argv)
{
	int i, failed = 0, count = 0;

	for (i = 1; i < argc; i++)
		failed |= run_path(argv[i], &count);
	printf("%d inputs run\n", count);
	return failed || count == 0;
}
