/*
 * GBA core library: the job a process belongs to (include/gba/gba_job.h).
 *
 * The key is computed once, on first use, from the environment the
 * launcher gave the process; every process of a job computes the same one
 * without talking.  For MPICH's hydra, which exports no job name, the job
 * is the proxy that started the process on this host (its parent), known
 * by pid and start time like every other process record of the library.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_backend.h"

static pthread_once_t gba_job_once = PTHREAD_ONCE_INIT;
static char gba_job_key_buf[GBA_JOB_KEY_MAX];
static uint64_t gba_job_hash;

/* The value of environment variable @name, or NULL if unset or empty. */
static const char *job_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void job_init(void)
{
	const char *v, *step;
	uint64_t parent;

	if ((v = job_env("GBA_JOB")))
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf), "gba:%s", v);
	else if ((v = job_env("PMIX_NAMESPACE")))
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf), "pmix:%s",
			 v);
	else if ((v = job_env("OMPI_MCA_ess_base_jobid")))
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf), "ompi:%s",
			 v);
	else if ((v = job_env("SLURM_JOB_ID"))) {
		step = job_env("SLURM_STEP_ID");
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf),
			 "slurm:%s.%s", v, step ? step : "-");
	} else if ((job_env("PMI_FD") || job_env("PMI_PORT")) &&
		   (parent = gba_proc_slot(getppid())))
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf),
			 "hydra:%u.%u", (unsigned)GBA_SLOT_PID(parent),
			 (unsigned)GBA_SLOT_START(parent));
	else
		snprintf(gba_job_key_buf, sizeof(gba_job_key_buf), "default");
	gba_job_hash = gba_fnv1a(GBA_FNV64_OFFSET, gba_job_key_buf,
				 strlen(gba_job_key_buf));
	if (!gba_job_hash)
		gba_job_hash = 1;
}

const char *gba_job_key(void)
{
	pthread_once(&gba_job_once, job_init);
	return gba_job_key_buf;
}

uint64_t gba_job_id(void)
{
	pthread_once(&gba_job_once, job_init);
	return gba_job_hash;
}
