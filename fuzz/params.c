/*
 * Fuzz harness: the parameter parsers.  The FI_GBA_* variables of the
 * provider (gba_params_read, prov/gba/src/gba_params.c, through
 * libfabric's fi_param_get_*), whose values must end in range whatever
 * the strings, and the device names of GBA_DEVICE, FI_GBA_DEVICE and
 * UCX_GBA_DEVICE (gba_dev_open).
 *
 * The input is NUL-separated strings: the values of the seven variables
 * (empty when the input ends before), then a device name.  The
 * parameters are defined once; every input is read from the defaults.  A
 * device name that is a path of an existing file is not opened (the
 * fuzzer must not open /dev/mem); emulated images it creates are removed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "gba_backend.h"
#include "gba_prov.h"

#define FUZZ_VARS 7
#define FUZZ_VALUE_MAX 4096

static const char *const vars[FUZZ_VARS] = {
	"FI_GBA_DEVICE",     "FI_GBA_OFFLOAD",	       "FI_GBA_CQ_SIZE",
	"FI_GBA_EQ_SIZE",    "FI_GBA_BARRIER_TIMEOUT", "FI_GBA_PROGRESS",
	"FI_GBA_EAGER_SIZE",
};

/* "NAME=value" of each variable, in the environment with putenv (setenv
 * would keep every value it replaced) */
static char env[FUZZ_VARS][32 + FUZZ_VALUE_MAX];
static struct gba_params defaults;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned i;

	gba_params_define();
	defaults = gba_params;
	for (i = 0; i < FUZZ_VARS; i++) {
		snprintf(env[i], sizeof(env[i]), "%s=", vars[i]);
		putenv(env[i]);
	}
	return 0;
}

/* Set variable @i to the @len bytes at @s (up to a NUL). */
static void set_var(unsigned i, const char *s, size_t len)
{
	size_t name = strlen(vars[i]) + 1;

	if (len > FUZZ_VALUE_MAX - 1)
		len = FUZZ_VALUE_MAX - 1;
	memcpy(env[i] + name, s, len);
	env[i][name + len] = '\0';
}

static void device(const char *name)
{
	const char *path = name;
	struct gba_dev *dev;

	if (!strncmp(name, "emu", 3) && strcmp(name, "emu") &&
	    strncmp(name, "emu:", 4))
		return; /* a file named emu... in the working directory */
	if (!strncmp(name, "hw:", 3))
		path += 3;
	if (strncmp(name, "emu", 3) && (!*path || !access(path, F_OK)))
		return;
	if (!gba_dev_open(name, &dev)) {
		gba_dev_close(dev);
		if (!strncmp(name, "emu:", 4))
			shm_unlink(name + 4);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *s = buf, *end = buf + size;
	unsigned i;

	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0; i < FUZZ_VARS; i++) {
		if (s < end) {
			set_var(i, s, strlen(s));
			s += strlen(s) + 1;
		} else {
			set_var(i, "", 0);
		}
	}
	gba_params = defaults;
	gba_params_read();
	if (gba_params.cq_size < 1 || gba_params.cq_size > GBA_CQ_MAX_SIZE ||
	    gba_params.eq_size < 1 || gba_params.eq_size > GBA_EQ_MAX_SIZE ||
	    gba_params.eager_size < 1 ||
	    gba_params.eager_size > GBA_ENG_EAGER_MAX ||
	    gba_params.barrier_timeout_ms < -1 ||
	    (gba_params.progress != FI_PROGRESS_MANUAL &&
	     gba_params.progress != FI_PROGRESS_AUTO))
		abort();
	gba_params_free();
	if (s < end)
		device(s);
	free(buf);
	return 0;
}
