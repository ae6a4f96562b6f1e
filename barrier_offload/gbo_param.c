/*
 * libgba_barrier: parameters (GBA_BARRIER_*), log lines and the
 * per-process statistics printed at finalize (libgba_barrier(7)).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gbo.h"

struct gbo_params gbo_params = {
	.enable = 1,
	.provider = "gba",
	.verbose = 0,
};
struct gbo_stats gbo_stats;

static int gbo_param_done;
static int gbo_rank = -1;

/* A boolean/level variable: decimal, or y/yes/on/true, n/no/off/false. */
static int gbo_env_int(const char *name, int def)
{
	const char *v = getenv(name);
	char *end;
	long l;

	if (!v || !*v)
		return def;
	if (!strcasecmp(v, "y") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "on") || !strcasecmp(v, "true"))
		return 1;
	if (!strcasecmp(v, "n") || !strcasecmp(v, "no") ||
	    !strcasecmp(v, "off") || !strcasecmp(v, "false"))
		return 0;
	l = strtol(v, &end, 10);
	if (*end || l < 0 || l > 9) {
		fprintf(stderr,
			"libgba_barrier: %s=\"%s\" is not 0..9 or yes/no: "
			"using %d\n",
			name, v, def);
		return def;
	}
	return (int)l;
}

void gbo_param_init(void)
{
	const char *prov;

	if (gbo_param_done)
		return;
	gbo_param_done = 1;
	gbo_params.enable = gbo_env_int("GBA_BARRIER_ENABLE", 1);
	gbo_params.verbose = gbo_env_int("GBA_BARRIER_VERBOSE", 0);
	prov = getenv("GBA_BARRIER_PROVIDER");
	if (prov && *prov)
		gbo_params.provider = prov;
}

const char *gbo_reason_str(enum gbo_reason r)
{
	static const char *const str[GBO_NREASONS] = {
		[GBO_OFFLOADED] = "on the GBA",
		[GBO_ONE_MEMBER] = "one member",
		[GBO_DISABLED] = "disabled (GBA_BARRIER_ENABLE=0)",
		[GBO_INTERCOMM] = "inter-communicator",
		[GBO_THREAD_MULTIPLE] = "MPI_THREAD_MULTIPLE",
		[GBO_NO_MPI] = "no MPI under OpenSHMEM",
		[GBO_NO_PROVIDER] = "no libfabric provider",
		[GBO_MEMBERS] = "more members than the device takes",
		[GBO_NO_DEVICE] = "no GBA device",
		[GBO_NO_GROUP] = "no free hardware group",
		[GBO_PROV_DISABLED] = "provider offload off (FI_GBA_OFFLOAD=0)",
		[GBO_JOIN_FAILED] = "join failed",
		[GBO_OUT_OF_ORDER] = "stopped after a failed join",
		[GBO_FINALIZED] = "after MPI_Finalize began",
	};

	return r < GBO_NREASONS && str[r] ? str[r] : "unknown";
}

void gbo_set_rank(int rank)
{
	gbo_rank = rank;
}

void gbo_log(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (gbo_params.verbose < level)
		return;
	n = snprintf(line, sizeof(line), "libgba_barrier: rank %d (pid %d): ",
		     gbo_rank, (int)getpid());
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* one write: lines of several processes do not interleave */
	fprintf(stderr, "%s\n", line);
}

void gbo_stats_report(void)
{
	char why[384] = "";
	size_t n = 0;
	uint64_t sw = 0;
	int r;

	for (r = GBO_ONE_MEMBER; r < GBO_NREASONS; r++) {
		if (!gbo_stats.fallback[r])
			continue;
		sw += gbo_stats.fallback[r];
		if (n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - n, "%s%s: %llu",
				      n ? ", " : " (", gbo_reason_str(r),
				      (unsigned long long)gbo_stats.fallback[r]);
	}
	if (n && n < sizeof(why))
		snprintf(why + n, sizeof(why) - n, ")");
	gbo_log(1,
		"finalize: %llu barriers on the GBA (%llu confirmed by the "
		"device), %llu not%s; %u groups offloaded, at most %u held "
		"at once",
		(unsigned long long)gbo_stats.offloaded,
		(unsigned long long)gbo_stats.confirmed,
		(unsigned long long)sw, why, gbo_stats.sets,
		gbo_stats.held_max);
}
