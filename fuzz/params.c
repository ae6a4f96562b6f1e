/*
 * Fuzz harness: the parameter parsers.  The FI_GBA_* variables of the
 * provider (gba_params_read, prov/gba/src/gba_params.c, through
 * libfabric's fi_param_get_*), whose values must end in range whatever
 * the strings, and the device names of GBA_DEVICE, FI_GBA_DEVICE and
 * UCX_GBA_DEVICE (gba_dev_open).
 *
 * The input is NUL-separated strings: the values of the seven variables,
 * then a device name.  A device name that is a path of an existing file
 * is not opened (the fuzzer must not open /dev/mem); emulated images it
 * creates are removed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "gba_backend.h"
#include "gba_prov.h"

static const char *const vars[] = {
	"FI_GBA_DEVICE",     "FI_GBA_OFFLOAD",	       "FI_GBA_CQ_SIZE",
	"FI_GBA_EQ_SIZE",    "FI_GBA_BARRIER_TIMEOUT", "FI_GBA_PROGRESS",
	"FI_GBA_EAGER_SIZE",
};

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
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (s < end) {
			setenv(vars[i], s, 1);
			s += strlen(s) + 1;
		} else {
			unsetenv(vars[i]);
		}
	}
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
