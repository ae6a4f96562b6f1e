/*
 * GBA core library: reserving shared-memory files, and the text of the
 * last failure on one (gba_last_error, gba.h).
 *
 * A file of tmpfs (POSIX shared memory, memfd) whose size was only set
 * with ftruncate has no pages yet: the first store to a page the file
 * system cannot give (/dev/shm full, a memory cgroup at its limit) kills
 * the process with SIGBUS.  Every such file the library maps is first
 * reserved with posix_fallocate (gba_shm_reserve), so that a full file
 * system is an error (-ENOSPC) where the object is created, never a
 * signal later.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gba_backend.h"

/* The last failure of this thread (gba_err_set), "" when none */
static __thread char gba_err_text[256];

void gba_err_clear(void)
{
	gba_err_text[0] = '\0';
}

int gba_err_set(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(gba_err_text, sizeof(gba_err_text), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(gba_err_text))
		snprintf(gba_err_text + n, sizeof(gba_err_text) - (size_t)n,
			 ": %s", strerror(err < 0 ? -err : err));
	return err;
}

const char *gba_last_error(int err)
{
	return gba_err_text[0] ? gba_err_text : strerror(err < 0 ? -err : err);
}

int gba_shm_reserve(int fd, size_t len, const char *name)
{
	int err;

	if (len > (size_t)INT64_MAX)
		return gba_err_set(-EFBIG, "%s: %zu bytes", name, len);
	/* returns the error number; errno is left alone */
	do {
		err = posix_fallocate(fd, 0, (off_t)len);
	} while (err == EINTR);
	if (err)
		return gba_err_set(-err, "posix_fallocate %s (%zu bytes)",
				   name, len);
	return 0;
}
