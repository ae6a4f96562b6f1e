/*
 * GBA core library: test-only fault points (include/gba/gba_fault.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gba/gba_fault.h>

int gba_fault_armed;
extern int gba_fault_armed_local
	__attribute__((visibility("hidden"), alias("gba_fault_armed")));

static const char *const fault_names[GBA_FAULT_NPOINTS] = {
	[GBA_FAULT_SLOT] = "slot",	 [GBA_FAULT_CHUNK] = "chunk",
	[GBA_FAULT_RMA] = "rma",	 [GBA_FAULT_BARRIER] = "barrier",
	[GBA_FAULT_TRIGGER] = "trigger",
};

static struct {
	int done;
	enum gba_fault_point point;
	unsigned long n;
	int sig;
	unsigned long passes; /* atomic */
} fault;

const char *gba_fault_name(enum gba_fault_point point)
{
	return (unsigned)point < GBA_FAULT_NPOINTS ? fault_names[point] : NULL;
}

/* Parse "<point>:<n>[:stop]" into fault.  0 or -EINVAL. */
static int fault_parse(const char *val)
{
	char name[16], *end;
	size_t len = strcspn(val, ":");
	unsigned i;

	if (!len || len >= sizeof(name) || val[len] != ':')
		return -EINVAL;
	memcpy(name, val, len);
	name[len] = '\0';
	for (i = 0; i < GBA_FAULT_NPOINTS && strcmp(name, fault_names[i]); i++)
		;
	if (i == GBA_FAULT_NPOINTS)
		return -EINVAL;
	errno = 0;
	fault.n = strtoul(val + len + 1, &end, 10);
	if (errno || !fault.n || (*end && strcmp(end, ":stop")))
		return -EINVAL;
	fault.point = (enum gba_fault_point)i;
	fault.sig = *end ? SIGSTOP : SIGKILL;
	return 0;
}

int gba_fault_init(void)
{
	const char *val;

	/* a race of two threads parses twice, to the same result */
	if (__atomic_load_n(&fault.done, __ATOMIC_ACQUIRE))
		return 0;
	val = getenv("GBA_FAULT_POINT");
	if (val && *val && fault_parse(val)) {
		fprintf(stderr,
			"libgba: GBA_FAULT_POINT=%s: not "
			"<point>:<n>[:stop]\n",
			val);
		__atomic_store_n(&fault.done, 1, __ATOMIC_RELEASE);
		return -EINVAL;
	}
	if (val && *val)
		__atomic_store_n(&gba_fault_armed, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&fault.done, 1, __ATOMIC_RELEASE);
	return 0;
}

void gba_fault_reached(enum gba_fault_point point)
{
	if (point != fault.point)
		return;
	if (__atomic_add_fetch(&fault.passes, 1, __ATOMIC_RELAXED) == fault.n)
		raise(fault.sig);
}
