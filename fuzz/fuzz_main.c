/*
 * Replay driver of the fuzz harnesses when they are not built with
 * libFuzzer (configure without --enable-fuzzing): feeds each file named on
 * the command line (a directory: each file in it) to
 * LLVMFuzzerTestOneInput once, as libFuzzer does when given files.  A
 * crash or a sanitizer report fails the run; so does an unreadable input.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The harnesses without set-up do not define it. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	int ret = 1;

	if (!f) {
		perror(path);
		return 1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	/* an empty input is passed as a 1-byte buffer of size 0 */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
		goto out;
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "%s: cannot read\n", path);
	free(buf);
	fclose(f);
	return ret;
}

static int replay(const char *path, unsigned *count)
{
	char sub[4096];
	struct dirent **names;
	struct stat st;
	int i, n, ret = 0;

	if (stat(path, &st)) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			ret |= replay(sub, count);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int i, ret = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		ret |= replay(argv[i], &count);
	printf("%s: replayed %u inputs\n", argv[0], count);
	return ret;
}
