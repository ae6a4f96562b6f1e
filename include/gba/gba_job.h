/*
 * GBA core library: the job a process belongs to.
 *
 * A job key scopes everything a job can see on the emulated device and
 * the fabric engine of a host: endpoint names and services, groups,
 * shared-memory regions.  Two jobs of one user on one host never find,
 * reach or join each other's (doc/design.md section 4, "Jobs"; gba(7),
 * JOBS).  The key is read once per process from its environment, the
 * first of:
 *
 *   GBA_JOB                  set by the user: "gba:<value>"
 *   PMIX_NAMESPACE           Open MPI (PMIx), Slurm with PMIx: "pmix:<ns>"
 *   OMPI_MCA_ess_base_jobid  Open MPI without PMIx: "ompi:<jobid>"
 *   SLURM_JOB_ID             Slurm: "slurm:<job>.<step>" (SLURM_STEP_ID)
 *   PMI_FD, PMI_PORT         MPICH's hydra: "hydra:<pid>.<start>" of the
 *                            process's parent, the job's proxy on this host
 *   (none)                   "default": every process of the user that was
 *                            not started by a launcher is one job
 */
#ifndef GBA_JOB_H
#define GBA_JOB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GBA_JOB_KEY_MAX 128 /* bytes of a key, NUL included (longer: cut) */

/*
 * gba_job_key - this process's job key, "<source>:<value>" or "default"
 * (see above); a string of at most GBA_JOB_KEY_MAX - 1 characters that
 * lives as long as the process.  Never NULL.  Thread-safe.
 */
const char *gba_job_key(void);

/*
 * gba_job_id - a 64-bit hash (FNV-1a) of gba_job_key(), never 0: what
 * shared-memory names and group keys carry.  Thread-safe.
 */
uint64_t gba_job_id(void);

#ifdef __cplusplus
}
#endif

#endif /* GBA_JOB_H */
